//! What a run reads off a cluster's binding: whether it carries the run's resources, and how
//! its update went.

use flotilla_api::conditions::find;
use flotilla_api::placement::{BindingState, ClusterResourceBinding};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::execute::{BindingOutcome, ClusterBinding};
use crate::rollout::Readiness;
use crate::status::ConditionType;

/// What a run wants a cluster's binding to carry.
#[derive(Clone, Copy, Debug)]
pub struct RunTarget<'a> {
    /// The resource snapshot (first chunk) name.
    pub snapshot: &'a str,
    /// The placement's apply strategy recorded by the run.
    pub apply_strategy: Option<&'a flotilla_api::placement::strategy::ApplyStrategy>,
}

/// The run's view of `binding` at `now`: `target` with the cluster's recorded override
/// snapshots says what "on target" means; resources whose availability cannot be tracked
/// count once they were applied `unavailable_period` ago.
pub fn view(
    binding: &ClusterResourceBinding,
    target: RunTarget<'_>,
    cluster_resource_overrides: &[String],
    resource_overrides: &[flotilla_api::placement::status::NamespacedName],
    now: Timestamp,
    unavailable_period: SignedDuration,
) -> ClusterBinding {
    let spec = &binding.spec;
    let on_target = spec.state == BindingState::Bound
        && spec.resource_snapshot_name == target.snapshot
        && spec.apply_strategy.as_ref() == target.apply_strategy
        && spec.cluster_resource_override_snapshots == cluster_resource_overrides
        && spec.resource_override_snapshots == resource_overrides;
    ClusterBinding {
        state: spec.state,
        deleting: binding.metadata.deletion_timestamp.is_some(),
        on_target,
        outcome: outcome(binding, now, unavailable_period),
    }
}

/// How the binding's update went, for its current generation. `Available` False is not a
/// failure here: the resources were applied and may yet become available.
fn outcome(
    binding: &ClusterResourceBinding,
    now: Timestamp,
    unavailable_period: SignedDuration,
) -> BindingOutcome {
    let conditions = binding
        .status
        .as_ref()
        .map_or(&[][..], |s| &s.conditions[..]);
    let generation = binding.metadata.generation.unwrap_or_default();
    match Readiness::judge(conditions, generation, now, unavailable_period) {
        Readiness::Available | Readiness::DiffReported => BindingOutcome::Succeeded,
        Readiness::Failed {
            condition: ConditionType::Available,
        }
        | Readiness::Untracked { .. }
        | Readiness::Pending => BindingOutcome::Pending,
        Readiness::Failed { condition } => {
            let detail = find(conditions, condition.as_str())
                .map(|c| format!("{} is False ({}): {}", c.type_, c.reason, c.message))
                .unwrap_or_else(|| format!("{} is False", condition.as_str()));
            BindingOutcome::Failed(detail)
        }
    }
}
