//! PickAll: every passing cluster, with the binding changes that make it so.

use flotilla_placement::scheduler::{
    BindingChange, BindingState, ScheduledCondition, TARGET_CLUSTERS_LIMIT,
};
use serde_json::json;

use crate::fixtures::{
    OLD_SNAPSHOT, SNAPSHOT, binding, cluster, policy, reason, run, score, selected,
};

fn created(changes: &[BindingChange]) -> Vec<&str> {
    changes
        .iter()
        .filter_map(|c| match c {
            BindingChange::Create { decision } => Some(decision.cluster_name.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn binds_every_passing_cluster() {
    let clusters = [
        cluster("a").label("env", "prod").build(),
        cluster("b").label("env", "prod").build(),
        cluster("c").label("env", "dev").build(),
    ];
    let p = policy(
        json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]
        }}}}),
    );
    let decision = run(&p, &clusters, &[]);
    assert_eq!(selected(&decision), ["a", "b"]);
    assert_eq!(created(&decision.changes), ["a", "b"]);
    let a = decision.cluster("a").unwrap();
    assert_eq!(a.cluster_score, Some(score(0, 0)));
    assert_eq!(
        a.reason,
        r#"Successfully scheduled resources for placement in "a" (affinity score: 0, topology spread score: 0): picked by scheduling policy"#
    );
    assert_eq!(
        decision.condition,
        ScheduledCondition {
            fulfilled: true,
            reason: "SchedulingPolicyFulfilled",
            message:
                "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)"
                    .into(),
        }
    );
    assert!(!decision.requeue);
    // Selected first, then the rejected cluster.
    let order: Vec<&str> = decision
        .clusters
        .iter()
        .map(|d| d.cluster_name.as_str())
        .collect();
    assert_eq!(order, ["a", "b", "c"]);
}

#[test]
fn keeps_existing_bindings_even_when_the_cluster_no_longer_matches() {
    let clusters = [
        cluster("a").label("env", "dev").build(),
        cluster("b").label("env", "prod").build(),
    ];
    let p = policy(
        json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]
        }}}}),
    );
    let bindings = [binding("a", BindingState::Bound, SNAPSHOT)];
    let decision = run(&p, &clusters, &bindings);
    assert_eq!(selected(&decision), ["a", "b"]);
    assert_eq!(created(&decision.changes), ["b"]);
    assert_eq!(decision.changes.len(), 1);
    assert_eq!(
        decision.condition.message,
        "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)"
    );
}

#[test]
fn cross_references_obsolete_and_unscheduled_bindings() {
    let clusters = [
        cluster("kept").build(),
        cluster("dropped").label("env", "dev").build(),
        cluster("restored").build(),
        cluster("new").build(),
    ];
    let p = policy(
        json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "clusterSelectorTerms": [{"labelSelector": {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}}]
        }}}}),
    );
    let mut unscheduled = binding("restored", BindingState::Unscheduled, OLD_SNAPSHOT);
    unscheduled.previous_state = Some(BindingState::Bound);
    let mut deleting = binding("new", BindingState::Bound, SNAPSHOT);
    deleting.deleting = true;
    let bindings = [
        binding("kept", BindingState::Bound, OLD_SNAPSHOT),
        binding("dropped", BindingState::Scheduled, OLD_SNAPSHOT),
        unscheduled,
        deleting,
    ];
    let decision = run(&p, &clusters, &bindings);
    assert_eq!(selected(&decision), ["kept", "new", "restored"]);
    let summary: Vec<String> = decision
        .changes
        .iter()
        .map(|c| match c {
            BindingChange::Create { decision } => format!("create {}", decision.cluster_name),
            BindingChange::Refresh { binding, state, .. } => format!("refresh {binding} {state:?}"),
            BindingChange::Unschedule {
                binding,
                previous_state,
                reason,
                ..
            } => {
                format!("unschedule {binding} {previous_state:?}: {reason}")
            }
        })
        .collect();
    assert_eq!(
        summary,
        [
            "create new",
            "refresh crp-kept-0 Bound",
            "refresh crp-restored-0 Bound",
            r#"unschedule crp-dropped-0 Scheduled: the cluster is not picked under scheduling policy snapshot "crp-1""#,
        ]
    );
}

#[test]
fn dangling_bindings_are_unscheduled_first() {
    let clusters = [cluster("leaving").leaving().build(), cluster("b").build()];
    let bindings = [
        binding("leaving", BindingState::Bound, SNAPSHOT),
        binding("vanished", BindingState::Scheduled, SNAPSHOT),
    ];
    let decision = run(&policy(json!({})), &clusters, &bindings);
    assert_eq!(selected(&decision), ["b"]);
    let unscheduled: Vec<(&str, &str)> = decision
        .changes
        .iter()
        .filter_map(|c| match c {
            BindingChange::Unschedule {
                cluster, reason, ..
            } => Some((cluster.as_str(), reason.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        unscheduled,
        [
            (
                "leaving",
                r#"cluster "leaving" has left the fleet or is leaving it"#
            ),
            (
                "vanished",
                r#"cluster "vanished" has left the fleet or is leaving it"#
            ),
        ]
    );
    assert!(matches!(
        decision.changes[0],
        BindingChange::Unschedule { .. }
    ));
    assert_eq!(
        reason(&decision, "leaving"),
        "not eligible: cluster is leaving the fleet (being deleted)"
    );
}

#[test]
fn target_clusters_keep_selected_first_up_to_the_crd_limit() {
    let clusters: Vec<_> = (0..1200)
        .map(|i| {
            let c = cluster(&format!("m{i:04}"));
            if i % 2 == 0 {
                c.build()
            } else {
                c.stale().build()
            }
        })
        .collect();
    let decision = run(&policy(json!({})), &clusters, &[]);
    assert_eq!(decision.clusters.len(), 1200);
    let targets = decision.target_clusters();
    assert_eq!(targets.len(), TARGET_CLUSTERS_LIMIT);
    assert!(targets[..600].iter().all(|d| d.selected));
    assert!(targets[600..].iter().all(|d| !d.selected));
    let json = serde_json::to_value(&targets[0]).unwrap();
    assert_eq!(
        json,
        json!({
            "clusterName": "m0000",
            "selected": true,
            "clusterScore": {"affinityScore": 0, "priorityScore": 0},
            "reason": "Successfully scheduled resources for placement in \"m0000\" (affinity score: 0, topology spread score: 0): picked by scheduling policy"
        })
    );
}
