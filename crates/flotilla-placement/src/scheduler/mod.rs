//! KubeFleet's scheduler (`pkg/scheduler/`) as one pure function: [`schedule`] takes the latest
//! policy, the member clusters, the placement's bindings and the time, and returns a
//! [`Decision`]: a verdict with a reason for every cluster, the binding changes to make, and the
//! `Scheduled` condition. No I/O, no clock, no randomness: the same input always gives the same
//! decision, whatever order clusters and bindings arrive in.
//!
//! The pipeline is KubeFleet's default profile:
//!
//! | stage | plugins |
//! |---|---|
//! | filter | required cluster affinity, cluster eligibility, taints and tolerations, same-placement affinity, topology spread (`DoNotSchedule`, PickN only) |
//! | score (PickN only) | topology spread, preferred cluster affinity, obsolete-placement affinity |
//! | pick | PickAll: every passing cluster; PickN: the best `numberOfClusters`; PickFixed: the named clusters |
//!
//! Fleets of thousands of clusters are filtered on up to four scoped threads, in contiguous
//! chunks merged in order (KubeFleet runs Filter and Score in parallel per cluster too); the
//! decision does not depend on it.
//!
//! Same-placement affinity: a cluster that already has a Scheduled or Bound binding under the
//! current policy snapshot is not evaluated again; it stays selected with the verdict its
//! binding carries (IgnoredDuringExecution: only deletion of the cluster, a policy change or an
//! eviction removes it). Likewise a PickN placement that already has its clusters evaluates
//! nothing, and an unselected cluster keeps the verdict the policy snapshot recorded for it
//! ([`SchedulingInput::previous`]), so that the snapshot keeps explaining why it was not
//! picked.
//!
//! Departures from KubeFleet, all where KubeFleet would fail the whole cycle or leave
//! duplicates: a property value or selector that is not a quantity, an unknown
//! `resources.kubernetes-fleet.io/` name and an invalid label selector reject the clusters they
//! concern (with that reason) instead of failing the cycle; a picked cluster gets at most one
//! restored binding; an unscheduled binding with no recorded previous state is restored as
//! `Scheduled`; a PickFixed policy with no names unschedules its obsolete bindings; and
//! deleting bindings are ignored (removing the scheduler's cleanup finalizer from them, as
//! KubeFleet does, is left to the controller).

use std::sync::Arc;

mod binding;
mod decision;
mod filter;
pub(crate) mod labels;
mod outcome;
mod pick_all;
mod pick_fixed;
mod pick_n;
mod property;
mod reason;
pub mod requeue;
mod score;
mod sweep;
mod topology;

use std::collections::BTreeMap;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use k8s_openapi::jiff::Timestamp;

pub use binding::BindingView;
pub use decision::{BindingChange, Decision, ScheduledCondition, TARGET_CLUSTERS_LIMIT};
pub use flotilla_api::placement::BindingState;
pub use flotilla_api::placement::snapshots::{ClusterDecision, ClusterScore};

use binding::Bindings;

/// Everything one scheduling cycle looks at.
#[derive(Clone, Copy, Debug)]
pub struct SchedulingInput<'a> {
    /// The policy of the latest policy snapshot (`PlacementPolicy::default()`, i.e. PickAll,
    /// when the placement has none).
    pub policy: &'a PlacementPolicy,
    /// The latest policy snapshot's name: bindings naming another snapshot are obsolete.
    pub policy_snapshot: &'a str,
    /// Every member cluster of the fleet, with unique names; shared with the controller's
    /// watch cache (`Arc`), so a reconcile does not copy the fleet.
    pub clusters: &'a [Arc<MemberCluster>],
    /// Every binding of the placement.
    pub bindings: &'a [BindingView],
    /// The time eligibility is judged at.
    pub now: Timestamp,
    /// The heartbeat and health windows of eligibility.
    pub eligibility: EligibilityWindows,
    /// The verdicts the latest policy snapshot's status already holds
    /// (`status.targetClusters`, empty for a new snapshot). A PickN cycle that evaluates
    /// nothing because the placement already has its clusters keeps the recorded verdict of
    /// each cluster it leaves unselected (why it was not picked, with its score), instead of
    /// forgetting it.
    pub previous: &'a [ClusterDecision],
}

/// Runs one scheduling cycle.
pub fn schedule(input: &SchedulingInput<'_>) -> Decision {
    let bindings = Bindings::classify(input.bindings, input.policy_snapshot, input.clusters);
    match input.policy.placement_type.unwrap_or_default() {
        PlacementType::PickAll => pick_all::schedule(input, &bindings),
        PlacementType::PickN => pick_n::schedule(input, &bindings),
        PlacementType::PickFixed => pick_fixed::schedule(input, &bindings),
    }
}

/// The cluster's name.
pub(crate) fn cluster_name(cluster: &MemberCluster) -> &str {
    cluster.metadata.name.as_deref().unwrap_or_default()
}

/// The cluster's labels (empty when it has none).
pub(crate) fn cluster_labels(cluster: &MemberCluster) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    cluster.metadata.labels.as_ref().unwrap_or(&EMPTY)
}
