//! The placement status of one cluster (KubeFleet's `setPerClusterPlacementStatus`): Scheduled,
//! then the binding's chain copied condition by condition until the first that is not True
//! for the binding's generation (not reported yet: Unknown, and the chain stops).
//!
//! Under RollingUpdate a binding that does not name the latest resource snapshot stops at
//! RolloutStarted: False with the rollout's message when the rollout holds it back, else
//! Unknown. Under External the cluster shows what its binding has, whatever the snapshot.

use std::collections::HashMap;

use flotilla_api::conditions::{NewCondition, find};
use flotilla_api::placement::snapshots::ClusterDecision;
use flotilla_api::placement::status::PerClusterPlacementStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use super::assemble::assemble;
use super::placement::PlacementBinding;
use super::{ConditionType, listed, reason};

/// What every cluster's status is computed against.
pub(super) struct Context<'a> {
    /// The placement's generation (every per-cluster condition's observedGeneration).
    pub generation: i64,
    /// The chain after Scheduled for the placement's apply strategy.
    pub chain: &'static [ConditionType],
    /// Whether the External strategy drives the rollout.
    pub external: bool,
    /// The latest resource snapshot's name.
    pub latest_snapshot: &'a str,
    /// The latest resource snapshot's index.
    pub latest_index: &'a str,
    /// The previous per-cluster statuses' conditions by cluster, for their transition times.
    pub previous: HashMap<&'a str, &'a [Condition]>,
    /// The time of the roll-up.
    pub now: Timestamp,
}

impl<'a> Context<'a> {
    /// The conditions of each cluster in `statuses` (the first status of a cluster, if one
    /// is listed twice), looked up once per cluster of a placement of thousands.
    pub(super) fn previous_of(
        statuses: &'a [PerClusterPlacementStatus],
    ) -> HashMap<&'a str, &'a [Condition]> {
        let mut previous = HashMap::with_capacity(statuses.len());
        for status in statuses {
            if let Some(cluster) = status.cluster_name.as_deref() {
                previous
                    .entry(cluster)
                    .or_insert_with(|| status.conditions.as_deref().unwrap_or_default());
            }
        }
        previous
    }
}

impl Context<'_> {
    /// The previous conditions of `cluster` (none for an unnamed slot).
    fn previous_conditions(&self, cluster: Option<&str>) -> &[Condition] {
        cluster
            .and_then(|c| self.previous.get(c).copied())
            .unwrap_or_default()
    }

    /// A per-cluster condition observed for the placement's generation.
    fn condition<'m>(
        &self,
        type_: ConditionType,
        status: &'m str,
        reason: &'m str,
        message: String,
    ) -> NewCondition<'m> {
        NewCondition {
            type_: type_.as_str(),
            status,
            reason,
            message,
            observed_generation: Some(self.generation),
        }
    }

    /// The status of picked cluster `decision`, from its binding if it has one.
    pub(super) fn selected(
        &self,
        decision: &ClusterDecision,
        binding: Option<&PlacementBinding<'_>>,
    ) -> PerClusterPlacementStatus {
        let mut status = PerClusterPlacementStatus {
            cluster_name: Some(decision.cluster_name.clone()),
            ..Default::default()
        };
        let mut conditions = vec![self.condition(
            ConditionType::Scheduled,
            "True",
            reason::SCHEDULED,
            decision.reason.clone(),
        )];
        match binding {
            None => conditions.push(self.unknown(ConditionType::RolloutStarted)),
            Some(binding) if self.external => {
                status.observed_resource_index = binding.resource_index.map(str::to_string);
                self.copy_chain(binding, &mut status, &mut conditions);
            }
            Some(binding) => {
                status.observed_resource_index = Some(self.latest_index.to_string());
                if binding.spec.resource_snapshot_name == self.latest_snapshot {
                    self.copy_chain(binding, &mut status, &mut conditions);
                } else {
                    conditions.push(self.held_back(binding));
                }
            }
        }
        let previous = self.previous_conditions(Some(&decision.cluster_name));
        status.conditions = Some(assemble(previous, conditions, self.now));
        status
    }

    /// The status of a slot the scheduler could not fill: on `cluster` (with the scheduler's
    /// `why`) when a cluster can be named, else unnamed.
    pub(super) fn unfilled(
        &self,
        cluster: Option<String>,
        why: String,
    ) -> PerClusterPlacementStatus {
        let condition = self.condition(
            ConditionType::Scheduled,
            "False",
            reason::SCHEDULE_FAILED,
            why,
        );
        PerClusterPlacementStatus {
            conditions: Some(assemble(
                self.previous_conditions(cluster.as_deref()),
                vec![condition],
                self.now,
            )),
            cluster_name: cluster,
            ..Default::default()
        }
    }

    /// RolloutStarted of a binding that does not have the latest resources.
    fn held_back<'b>(&self, binding: &'b PlacementBinding<'_>) -> NewCondition<'b> {
        match binding.current(ConditionType::RolloutStarted) {
            Some(c) if c.status == "False" => self.condition(
                ConditionType::RolloutStarted,
                "False",
                reason::ROLLOUT_NOT_STARTED_YET,
                c.message.clone(),
            ),
            _ => self.unknown(ConditionType::RolloutStarted),
        }
    }

    /// Copies the binding's chain until its first condition that is not True.
    fn copy_chain<'b>(
        &self,
        binding: &'b PlacementBinding<'_>,
        status: &mut PerClusterPlacementStatus,
        conditions: &mut Vec<NewCondition<'b>>,
    ) {
        for &type_ in self.chain {
            let Some(found) = binding
                .current(type_)
                .filter(|c| c.status == "True" || c.status == "False")
            else {
                conditions.push(self.unknown(type_));
                return;
            };
            let ok = found.status == "True";
            let lists = &binding.status;
            match type_ {
                ConditionType::RolloutStarted if ok => {
                    let spec = binding.spec;
                    status.applicable_resource_overrides =
                        listed(&spec.resource_override_snapshots);
                    status.applicable_cluster_resource_overrides =
                        listed(&spec.cluster_resource_override_snapshots);
                }
                ConditionType::Applied | ConditionType::Available => {
                    if !ok {
                        status.failed_placements = listed(&lists.failed_placements);
                        status.diffed_placements = listed(&lists.diffed_placements);
                    }
                    status.drifted_placements = listed(&lists.drifted_placements);
                }
                ConditionType::DiffReported if ok => {
                    status.diffed_placements = listed(&lists.diffed_placements);
                }
                _ => {}
            }
            conditions.push(self.condition(
                type_,
                &found.status,
                &found.reason,
                found.message.clone(),
            ));
            if !ok {
                return;
            }
        }
    }

    /// The Unknown per-cluster condition of `type_`, with KubeFleet's reason and message.
    fn unknown(&self, type_: ConditionType) -> NewCondition<'static> {
        let (reason, message) = type_.pending();
        self.condition(type_, "Unknown", reason, message.to_string())
    }
}

/// Whether a per-cluster status has condition `type_` with `status`.
pub(super) fn has(
    status: &PerClusterPlacementStatus,
    type_: ConditionType,
    expected: &str,
) -> bool {
    status
        .conditions
        .as_deref()
        .and_then(|c| find(c, type_.as_str()))
        .is_some_and(|c| c.status == expected)
}
