//! Required cluster affinity, eligibility and taints: which clusters pass, and the reason
//! given for each that does not.

use serde_json::json;

use crate::fixtures::{cluster, policy, reason, run, selected};

const NODES: &str = "kubernetes.azure.com/node-count";

fn node_count_policy(
    operator: &str,
    value: &str,
) -> flotilla_api::placement::policy::PlacementPolicy {
    policy(json!({
        "placementType": "PickAll",
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{"propertySelector": {"matchExpressions": [
                {"name": NODES, "operator": operator, "values": [value]}
            ]}}]
        }}}
    }))
}

#[test]
fn every_operator_compares_quantities() {
    let five = [cluster("m").property(NODES, "5").build()];
    let cases = [
        ("Gt", "4", true),
        ("Gt", "5", false),
        ("Ge", "5", true),
        ("Ge", "6", false),
        ("Eq", "5", true),
        ("Eq", "5000m", true),
        ("Eq", "4", false),
        ("Ne", "4", true),
        ("Ne", "5", false),
        ("Lt", "6", true),
        ("Lt", "5", false),
        ("Le", "5", true),
        ("Le", "4.999", false),
    ];
    for (operator, value, passes) in cases {
        let decision = run(&node_count_policy(operator, value), &five, &[]);
        assert_eq!(
            decision.cluster("m").unwrap().selected,
            passes,
            "5 {operator} {value}: {}",
            reason(&decision, "m")
        );
    }
}

#[test]
fn rejections_name_the_failed_comparison() {
    let three = [cluster("m").property(NODES, "3").build()];
    let cases = [
        (
            "Gt",
            "5",
            "property kubernetes.azure.com/node-count is 3, not > 5",
        ),
        (
            "Ge",
            "5",
            "property kubernetes.azure.com/node-count is 3, not >= 5",
        ),
        (
            "Eq",
            "5",
            "property kubernetes.azure.com/node-count is 3, not = 5",
        ),
        (
            "Ne",
            "3",
            "property kubernetes.azure.com/node-count is 3, not != 3",
        ),
        (
            "Lt",
            "3",
            "property kubernetes.azure.com/node-count is 3, not < 3",
        ),
        (
            "Le",
            "2",
            "property kubernetes.azure.com/node-count is 3, not <= 2",
        ),
    ];
    for (operator, value, why) in cases {
        let decision = run(&node_count_policy(operator, value), &three, &[]);
        assert_eq!(
            reason(&decision, "m"),
            format!(
                "does not match any required cluster selector term: clusterSelectorTerms[0]: {why}"
            )
        );
    }
}

#[test]
fn a_missing_property_never_matches() {
    let clusters = [cluster("m").build()];
    for operator in ["Gt", "Ge", "Eq", "Ne", "Lt", "Le"] {
        let decision = run(&node_count_policy(operator, "0"), &clusters, &[]);
        assert_eq!(
            reason(&decision, "m"),
            "does not match any required cluster selector term: clusterSelectorTerms[0]: \
             property kubernetes.azure.com/node-count is not reported by the cluster",
            "{operator}"
        );
    }
}

#[test]
fn resource_properties_read_resource_usage() {
    let clusters = [
        cluster("big")
            .resource("capacity", "memory", "64Gi")
            .resource("allocatable", "cpu", "15800m")
            .resource("available", "cpu", "12")
            .build(),
        cluster("small")
            .resource("capacity", "memory", "16Gi")
            .resource("allocatable", "cpu", "3800m")
            .resource("available", "cpu", "500m")
            .build(),
    ];
    let cases = [
        (
            "resources.kubernetes-fleet.io/total-memory",
            "Ge",
            "32768Mi",
            vec!["big"],
        ),
        (
            "resources.kubernetes-fleet.io/allocatable-cpu",
            "Gt",
            "4",
            vec!["big"],
        ),
        (
            "resources.kubernetes-fleet.io/available-cpu",
            "Lt",
            "1",
            vec!["small"],
        ),
        (
            "resources.kubernetes-fleet.io/available-memory",
            "Ge",
            "0",
            vec![],
        ),
    ];
    for (name, operator, value, want) in cases {
        let p = policy(json!({
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "clusterSelectorTerms": [{"propertySelector": {"matchExpressions": [
                    {"name": name, "operator": operator, "values": [value]}
                ]}}]
            }}}
        }));
        assert_eq!(
            selected(&run(&p, &clusters, &[])),
            want,
            "{name} {operator} {value}"
        );
    }
    let p = policy(json!({
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{"propertySelector": {"matchExpressions": [
                {"name": "resources.kubernetes-fleet.io/available-memory", "operator": "Ge", "values": ["0"]}
            ]}}]
        }}}
    }));
    assert_eq!(
        reason(&run(&p, &clusters, &[]), "big"),
        "does not match any required cluster selector term: clusterSelectorTerms[0]: \
         property resources.kubernetes-fleet.io/available-memory is not reported by the cluster"
    );
}

/// The seed's second example: `region=east` and `node-count >= 5` in one term.
#[test]
fn label_and_property_selectors_are_anded_within_a_term() {
    let clusters = [
        cluster("east-big")
            .label("region", "east")
            .property(NODES, "5")
            .build(),
        cluster("east-huge")
            .label("region", "east")
            .property(NODES, "12")
            .build(),
        cluster("east-small")
            .label("region", "east")
            .property(NODES, "3")
            .build(),
        cluster("west-big")
            .label("region", "west")
            .property(NODES, "9")
            .build(),
        cluster("unlabelled").property(NODES, "9").build(),
    ];
    let p = policy(json!({
        "placementType": "PickAll",
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{
                "labelSelector": {"matchLabels": {"region": "east"}},
                "propertySelector": {"matchExpressions": [{"name": NODES, "operator": "Ge", "values": ["5"]}]}
            }]
        }}}
    }));
    let decision = run(&p, &clusters, &[]);
    assert_eq!(selected(&decision), ["east-big", "east-huge"]);
    let prefix = "does not match any required cluster selector term: clusterSelectorTerms[0]: ";
    assert_eq!(
        reason(&decision, "east-small"),
        format!("{prefix}property kubernetes.azure.com/node-count is 3, not >= 5")
    );
    assert_eq!(
        reason(&decision, "west-big"),
        format!(r#"{prefix}label requirement region=east is not met (region="west")"#)
    );
    assert_eq!(
        reason(&decision, "unlabelled"),
        format!("{prefix}label requirement region=east is not met (no region label)")
    );
}

#[test]
fn terms_are_ored_and_each_failure_is_reported() {
    let clusters = [
        cluster("a").label("region", "east").build(),
        cluster("b").property(NODES, "7").build(),
        cluster("c")
            .label("region", "west")
            .property(NODES, "2")
            .build(),
    ];
    let p = policy(json!({
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [
                {"labelSelector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["east", "north"]}]}},
                {"propertySelector": {"matchExpressions": [{"name": NODES, "operator": "Gt", "values": ["5"]}]}}
            ]
        }}}
    }));
    let decision = run(&p, &clusters, &[]);
    assert_eq!(selected(&decision), ["a", "b"]);
    assert_eq!(
        reason(&decision, "c"),
        "does not match any required cluster selector term: \
         clusterSelectorTerms[0]: label requirement region in (east,north) is not met (region=\"west\"); \
         clusterSelectorTerms[1]: property kubernetes.azure.com/node-count is 2, not > 5"
    );
}

#[test]
fn malformed_values_reject_with_their_reason() {
    let clusters = [cluster("m")
        .property(NODES, "many")
        .property("example.com/cost", "1")
        .build()];
    let expression = |name: &str, values: serde_json::Value| {
        policy(json!({
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "clusterSelectorTerms": [{"propertySelector": {"matchExpressions": [
                    {"name": name, "operator": "Ge", "values": values}
                ]}}]
            }}}
        }))
    };
    let cases = [
        (
            expression(NODES, json!(["1"])),
            r#"property kubernetes.azure.com/node-count is "many", which is not a quantity"#,
        ),
        (
            expression("example.com/cost", json!(["cheap"])),
            r#"the property selector value "cheap" for example.com/cost is not a quantity"#,
        ),
        (
            expression("example.com/cost", json!(["1", "2"])),
            "the property selector on example.com/cost needs exactly one value, not 2",
        ),
        (
            expression("resources.kubernetes-fleet.io/spare-cpu", json!(["1"])),
            "property resources.kubernetes-fleet.io/spare-cpu names no resource figure (expected \
             resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>)",
        ),
    ];
    for (p, why) in cases {
        let decision = run(&p, &clusters, &[]);
        assert_eq!(
            reason(&decision, "m"),
            format!(
                "does not match any required cluster selector term: clusterSelectorTerms[0]: {why}"
            )
        );
    }
}

#[test]
fn ineligible_clusters_are_filtered_with_the_eligibility_message() {
    let clusters = [
        cluster("ok").build(),
        cluster("stale").stale().build(),
        cluster("gone").leaving().build(),
    ];
    let decision = run(&policy(json!({})), &clusters, &[]);
    assert_eq!(selected(&decision), ["ok"]);
    assert_eq!(
        reason(&decision, "stale"),
        "not eligible: cluster's member agent last sent a heartbeat at 2026-03-01T11:50:00Z, more than 5m ago"
    );
    assert_eq!(
        reason(&decision, "gone"),
        "not eligible: cluster is leaving the fleet (being deleted)"
    );
}

#[test]
fn untolerated_taints_filter_clusters() {
    let clusters = [
        cluster("plain").build(),
        cluster("gpu").taint("dedicated", Some("gpu")).build(),
        cluster("drained").taint("maintenance", None).build(),
    ];
    let decision = run(&policy(json!({})), &clusters, &[]);
    assert_eq!(selected(&decision), ["plain"]);
    assert_eq!(
        reason(&decision, "gpu"),
        "taint dedicated=gpu:NoSchedule is not tolerated"
    );
    assert_eq!(
        reason(&decision, "drained"),
        "taint maintenance:NoSchedule is not tolerated"
    );

    let tolerant = policy(json!({"tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"key": "maintenance", "operator": "Exists"}
    ]}));
    assert_eq!(
        selected(&run(&tolerant, &clusters, &[])),
        ["drained", "gpu", "plain"]
    );
    let wrong_value = policy(json!({"tolerations": [{"key": "dedicated", "value": "ssd"}]}));
    assert_eq!(selected(&run(&wrong_value, &clusters, &[])), ["plain"]);
}

#[test]
fn filters_run_in_kubefleet_order() {
    // Fails affinity, eligibility and taints: affinity is reported.
    let clusters = [cluster("m").stale().taint("x", None).build()];
    let p = node_count_policy("Ge", "1");
    assert!(reason(&run(&p, &clusters, &[]), "m").starts_with("does not match"));
    // Fails eligibility and taints: eligibility is reported.
    assert!(reason(&run(&policy(json!({})), &clusters, &[]), "m").starts_with("not eligible"));
}
