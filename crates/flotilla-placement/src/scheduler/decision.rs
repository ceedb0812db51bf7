//! What one scheduling cycle decides: a verdict for every cluster (the policy snapshot's
//! `targetClusters` entries), the binding changes that carry it out, and the policy snapshot's
//! `Scheduled` condition.

use flotilla_api::conditions::NewCondition;
use flotilla_api::placement::BindingState;
use flotilla_api::placement::snapshots::ClusterDecision;

/// The most `targetClusters` a `ClusterSchedulingPolicySnapshot` status may hold (the CRD's
/// `maxItems`).
pub const TARGET_CLUSTERS_LIMIT: usize = 1000;

/// One change to the placement's bindings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindingChange {
    /// Create a binding in state `Scheduled` for `decision.cluster_name`, associated with the
    /// current policy snapshot and carrying `decision` as its `clusterDecision`.
    Create {
        /// The decision to record on the new binding.
        decision: ClusterDecision,
    },
    /// Associate an existing binding with the current policy snapshot, set its state and
    /// record `decision` on it: a cluster picked again keeps the binding it had.
    Refresh {
        /// The binding's name.
        binding: String,
        /// The state the binding gets (its old state, or the one it had before it was
        /// unscheduled).
        state: BindingState,
        /// The decision to record on the binding.
        decision: ClusterDecision,
    },
    /// Mark a binding `Unscheduled`, remembering the state it had so that picking its cluster
    /// again can restore it.
    Unschedule {
        /// The binding's name.
        binding: String,
        /// The binding's target cluster.
        cluster: String,
        /// The state before this change (`Scheduled` or `Bound`).
        previous_state: BindingState,
        /// Why the binding is removed.
        reason: String,
    },
}

/// The `Scheduled` condition of the policy snapshot (and so of the placement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledCondition {
    /// Whether the policy is fulfilled: `status: "True"`.
    pub fulfilled: bool,
    /// `SchedulingPolicyFulfilled` or `SchedulingPolicyUnfulfilled`.
    pub reason: &'static str,
    /// KubeFleet's message, with the number of clusters found.
    pub message: String,
}

impl ScheduledCondition {
    /// The condition type on the policy snapshot.
    pub const TYPE: &'static str = "Scheduled";
    /// Reason when every cluster the policy asks for is found.
    pub const FULFILLED: &'static str = "SchedulingPolicyFulfilled";
    /// Reason when fewer clusters than asked for are found.
    pub const UNFULFILLED: &'static str = "SchedulingPolicyUnfulfilled";

    /// The condition for `found` clusters, fulfilled or not.
    pub(crate) fn new(fulfilled: bool, found: usize) -> Self {
        if fulfilled {
            Self {
                fulfilled,
                reason: Self::FULFILLED,
                message: format!(
                    "found all cluster needed as specified by the scheduling policy, found {found} cluster(s)"
                ),
            }
        } else {
            Self {
                fulfilled,
                reason: Self::UNFULFILLED,
                message: format!(
                    "could not find all clusters needed as specified by the scheduling policy, found {found} cluster(s) instead"
                ),
            }
        }
    }

    /// `True` or `False`.
    pub fn status(&self) -> &'static str {
        if self.fulfilled { "True" } else { "False" }
    }

    /// The condition in the form [`flotilla_api::conditions::set_condition`] writes.
    pub fn to_condition(&self, observed_generation: Option<i64>) -> NewCondition<'_> {
        NewCondition {
            type_: Self::TYPE,
            status: self.status(),
            reason: self.reason,
            message: self.message.clone(),
            observed_generation,
        }
    }
}

/// The outcome of one scheduling cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// One verdict per cluster: every member cluster given, plus (PickFixed) every named
    /// cluster that does not exist. Selected clusters come first (by name), then clusters that
    /// passed the filters but did not score high enough (best first), then the rest (by name).
    pub clusters: Vec<ClusterDecision>,
    /// The binding changes to make, in order: dangling bindings unscheduled, bindings
    /// created, bindings refreshed, bindings unscheduled.
    pub changes: Vec<BindingChange>,
    /// The `Scheduled` condition.
    pub condition: ScheduledCondition,
    /// Whether to run another cycle at once: a topology spread constraint limited this cycle
    /// to one new cluster and more are wanted. KubeFleet writes the snapshot status only once
    /// no more are wanted.
    pub requeue: bool,
}

impl Decision {
    /// The verdicts for the policy snapshot's `status.targetClusters`: at most
    /// [`TARGET_CLUSTERS_LIMIT`], selected clusters first, then the best runners-up, then other
    /// rejected clusters. (KubeFleet keeps every selected cluster but only 20 unselected ones by
    /// default; Flotilla fills the list up to the CRD's limit, so rejections stay explained.)
    pub fn target_clusters(&self) -> &[ClusterDecision] {
        &self.clusters[..self.clusters.len().min(TARGET_CLUSTERS_LIMIT)]
    }

    /// The verdict on the cluster named `name`, if there is one.
    pub fn cluster(&self, name: &str) -> Option<&ClusterDecision> {
        self.clusters.iter().find(|d| d.cluster_name == name)
    }

    /// Names of the selected clusters, in order.
    pub fn selected(&self) -> impl Iterator<Item = &str> {
        self.clusters
            .iter()
            .filter(|d| d.selected)
            .map(|d| d.cluster_name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_carry_kubefleet_reasons() {
        let unfulfilled = ScheduledCondition::new(false, 2);
        let condition = unfulfilled.to_condition(Some(4));
        assert_eq!(condition.type_, "Scheduled");
        assert_eq!(condition.status, "False");
        assert_eq!(condition.reason, "SchedulingPolicyUnfulfilled");
        assert_eq!(condition.observed_generation, Some(4));
        assert_eq!(ScheduledCondition::new(true, 3).status(), "True");
    }
}
