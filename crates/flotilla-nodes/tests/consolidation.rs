//! Consolidation decisions on small clusters, one rule per case, and their invariants under
//! random clusters.

use std::collections::BTreeMap;

use flotilla_nodes::consolidation::{
    Action, Candidate, Cluster, Command, ConsolidationOptions, Decision, Method, PoolTotals,
    Rejection, Simulator, compute_consolidation, multi_node_consolidation,
    single_node_consolidation,
};
use flotilla_nodes::scheduling::labels;
use flotilla_nodes::scheduling::{
    CapacityType, ExistingNode, InstanceType, NodePool, Offering, Operator, Requirement,
    Requirements, Resources, SimPod, kwok_catalog,
};
use proptest::prelude::*;

const GI: i64 = 1 << 30;
const ZONE: &str = "test-zone-a";

/// An instance type of `cpu` vCPU and 4 GiB per vCPU, on-demand at `price` and spot at half.
fn instance_type(name: &str, cpu: i64, price: f64) -> InstanceType {
    let offering = |capacity_type, price| Offering {
        zone: ZONE.into(),
        capacity_type,
        price,
        available: true,
    };
    InstanceType::new(
        name,
        &[(labels::OS, "linux")],
        Resources::new(cpu * 1000, cpu * 4 * GI, 110, 0),
        Resources::ZERO,
        vec![
            offering(CapacityType::OnDemand, price),
            offering(CapacityType::Spot, price / 2.0),
        ],
    )
}

fn catalog() -> Vec<InstanceType> {
    vec![
        instance_type("small", 2, 0.10),
        instance_type("medium", 4, 0.20),
        instance_type("large", 8, 0.40),
    ]
}

fn pod(name: &str, cpu_millis: i64) -> SimPod {
    SimPod::new(name, Resources::new(cpu_millis, GI / 4, 1, 0))
}

/// A node of `instance_type` holding `pods`, with a candidate for it.
struct Machine {
    node: ExistingNode,
    candidate: Candidate,
}

fn machine(
    catalog: &[InstanceType],
    name: &str,
    type_name: &str,
    capacity_type: CapacityType,
    pods: Vec<SimPod>,
) -> Machine {
    let it = catalog.iter().find(|t| t.name == type_name).unwrap();
    let reschedule_cost = 1.0 + pods.len() as f64;
    let requested = pods.iter().fold(Resources::ZERO, |acc, p| acc + p.requests);
    let price = it
        .offerings
        .iter()
        .find(|o| o.capacity_type == capacity_type)
        .unwrap()
        .price;
    Machine {
        node: ExistingNode {
            name: name.into(),
            labels: [
                (labels::OS.to_string(), "linux".to_string()),
                (labels::INSTANCE_TYPE.to_string(), type_name.to_string()),
                (labels::NODE_POOL.to_string(), "default".to_string()),
            ]
            .into(),
            taints: Vec::new(),
            allocatable: it.allocatable(),
            requested,
            initialized: true,
            pool: Some("default".into()),
            bound: Vec::new(),
        },
        candidate: Candidate {
            node: name.into(),
            pool: "default".into(),
            instance_type: type_name.into(),
            capacity_type,
            zone: ZONE.into(),
            price,
            pods,
            disruption_cost: 1.0,
            reschedule_cost,
            balanced: None,
        },
    }
}

fn budgets(n: u32) -> BTreeMap<String, u32> {
    BTreeMap::from([("default".to_string(), n)])
}

/// The nodes and the candidates of `machines`: those whose name is in `candidates`.
fn split(machines: Vec<Machine>, candidates: &[&str]) -> (Vec<ExistingNode>, Vec<Candidate>) {
    let nodes = machines.iter().map(|m| m.node.clone()).collect();
    let candidates = machines
        .into_iter()
        .filter(|m| candidates.contains(&m.candidate.node.as_str()))
        .map(|m| m.candidate)
        .collect();
    (nodes, candidates)
}

fn single(
    cluster: Cluster<'_>,
    candidates: &[Candidate],
    options: ConsolidationOptions,
) -> Decision {
    single_node_consolidation(
        cluster,
        candidates,
        &budgets(10),
        &[],
        &options,
        &mut || false,
    )
}

fn multi(cluster: Cluster<'_>, candidates: &[Candidate], budget: u32) -> Decision {
    let options = ConsolidationOptions::default();
    multi_node_consolidation(cluster, candidates, &budgets(budget), &options, &mut || {
        false
    })
}

/// The `default` pool, on-demand only.
fn on_demand_pool() -> NodePool {
    let mut requirements = Requirements::new();
    requirements.add(labels::CAPACITY_TYPE, Requirement::single("on-demand"));
    NodePool {
        requirements,
        ..NodePool::new("default")
    }
}

fn pools() -> Vec<NodePool> {
    vec![NodePool::new("default")]
}

/// The cluster of `nodes` with no pending pods.
fn cluster_of<'a>(
    pools: &'a [NodePool],
    catalog: &'a [InstanceType],
    nodes: &'a [ExistingNode],
) -> Cluster<'a> {
    Cluster {
        pools,
        instance_types: catalog,
        nodes,
        pending: &[],
    }
}

fn replacement(command: &Command) -> &flotilla_nodes::scheduling::NewClaim {
    match &command.action {
        Action::Replace(claim) => claim,
        Action::Delete => panic!("expected a replacement: {command}"),
    }
}

#[test]
fn a_node_whose_pods_fit_elsewhere_is_deleted() {
    let catalog = catalog();
    let machines = vec![
        machine(
            &catalog,
            "busy",
            "large",
            CapacityType::OnDemand,
            vec![pod("b", 4000)],
        ),
        machine(
            &catalog,
            "idle",
            "medium",
            CapacityType::OnDemand,
            vec![pod("i", 1000)],
        ),
    ];
    let (nodes, candidates) = split(machines, &["idle"]);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let decision = single(cluster, &candidates, ConsolidationOptions::default());
    let command = decision.command.expect("a command");
    assert_eq!(command.action, Action::Delete);
    assert_eq!(command.method, Method::SingleNode);
    assert_eq!(
        command.to_string(),
        "single-node consolidation: delete idle ($0.2000/h): their pods fit on other nodes"
    );
}

#[test]
fn an_oversized_node_is_replaced_by_a_cheaper_spot_node() {
    let catalog = catalog();
    let machines = vec![machine(
        &catalog,
        "big",
        "large",
        CapacityType::OnDemand,
        vec![pod("p", 1000)],
    )];
    let (nodes, candidates) = split(machines, &["big"]);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let command = single(cluster, &candidates, ConsolidationOptions::default())
        .command
        .unwrap();
    let claim = replacement(&command);
    assert_eq!(
        claim.requirements.get(labels::CAPACITY_TYPE),
        Some(&Requirement::single("spot"))
    );
    let names: Vec<&str> = claim
        .instance_type_options
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    // Every worst launch (spot) price is below $0.40: large's spot price too.
    assert_eq!(names, ["small", "medium", "large"]);
    assert_eq!(command.replacement_price(), Some(0.05));
    assert_eq!(
        command.to_string(),
        "single-node consolidation: replace big ($0.4000/h) with one node from pool \"default\" (3 options, cheapest small at $0.0500/h)"
    );
}

#[test]
fn a_replacement_must_be_cheaper() {
    let catalog = catalog();
    let on_demand_only = on_demand_pool();
    let machines = vec![machine(
        &catalog,
        "n",
        "small",
        CapacityType::OnDemand,
        vec![pod("p", 1500)],
    )];
    let (nodes, candidates) = split(machines, &["n"]);
    let pools = [on_demand_only];
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let decision = single(cluster, &candidates, ConsolidationOptions::default());
    assert_eq!(decision.command, None);
    assert_eq!(
        decision.rejected[0].to_string(),
        "cannot consolidate n: replacement would not be cheaper: no option's worst launch price is below the candidates' $0.1000/h (cheapest option $0.1000/h)"
    );
}

#[test]
fn every_candidate_pod_must_schedule_but_pending_pods_need_not() {
    let catalog = catalog();
    let needs_team = pod("needs-team", 100).with_requirements({
        let mut r = Requirements::new();
        r.add("team", Requirement::single("a"));
        r
    });
    let machines = vec![
        machine(&catalog, "room", "large", CapacityType::OnDemand, vec![]),
        machine(
            &catalog,
            "n",
            "small",
            CapacityType::OnDemand,
            vec![needs_team],
        ),
        machine(
            &catalog,
            "m",
            "small",
            CapacityType::OnDemand,
            vec![pod("ok", 100)],
        ),
    ];
    let (nodes, candidates) = split(machines, &["n", "m"]);
    let pools = pools();
    let pending = [pod("huge-pending", 100_000)];
    let cluster = Cluster {
        pools: &pools,
        instance_types: &catalog,
        nodes: &nodes,
        pending: &pending,
    };
    let decision = single(cluster, &candidates, ConsolidationOptions::default());
    assert_eq!(
        decision.rejected[0].why,
        Rejection::PodUnschedulable {
            pod: "needs-team".into(),
            reason: "nodepool \"default\": incompatible requirements, label \"team\" does not have known values"
                .into()
        }
    );
    let command = decision.command.expect("m can go despite the pending pod");
    assert_eq!(command.candidates, ["m"]);
    assert_eq!(command.action, Action::Delete);
}

#[test]
fn room_on_an_uninitialized_node_does_not_count() {
    let catalog = catalog();
    let mut machines = vec![
        machine(&catalog, "fresh", "large", CapacityType::OnDemand, vec![]),
        machine(
            &catalog,
            "n",
            "small",
            CapacityType::OnDemand,
            vec![pod("p", 1500)],
        ),
    ];
    machines[0].node.initialized = false;
    let (nodes, candidates) = split(machines, &["n"]);
    let cluster = Cluster {
        pools: &[],
        instance_types: &catalog,
        nodes: &nodes,
        pending: &[],
    };
    let decision = single(cluster, &candidates, ConsolidationOptions::default());
    assert_eq!(
        decision.rejected[0].why.to_string(),
        "pod p would not schedule: would schedule against uninitialized node \"fresh\""
    );
}

#[test]
fn spot_to_spot_needs_the_switch_and_fifteen_cheaper_types() {
    let catalog = kwok_catalog(144);
    let linux = NodePool {
        requirements: {
            let mut r = Requirements::new();
            r.add(labels::OS, Requirement::single("linux"));
            r
        },
        ..NodePool::new("default")
    };
    let pools = [linux];
    let case = |type_name: &str, spot_to_spot: bool| {
        let machines = vec![machine(
            &catalog,
            "n",
            type_name,
            CapacityType::Spot,
            vec![pod("p", 500)],
        )];
        let (nodes, candidates) = split(machines, &["n"]);
        let cluster = Cluster {
            pools: &pools,
            instance_types: &catalog,
            nodes: &nodes,
            pending: &[],
        };
        single(cluster, &candidates, ConsolidationOptions { spot_to_spot })
    };
    let big = "kwok-E64-512gi-amd64-linux-g0";
    let decision = case(big, false);
    assert_eq!(decision.rejected[0].why, Rejection::SpotToSpotDisabled);
    let command = case(big, true).command.unwrap();
    let claim = replacement(&command);
    assert_eq!(claim.instance_type_options.len(), 15);
    assert_eq!(
        claim.requirements.get(labels::CAPACITY_TYPE),
        Some(&Requirement::single("spot"))
    );
    let small = "kwok-D2-8gi-amd64-linux-g0";
    let decision = case(small, true);
    assert!(
        matches!(decision.rejected[0].why, Rejection::TooFewCheaperSpotTypes { needed: 15, found } if found < 15),
        "{:?}",
        decision.rejected
    );
}

/// Five medium (4 vCPU) nodes, each with 1.5 vCPU of pods, all candidates.
/// The candidates with their pool made Balanced, totals taken over `all` of its candidates.
fn balanced(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    let totals = PoolTotals {
        cost: candidates.iter().map(|c| c.price).sum(),
        disruption: candidates.iter().map(|c| c.reschedule_cost).sum(),
    };
    for candidate in &mut candidates {
        candidate.balanced = Some(totals);
    }
    candidates
}

#[test]
fn a_balanced_pool_refuses_a_replacement_that_saves_too_little() {
    let mut catalog = catalog();
    catalog.push(instance_type("six", 6, 0.30));
    let on_demand_only = on_demand_pool();
    let machines = vec![machine(
        &catalog,
        "n",
        "large",
        CapacityType::OnDemand,
        vec![pod("p", 5000)],
    )];
    let (nodes, candidates) = split(machines, &["n"]);
    let pools = [on_demand_only];
    let cluster = cluster_of(&pools, &catalog, &nodes);
    // WhenEmptyOrUnderutilized replaces the $0.40 node with the $0.30 one.
    let plain = single(cluster, &candidates, ConsolidationOptions::default());
    assert_eq!(plain.command.unwrap().replacement_price(), Some(0.30));
    // Balanced: a quarter of the pool's cost for all of its disruption scores 0.25.
    let decision = single(
        cluster,
        &balanced(candidates),
        ConsolidationOptions::default(),
    );
    assert_eq!(decision.command, None);
    assert_eq!(
        decision.rejected[0].to_string(),
        "cannot consolidate n: NodePool \"default\" has consolidation policy Balanced and the move \
         saves too little for its disruption: score 0.25 < threshold 0.50 (k: 2, savings 25.0%, \
         disruption 100.0%)"
    );
}

#[test]
fn a_balanced_candidate_that_even_a_delete_would_not_pay_for_is_not_simulated() {
    let catalog = catalog();
    // A cheap node with many pods beside an expensive idle-ish one: deleting the cheap one saves
    // 0.1 of 0.5 (20 %) for 9 of 11 of the disruption (82 %).
    let busy: Vec<SimPod> = (0..8).map(|i| pod(&format!("p{i}"), 100)).collect();
    let machines = vec![
        machine(&catalog, "cheap", "small", CapacityType::OnDemand, busy),
        machine(
            &catalog,
            "dear",
            "large",
            CapacityType::OnDemand,
            vec![pod("q", 100)],
        ),
    ];
    let (nodes, candidates) = split(machines, &["cheap", "dear"]);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let candidates = balanced(candidates);
    let decision = single(cluster, &candidates[..1], ConsolidationOptions::default());
    assert_eq!((decision.command, decision.simulations), (None, 0));
    // The dear node's delete scores (0.4/0.5)/(2/11) = 4.4: its pod moves to the cheap node.
    let decision = single(cluster, &candidates, ConsolidationOptions::default());
    let command = decision.command.expect("a command");
    assert_eq!(
        (command.candidates.clone(), command.action),
        (vec!["dear".to_string()], Action::Delete)
    );
    assert_eq!(command.scores.len(), 1);
    assert!(
        (command.scores[0].value() - 4.4).abs() < 1e-9,
        "{}",
        command.scores[0]
    );
}

#[test]
fn multi_node_keeps_the_balanced_scores_of_its_command() {
    let catalog = catalog();
    let (nodes, candidates) = five_medium_nodes(&catalog);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let decision = multi(cluster, &balanced(candidates), 10);
    let command = decision.command.expect("a command");
    // All five ($1.00, all the disruption) for one $0.20 spot node: 0.8 / 1.0.
    assert_eq!(command.candidates.len(), 5);
    assert_eq!(command.scores.len(), 1);
    assert!(
        (command.scores[0].value() - 0.8).abs() < 1e-9,
        "{}",
        command.scores[0]
    );
}

fn five_medium_nodes(catalog: &[InstanceType]) -> (Vec<ExistingNode>, Vec<Candidate>) {
    let machines = (0..5)
        .map(|i| {
            let pods = vec![pod(&format!("p{i}a"), 1000), pod(&format!("p{i}b"), 500)];
            machine(
                catalog,
                &format!("n{i}"),
                "medium",
                CapacityType::OnDemand,
                pods,
            )
        })
        .collect();
    split(machines, &["n0", "n1", "n2", "n3", "n4"])
}

#[test]
fn multi_node_finds_the_longest_valid_prefix() {
    let catalog = catalog();
    let (nodes, candidates) = five_medium_nodes(&catalog);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let decision = multi(cluster, &candidates, 10);
    let command = decision.command.clone().expect("a command");
    assert_eq!(command.method, Method::MultiNode);
    // lo=1, hi=4. mid=2: n0–n2's pods fit on n3 and n4 (delete). mid=3: n0–n3's need one new
    // medium node besides n4 (replace). mid=4: all five (7.5 vCPU) fit one large node, spot
    // $0.20 < $1.00 (replace): the longest prefix wins.
    assert_eq!(command.candidates, ["n0", "n1", "n2", "n3", "n4"]);
    assert_eq!(replacement(&command).instance_type_options[0].name, "large");
    assert!(!decision.stopped && decision.rejected.is_empty());
    assert_eq!(decision.simulations, 3);

    let limited = multi(cluster, &candidates, 2);
    assert!(limited.constrained_by_budgets);
    assert_eq!(limited.command.unwrap().candidates, ["n0", "n1"]);
}

#[test]
fn multi_node_stops_when_told_and_keeps_the_last_valid_command() {
    let catalog = catalog();
    let (nodes, candidates) = five_medium_nodes(&catalog);
    let pools = pools();
    let cluster = cluster_of(&pools, &catalog, &nodes);
    let mut asked = 0;
    let mut stop_after_one = || {
        asked += 1;
        asked > 1
    };
    let decision = multi_node_consolidation(
        cluster,
        &candidates,
        &budgets(10),
        &ConsolidationOptions::default(),
        &mut stop_after_one,
    );
    assert!(decision.stopped);
    assert_eq!(decision.simulations, 1);
    assert_eq!(decision.command.unwrap().candidates, ["n0", "n1", "n2"]);
}

#[test]
fn more_than_one_replacement_is_rejected() {
    let catalog = catalog();
    let zone_pod = |name: &str, zone: &str| {
        pod(name, 1000).with_requirements({
            let mut r = Requirements::new();
            r.add(
                labels::ZONE,
                Requirement::new(Operator::In, &[zone]).unwrap(),
            );
            r
        })
    };
    let mut two_zone_catalog = catalog.clone();
    for it in &mut two_zone_catalog {
        let mut other = it.offerings.clone();
        for offering in &mut other {
            offering.zone = "test-zone-b".into();
        }
        *it = InstanceType::new(
            &it.name,
            &[(labels::OS, "linux")],
            it.capacity,
            it.overhead,
            it.offerings.iter().cloned().chain(other).collect(),
        );
    }
    let machines = vec![
        machine(
            &two_zone_catalog,
            "a",
            "large",
            CapacityType::OnDemand,
            vec![zone_pod("pa", ZONE)],
        ),
        machine(
            &two_zone_catalog,
            "b",
            "large",
            CapacityType::OnDemand,
            vec![zone_pod("pb", "test-zone-b")],
        ),
    ];
    let (nodes, candidates) = split(machines, &["a", "b"]);
    let pools = pools();
    let cluster = Cluster {
        pools: &pools,
        instance_types: &two_zone_catalog,
        nodes: &nodes,
        pending: &[],
    };
    let refs: Vec<&Candidate> = candidates.iter().collect();
    let mut simulator = Simulator::new(cluster);
    let outcome = compute_consolidation(
        &mut simulator,
        &refs,
        Method::MultiNode,
        &ConsolidationOptions::default(),
    );
    assert_eq!(outcome, Err(Rejection::TooManyReplacements(2)));
}

// ---- invariants ----

#[derive(Debug, Clone)]
struct Scenario {
    machines: Vec<(usize, bool, Vec<i64>, u8)>,
    pending: Vec<i64>,
    budgets: BTreeMap<String, u32>,
    spot_to_spot: bool,
}

const TYPES: [&str; 3] = ["small", "medium", "large"];
const POOLS: [&str; 2] = ["default", "other"];

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    let machine = (
        0..3usize,
        prop::bool::ANY,
        prop::collection::vec(
            prop::sample::select(vec![100i64, 500, 1000, 1500, 3000]),
            0..5,
        ),
        0..2u8,
    );
    (
        prop::collection::vec(machine, 0..8),
        prop::collection::vec(prop::sample::select(vec![100i64, 2000, 50_000]), 0..3),
        prop::collection::btree_map(
            prop::sample::select(POOLS.map(String::from).to_vec()),
            0..4u32,
            0..3,
        ),
        prop::bool::ANY,
    )
        .prop_map(|(machines, pending, budgets, spot_to_spot)| Scenario {
            machines,
            pending,
            budgets,
            spot_to_spot,
        })
}

/// Checks a command against the cluster it came from: budgets hold, re-simulating it places
/// every candidate pod, a delete needs no new node, a replacement is one node strictly cheaper
/// at its worst launch than the candidates and holds all it must.
fn check_command(
    cluster: Cluster<'_>,
    candidates: &[Candidate],
    budgets: &BTreeMap<String, u32>,
    command: &Command,
) -> Result<(), TestCaseError> {
    let chosen: Vec<&Candidate> = command
        .candidates
        .iter()
        .map(|name| {
            candidates
                .iter()
                .find(|c| &c.node == name)
                .expect("a known candidate")
        })
        .collect();
    for pool in POOLS {
        let used = chosen.iter().filter(|c| c.pool == pool).count() as u32;
        prop_assert!(
            used <= budgets.get(pool).copied().unwrap_or(0),
            "budget of {} exceeded",
            pool
        );
    }
    let price: f64 = chosen.iter().map(|c| c.price).sum();
    prop_assert!((price - command.candidates_price).abs() < 1e-9);
    let results = Simulator::new(cluster).simulate(&chosen);
    for pod in chosen.iter().flat_map(|c| &c.pods) {
        prop_assert!(
            !results.unschedulable.contains_key(&pod.name),
            "{} left out",
            pod.name
        );
    }
    match &command.action {
        Action::Delete => prop_assert!(results.new_claims.is_empty()),
        Action::Replace(claim) => {
            prop_assert_eq!(results.new_claims.len(), 1);
            prop_assert!(!claim.instance_type_options.is_empty());
            for option in &claim.instance_type_options {
                let it = cluster
                    .instance_types
                    .iter()
                    .find(|t| t.name == option.name)
                    .unwrap();
                let worst = it.worst_launch_price(&claim.requirements).unwrap();
                prop_assert!(
                    worst < command.candidates_price,
                    "{} costs {} ≥ {}",
                    option.name,
                    worst,
                    price
                );
                prop_assert!(option.price <= worst);
            }
            let cheapest = &claim.instance_type_options[0];
            let it = cluster
                .instance_types
                .iter()
                .find(|t| t.name == cheapest.name)
                .unwrap();
            prop_assert!(claim.requests.fits(&it.allocatable()));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn commands_are_valid_cheaper_and_within_budget(scenario in arb_scenario()) {
        let catalog = catalog();
        let machines: Vec<Machine> = scenario
            .machines
            .iter()
            .enumerate()
            .map(|(i, (type_index, spot, pods, pool))| {
                let capacity_type = if *spot { CapacityType::Spot } else { CapacityType::OnDemand };
                let it = &catalog[*type_index];
                // Keep only the pods that fit the node, as a real node would.
                let mut used = Resources::ZERO;
                let pods = pods
                    .iter()
                    .enumerate()
                    .map(|(j, cpu)| pod(&format!("n{i}-p{j}"), *cpu))
                    .filter(|p| {
                        let fits = (used + p.requests).fits(&it.allocatable());
                        if fits {
                            used += p.requests;
                        }
                        fits
                    })
                    .collect();
                let mut m = machine(&catalog, &format!("n{i}"), TYPES[*type_index], capacity_type, pods);
                m.candidate.pool = POOLS[*pool as usize].to_string();
                m
            })
            .collect();
        let names: Vec<String> = machines.iter().map(|m| m.candidate.node.clone()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (nodes, candidates) = split(machines, &names);
        let pending: Vec<SimPod> = scenario.pending.iter().enumerate().map(|(i, cpu)| pod(&format!("pending-{i}"), *cpu)).collect();
        let pools = [NodePool::new("default"), NodePool::new("other")];
        let cluster = Cluster { pools: &pools, instance_types: &catalog, nodes: &nodes, pending: &pending };
        let options = ConsolidationOptions { spot_to_spot: scenario.spot_to_spot };

        let decision = multi_node_consolidation(cluster, &candidates, &scenario.budgets, &options, &mut || false);
        if let Some(command) = &decision.command {
            prop_assert!(command.candidates.len() >= 2);
            check_command(cluster, &candidates, &scenario.budgets, command)?;
        }
        let decision = single_node_consolidation(cluster, &candidates, &scenario.budgets, &[], &options, &mut || false);
        if let Some(command) = &decision.command {
            prop_assert_eq!(command.candidates.len(), 1);
            check_command(cluster, &candidates, &scenario.budgets, command)?;
        }
    }
}
