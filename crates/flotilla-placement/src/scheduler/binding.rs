//! The placement's existing bindings, as plain data, and how a cycle groups them
//! (KubeFleet's `classifyBindings`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::binding::PREVIOUS_STATE_ANNOTATION;
use flotilla_api::placement::snapshots::ClusterScore;
use flotilla_api::placement::{BindingState, ClusterResourceBinding};

use super::cluster_name;

/// What the scheduler needs to know about one existing binding of the placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingView {
    /// The binding's name.
    pub name: String,
    /// `spec.targetCluster`.
    pub cluster: String,
    /// `spec.state`.
    pub state: BindingState,
    /// `spec.schedulingPolicySnapshotName`: the binding is obsolete when this is not the
    /// current snapshot.
    pub policy_snapshot: String,
    /// Whether the binding has a deletion timestamp; such bindings are ignored.
    pub deleting: bool,
    /// `spec.clusterDecision.clusterScore`: what the cluster scored when it was picked (PickN
    /// trims the lowest first when it scales down).
    pub score: Option<ClusterScore>,
    /// For an `Unscheduled` binding, the state it had before (KubeFleet's
    /// `previous-binding-state` annotation); picking its cluster again restores it, `Scheduled`
    /// when unknown.
    pub previous_state: Option<BindingState>,
}

impl BindingView {
    /// What the scheduler needs of `binding`.
    pub fn of(binding: &ClusterResourceBinding) -> Self {
        let previous_state = binding
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(PREVIOUS_STATE_ANNOTATION))
            .and_then(|state| match state.as_str() {
                "Scheduled" => Some(BindingState::Scheduled),
                "Bound" => Some(BindingState::Bound),
                _ => None,
            });
        Self {
            name: binding.metadata.name.clone().unwrap_or_default(),
            cluster: binding.spec.target_cluster.clone(),
            state: binding.spec.state,
            policy_snapshot: binding.spec.scheduling_policy_snapshot_name.clone(),
            deleting: binding.metadata.deletion_timestamp.is_some(),
            score: binding.spec.cluster_decision.cluster_score,
            previous_state,
        }
    }

    /// The state to restore when an unscheduled binding's cluster is picked again.
    pub(crate) fn restored_state(&self) -> BindingState {
        match self.previous_state {
            Some(state @ (BindingState::Scheduled | BindingState::Bound)) => state,
            _ => BindingState::Scheduled,
        }
    }
}

/// The bindings of one cycle, grouped. Deleting bindings are left out. Each group is sorted by
/// target cluster, then binding name, so that nothing depends on the order bindings arrive in.
pub(crate) struct Bindings<'a> {
    /// `Bound` under the current snapshot, on a cluster that exists and is not leaving.
    pub bound: Vec<&'a BindingView>,
    /// `Scheduled` under the current snapshot, on a cluster that exists and is not leaving.
    pub scheduled: Vec<&'a BindingView>,
    /// `Scheduled` or `Bound` under an older snapshot, on a cluster that exists and is not
    /// leaving.
    pub obsolete: Vec<&'a BindingView>,
    /// `Unscheduled`.
    pub unscheduled: Vec<&'a BindingView>,
    /// `Scheduled` or `Bound` on a cluster that is gone or leaving: to unschedule.
    pub dangling: Vec<&'a BindingView>,
}

impl<'a> Bindings<'a> {
    /// Groups `bindings` against the current snapshot and the clusters present.
    pub fn classify(
        bindings: &'a [BindingView],
        snapshot: &str,
        clusters: &[Arc<MemberCluster>],
    ) -> Self {
        let mut sorted: Vec<&BindingView> = bindings.iter().filter(|b| !b.deleting).collect();
        sorted.sort_by(|a, b| (&a.cluster, &a.name).cmp(&(&b.cluster, &b.name)));
        // Whether each target cluster exists and is not leaving.
        let mut present: HashMap<&str, bool> =
            sorted.iter().map(|b| (b.cluster.as_str(), false)).collect();
        if !present.is_empty() {
            for cluster in clusters {
                if let Some(p) = present.get_mut(cluster_name(cluster)) {
                    *p = cluster.metadata.deletion_timestamp.is_none();
                }
            }
        }
        let mut groups = Bindings {
            bound: Vec::new(),
            scheduled: Vec::new(),
            obsolete: Vec::new(),
            unscheduled: Vec::new(),
            dangling: Vec::new(),
        };
        for binding in sorted {
            let group = match binding.state {
                BindingState::Unscheduled => &mut groups.unscheduled,
                _ if !present[binding.cluster.as_str()] => &mut groups.dangling,
                _ if binding.policy_snapshot != snapshot => &mut groups.obsolete,
                BindingState::Scheduled => &mut groups.scheduled,
                BindingState::Bound => &mut groups.bound,
            };
            group.push(binding);
        }
        groups
    }

    /// Scheduled plus bound bindings under the current snapshot.
    pub fn active(&self) -> usize {
        self.scheduled.len() + self.bound.len()
    }

    /// The current snapshot's binding on each cluster that has one (Scheduled or Bound).
    pub fn active_by_cluster(&self) -> HashMap<&'a str, &'a BindingView> {
        self.scheduled
            .iter()
            .chain(&self.bound)
            .map(|b| (b.cluster.as_str(), *b))
            .collect()
    }

    /// Clusters that have an obsolete binding.
    pub fn obsolete_clusters(&self) -> HashSet<&'a str> {
        self.obsolete.iter().map(|b| b.cluster.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn views_a_cluster_resource_binding() {
        let binding: ClusterResourceBinding = serde_json::from_value(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {
                "name": "crp-member-1-3f2a",
                "annotations": {PREVIOUS_STATE_ANNOTATION: "Bound"},
                "deletionTimestamp": "2026-03-01T12:00:00Z"
            },
            "spec": {
                "state": "Unscheduled",
                "schedulingPolicySnapshotName": "crp-0",
                "targetCluster": "member-1",
                "clusterDecision": {
                    "clusterName": "member-1",
                    "selected": true,
                    "clusterScore": {"affinityScore": 40, "priorityScore": 0},
                    "reason": "picked"
                }
            }
        }))
        .unwrap();
        let view = BindingView::of(&binding);
        assert_eq!(
            view,
            BindingView {
                name: "crp-member-1-3f2a".into(),
                cluster: "member-1".into(),
                state: BindingState::Unscheduled,
                policy_snapshot: "crp-0".into(),
                deleting: true,
                score: Some(ClusterScore {
                    affinity_score: Some(40),
                    priority_score: Some(0)
                }),
                previous_state: Some(BindingState::Bound),
            }
        );
        assert_eq!(view.restored_state(), BindingState::Bound);
        let unknown = BindingView {
            previous_state: None,
            ..view
        };
        assert_eq!(unknown.restored_state(), BindingState::Scheduled);
    }
}
