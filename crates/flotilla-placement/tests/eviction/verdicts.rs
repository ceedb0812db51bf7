//! Every branch of the verdict, with KubeFleet's messages.

use flotilla_api::placement::ClusterResourcePlacementEviction;
use flotilla_api::placement::eviction::PlacementEvictionStatus;
use flotilla_placement::eviction::{Verdict, is_final};
use serde_json::json;

use crate::fixtures::{binding, budget, judge, pick_all, pick_n, placement};

fn invalid(message: &str) -> Verdict {
    Verdict::Invalid {
        message: message.to_string(),
    }
}

fn blocked(message: &str) -> Verdict {
    Verdict::NotExecuted {
        message: message.to_string(),
    }
}

fn evicted(binding: &str, message: &str) -> Verdict {
    Verdict::Executed {
        delete_binding: Some(binding.to_string()),
        message: message.to_string(),
    }
}

#[test]
fn invalid_evictions() {
    let bindings = [binding("m1").build(), binding("m2").build()];
    let mut deleting = pick_n(2);
    deleting.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-03-01T12:00:00Z")).unwrap());
    let fixed = placement(Some(
        json!({"placementType": "PickFixed", "clusterNames": ["m1"]}),
    ));
    let twice = [binding("m1").build(), binding("m1").build()];
    let cases = [
        (
            judge("m1", None, &bindings, None),
            "Failed to find ClusterResourcePlacement targeted by eviction",
        ),
        (
            judge("m1", Some(&deleting), &bindings, None),
            "Found deleting ClusterResourcePlacement targeted by eviction",
        ),
        (
            judge("m1", Some(&fixed), &bindings, None),
            "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction",
        ),
        (
            judge("m3", Some(&pick_n(2)), &bindings, None),
            "Failed to find scheduler decision for placement in cluster targeted by eviction",
        ),
        (
            judge("m1", Some(&pick_n(2)), &twice, None),
            "Found more than one scheduler decision for placement in cluster targeted by eviction",
        ),
    ];
    for (verdict, message) in cases {
        assert_eq!(verdict, invalid(message));
    }
}

#[test]
fn the_target_binding_decides_before_the_budget() {
    let crp = pick_n(2);
    let strict = budget(json!({"minAvailable": 2}));
    let with = |target: crate::fixtures::Binding| [target.build(), binding("m2").build()];
    // Already being deleted: executed, nothing more to delete.
    assert_eq!(
        judge("m1", Some(&crp), &with(binding("m1").deleting()), Some(&strict)),
        Verdict::Executed {
            delete_binding: None,
            message: "Eviction is allowed, resources propagated by placement is currently being removed from cluster targeted by eviction".into()
        }
    );
    // Nothing placed yet: Scheduled, or Unscheduled before it was ever Bound.
    for target in [
        binding("m1").state("Scheduled"),
        binding("m1").state("Unscheduled").previously("Scheduled"),
        binding("m1").state("Unscheduled"),
    ] {
        assert_eq!(
            judge("m1", Some(&crp), &with(target), Some(&strict)),
            blocked(
                "Eviction is blocked, placement has not propagated resources to target cluster yet"
            )
        );
    }
    // A failed or diff-only binding is evicted whatever the budget.
    let failed = "Eviction is allowed, placement has failed";
    for target in [
        binding("m1").condition("Applied", "False", "ApplyFailed", 1),
        binding("m1").condition("Overridden", "False", "OverriddenFailed", 1),
        binding("m1").condition("DiffReported", "True", "DiffReportingCompleted", 1),
        binding("m1")
            .state("Unscheduled")
            .previously("Bound")
            .condition("Available", "False", "NotAllWorkAreAvailable", 1),
    ] {
        assert_eq!(
            judge("m1", Some(&crp), &with(target), Some(&strict)),
            evicted("crp-m1", failed)
        );
    }
    // In-progress reasons and conditions of an older generation are not failures: the
    // budget decides (and blocks).
    for target in [
        binding("m1").unavailable(),
        binding("m1").condition("WorkSynchronized", "False", "WorkNotSynchronizedYet", 1),
        binding("m1").condition("Applied", "False", "ApplyFailed", 0),
        binding("m1").condition("DiffReported", "True", "DiffReportingCompleted", 0),
    ] {
        assert!(matches!(
            judge("m1", Some(&crp), &with(target), Some(&strict)),
            Verdict::NotExecuted { ref message } if message.contains("ClusterResourcePlacementDisruptionBudget")
        ));
    }
    // No budget: executed.
    assert_eq!(
        judge("m1", Some(&crp), &with(binding("m1")), None),
        evicted(
            "crp-m1",
            "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified"
        )
    );
}

#[test]
fn disruption_budget_table() {
    let three = [
        binding("m1").build(),
        binding("m2").build(),
        binding("m3").build(),
    ];
    let one_down = [
        binding("m1").build(),
        binding("m2").build(),
        binding("m3").unavailable().build(),
    ];
    let prefix = |verdict: &str, available: usize, total: usize| {
        format!(
            "Eviction is {verdict} by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: {available}, totalPlacements: {total}; the disruption budget allows "
        )
    };
    let cases = [
        (
            pick_n(3),
            json!({"minAvailable": 2}),
            &one_down,
            blocked(&(prefix("blocked", 2, 3) + "0 more: 2 available, minAvailable 2")),
        ),
        (
            pick_n(3),
            json!({"minAvailable": 2}),
            &three,
            evicted(
                "crp-m1",
                &(prefix("allowed", 3, 3) + "1 more: 3 available, minAvailable 2"),
            ),
        ),
        (
            pick_n(3),
            json!({"minAvailable": "100%"}),
            &three,
            blocked(
                &(prefix("blocked", 3, 3)
                    + "0 more: 3 available, minAvailable 100% of 3 clusters = 3"),
            ),
        ),
        (
            pick_n(3),
            json!({"maxUnavailable": 1}),
            &three,
            evicted(
                "crp-m1",
                &(prefix("allowed", 3, 3) + "1 more: maxUnavailable 1, 0 of 3 unavailable"),
            ),
        ),
        (
            pick_n(3),
            json!({"maxUnavailable": 1}),
            &one_down,
            blocked(&(prefix("blocked", 2, 3) + "0 more: maxUnavailable 1, 1 of 3 unavailable")),
        ),
        (
            pick_n(3),
            json!({"maxUnavailable": "50%"}),
            &one_down,
            evicted(
                "crp-m1",
                &(prefix("allowed", 2, 3)
                    + "1 more: maxUnavailable 50% of 3 clusters = 2, 1 of 3 unavailable"),
            ),
        ),
        (
            pick_n(3),
            json!({}),
            &three,
            blocked(
                &(prefix("blocked", 3, 3)
                    + "0 more: the budget sets neither maxUnavailable nor minAvailable"),
            ),
        ),
        (
            pick_all(),
            json!({"minAvailable": 3}),
            &three,
            blocked(&(prefix("blocked", 3, 3) + "0 more: 3 available, minAvailable 3")),
        ),
        (
            pick_all(),
            json!({"minAvailable": 1}),
            &one_down,
            evicted(
                "crp-m1",
                &(prefix("allowed", 2, 3) + "1 more: 2 available, minAvailable 1"),
            ),
        ),
    ];
    for (i, (crp, spec, bindings, want)) in cases.into_iter().enumerate() {
        assert_eq!(
            judge("m1", Some(&crp), bindings, Some(&budget(spec))),
            want,
            "case {i}"
        );
    }
    let misconfigured = "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll ClusterResourcePlacement";
    for spec in [json!({"maxUnavailable": 2}), json!({"minAvailable": "50%"})] {
        assert_eq!(
            judge("m1", Some(&pick_all()), &three, Some(&budget(spec))),
            blocked(misconfigured)
        );
    }
}

#[test]
fn conditions_and_finality() {
    let cases = [
        (
            Verdict::Invalid {
                message: "gone".into(),
            },
            vec![(
                "Valid",
                "False",
                "ClusterResourcePlacementEvictionInvalid",
                "gone",
            )],
        ),
        (
            Verdict::NotExecuted {
                message: "no".into(),
            },
            vec![
                (
                    "Valid",
                    "True",
                    "ClusterResourcePlacementEvictionValid",
                    "Eviction is valid",
                ),
                (
                    "Executed",
                    "False",
                    "ClusterResourcePlacementEvictionNotExecuted",
                    "no",
                ),
            ],
        ),
        (
            Verdict::Executed {
                delete_binding: Some("b".into()),
                message: "yes".into(),
            },
            vec![
                (
                    "Valid",
                    "True",
                    "ClusterResourcePlacementEvictionValid",
                    "Eviction is valid",
                ),
                (
                    "Executed",
                    "True",
                    "ClusterResourcePlacementEvictionExecuted",
                    "yes",
                ),
            ],
        ),
    ];
    for (verdict, want) in cases {
        let got: Vec<_> = verdict
            .conditions(Some(3))
            .into_iter()
            .map(|c| {
                assert_eq!(c.observed_generation, Some(3));
                (c.type_, c.status, c.reason, c.message)
            })
            .collect();
        let want: Vec<_> = want
            .into_iter()
            .map(|(t, s, r, m)| (t, s, r, m.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    let eviction = |conditions: serde_json::Value| -> ClusterResourcePlacementEviction {
        serde_json::from_value(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementEviction",
            "metadata": {"name": "e", "generation": 2},
            "spec": {"placementName": "crp", "clusterName": "m1"},
            "status": {"conditions": conditions}
        }))
        .unwrap()
    };
    let condition = |type_: &str, status: &str, generation: i64| json!({"type": type_, "status": status, "reason": "R", "message": "", "observedGeneration": generation, "lastTransitionTime": "2026-03-01T12:00:00Z"});
    assert!(!is_final(&eviction(json!([]))));
    assert!(!is_final(&eviction(json!([condition("Valid", "True", 2)]))));
    assert!(is_final(&eviction(json!([condition("Valid", "False", 2)]))));
    assert!(!is_final(&eviction(json!([condition(
        "Valid", "False", 1
    )]))));
    assert!(is_final(&eviction(json!([
        condition("Valid", "True", 2),
        condition("Executed", "False", 2)
    ]))));
    let mut unjudged = eviction(json!([]));
    unjudged.status = Some(PlacementEvictionStatus::default());
    assert!(!is_final(&unjudged));
}
