use std::collections::BTreeMap;

use flotilla_api::nodes::{Budget, Disruption, NodePoolSpec};
use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::*;

fn node(name: &str, ready: bool) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([
                (NODEPOOL_LABEL.to_string(), "default".to_string()),
                (INITIALIZED_LABEL.to_string(), "true".to_string()),
            ])),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            capacity: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("4".into())),
                ("memory".to_string(), Quantity("16393244Ki".into())),
                ("pods".to_string(), Quantity("110".into())),
            ])),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..NodeCondition::default()
            }]),
            ..NodeStatus::default()
        }),
    }
}

/// The seed's first NodePool: 10%, and 0 on weekdays from 09:00 for 8 hours.
fn seed_default() -> NodePool {
    let yaml = include_str!("../../../../examples/nodes/seed-003/nodepool-default.yaml");
    serde_saphyr::from_str(yaml).unwrap()
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn the_seed_pool_blocks_disruption_in_weekday_business_hours_only() {
    let nodes: Vec<Node> = (0..12).map(|i| node(&format!("n{i}"), true)).collect();
    let refs: Vec<&Node> = nodes.iter().collect();
    let pool = seed_default();
    let summary = |now: &str| {
        pool_status(&pool, &refs, Ok(()), None, at(now))
            .allowed_disruptions_summary
            .unwrap()
    };
    // 2026-11-23 is a Monday.
    assert_eq!(
        summary("2026-11-23T08:59:00Z"),
        "Underutilized=2 Empty=2 Drifted=2"
    );
    assert_eq!(
        summary("2026-11-23T09:00:00Z"),
        "Underutilized=0 Empty=0 Drifted=0"
    );
    assert_eq!(
        summary("2026-11-27T16:59:59Z"),
        "Underutilized=0 Empty=0 Drifted=0"
    );
    assert_eq!(
        summary("2026-11-27T17:00:00Z"),
        "Underutilized=2 Empty=2 Drifted=2"
    );
    assert_eq!(
        summary("2026-11-28T10:00:00Z"),
        "Underutilized=2 Empty=2 Drifted=2"
    );
    let status = pool_status(&pool, &refs, Ok(()), None, at("2026-11-23T10:00:00Z"));
    assert_eq!(status.expire_after.as_deref(), Some("168h"));
    assert_eq!(
        status.expire_after_source.as_deref(),
        Some("spec.disruption.expireAfter")
    );
    assert_eq!(status.resources["nodes"].0, "12");
    assert_eq!(status.nodes, Some(12));
    assert_eq!(status.resources["cpu"].0, "48");
    assert_eq!(status.resources["pods"].0, "1320");
}

#[test]
fn nodes_already_disrupting_use_up_the_allowance() {
    let mut nodes: Vec<Node> = (0..10).map(|i| node(&format!("n{i}"), true)).collect();
    nodes[0] = node("n0", false);
    nodes[1].spec = Some(NodeSpec {
        taints: Some(vec![Taint {
            key: DISRUPTED_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        }]),
        ..NodeSpec::default()
    });
    nodes[2].metadata.deletion_timestamp = Some(Time(at("2026-11-23T07:00:00Z")));
    let refs: Vec<&Node> = nodes.iter().collect();
    let c = counts(&refs);
    assert_eq!((c.nodes, c.disrupting), (9, 2));
    let pool = NodePool::new(
        "default",
        NodePoolSpec {
            disruption: Some(Disruption {
                budgets: Some(vec![Budget {
                    nodes: "3".into(),
                    ..Budget::default()
                }]),
                ..Disruption::default()
            }),
            ..NodePoolSpec::default()
        },
    );
    let status = pool_status(&pool, &refs, Ok(()), None, at("2026-11-23T07:00:00Z"));
    assert_eq!(
        status.allowed_disruptions_summary.as_deref(),
        Some("Underutilized=1 Empty=1 Drifted=1")
    );
}

#[test]
fn a_bad_budget_or_missing_node_class_says_so_in_conditions() {
    let pool = NodePool::new(
        "default",
        NodePoolSpec {
            disruption: Some(Disruption {
                budgets: Some(vec![Budget {
                    nodes: "5".into(),
                    duration: Some("8h".into()),
                    reasons: Some(vec![flotilla_api::nodes::DisruptionReason::Drifted]),
                    ..Budget::default()
                }]),
                ..Disruption::default()
            }),
            ..NodePoolSpec::default()
        },
    );
    let nodes = [node("n0", true)];
    let refs: Vec<&Node> = nodes.iter().collect();
    let status = pool_status(
        &pool,
        &refs,
        Err("AKSNodeClass default not found".into()),
        None,
        at("2026-11-23T07:00:00Z"),
    );
    assert_eq!(
        status.allowed_disruptions_summary.as_deref(),
        Some("Underutilized=0 Empty=0 Drifted=0")
    );
    let condition = |t: &str| {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == t)
            .unwrap()
            .clone()
    };
    assert_eq!(condition("ValidationSucceeded").status, "False");
    assert_eq!(condition("ValidationSucceeded").reason, "BudgetInvalid");
    assert!(
        condition("ValidationSucceeded")
            .message
            .contains("budget 0"),
        "{}",
        condition("ValidationSucceeded").message
    );
    assert_eq!(
        condition("NodeClassReady").message,
        "AKSNodeClass default not found"
    );
    assert_eq!(condition("Ready").status, "False");
}

#[test]
fn the_status_changes_by_itself_when_a_window_opens_or_closes() {
    let pool = seed_default();
    let cases = [
        ("2026-11-23T08:00:00Z", Some("2026-11-23T09:00:00Z")),
        ("2026-11-23T10:30:00Z", Some("2026-11-23T17:00:00Z")),
        ("2026-11-23T17:00:00Z", Some("2026-11-24T09:00:00Z")),
        ("2026-11-27T18:00:00Z", Some("2026-11-30T09:00:00Z")),
    ];
    for (now, next) in cases {
        assert_eq!(next_budget_change(&pool, at(now)), next.map(at), "{now}");
    }
    assert_eq!(
        next_budget_change(
            &NodePool::new("x", NodePoolSpec::default()),
            at("2026-11-23T08:00:00Z")
        ),
        None
    );
}

#[test]
fn registration_health_follows_launches_and_registrations_of_the_current_spec() {
    let health = |pool: &NodePool| {
        let c = pool
            .status
            .as_ref()
            .unwrap()
            .conditions
            .iter()
            .find(|c| c.type_ == REGISTRATION_HEALTHY)
            .unwrap()
            .clone();
        (c.status, c.reason, c.message)
    };
    let created = |name: &str, when: &str| {
        let mut n = node(name, true);
        n.metadata.creation_timestamp = Some(Time(at(when)));
        n
    };
    let mut pool = seed_default();
    pool.metadata.generation = Some(1);
    let step =
        |pool: &mut NodePool, nodes: &[Node], failure: Option<(Timestamp, &str)>, now: &str| {
            let refs: Vec<&Node> = nodes.iter().collect();
            pool.status = Some(pool_status(pool, &refs, Ok(()), failure, at(now)));
        };
    // A new pool waits for its first registration.
    step(&mut pool, &[], None, "2026-11-23T07:00:00Z");
    assert_eq!(health(&pool).0, "Unknown");
    // A launch failure since then makes it False, with the failure's reason.
    let failed = Some((at("2026-11-23T07:01:00Z"), "no offering is available"));
    step(&mut pool, &[], failed, "2026-11-23T07:01:00Z");
    assert_eq!(
        health(&pool),
        (
            "False".into(),
            "LaunchFailed".into(),
            "no offering is available".into()
        )
    );
    // A node registering afterwards makes it True, and True it stays.
    let nodes = [created("n0", "2026-11-23T07:05:00Z")];
    step(&mut pool, &nodes, failed, "2026-11-23T07:05:00Z");
    assert_eq!(health(&pool).0, "True");
    step(
        &mut pool,
        &nodes,
        Some((at("2026-11-23T07:06:00Z"), "boom")),
        "2026-11-23T07:06:00Z",
    );
    assert_eq!(health(&pool).0, "True");
    // A spec change (new generation) starts over: old nodes and old failures do not count.
    pool.metadata.generation = Some(2);
    step(&mut pool, &nodes, failed, "2026-11-23T08:00:00Z");
    assert_eq!(health(&pool).0, "Unknown");
    step(&mut pool, &nodes, failed, "2026-11-23T08:01:00Z");
    assert_eq!(health(&pool).0, "Unknown");
    let nodes = [created("n1", "2026-11-23T08:02:00Z")];
    step(&mut pool, &nodes, None, "2026-11-23T08:02:00Z");
    assert_eq!(health(&pool).0, "True");
}
