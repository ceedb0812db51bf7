//! PickFixed: named clusters split into valid, not eligible and not found.

use flotilla_placement::scheduler::{BindingChange, BindingState};
use serde_json::json;

use crate::fixtures::{OLD_SNAPSHOT, SNAPSHOT, binding, cluster, policy, reason, run, selected};

fn fixed(names: &[&str]) -> flotilla_api::placement::policy::PlacementPolicy {
    policy(json!({"placementType": "PickFixed", "clusterNames": names}))
}

#[test]
fn names_split_into_valid_ineligible_and_not_found() {
    let clusters = [
        cluster("ok").build(),
        cluster("tainted").taint("dedicated", Some("gpu")).build(),
        cluster("stale").stale().build(),
        cluster("other").build(),
    ];
    let decision = run(
        &fixed(&["ok", "tainted", "stale", "ghost", "ok"]),
        &clusters,
        &[],
    );
    assert_eq!(
        selected(&decision),
        ["ok", "tainted"],
        "taints do not apply to PickFixed"
    );
    assert_eq!(
        reason(&decision, "ok"),
        r#"Successfully scheduled resources for placement in "ok": picked by scheduling policy"#
    );
    assert!(decision.cluster("ok").unwrap().cluster_score.is_none());
    assert_eq!(
        reason(&decision, "stale"),
        r#"Cluster "stale" is not eligible for resource placement yet: cluster's member agent last sent a heartbeat at 2026-03-01T11:50:00Z, more than 5m ago"#
    );
    assert_eq!(
        reason(&decision, "ghost"),
        r#"Specified cluster "ghost" is not found"#
    );
    assert_eq!(
        reason(&decision, "other"),
        r#"cluster "other" is not in the placement's clusterNames"#
    );
    assert_eq!(
        decision.clusters.len(),
        5,
        "every cluster plus the missing name, once each"
    );
    assert!(!decision.condition.fulfilled);
    assert_eq!(
        decision.condition.message,
        "could not find all clusters needed as specified by the scheduling policy, found 2 cluster(s) instead"
    );
    let created: Vec<&str> = decision
        .changes
        .iter()
        .map(|c| match c {
            BindingChange::Create { decision } => decision.cluster_name.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(created, ["ok", "tainted"]);
}

#[test]
fn all_valid_names_fulfil_the_policy() {
    let clusters = [cluster("a").build(), cluster("b").build()];
    let decision = run(&fixed(&["a", "b"]), &clusters, &[]);
    assert!(decision.condition.fulfilled);
    assert_eq!(
        decision.condition.message,
        "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)"
    );
}

#[test]
fn existing_bindings_are_kept_refreshed_or_unscheduled() {
    let clusters = [
        cluster("current").build(),
        cluster("moved").build(),
        cluster("restored").build(),
        cluster("dropped").build(),
        cluster("sick").stale().build(),
    ];
    let mut unscheduled = binding("restored", BindingState::Unscheduled, OLD_SNAPSHOT);
    unscheduled.previous_state = Some(BindingState::Scheduled);
    let bindings = [
        binding("current", BindingState::Bound, SNAPSHOT),
        binding("moved", BindingState::Bound, OLD_SNAPSHOT),
        unscheduled,
        binding("dropped", BindingState::Bound, OLD_SNAPSHOT),
        binding("sick", BindingState::Bound, SNAPSHOT),
    ];
    let decision = run(
        &fixed(&["current", "moved", "restored", "sick"]),
        &clusters,
        &bindings,
    );
    let summary: Vec<String> = decision
        .changes
        .iter()
        .map(|c| match c {
            BindingChange::Create { decision } => format!("create {}", decision.cluster_name),
            BindingChange::Refresh { binding, state, .. } => format!("refresh {binding} {state:?}"),
            BindingChange::Unschedule { binding, .. } => format!("unschedule {binding}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "refresh crp-moved-0 Bound",
            "refresh crp-restored-0 Scheduled",
            "unschedule crp-dropped-0"
        ]
    );
    assert_eq!(selected(&decision), ["current", "moved", "restored"]);
    assert!(reason(&decision, "sick").ends_with("; the binding it already has is kept"));
}
