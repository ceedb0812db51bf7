//! Preferred cluster affinity with property sorters: the seed document's worked examples and
//! the choices behind them.

use flotilla_api::placement::policy::PlacementPolicy;
use serde_json::{Value, json};

use crate::fixtures::{affinity, cluster, policy, run, selected};

const CPU: &str = "resources.kubernetes-fleet.io/available-cpu";
const COST: &str = "kubernetes.azure.com/per-cpu-core-cost";

fn sorted_by(n: i32, terms: Value) -> PlacementPolicy {
    policy(json!({
        "placementType": "PickN",
        "numberOfClusters": n,
        "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}
    }))
}

/// The seed's Descending example: available CPU 100, 20 and 10 with weight 100 give
/// 100%, 11.11% and 0% of the weight.
#[test]
fn descending_sorter_matches_the_seed_example() {
    let clusters = [
        cluster("bravelion")
            .resource("available", "cpu", "100")
            .build(),
        cluster("smartfish")
            .resource("available", "cpu", "20")
            .build(),
        cluster("jumpingcat")
            .resource("available", "cpu", "10")
            .build(),
    ];
    let p = sorted_by(
        3,
        json!([{"weight": 100, "preference": {"propertySorter": {"name": CPU, "sortOrder": "Descending"}}}]),
    );
    let decision = run(&p, &clusters, &[]);
    assert_eq!(affinity(&decision, "bravelion"), 100);
    assert_eq!(affinity(&decision, "smartfish"), 11);
    assert_eq!(affinity(&decision, "jumpingcat"), 0);
}

/// The seed's Ascending example: per-CPU-core costs 1, 0.2 and 0.1 give 0%, 88.89% and 100%
/// of the weight.
#[test]
fn ascending_sorter_matches_the_seed_example() {
    let clusters = [
        cluster("bravelion").property(COST, "1").build(),
        cluster("smartfish").property(COST, "0.2").build(),
        cluster("jumpingcat").property(COST, "0.1").build(),
    ];
    let p = sorted_by(
        1,
        json!([{"weight": 100, "preference": {"propertySorter": {"name": COST, "sortOrder": "Ascending"}}}]),
    );
    let decision = run(&p, &clusters, &[]);
    assert_eq!(selected(&decision), ["jumpingcat"]);
    assert_eq!(affinity(&decision, "bravelion"), 0);
    assert_eq!(affinity(&decision, "smartfish"), 89);
    assert_eq!(affinity(&decision, "jumpingcat"), 100);
}

/// The seed's third example, written with the deprecated `metricSorter` name: weight 20 by
/// node count, Descending.
#[test]
fn metric_sorter_is_an_alias() {
    let clusters = [
        cluster("a")
            .property("kubernetes.azure.com/node-count", "3")
            .build(),
        cluster("b")
            .property("kubernetes.azure.com/node-count", "9")
            .build(),
        cluster("c")
            .property("kubernetes.azure.com/node-count", "6")
            .build(),
    ];
    let p = sorted_by(
        10,
        json!([{"weight": 20, "preference": {"metricSorter": {"name": "kubernetes.azure.com/node-count", "sortOrder": "Descending"}}}]),
    );
    let decision = run(&p, &clusters, &[]);
    assert_eq!(
        [
            affinity(&decision, "a"),
            affinity(&decision, "b"),
            affinity(&decision, "c")
        ],
        [0, 20, 10]
    );
}

/// With a label selector, only matching clusters earn weight; min and max still range over
/// every member cluster reporting the property (KubeFleet reads all clusters of the cycle).
#[test]
fn sorter_range_spans_all_clusters_but_only_matching_ones_score() {
    let clusters = [
        cluster("prod-a")
            .label("env", "prod")
            .resource("capacity", "cpu", "40")
            .build(),
        cluster("prod-b")
            .label("env", "prod")
            .resource("capacity", "cpu", "20")
            .build(),
        cluster("dev")
            .label("env", "dev")
            .resource("capacity", "cpu", "100")
            .build(),
        cluster("stale")
            .label("env", "prod")
            .resource("capacity", "cpu", "0")
            .stale()
            .build(),
        cluster("unknown").label("env", "prod").build(),
    ];
    let p = sorted_by(
        5,
        json!([{"weight": 20, "preference": {
            "labelSelector": {"matchLabels": {"env": "prod"}},
            "propertySorter": {"name": "resources.kubernetes-fleet.io/total-cpu", "sortOrder": "Descending"}
        }}]),
    );
    let decision = run(&p, &clusters, &[]);
    // Range [0, 100] comes from the filtered-out "stale" and the non-matching "dev".
    assert_eq!(affinity(&decision, "prod-a"), 8);
    assert_eq!(affinity(&decision, "prod-b"), 4);
    assert_eq!(affinity(&decision, "dev"), 0);
    assert_eq!(affinity(&decision, "unknown"), 0);
    assert!(decision.cluster("stale").unwrap().cluster_score.is_none());
}

#[test]
fn equal_values_and_missing_properties_score_zero() {
    let clusters = [
        cluster("a").property(COST, "0.5").build(),
        cluster("b").property(COST, "500m").build(),
        cluster("c").build(),
    ];
    let p = sorted_by(
        3,
        json!([
            {"weight": 60, "preference": {"propertySorter": {"name": COST, "sortOrder": "Ascending"}}},
            {"weight": 0, "preference": {}},
            {"weight": -30, "preference": {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}}}
        ]),
    );
    let decision = run(&p, &clusters, &[]);
    for name in ["a", "b", "c"] {
        assert_eq!(affinity(&decision, name), -30, "{name}");
    }
}

#[test]
fn sorters_and_plain_terms_add_up() {
    let clusters = [
        cluster("cheap-small")
            .label("env", "prod")
            .property(COST, "0.1")
            .resource("available", "cpu", "4")
            .build(),
        cluster("dear-big")
            .label("env", "prod")
            .property(COST, "0.9")
            .resource("available", "cpu", "64")
            .build(),
        cluster("mid")
            .property(COST, "0.5")
            .resource("available", "cpu", "34")
            .build(),
    ];
    let p = sorted_by(
        1,
        json!([
            {"weight": 40, "preference": {"propertySorter": {"name": COST, "sortOrder": "Ascending"}}},
            {"weight": 50, "preference": {"propertySorter": {"name": CPU, "sortOrder": "Descending"}}},
            {"weight": 15, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
        ]),
    );
    let decision = run(&p, &clusters, &[]);
    assert_eq!(affinity(&decision, "cheap-small"), 40 + 15);
    assert_eq!(affinity(&decision, "dear-big"), 50 + 15);
    assert_eq!(affinity(&decision, "mid"), 20 + 25);
    assert_eq!(selected(&decision), ["dear-big"]);
}
