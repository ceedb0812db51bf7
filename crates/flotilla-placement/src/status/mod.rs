//! Status roll-up, as KubeFleet's work generator and placement controller do it, in two
//! pure steps:
//!
//! 1. [`binding_status`]: a binding's `Overridden`, `WorkSynchronized`, `Applied`, `Available`
//!    (or `DiffReported`) conditions and its failed, drifted and diffed resources, from how
//!    overriding and writing its Works went and what the member reported on them.
//! 2. [`placement_status`]: the placement's status from the latest policy snapshot and the
//!    bindings: per-cluster statuses (`Scheduled`, then each binding's chain up to its first
//!    condition that is not True), the placement-level conditions prefixed per
//!    [`PlacementKind`], the observed resource index and the selected resources.
//!
//! Conditions come in KubeFleet's order (Scheduled → RolloutStarted → Overridden →
//! WorkSynchronized → Applied → Available, or DiffReported under ReportDiff) with its reasons
//! ([`reason`]); a condition's `lastTransitionTime` moves only when its status changes or it
//! is observed for a new generation.

mod assemble;
mod binding;
pub mod events;
mod external;
mod manifests;
mod per_cluster;
mod placement;
pub mod reason;
mod rollup;
mod types;
mod unfilled;
mod work_summary;

pub use binding::{BindingWorks, OverrideOutcome, WorkSync, WorkView, binding_status};
pub use manifests::PLACEMENT_LIST_LIMIT;
use manifests::describe;
pub use placement::{
    LatestResources, PlacementBinding, PlacementInput, PolicySnapshotView, placement_status,
};
pub use types::{ConditionType, PlacementKind};

/// `Some` copy of `items` unless it is empty (the API omits empty lists).
fn listed<T: Clone>(items: &[T]) -> Option<Vec<T>> {
    (!items.is_empty()).then(|| items.to_vec())
}
