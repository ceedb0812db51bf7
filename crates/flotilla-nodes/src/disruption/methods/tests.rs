use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::disruption::candidate::PodFacts;

fn pod(key: &str) -> PodFacts {
    PodFacts::new(key)
}

fn node(name: &str, pool: &str, pods: usize) -> NodeFacts {
    NodeFacts {
        name: name.into(),
        claim: format!("claim-{name}"),
        pool: Some(pool.into()),
        initialized: true,
        deleting: false,
        queued: false,
        nominated: false,
        do_not_disrupt: false,
        consolidatable: true,
        drifted_since: None,
        pods: (0..pods)
            .map(|i| pod(&format!("default/{name}-{i}")))
            .collect(),
        created: "2026-11-01T00:00:00Z".parse().unwrap(),
        lifetime: Some(SignedDuration::from_hours(720)),
        price: 0.1,
    }
}

fn drifted(mut n: NodeFacts, at: &str) -> NodeFacts {
    n.drifted_since = Some(at.parse::<Timestamp>().unwrap());
    n
}

fn budgets(pairs: &[(&str, i64)]) -> Remaining {
    pairs.iter().map(|(p, n)| (p.to_string(), *n)).collect()
}

#[test]
fn emptiness_deletes_empty_consolidatable_nodes_within_budget() {
    let nodes = [
        node("a", "default", 0),
        node("b", "default", 0),
        node("c", "default", 0),
        node("d", "default", 2),
        NodeFacts {
            consolidatable: false,
            ..node("e", "default", 0)
        },
        node("f", "never", 0),
    ];
    let refs: Vec<&NodeFacts> = nodes.iter().collect();
    let mut left = budgets(&[("default", 2), ("never", 5)]);
    let command = emptiness::<()>(&refs, &|pool| pool == "never", &mut left).unwrap();
    assert_eq!(command.claims, vec!["claim-a", "claim-b"]);
    assert_eq!(command.reason, DisruptionReason::Empty);
    assert_eq!(
        command.explanation,
        "Emptiness: 2 node(s) run no workload pods; 1 more empty node(s) wait for their pools' Empty budgets"
    );
    assert_eq!(left["default"], 0);
    let mut none_left = budgets(&[("default", 0)]);
    assert!(emptiness::<()>(&refs, &|_| false, &mut none_left).is_none());
}

#[test]
fn drift_deletes_empty_nodes_first_then_replaces_the_oldest_drifted() {
    let nodes = [
        drifted(node("old-busy", "default", 3), "2026-11-20T00:00:00Z"),
        drifted(node("new-busy", "default", 1), "2026-11-21T00:00:00Z"),
        drifted(node("empty", "default", 0), "2026-11-21T06:00:00Z"),
        node("fine", "default", 0),
    ];
    let refs: Vec<&NodeFacts> = nodes.iter().collect();
    let mut simulated = 0;
    let mut counting = |_: &NodeFacts| {
        simulated += 1;
        Ok(vec!["replacement"])
    };
    let mut left = budgets(&[("default", 1)]);
    let first = drift(&refs, &mut left, &mut counting).unwrap();
    assert_eq!(
        (first.claims, first.replacements.len()),
        (vec!["claim-empty".to_string()], 0)
    );
    assert_eq!(simulated, 0, "empty drifted nodes need no simulation");

    let mut simulate = |_: &NodeFacts| Ok(vec!["replacement"]);

    let busy: Vec<&NodeFacts> = nodes.iter().filter(|n| n.name != "empty").collect();
    let mut left = budgets(&[("default", 1)]);
    let second = drift(&busy, &mut left, &mut simulate).unwrap();
    assert_eq!(second.claims, vec!["claim-old-busy"]);
    assert_eq!(second.replacements, vec!["replacement"]);
    assert_eq!(
        second.explanation,
        "Drift: node old-busy replaced by 1 new node(s)"
    );
    assert_eq!(left["default"], 0);
}

#[test]
fn drift_skips_nodes_whose_pods_find_no_home_and_pools_without_budget() {
    let nodes = [
        drifted(node("stuck", "default", 2), "2026-11-20T00:00:00Z"),
        drifted(node("movable", "default", 1), "2026-11-21T00:00:00Z"),
        drifted(node("closed", "frozen", 1), "2026-11-19T00:00:00Z"),
    ];
    let refs: Vec<&NodeFacts> = nodes.iter().collect();
    let mut simulate = |n: &NodeFacts| -> Simulation<()> {
        if n.name == "stuck" {
            Err("pod default/stuck-0 fits no instance type".into())
        } else {
            Ok(Vec::new())
        }
    };
    let mut left = budgets(&[("default", 3), ("frozen", 0)]);
    let command = drift(&refs, &mut left, &mut simulate).unwrap();
    assert_eq!(command.claims, vec!["claim-movable"]);
}
