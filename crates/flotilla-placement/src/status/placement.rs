//! A placement's status (KubeFleet's `setPlacementStatus`): the `…Scheduled` condition from
//! the latest policy snapshot, one status per picked cluster and per slot the scheduler could
//! not fill, the placement-level chain rolled up from the picked clusters, the observed
//! resource index and the selected resources.
//!
//! - Scheduling not decided for the current generation (no snapshot, no or stale Scheduled
//!   condition): `…Scheduled` Unknown with `SchedulePending`, and nothing else.
//! - No cluster picked: `…Scheduled` only (plus the unfilled slots).
//! - External strategy: when the clusters do not all have one resource snapshot, or none has
//!   any, or a cluster's RolloutStarted is Unknown, `…RolloutStarted` is Unknown with
//!   `RolloutControlledByExternalController` and the chain ends there; when they agree, the
//!   observed index and selected resources are those of their snapshot.
//!
//! Departures from KubeFleet: the conditions of a placement whose scheduling is pending are
//! dropped rather than left stale; PickFixed's unfilled slots are the named clusters that were
//! not picked (KubeFleet takes the first clusters the scheduler rejected, named or not); and
//! PickN slots beyond the fleet's rejected clusters are listed without a cluster name instead
//! of being left out.

use std::collections::HashMap;

use flotilla_api::conditions::{NewCondition, find};
use flotilla_api::placement::ClusterResourceBinding;
use flotilla_api::placement::binding::{ResourceBindingSpec, ResourceBindingStatus};
use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_api::placement::snapshots::{
    ClusterSchedulingPolicySnapshot, SchedulingPolicySnapshotStatus,
};
use flotilla_api::placement::status::{
    PerClusterPlacementStatus, PlacementStatus, ResourceIdentifier,
};
use flotilla_api::placement::strategy::{ApplyStrategyType, RolloutStrategy, RolloutStrategyType};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use super::assemble::{assemble, foreign};
use super::external::external_rollout;
use super::per_cluster::Context;
use super::rollup::roll_up;
use super::unfilled::unfilled;
use super::{ConditionType, PlacementKind, listed};

/// What the status needs of the latest policy snapshot.
#[derive(Clone, Copy, Debug)]
pub struct PolicySnapshotView<'a> {
    /// The snapshot's name: bindings made under another snapshot are not shown.
    pub name: &'a str,
    /// `metadata.generation`.
    pub generation: i64,
    /// The scheduler's conditions and decisions.
    pub status: &'a SchedulingPolicySnapshotStatus,
}

/// The status of a snapshot the scheduler has not written yet.
static NO_DECISIONS: SchedulingPolicySnapshotStatus = SchedulingPolicySnapshotStatus {
    observed_crp_generation: 0,
    conditions: Vec::new(),
    target_clusters: Vec::new(),
};

impl<'a> PolicySnapshotView<'a> {
    /// The view of `snapshot`.
    pub fn of(snapshot: &'a ClusterSchedulingPolicySnapshot) -> PolicySnapshotView<'a> {
        PolicySnapshotView {
            name: snapshot.metadata.name.as_deref().unwrap_or_default(),
            generation: snapshot.metadata.generation.unwrap_or_default(),
            status: snapshot.status.as_ref().unwrap_or(&NO_DECISIONS),
        }
    }
}

/// What the status needs of one binding of the placement.
#[derive(Clone, Copy, Debug)]
pub struct PlacementBinding<'a> {
    /// `metadata.generation`: only conditions observed for it count.
    pub generation: i64,
    /// Whether the binding has a deletion timestamp (such bindings are not shown).
    pub deleting: bool,
    /// The binding's spec.
    pub spec: &'a ResourceBindingSpec,
    /// The binding's status.
    pub status: &'a ResourceBindingStatus,
    /// The index of the resource snapshot the binding names, if known (shown under External).
    pub resource_index: Option<&'a str>,
}

/// The status of a binding nothing has reported on.
static NO_STATUS: ResourceBindingStatus = ResourceBindingStatus {
    failed_placements: Vec::new(),
    drifted_placements: Vec::new(),
    diffed_placements: Vec::new(),
    conditions: Vec::new(),
};

impl<'a> PlacementBinding<'a> {
    /// The view of `binding`, whose resource snapshot has index `resource_index`.
    pub fn of(
        binding: &'a ClusterResourceBinding,
        resource_index: Option<&'a str>,
    ) -> PlacementBinding<'a> {
        PlacementBinding {
            generation: binding.metadata.generation.unwrap_or_default(),
            deleting: binding.metadata.deletion_timestamp.is_some(),
            spec: &binding.spec,
            status: binding.status.as_ref().unwrap_or(&NO_STATUS),
            resource_index,
        }
    }

    /// The binding's condition `type_` if observed for its generation.
    pub(super) fn current(&self, type_: ConditionType) -> Option<&'a Condition> {
        find(&self.status.conditions, type_.as_str())
            .filter(|c| c.observed_generation == Some(self.generation))
    }
}

/// The latest resource snapshot.
#[derive(Clone, Copy, Debug)]
pub struct LatestResources<'a> {
    /// The name of its first chunk, which bindings name.
    pub snapshot: &'a str,
    /// Its index.
    pub index: &'a str,
    /// The resources it selected.
    pub selected: &'a [ResourceIdentifier],
}

/// Everything the placement's status is computed from.
#[derive(Clone, Copy)]
pub struct PlacementInput<'a> {
    /// Which placement kind: decides the condition prefix.
    pub kind: PlacementKind,
    /// The placement's `metadata.generation`.
    pub generation: i64,
    /// The placement's policy (`None`: PickAll).
    pub policy: Option<&'a PlacementPolicy>,
    /// The placement's strategy (`None`: RollingUpdate, client-side apply).
    pub strategy: Option<&'a RolloutStrategy>,
    /// The latest resource snapshot.
    pub latest: LatestResources<'a>,
    /// The resources selected at another index (External strategy, clusters agreeing on an
    /// older snapshot); empty when that snapshot is gone.
    pub resources_at: &'a dyn Fn(&str) -> Vec<ResourceIdentifier>,
    /// The latest policy snapshot, if there is one yet.
    pub policy_snapshot: Option<PolicySnapshotView<'a>>,
    /// Every binding of the placement.
    pub bindings: &'a [PlacementBinding<'a>],
    /// The current status: unchanged conditions keep their transition times, and conditions
    /// of other types (another controller's) are kept.
    pub previous: &'a PlacementStatus,
    /// The time of the roll-up.
    pub now: Timestamp,
}

/// The placement's new status.
pub fn placement_status(input: &PlacementInput<'_>) -> PlacementStatus {
    let strategy = input.strategy;
    let external = strategy.and_then(|s| s.type_) == Some(RolloutStrategyType::External);
    let report_diff = strategy
        .and_then(|s| s.apply_strategy.as_ref())
        .and_then(|a| a.type_)
        == Some(ApplyStrategyType::ReportDiff);
    let chain = ConditionType::resource_chain(report_diff);
    let name = |t: ConditionType| input.kind.condition_type(t);
    let scheduled_name = name(ConditionType::Scheduled);
    let chain_names: Vec<String> = chain.iter().map(|t| name(*t)).collect();
    let mut owned: Vec<String> = ConditionType::RESOURCE_TYPES
        .iter()
        .map(|t| name(*t))
        .collect();
    owned.push(scheduled_name.clone());
    let previous = input.previous.conditions.as_deref().unwrap_or_default();
    let finish = |status: PlacementStatus, conditions: Vec<NewCondition<'_>>| {
        let mut all = assemble(previous, conditions, input.now);
        all.extend(foreign(previous, &owned));
        PlacementStatus {
            conditions: Some(all),
            ..status
        }
    };

    let mut status = PlacementStatus {
        selected_resources: listed(input.latest.selected),
        observed_resource_index: (!input.latest.index.is_empty())
            .then(|| input.latest.index.to_string()),
        ..Default::default()
    };
    let scheduled = scheduled_condition(input, &scheduled_name);
    let decided = scheduled.status != "Unknown";
    let Some(snapshot) = input.policy_snapshot.filter(|_| decided) else {
        return finish(status, vec![scheduled]);
    };

    let context = Context {
        generation: input.generation,
        chain,
        external,
        latest_snapshot: input.latest.snapshot,
        latest_index: input.latest.index,
        previous: Context::previous_of(
            input
                .previous
                .placement_statuses
                .as_deref()
                .unwrap_or_default(),
        ),
        now: input.now,
    };
    let decisions = &snapshot.status.target_clusters;
    let bindings = bindings_by_cluster(input, snapshot.name);
    let picked: Vec<PerClusterPlacementStatus> = decisions
        .iter()
        .filter(|d| d.selected)
        .map(|d| context.selected(d, bindings.get(d.cluster_name.as_str()).copied()))
        .collect();
    let unfilled = unfilled(input.policy, decisions)
        .into_iter()
        .map(|(cluster, why)| context.unfilled(cluster, why));
    let statuses: Vec<_> = picked.iter().cloned().chain(unfilled).collect();
    status.placement_statuses = listed(&statuses);
    if picked.is_empty() {
        return finish(status, vec![scheduled]);
    }

    let mut conditions = vec![scheduled];
    if external && let Some(held) = external_rollout(input, &picked, &mut status, &chain_names[0]) {
        conditions.push(held);
        return finish(status, conditions);
    }
    conditions.extend(roll_up(chain, &chain_names, input.generation, &picked));
    finish(status, conditions)
}

/// `…Scheduled`: the snapshot's Scheduled condition when it is decided for this generation.
fn scheduled_condition<'a>(input: &PlacementInput<'a>, name: &'a str) -> NewCondition<'a> {
    let decided = input.policy_snapshot.and_then(|snapshot| {
        find(
            &snapshot.status.conditions,
            ConditionType::Scheduled.as_str(),
        )
        .filter(|c| {
            c.observed_generation.unwrap_or_default() >= snapshot.generation
                && snapshot.status.observed_crp_generation >= input.generation
                && c.status != "Unknown"
        })
    });
    let (status, reason, message) = match decided {
        Some(c) => (c.status.as_str(), c.reason.as_str(), c.message.clone()),
        None => {
            let (reason, message) = ConditionType::Scheduled.pending();
            ("Unknown", reason, message.to_string())
        }
    };
    NewCondition {
        type_: name,
        status,
        reason,
        message,
        observed_generation: Some(input.generation),
    }
}

/// The binding of each cluster for policy snapshot `snapshot` (not being deleted; the first,
/// should a cluster have two), by cluster name.
fn bindings_by_cluster<'b>(
    input: &PlacementInput<'b>,
    snapshot: &str,
) -> HashMap<&'b str, &'b PlacementBinding<'b>> {
    let mut by_cluster = HashMap::with_capacity(input.bindings.len());
    for binding in input
        .bindings
        .iter()
        .filter(|b| !b.deleting && b.spec.scheduling_policy_snapshot_name == snapshot)
    {
        by_cluster
            .entry(binding.spec.target_cluster.as_str())
            .or_insert(binding);
    }
    by_cluster
}
