//! Properties that hold for any fleet: PickN never selects more than asked, PickAll selects
//! exactly the clusters that pass the filters, every cluster gets exactly one verdict, and the
//! decision does not depend on the order clusters and bindings arrive in.

use std::collections::BTreeSet;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_placement::scheduler::{BindingState, BindingView};
use proptest::prelude::*;
use serde_json::json;

use crate::fixtures::{OLD_SNAPSHOT, SNAPSHOT, binding, cluster, policy, run};

/// A generated cluster: region, node count, eligibility, taint.
#[derive(Debug, Clone)]
struct Spec {
    region: Option<&'static str>,
    nodes: Option<u8>,
    cpu: u16,
    eligible: bool,
    tainted: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::option::of(prop::sample::select(vec!["east", "west"])),
        prop::option::of(0u8..10),
        0u16..64,
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(region, nodes, cpu, eligible, tainted)| Spec {
            region,
            nodes,
            cpu,
            eligible,
            tainted,
        })
}

fn build(i: usize, s: &Spec) -> MemberCluster {
    let mut c = cluster(&format!("m{i:02}")).resource("available", "cpu", &s.cpu.to_string());
    if let Some(region) = s.region {
        c = c.label("region", region);
    }
    if let Some(nodes) = s.nodes {
        c = c.property("kubernetes-fleet.io/node-count", &nodes.to_string());
    }
    if !s.eligible {
        c = c.stale();
    }
    if s.tainted {
        c = c.taint("maintenance", None);
    }
    c.build()
}

/// East with at least 5 nodes, or fewer than 2 nodes anywhere.
fn affinity() -> serde_json::Value {
    json!({"clusterAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
            {"labelSelector": {"matchLabels": {"region": "east"}},
             "propertySelector": {"matchExpressions": [{"name": "kubernetes-fleet.io/node-count", "operator": "Ge", "values": ["5"]}]}},
            {"propertySelector": {"matchExpressions": [{"name": "kubernetes-fleet.io/node-count", "operator": "Lt", "values": ["2"]}]}}
        ]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 40, "preference": {"propertySorter": {"name": "resources.kubernetes-fleet.io/available-cpu", "sortOrder": "Descending"}}},
            {"weight": 10, "preference": {"labelSelector": {"matchLabels": {"region": "west"}}}}
        ]
    }})
}

fn passes(s: &Spec) -> bool {
    let matches = match s.nodes {
        Some(n) => (s.region == Some("east") && n >= 5) || n < 2,
        None => false,
    };
    matches && s.eligible && !s.tainted
}

/// Bindings on some clusters: (cluster index, state, current snapshot?).
fn bindings_strategy() -> impl Strategy<Value = Vec<(usize, u8, bool)>> {
    prop::collection::vec((0usize..24, 0u8..3, any::<bool>()), 0..8)
}

fn make_bindings(clusters: usize, raw: &[(usize, u8, bool)]) -> Vec<BindingView> {
    let mut seen = BTreeSet::new();
    raw.iter()
        .filter(|(i, _, _)| *i < clusters + 2 && seen.insert(*i))
        .map(|&(i, state, current)| {
            let state = [
                BindingState::Scheduled,
                BindingState::Bound,
                BindingState::Unscheduled,
            ][usize::from(state)];
            let mut b = binding(
                &format!("m{i:02}"),
                state,
                if current { SNAPSHOT } else { OLD_SNAPSHOT },
            );
            if state == BindingState::Unscheduled {
                b.previous_state = Some(BindingState::Bound);
            }
            b
        })
        .collect()
}

fn policies(n: i32) -> Vec<PlacementPolicy> {
    vec![
        policy(json!({"placementType": "PickAll", "affinity": affinity()})),
        policy(json!({"placementType": "PickN", "numberOfClusters": n, "affinity": affinity()})),
        policy(
            json!({"placementType": "PickN", "numberOfClusters": n, "affinity": affinity(),
            "topologySpreadConstraints": [{"topologyKey": "region", "whenUnsatisfiable": "DoNotSchedule"}]}),
        ),
        policy(json!({"placementType": "PickFixed", "clusterNames": ["m00", "m03", "m05", "m99"]})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn pick_n_never_selects_more_than_n(
        specs in prop::collection::vec(spec(), 0..20),
        raw in bindings_strategy(),
        n in 0i32..8,
    ) {
        let clusters: Vec<_> = specs.iter().enumerate().map(|(i, s)| build(i, s)).collect();
        let bindings = make_bindings(clusters.len(), &raw);
        for p in &policies(n)[1..3] {
            let decision = run(p, &clusters, &bindings);
            let count = decision.selected().count();
            prop_assert!(count <= usize::try_from(n).unwrap(), "{count} > {n}");
        }
    }

    #[test]
    fn pick_all_selects_exactly_the_passing_clusters(specs in prop::collection::vec(spec(), 0..24)) {
        let clusters: Vec<_> = specs.iter().enumerate().map(|(i, s)| build(i, s)).collect();
        let decision = run(&policies(0)[0], &clusters, &[]);
        let got: BTreeSet<String> = decision.selected().map(String::from).collect();
        let want: BTreeSet<String> = specs
            .iter()
            .enumerate()
            .filter(|(_, s)| passes(s))
            .map(|(i, _)| format!("m{i:02}"))
            .collect();
        prop_assert_eq!(got, want);
        prop_assert!(decision.condition.fulfilled);
    }

    #[test]
    fn every_cluster_gets_exactly_one_decision(
        specs in prop::collection::vec(spec(), 0..20),
        raw in bindings_strategy(),
        n in 0i32..8,
    ) {
        let clusters: Vec<_> = specs.iter().enumerate().map(|(i, s)| build(i, s)).collect();
        let bindings = make_bindings(clusters.len(), &raw);
        for (k, p) in policies(n).iter().enumerate() {
            let decision = run(p, &clusters, &bindings);
            let names: Vec<&str> = decision.clusters.iter().map(|d| d.cluster_name.as_str()).collect();
            let unique: BTreeSet<&str> = names.iter().copied().collect();
            prop_assert_eq!(unique.len(), names.len(), "duplicate verdicts: {:?}", names);
            let mut want: BTreeSet<String> = (0..clusters.len()).map(|i| format!("m{i:02}")).collect();
            if k == 3 {
                want.extend(["m00", "m03", "m05", "m99"].map(String::from));
            }
            let got: BTreeSet<String> = unique.into_iter().map(String::from).collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn decisions_do_not_depend_on_input_order(
        specs in prop::collection::vec(spec(), 0..20),
        raw in bindings_strategy(),
        n in 0i32..8,
        seed in any::<u64>(),
    ) {
        let clusters: Vec<_> = specs.iter().enumerate().map(|(i, s)| build(i, s)).collect();
        let bindings = make_bindings(clusters.len(), &raw);
        let mut shuffled_clusters = clusters.clone();
        let mut shuffled_bindings = bindings.clone();
        shuffle(&mut shuffled_clusters, seed);
        shuffle(&mut shuffled_bindings, seed.rotate_left(17));
        for p in &policies(n) {
            let a = run(p, &clusters, &bindings);
            let b = run(p, &shuffled_clusters, &shuffled_bindings);
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(a, run(p, &clusters, &bindings));
        }
    }
}

/// A deterministic Fisher–Yates shuffle driven by a xorshift generator.
fn shuffle<T>(items: &mut [T], mut state: u64) {
    state |= 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = usize::try_from(state % (i as u64 + 1)).unwrap();
        items.swap(i, j);
    }
}

/// Fleets of thousands of clusters are filtered in parallel chunks; the decision must not
/// depend on which chunk a cluster falls in.
#[test]
fn large_fleets_decide_the_same_in_any_order() {
    let specs: Vec<Spec> = (0..6000)
        .map(|i| Spec {
            region: [Some("east"), Some("west"), None][i % 3],
            nodes: Some(u8::try_from(i % 10).unwrap()),
            cpu: u16::try_from(i * 7919 % 64).unwrap(),
            eligible: i % 11 != 0,
            tainted: i % 13 == 0,
        })
        .collect();
    let clusters: Vec<_> = specs.iter().enumerate().map(|(i, s)| build(i, s)).collect();
    let mut shuffled = clusters.clone();
    shuffle(&mut shuffled, 7);
    for p in &policies(40)[..3] {
        let decision = run(p, &clusters, &[]);
        assert_eq!(decision.clusters.len(), clusters.len());
        assert_eq!(decision, run(p, &shuffled, &[]));
    }
    let pick_all = run(&policies(0)[0], &clusters, &[]);
    let want = specs.iter().filter(|s| passes(s)).count();
    assert_eq!(pick_all.selected().count(), want);
}
