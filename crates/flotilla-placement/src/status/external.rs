//! The placement-level rollout state under the External strategy (KubeFleet's
//! `determineRolloutStateForPlacementWithExternalRolloutStrategy`).

use flotilla_api::conditions::NewCondition;
use flotilla_api::placement::status::{PerClusterPlacementStatus, PlacementStatus};

use super::per_cluster::has;
use super::placement::PlacementInput;
use super::{ConditionType, listed, reason};

/// Under External, the `…RolloutStarted` Unknown condition that ends the chain, if the
/// clusters do not agree on one resource snapshot or one has not decided; otherwise sets the
/// observed index and selected resources to those of the snapshot the clusters agree on.
pub(super) fn external_rollout<'n>(
    input: &PlacementInput<'_>,
    picked: &[PerClusterPlacementStatus],
    status: &mut PlacementStatus,
    name: &'n str,
) -> Option<NewCondition<'n>> {
    let index =
        |c: &PerClusterPlacementStatus| c.observed_resource_index.clone().unwrap_or_default();
    let first = index(&picked[0]);
    let unknown = |message: String| NewCondition {
        type_: name,
        status: "Unknown",
        reason: reason::ROLLOUT_CONTROLLED_BY_EXTERNAL_CONTROLLER,
        message,
        observed_generation: Some(input.generation),
    };
    let disagree = picked.iter().any(|c| index(c) != first);
    if disagree || first.is_empty() {
        status.observed_resource_index = None;
        status.selected_resources = None;
        return Some(unknown(if disagree {
            "Rollout is controlled by an external controller and different resource snapshot versions are observed across clusters".to_string()
        } else {
            "Rollout is controlled by an external controller and no resource snapshot name is observed across clusters, probably rollout has not started yet".to_string()
        }));
    }
    if first != input.latest.index {
        status.selected_resources = listed(&(input.resources_at)(&first));
        status.observed_resource_index = Some(first);
    }
    let undecided = picked.iter().find(|c| {
        !has(c, ConditionType::RolloutStarted, "True")
            && !has(c, ConditionType::RolloutStarted, "False")
    })?;
    Some(unknown(format!(
        "Rollout is controlled by an external controller and cluster {} is in RolloutStarted Unknown state",
        undecided.cluster_name.as_deref().unwrap_or_default()
    )))
}
