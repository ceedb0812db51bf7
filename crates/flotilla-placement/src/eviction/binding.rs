//! What the eviction verdict reads from a binding's state and conditions (KubeFleet's
//! `isPlacementPresent`, `HasBindingFailed`, `IsBindingDiffReported` and the availability
//! count). A condition counts only when it was observed at the binding's current generation.

use flotilla_api::placement::BindingState;
use flotilla_api::placement::ClusterResourceBinding;
use flotilla_api::placement::binding::PREVIOUS_STATE_ANNOTATION;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// The per-cluster conditions whose `False` status can mean a failed placement.
const FAILURE_CONDITIONS: [&str; 4] = ["Overridden", "WorkSynchronized", "Applied", "Available"];
/// `False` reasons of those conditions that mean "still in progress", not failed.
const IN_PROGRESS_REASONS: [&str; 4] = [
    "OverriddenPending",
    "WorkNotSynchronizedYet",
    "ApplyPending",
    "ResourceNotAvailableYet",
];

/// The binding's condition of type `type_`, if observed at its current generation.
fn current<'a>(binding: &'a ClusterResourceBinding, type_: &str) -> Option<&'a Condition> {
    let generation = binding.metadata.generation.unwrap_or_default();
    binding
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_ && c.observed_generation.unwrap_or_default() == generation)
}

/// `Available=True` at the current generation.
pub(crate) fn is_available(binding: &ClusterResourceBinding) -> bool {
    current(binding, "Available").is_some_and(|c| c.status == "True")
}

/// A terminal failure: Overridden, WorkSynchronized, Applied or Available is `False` with a
/// reason other than an in-progress one.
pub(crate) fn has_failed(binding: &ClusterResourceBinding) -> bool {
    FAILURE_CONDITIONS.iter().any(|type_| {
        current(binding, type_).is_some_and(|c| {
            c.status == "False" && !IN_PROGRESS_REASONS.contains(&c.reason.as_str())
        })
    })
}

/// The binding reports diffs only (a `DiffReported` condition at the current generation).
pub(crate) fn is_diff_reported(binding: &ClusterResourceBinding) -> bool {
    current(binding, "DiffReported").is_some()
}

/// Resources may be on the cluster: the binding is `Bound`, or `Unscheduled` after being
/// `Bound`.
pub(crate) fn may_have_placed(binding: &ClusterResourceBinding) -> bool {
    match binding.spec.state {
        BindingState::Bound => true,
        BindingState::Unscheduled => binding
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(PREVIOUS_STATE_ANNOTATION))
            .is_some_and(|previous| previous == "Bound"),
        BindingState::Scheduled => false,
    }
}

/// The binding is being deleted.
pub(crate) fn is_deleting(binding: &ClusterResourceBinding) -> bool {
    binding.metadata.deletion_timestamp.is_some()
}
