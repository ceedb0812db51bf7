//! The scheduler's rules, one table case each, and its invariants under random clusters; pod
//! topology (spread, pod affinity and anti-affinity) last.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_apimachinery::selector::LabelSelector;
use flotilla_nodes::scheduling::labels;
use flotilla_nodes::scheduling::topology::{
    AffinityTerm, BoundPod, PodSelector, PodTopology, Spread,
};
use flotilla_nodes::scheduling::{
    Effect, ExistingNode, HostPort, InstanceType, NodePool, Operator, Requirement, Requirements,
    Resources, Results, SchedulingOptions, SimPod, Taint, Toleration, kwok_catalog, schedule,
};
use proptest::prelude::*;

const GI: i64 = 1 << 30;

fn pod(name: &str, cpu_millis: i64, memory_gib: i64) -> SimPod {
    SimPod::new(name, Resources::new(cpu_millis, memory_gib * GI, 1, 0))
}

fn requirements(items: &[(&str, Operator, &[&str])]) -> Requirements {
    let mut r = Requirements::new();
    for (key, op, values) in items {
        r.add(key, Requirement::new(*op, values).unwrap());
    }
    r
}

fn linux_pool(name: &str) -> NodePool {
    NodePool {
        requirements: requirements(&[(labels::OS, Operator::In, &["linux"])]),
        ..NodePool::new(name)
    }
}

fn node(name: &str, cpu: i64, memory_gib: i64) -> ExistingNode {
    ExistingNode {
        name: name.to_string(),
        labels: [
            (labels::OS.to_string(), "linux".to_string()),
            ("kubernetes.io/hostname".to_string(), name.to_string()),
        ]
        .into(),
        taints: Vec::new(),
        allocatable: Resources::new(cpu * 1000, memory_gib * GI, 110, 0),
        requested: Resources::ZERO,
        initialized: true,
        pool: Some("default".to_string()),
        bound: Vec::new(),
    }
}

fn run(pools: &[NodePool], nodes: &[ExistingNode], pods: &[SimPod]) -> Results {
    schedule(
        pools,
        &kwok_catalog(144),
        nodes,
        pods,
        SchedulingOptions::default(),
    )
}

fn catalog_type<'a>(catalog: &'a [InstanceType], name: &str) -> &'a InstanceType {
    catalog.iter().find(|t| t.name == name).unwrap()
}

/// A host port on `ip` (empty: unspecified).
fn port(port: i32, protocol: &str, ip: &str) -> HostPort {
    HostPort {
        ip: if ip.is_empty() {
            "0.0.0.0".into()
        } else {
            ip.into()
        },
        protocol: protocol.into(),
        port,
    }
}

#[test]
fn host_ports_clash_as_karpenter_matches_them() {
    let cases = [
        (port(80, "TCP", ""), port(80, "TCP", ""), true),
        (port(80, "TCP", ""), port(80, "UDP", ""), false),
        (port(80, "TCP", ""), port(81, "TCP", ""), false),
        (
            port(80, "TCP", "10.0.0.1"),
            port(80, "TCP", "10.0.0.2"),
            false,
        ),
        (
            port(80, "TCP", "10.0.0.1"),
            port(80, "TCP", "10.0.0.1"),
            true,
        ),
        (port(80, "TCP", "10.0.0.1"), port(80, "TCP", ""), true),
        (port(80, "TCP", "::"), port(80, "TCP", "10.0.0.1"), true),
    ];
    for (a, b, clash) in cases {
        assert_eq!(a.clashes(&b), clash, "{a:?} / {b:?}");
        assert_eq!(b.clashes(&a), clash, "{b:?} / {a:?}");
    }
}

#[test]
fn pods_holding_the_same_host_port_get_a_node_each() {
    let web = |i: usize, p: i32| {
        pod(&format!("web-{i}"), 100, 1).with_host_ports(vec![port(p, "TCP", "")])
    };
    let same: Vec<SimPod> = (0..3).map(|i| web(i, 8080)).collect();
    let results = run(&[linux_pool("default")], &[], &same);
    assert_eq!(results.new_claims.len(), 3, "{results:?}");
    let distinct: Vec<SimPod> = (0..3).map(|i| web(i, 8080 + i as i32)).collect();
    let results = run(&[linux_pool("default")], &[], &distinct);
    assert_eq!(results.new_claims.len(), 1, "{results:?}");

    // A node whose bound pod holds the port takes other pods, not this one.
    let mut busy = node("busy", 16, 64);
    busy.bound = vec![BoundPod {
        host_ports: vec![port(8080, "TCP", "")],
        ..BoundPod::default()
    }];
    let results = run(
        &[linux_pool("default")],
        &[busy],
        &[web(0, 8080), web(1, 9090)],
    );
    assert_eq!(results.existing["busy"], ["web-1"]);
    assert_eq!(results.new_claims.len(), 1);
    assert_eq!(results.new_claims[0].pods, ["web-0"]);
}

#[test]
fn pods_pack_onto_one_claim_with_the_cheapest_option_first() {
    let pods = [pod("a", 1000, 1), pod("b", 2000, 1), pod("c", 500, 1)];
    let results = run(&[linux_pool("default")], &[], &pods);
    assert!(
        results.unschedulable.is_empty(),
        "{:?}",
        results.unschedulable
    );
    let [claim] = results.new_claims.as_slice() else {
        panic!("{:?}", results.new_claims)
    };
    assert_eq!(claim.pods, ["b", "a", "c"], "largest CPU first");
    assert_eq!(claim.requests, Resources::new(3500, 3 * GI, 3, 0));
    let prices: Vec<f64> = claim
        .instance_type_options
        .iter()
        .map(|o| o.price)
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]));
    // 4 vCPU, 8 GiB, linux, spot in any zone: the cheapest type that holds 3.5 vCPU.
    assert_eq!(
        claim.instance_type_options[0].name,
        "kwok-F4-8gi-amd64-linux-g0"
    );
    assert_eq!(
        claim.cheapest_price(),
        Some(claim.instance_type_options[0].price)
    );
    assert!(
        claim
            .instance_type_options
            .iter()
            .all(|o| o.name.contains("linux"))
    );
}

#[test]
fn existing_nodes_come_first_initialized_then_by_name() {
    let mut uninitialized = node("a", 4, 16);
    uninitialized.initialized = false;
    let nodes = [node("c", 4, 16), node("b", 4, 16), uninitialized];
    let results = run(&[linux_pool("default")], &nodes, &[pod("p", 1000, 1)]);
    assert_eq!(
        results.existing,
        BTreeMap::from([("b".to_string(), vec!["p".to_string()])])
    );
    assert!(results.new_claims.is_empty());
}

#[test]
fn uninitialized_nodes_can_count_as_errors() {
    let mut uninitialized = node("a", 4, 16);
    uninitialized.initialized = false;
    let options = SchedulingOptions {
        uninitialized_nodes_are_errors: true,
    };
    let results = schedule(
        &[],
        &kwok_catalog(4),
        &[uninitialized],
        &[pod("p", 1000, 1)],
        options,
    );
    assert!(results.existing.is_empty());
    assert!(results.unschedulable["p"].contains("uninitialized node \"a\""));
}

#[test]
fn existing_nodes_respect_room_taints_and_labels() {
    let mut full = node("a-full", 4, 16);
    full.requested = Resources::new(3500, GI, 5, 0);
    let mut tainted = node("b-tainted", 4, 16);
    tainted.taints = vec![Taint::new("gpu", "true", Effect::NoSchedule)];
    let arm = {
        let mut n = node("c-arm", 4, 16);
        n.labels
            .insert(labels::ARCH.to_string(), "arm64".to_string());
        n
    };
    let plain = node("d-plain", 4, 16);
    let nodes = [full, tainted, arm, plain];
    let wants_arm = pod("arm", 1000, 1).with_requirements(requirements(&[(
        labels::ARCH,
        Operator::In,
        &["arm64"],
    )]));
    let tolerates = pod("tolerant", 900, 1).with_tolerations(vec![Toleration::exists("gpu")]);
    let plain_pod = pod("plain", 800, 1);
    let results = run(&[], &nodes, &[wants_arm, tolerates, plain_pod]);
    assert_eq!(
        results.existing,
        BTreeMap::from([
            ("b-tainted".to_string(), vec!["tolerant".to_string()]),
            (
                "c-arm".to_string(),
                vec!["arm".to_string(), "plain".to_string()]
            ),
        ])
    );
}

#[test]
fn pool_taints_must_be_tolerated() {
    let pool = NodePool {
        taints: vec![Taint::new("dedicated", "gpu", Effect::NoSchedule)],
        ..linux_pool("gpu")
    };
    let tolerant =
        pod("tolerant", 1000, 1).with_tolerations(vec![Toleration::equal("dedicated", "gpu")]);
    let results = run(&[pool], &[], &[tolerant, pod("intolerant", 500, 1)]);
    assert_eq!(results.new_claims.len(), 1);
    assert_eq!(results.new_claims[0].pods, ["tolerant"]);
    assert_eq!(
        results.unschedulable["intolerant"],
        "nodepool \"gpu\": did not tolerate taint dedicated=gpu:NoSchedule"
    );
}

#[test]
fn custom_labels_must_be_defined_by_the_pool() {
    let wants_team =
        pod("p", 1000, 1).with_requirements(requirements(&[("team", Operator::In, &["a"])]));
    let results = run(
        &[linux_pool("default")],
        &[],
        std::slice::from_ref(&wants_team),
    );
    assert_eq!(
        results.unschedulable["p"],
        "nodepool \"default\": incompatible requirements, label \"team\" does not have known values"
    );
    let team_pool = NodePool {
        labels: [("team".to_string(), "a".to_string())].into(),
        ..linux_pool("team-a")
    };
    let results = run(&[team_pool], &[], &[wants_team]);
    let claim = &results.new_claims[0];
    assert_eq!(
        claim.requirements.get("team"),
        Some(&Requirement::single("a"))
    );
    assert_eq!(
        claim.requirements.get(labels::NODE_POOL),
        Some(&Requirement::single("team-a"))
    );
}

#[test]
fn well_known_labels_need_no_pool_definition() {
    let wants_zone = pod("p", 1000, 1).with_requirements(requirements(&[(
        labels::ZONE,
        Operator::In,
        &["test-zone-b"],
    )]));
    let results = run(&[linux_pool("default")], &[], &[wants_zone]);
    assert!(results.unschedulable.is_empty());
    assert_eq!(
        results.new_claims[0].requirements.get(labels::ZONE),
        Some(&Requirement::single("test-zone-b"))
    );
}

#[test]
fn pools_go_by_weight_then_name() {
    let heavy = NodePool {
        weight: 10,
        ..linux_pool("z-heavy")
    };
    let pools = [linux_pool("b"), linux_pool("a"), heavy];
    let results = run(&pools, &[], &[pod("p", 1000, 1)]);
    assert_eq!(results.new_claims[0].pool, "z-heavy");
    let results = run(&pools[..2], &[], &[pod("p", 1000, 1)]);
    assert_eq!(results.new_claims[0].pool, "a");
}

#[test]
fn limits_filter_types_and_count_the_largest_option() {
    let limited = NodePool {
        weight: 10,
        remaining: Some(Resources {
            cpu_millis: 4000,
            ..Resources::UNLIMITED
        }),
        ..linux_pool("limited")
    };
    let fallback = linux_pool("fallback");
    let catalog = kwok_catalog(144);
    // Two pods that cannot share a node: each needs a claim of its own.
    let zone = |z: &str| requirements(&[(labels::ZONE, Operator::In, &[z])]);
    let pods = [
        pod("a", 3000, 1).with_requirements(zone("test-zone-a")),
        pod("b", 3000, 1).with_requirements(zone("test-zone-b")),
        pod("big", 6000, 1),
    ];
    let results = schedule(
        std::slice::from_ref(&limited),
        &catalog,
        &[],
        &pods,
        SchedulingOptions::default(),
    );
    let claim = &results.new_claims[0];
    assert!(
        claim
            .instance_type_options
            .iter()
            .all(|o| catalog_type(&catalog, &o.name).capacity.cpu_millis <= 4000)
    );
    assert!(
        results.unschedulable["big"].contains("exceeds the pool's remaining limits"),
        "{:?}",
        results.unschedulable
    );
    // The first claim counts its largest option (4 vCPU) against the limit: nothing is left.
    assert!(results.unschedulable.contains_key("b"));
    let results = schedule(
        &[limited, fallback],
        &catalog,
        &[],
        &pods,
        SchedulingOptions::default(),
    );
    assert!(results.unschedulable.is_empty());
    let pools: Vec<&str> = results.new_claims.iter().map(|c| c.pool.as_str()).collect();
    // "big" opens a fallback claim (too big for the limit), "a" joins it, "b" (another zone)
    // opens a claim from the heavier limited pool.
    assert_eq!(pools, ["fallback", "limited"]);
}

#[test]
fn a_node_limit_caps_the_claims_a_pool_opens() {
    let zone = |z: &str| requirements(&[(labels::ZONE, Operator::In, &[z])]);
    // Three pods that cannot share a node.
    let pods = [
        pod("a", 1000, 1).with_requirements(zone("test-zone-a")),
        pod("b", 1000, 1).with_requirements(zone("test-zone-b")),
        pod("c", 1000, 1).with_requirements(zone("test-zone-c")),
    ];
    let capped = NodePool {
        remaining_nodes: Some(2),
        ..linux_pool("capped")
    };
    let results = run(std::slice::from_ref(&capped), &[], &pods);
    assert_eq!(results.new_claims.len(), 2);
    assert_eq!(
        results.unschedulable["c"],
        "nodepool \"capped\": the pool has as many nodes as its limits.nodes"
    );
    let full = NodePool {
        remaining_nodes: Some(0),
        ..linux_pool("capped")
    };
    let results = run(&[full, linux_pool("spare")], &[], &pods);
    assert!(results.unschedulable.is_empty());
    assert!(results.new_claims.iter().all(|c| c.pool == "spare"));
}

#[test]
fn affinity_terms_are_tried_in_order() {
    let mut p = pod("p", 1000, 1);
    p.requirement_terms = vec![
        requirements(&[(labels::ARCH, Operator::In, &["s390x"])]),
        requirements(&[(labels::ARCH, Operator::In, &["arm64"])]),
    ];
    let results = run(&[linux_pool("default")], &[], std::slice::from_ref(&p));
    assert!(results.unschedulable.is_empty());
    assert_eq!(
        results.new_claims[0].requirements.get(labels::ARCH),
        Some(&Requirement::single("arm64"))
    );
    p.requirement_terms[1] = requirements(&[(labels::ARCH, Operator::In, &["mips"])]);
    let results = run(&[linux_pool("default")], &[], &[p]);
    let why = &results.unschedulable["p"];
    assert!(
        why.starts_with("node affinity term 1: nodepool \"default\": "),
        "{why}"
    );
    assert!(why.contains(" | node affinity term 2: "), "{why}");
}

#[test]
fn planned_claims_take_pods_fewest_pods_first() {
    let zone = |z: &str| requirements(&[(labels::ZONE, Operator::In, &[z])]);
    let pods = [
        pod("a1", 3000, 1).with_requirements(zone("test-zone-a")),
        pod("a2", 3000, 1).with_requirements(zone("test-zone-a")),
        pod("b1", 2000, 1).with_requirements(zone("test-zone-b")),
        pod("any", 100, 1),
    ];
    let results = run(&[linux_pool("default")], &[], &pods);
    let claims: Vec<Vec<String>> = results.new_claims.iter().map(|c| c.pods.clone()).collect();
    assert_eq!(claims, [vec!["a1", "a2"], vec!["b1", "any"]]);
}

#[test]
fn claim_requirements_narrow_as_pods_join() {
    let zones = |z: &[&str]| requirements(&[(labels::ZONE, Operator::In, z)]);
    let pods = [
        pod("ab", 3000, 1).with_requirements(zones(&["test-zone-a", "test-zone-b"])),
        pod("bc", 2000, 1).with_requirements(zones(&["test-zone-b", "test-zone-c"])),
        pod("a", 1000, 1).with_requirements(zones(&["test-zone-a"])),
    ];
    let results = run(&[linux_pool("default")], &[], &pods);
    let claims: Vec<(Vec<String>, String)> = results
        .new_claims
        .iter()
        .map(|c| {
            (
                c.pods.clone(),
                c.requirements.get(labels::ZONE).unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        claims,
        [
            (vec!["ab".into(), "bc".into()], "In [test-zone-b]".into()),
            (vec!["a".into()], "In [test-zone-a]".into()),
        ]
    );
}

#[test]
fn daemon_overhead_starts_every_claim() {
    let pool = NodePool {
        daemon_overhead: Resources::new(500, GI, 2, 0),
        ..linux_pool("default")
    };
    let results = run(&[pool], &[], &[pod("p", 3600, 1)]);
    let claim = &results.new_claims[0];
    assert_eq!(claim.requests, Resources::new(4100, 2 * GI, 3, 0));
    assert_eq!(
        claim.instance_type_options[0].name,
        "kwok-F8-16gi-amd64-linux-g0"
    );
}

#[test]
fn min_values_must_hold_over_the_options() {
    let pool = NodePool {
        requirements: {
            let mut r = requirements(&[(labels::OS, Operator::In, &["linux"])]);
            r.add(
                labels::SKU_FAMILY,
                Requirement::new::<&str>(Operator::Exists, &[])
                    .unwrap()
                    .with_min_values(3),
            );
            r
        },
        ..NodePool::new("flexible")
    };
    let results = run(std::slice::from_ref(&pool), &[], &[pod("p", 1000, 1)]);
    assert!(results.unschedulable.is_empty());
    let only_d = pod("d", 1000, 1).with_requirements(requirements(&[(
        labels::SKU_FAMILY,
        Operator::In,
        &["D"],
    )]));
    let results = run(&[pool], &[], &[only_d]);
    assert!(
        results.unschedulable["d"].contains("minValues of 3"),
        "{:?}",
        results.unschedulable
    );
}

#[test]
fn options_are_capped_at_600() {
    let catalog = kwok_catalog(1000);
    let results = schedule(
        &[NodePool::new("any")],
        &catalog,
        &[],
        &[pod("p", 100, 1)],
        SchedulingOptions::default(),
    );
    assert_eq!(results.new_claims[0].instance_type_options.len(), 600);
}

#[test]
fn a_pod_too_big_for_every_type_says_so() {
    let results = run(&[linux_pool("default")], &[], &[pod("huge", 1_000_000, 1)]);
    assert_eq!(
        results.unschedulable["huge"],
        "nodepool \"default\": no compatible instance type has room for cpu=1000 memory=1Gi pods=1 (daemon overhead included)"
    );
    let results = run(&[], &[], &[pod("p", 1, 1)]);
    assert_eq!(
        results.unschedulable["p"],
        "no existing node has room and there is no node pool"
    );
    let wants_mips =
        pod("m", 1, 1).with_requirements(requirements(&[(labels::ARCH, Operator::In, &["mips"])]));
    let results = run(&[linux_pool("default")], &[], &[wants_mips]);
    assert!(
        results.unschedulable["m"].contains("no instance type is compatible with requirements"),
        "{:?}",
        results.unschedulable
    );
}

// ---- invariants ----

/// A random small cluster: a catalog slice, pools, existing nodes and pods.
#[derive(Debug, Clone)]
struct Cluster {
    catalog_size: usize,
    pools: Vec<NodePool>,
    nodes: Vec<ExistingNode>,
    pods: Vec<SimPod>,
}

fn arb_taints() -> impl Strategy<Value = Vec<Taint>> {
    prop::collection::vec(
        (prop::sample::select(vec!["gpu", "team"]), prop::bool::ANY).prop_map(|(key, hard)| {
            Taint::new(
                key,
                "x",
                if hard {
                    Effect::NoSchedule
                } else {
                    Effect::PreferNoSchedule
                },
            )
        }),
        0..2,
    )
}

fn arb_requirements() -> impl Strategy<Value = Requirements> {
    let item = prop_oneof![
        prop::sample::select(vec!["amd64", "arm64"]).prop_map(|a| (
            labels::ARCH,
            Operator::In,
            vec![a]
        )),
        prop::sample::select(vec!["test-zone-a", "test-zone-b"]).prop_map(|z| (
            labels::ZONE,
            Operator::In,
            vec![z]
        )),
        prop::sample::select(vec!["spot", "on-demand"]).prop_map(|c| (
            labels::CAPACITY_TYPE,
            Operator::NotIn,
            vec![c]
        )),
        prop::sample::select(vec!["a", "b"]).prop_map(|t| ("team", Operator::In, vec![t])),
        Just(("team", Operator::DoesNotExist, vec![])),
    ];
    prop::collection::vec(item, 0..3).prop_map(|items| {
        let mut r = Requirements::new();
        for (key, op, values) in items {
            r.add(key, Requirement::new(op, &values).unwrap());
        }
        r
    })
}

fn arb_cluster() -> impl Strategy<Value = Cluster> {
    let arb_pool = (
        0..3i32,
        arb_taints(),
        prop::option::of(prop::sample::select(vec!["a", "b"])),
        prop::option::of(1..40i64),
    );
    let arb_node = (
        1..8i64,
        0..6i64,
        prop::bool::ANY,
        arb_taints(),
        prop::sample::select(vec!["amd64", "arm64"]),
        prop::option::of(prop::sample::select(vec!["a", "b"])),
    );
    let arb_pod = (
        prop::sample::select(vec![100i64, 250, 500, 1000, 2000, 4000, 9000]),
        prop::sample::select(vec![128i64, 512, 2048, 8192, 30000]),
        prop::collection::vec(arb_requirements(), 0..3),
        prop::collection::vec(prop::sample::select(vec!["gpu", "team"]), 0..2),
        prop::option::of(prop::sample::select(vec![80i32, 443])),
    );
    (
        prop::sample::select(vec![8usize, 36, 144]),
        prop::collection::vec(arb_pool, 0..3),
        prop::collection::vec(arb_node, 0..5),
        prop::collection::vec(arb_pod, 0..30),
    )
        .prop_map(|(catalog_size, pools, nodes, pods)| Cluster {
            catalog_size,
            pools: pools
                .into_iter()
                .enumerate()
                .map(|(i, (weight, taints, team, cpu_limit))| NodePool {
                    weight,
                    taints,
                    labels: team
                        .map(|t| ("team".to_string(), t.to_string()))
                        .into_iter()
                        .collect(),
                    remaining: cpu_limit.map(|cpu| Resources {
                        cpu_millis: cpu * 1000,
                        ..Resources::UNLIMITED
                    }),
                    daemon_overhead: Resources::new(100, 128 << 20, 1, 0),
                    ..linux_pool(&format!("pool-{i}"))
                })
                .collect(),
            nodes: nodes
                .into_iter()
                .enumerate()
                .map(|(i, (cpu, used, initialized, taints, arch, team))| {
                    let mut n = node(&format!("node-{i}"), cpu, cpu * 4);
                    n.requested = Resources::new(used.min(cpu) * 900, used * GI, used, 0);
                    n.initialized = initialized;
                    n.taints = taints;
                    n.labels.insert(labels::ARCH.to_string(), arch.to_string());
                    if let Some(team) = team {
                        n.labels.insert("team".to_string(), team.to_string());
                    }
                    n
                })
                .collect(),
            pods: pods
                .into_iter()
                .enumerate()
                .map(
                    |(i, (cpu, memory_mib, terms, tolerated, host_port))| SimPod {
                        requirement_terms: terms,
                        tolerations: tolerated.into_iter().map(Toleration::exists).collect(),
                        host_ports: host_port.map(|p| port(p, "TCP", "")).into_iter().collect(),
                        ..SimPod::new(
                            &format!("pod-{i}"),
                            Resources::new(cpu, memory_mib << 20, 1, 0),
                        )
                    },
                )
                .collect(),
        })
}

/// Whether no two of the `placed` pods hold clashing host ports.
fn distinct_ports(placed: &[String], pods: &BTreeMap<&str, &SimPod>) -> bool {
    let held: Vec<&HostPort> = placed
        .iter()
        .flat_map(|name| &pods[name.as_str()].host_ports)
        .collect();
    held.iter()
        .enumerate()
        .all(|(i, a)| held[i + 1..].iter().all(|b| !a.clashes(b)))
}

fn tolerates(pod: &SimPod, taints: &[Taint]) -> bool {
    flotilla_nodes::scheduling::taints::untolerated(taints, &pod.tolerations).is_none()
}

/// The pod's requirement terms, at least the empty one.
fn terms(pod: &SimPod) -> Vec<Requirements> {
    if pod.requirement_terms.is_empty() {
        vec![Requirements::new()]
    } else {
        pod.requirement_terms.clone()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn placements_are_sound_and_complete(cluster in arb_cluster()) {
        let catalog = kwok_catalog(cluster.catalog_size);
        let results = schedule(&cluster.pools, &catalog, &cluster.nodes, &cluster.pods, SchedulingOptions::default());
        let pods: BTreeMap<&str, &SimPod> = cluster.pods.iter().map(|p| (p.name.as_str(), p)).collect();

        // Every pod is placed exactly once or reported with a reason.
        let mut seen = BTreeSet::new();
        let placed = results.existing.values().flatten().chain(results.new_claims.iter().flat_map(|c| &c.pods));
        for name in placed {
            prop_assert!(seen.insert(name.clone()), "{} placed twice", name);
            prop_assert!(!results.unschedulable.contains_key(name));
        }
        for (name, why) in &results.unschedulable {
            prop_assert!(!why.is_empty());
            prop_assert!(seen.insert(name.clone()));
        }
        prop_assert_eq!(seen.len(), cluster.pods.len());

        // Existing nodes: room, taints, labels.
        for (node_name, placed) in &results.existing {
            let node = cluster.nodes.iter().find(|n| &n.name == node_name).unwrap();
            let mut total = node.requested;
            for name in placed {
                let pod = pods[name.as_str()];
                total += pod.requests;
                prop_assert!(tolerates(pod, &node.taints));
                prop_assert!(terms(pod).iter().any(|t| t.matches(&node.labels)));
            }
            prop_assert!(total.fits(&node.allocatable), "{} overcommitted", node_name);
            prop_assert!(distinct_ports(placed, &pods), "{} holds a host port twice", node_name);
        }

        // New claims: the cheapest option holds everything, and suits every pod.
        for claim in &results.new_claims {
            let pool = cluster.pools.iter().find(|p| p.name == claim.pool).unwrap();
            let cheapest = catalog_type(&catalog, &claim.instance_type_options[0].name);
            let mut total = pool.daemon_overhead;
            for name in &claim.pods {
                let pod = pods[name.as_str()];
                total += pod.requests;
                prop_assert!(tolerates(pod, &pool.taints));
                prop_assert!(terms(pod).iter().any(|t| cheapest.compatible(t) && claim.requirements.intersects(t).is_ok()));
            }
            prop_assert_eq!(total, claim.requests);
            prop_assert!(total.fits(&cheapest.allocatable()), "claim overcommitted");
            prop_assert!(distinct_ports(&claim.pods, &pods), "a claim holds a host port twice");
            prop_assert!(cheapest.compatible(&claim.requirements));
            prop_assert!(claim.requirements.intersects(&pool.requirements).is_ok());
            if let Some(team) = pool.labels.get("team") {
                prop_assert_eq!(claim.requirements.get("team"), Some(&Requirement::single(team)));
            }
        }
    }
}

/// Pods of `app` in namespace `default`, each with `topology` built for them.
fn app_pods(app: &str, count: usize, topology: impl Fn() -> PodTopology) -> Vec<SimPod> {
    (0..count)
        .map(|i| {
            let mut t = topology();
            t.namespace = "default".into();
            t.labels = serde_json::json!({ "app": app })
                .as_object()
                .unwrap()
                .clone();
            pod(&format!("{app}-{i}"), 1000, 1).with_topology(t)
        })
        .collect()
}

/// Pods in `default` labelled `app`.
fn app(name: &str) -> PodSelector {
    PodSelector {
        namespaces: BTreeSet::from(["default".to_string()]),
        selector: Some(LabelSelector::parse(&format!("app={name}")).unwrap()),
    }
}

fn zone_spread(skew: u32) -> PodTopology {
    PodTopology {
        spread: vec![Spread {
            key: labels::ZONE.into(),
            max_skew: skew,
            pods: app("web"),
        }],
        ..PodTopology::default()
    }
}

/// Each claim's single zone.
fn claim_zones(results: &Results) -> Vec<String> {
    results
        .new_claims
        .iter()
        .map(|c| {
            let zones = c
                .requirements
                .get(labels::ZONE)
                .and_then(|r| r.values())
                .unwrap();
            assert_eq!(zones.len(), 1, "a spread claim is narrowed to one zone");
            zones.iter().next().unwrap().clone()
        })
        .collect()
}

#[test]
fn a_zone_spread_opens_claims_zone_by_zone_within_the_skew() {
    let pods = app_pods("web", 6, || zone_spread(1));
    let results = run(&[linux_pool("default")], &[], &pods);
    assert!(
        results.unschedulable.is_empty(),
        "{:?}",
        results.unschedulable
    );
    let mut per_zone: BTreeMap<String, usize> = BTreeMap::new();
    for (zone, claim) in claim_zones(&results).iter().zip(&results.new_claims) {
        *per_zone.entry(zone.clone()).or_default() += claim.pods.len();
    }
    // Four zones, six pods: 2, 2, 1, 1.
    assert_eq!(per_zone.len(), 4, "{per_zone:?}");
    let (min, max) = (per_zone.values().min(), per_zone.values().max());
    assert_eq!((min, max), (Some(&1), Some(&2)), "{per_zone:?}");
}

#[test]
fn pods_already_bound_count_toward_the_spread() {
    let mut crowded = node("a", 16, 64);
    crowded
        .labels
        .insert(labels::ZONE.into(), "test-zone-a".into());
    crowded.bound = (0..2)
        .map(|_| BoundPod {
            host_ports: Vec::new(),
            namespace: "default".into(),
            labels: serde_json::json!({"app": "web"})
                .as_object()
                .unwrap()
                .clone(),
        })
        .collect();
    let pods = app_pods("web", 3, || zone_spread(1));
    let results = run(&[linux_pool("default")], &[crowded], &pods);
    assert!(
        results.existing.is_empty(),
        "zone a is two ahead: {results:?}"
    );
    let mut zones = claim_zones(&results);
    zones.sort();
    assert_eq!(zones, ["test-zone-b", "test-zone-c", "test-zone-d"]);
}

#[test]
fn hostname_anti_affinity_gives_each_pod_its_own_node() {
    let anti = || PodTopology {
        affinity: vec![AffinityTerm {
            key: "kubernetes.io/hostname".into(),
            pods: app("solo"),
            anti: true,
        }],
        ..PodTopology::default()
    };
    let pods = app_pods("solo", 3, anti);
    let results = run(&[linux_pool("default")], &[node("n", 16, 64)], &pods);
    assert_eq!(results.existing.values().map(Vec::len).sum::<usize>(), 1);
    assert_eq!(results.new_claims.len(), 2);
    assert!(results.new_claims.iter().all(|c| c.pods.len() == 1));

    let limited = NodePool {
        remaining_nodes: Some(1),
        ..linux_pool("default")
    };
    let results = run(&[limited], &[], &pods);
    assert_eq!(results.new_claims.len(), 1);
    assert_eq!(results.unschedulable.len(), 2, "{results:?}");
}

#[test]
fn zone_affinity_follows_the_pods_it_names_and_anti_affinity_avoids_them() {
    let mut db = node("db-node", 2, 8);
    db.labels.insert(labels::ZONE.into(), "test-zone-c".into());
    db.requested = Resources::new(2000, GI, 1, 0);
    db.bound = vec![BoundPod {
        host_ports: Vec::new(),
        namespace: "default".into(),
        labels: serde_json::json!({"app": "db"})
            .as_object()
            .unwrap()
            .clone(),
    }];
    let term = |anti| PodTopology {
        affinity: vec![AffinityTerm {
            key: labels::ZONE.into(),
            pods: app("db"),
            anti,
        }],
        ..PodTopology::default()
    };
    let near = app_pods("near", 2, || term(false));
    let results = run(&[linux_pool("default")], &[db.clone()], &near);
    assert_eq!(claim_zones(&results), ["test-zone-c"]);
    let far = app_pods("far", 1, || term(true));
    let results = run(&[linux_pool("default")], &[db], &far);
    let zones = results.new_claims[0]
        .requirements
        .get(labels::ZONE)
        .unwrap();
    assert!(
        !zones.has("test-zone-c") && zones.has("test-zone-a"),
        "{zones:?}"
    );
}
