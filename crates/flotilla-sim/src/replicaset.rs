//! The ReplicaSet controller: keeps `spec.replicas` active pods stamped from the template and
//! reports how many are ready and available.

use std::cmp::Reverse;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;

use crate::actions::{Action, Plan};
use crate::objects::{controller_reference, count, name_of, namespace_of, nonzero};
use crate::pod_state::{available_at, is_active, is_available, is_ready, phase, ready_since};
use crate::pod_template::{PodName, stamp};

/// Most pods created or deleted in one pass (kube-controller-manager's `burstReplicas`).
pub const BURST: usize = 500;

/// One pass over a ReplicaSet and the pods it controls.
pub fn reconcile(rs: &ReplicaSet, pods: &[&Pod], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    if rs.metadata.deletion_timestamp.is_some() {
        return plan;
    }
    let spec = &rs.spec;
    let desired = usize::try_from(spec.replicas.unwrap_or(1).max(0)).unwrap_or(0);
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut active: Vec<&Pod> = pods.iter().copied().filter(|p| is_active(p)).collect();
    let mut deleted = 0;
    if active.len() < desired {
        let template = spec.template.clone().unwrap_or_default();
        let prefix = format!("{}-", name_of(rs));
        for _ in 0..(desired - active.len()).min(BURST) {
            let pod = stamp(
                &template,
                namespace_of(rs),
                PodName::Generate(prefix.clone()),
                controller_reference(rs),
                &[],
            );
            plan.push(Action::create_pod(&pod, rs));
        }
    } else if active.len() > desired {
        active.sort_by(|a, b| deletion_rank(a).cmp(&deletion_rank(b)));
        deleted = (active.len() - desired).min(BURST);
        for pod in &active[..deleted] {
            plan.push(Action::delete_pod(*pod, rs));
        }
    }
    // The status describes the pods that remain (deletions take effect at once).
    let active = &active[deleted..];
    let template_labels = spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let fully_labeled = active
        .iter()
        .filter(|p| {
            let labels = p.metadata.labels.as_ref();
            template_labels
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        })
        .count();
    let status = ReplicaSetStatus {
        replicas: count(active.len()),
        fully_labeled_replicas: nonzero(fully_labeled),
        ready_replicas: nonzero(active.iter().filter(|p| is_ready(p)).count()),
        available_replicas: nonzero(
            active
                .iter()
                .filter(|p| is_available(p, min_ready, now))
                .count(),
        ),
        observed_generation: rs.metadata.generation,
        conditions: rs.status.as_ref().and_then(|s| s.conditions.clone()),
        terminating_replicas: None,
    };
    if rs.status.as_ref() != Some(&status) {
        plan.push(Action::write_status(rs, &status));
    }
    for pod in active {
        if let Some(at) = available_at(pod, min_ready, now) {
            plan.wake(at);
        }
    }
    plan
}

/// kube-controller-manager's order for choosing pods to delete (`ActivePods` less-than): the
/// smallest rank goes first.
fn deletion_rank(pod: &Pod) -> impl Ord + '_ {
    let spec = pod.spec.as_ref();
    let assigned = spec
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    let phase_rank = match phase(pod) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 3,
    };
    let ready = ready_since(pod);
    let restarts: i32 = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|cs| cs.iter().map(|c| c.restart_count).sum())
        .unwrap_or(0);
    (
        assigned,
        phase_rank,
        ready.is_some(),
        // Ready more recently first.
        Reverse(ready),
        Reverse(restarts),
        // Newer first.
        Reverse(pod.metadata.creation_timestamp.clone()),
        pod.metadata.name.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{pod_json, replica_set, running_pod, written_status};
    use crate::objects::time;
    use crate::pod_template::POD_TEMPLATE_HASH;

    fn now() -> Timestamp {
        "2026-01-01T00:01:00Z".parse().unwrap()
    }

    #[test]
    fn creates_missing_pods_from_the_template() {
        let rs = replica_set("web-abc", 3, 0);
        let existing = running_pod("web-abc-aaaaa", "n1", "2026-01-01T00:00:00Z");
        let plan = reconcile(&rs, &[&existing], now());
        let creates: Vec<&Action> = plan
            .actions
            .iter()
            .filter(|a| matches!(a, Action::CreatePod { .. }))
            .collect();
        assert_eq!(creates.len(), 2);
        let Action::CreatePod { pod, owner } = creates[0] else {
            unreachable!()
        };
        assert_eq!(pod["metadata"]["generateName"], "web-abc-");
        assert_eq!(pod["metadata"]["labels"]["app"], "web");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
            true
        );
        assert_eq!(owner.name, "web-abc");
    }

    #[test]
    fn deletes_the_least_settled_pods_first() {
        let rs = replica_set("web-abc", 1, 0);
        let old_ready = running_pod("a", "n1", "2026-01-01T00:00:00Z");
        let new_ready = running_pod("b", "n1", "2026-01-01T00:00:30Z");
        let mut pending: Pod = serde_json::from_value(pod_json("c")).unwrap();
        pending.metadata.creation_timestamp = Some(time("2025-01-01T00:00:00Z".parse().unwrap()));
        let plan = reconcile(&rs, &[&old_ready, &new_ready, &pending], now());
        let deleted: Vec<&str> = plan
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::DeletePod { pod, .. } => Some(pod.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deleted, vec!["c", "b"]);
    }

    #[test]
    fn status_counts_ready_and_available_pods_and_wakes_for_min_ready() {
        let rs = replica_set("web-abc", 2, 30);
        let mut long_ready = running_pod("a", "n1", "2026-01-01T00:00:00Z");
        long_ready
            .metadata
            .labels
            .get_or_insert_default()
            .insert(POD_TEMPLATE_HASH.into(), "abc".into());
        let fresh = running_pod("b", "n1", "2026-01-01T00:00:50Z");
        let plan = reconcile(&rs, &[&long_ready, &fresh], now());
        let status = written_status(&plan).unwrap();
        assert_eq!(status["replicas"], 2);
        assert_eq!(status["readyReplicas"], 2);
        assert_eq!(status["availableReplicas"], 1);
        assert_eq!(
            status["fullyLabeledReplicas"], 1,
            "only one pod has every template label"
        );
        assert_eq!(status["observedGeneration"], 1);
        assert_eq!(plan.wake_at, Some("2026-01-01T00:01:20Z".parse().unwrap()));
    }

    #[test]
    fn a_settled_replica_set_needs_nothing() {
        let mut rs = replica_set("web-abc", 1, 0);
        let pod = running_pod("a", "n1", "2026-01-01T00:00:00Z");
        let first = reconcile(&rs, &[&pod], now());
        let Some(Action::WriteStatus { status, .. }) = first.actions.first() else {
            panic!("{first:?}")
        };
        rs.status = Some(serde_json::from_value(status.clone()).unwrap());
        assert_eq!(reconcile(&rs, &[&pod], now()), Plan::default());
    }
}
