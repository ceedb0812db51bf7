//! Placement decisions as pure functions over the API types.
//!
//! [`scheduler`] is KubeFleet's scheduler: from a placement policy, the member clusters, the
//! placement's bindings and the time, it decides which clusters the placement uses, why each
//! other cluster is not used, and which bindings to create, refresh or unschedule.
//! [`scheduler::requeue`] says which member-cluster changes should send placements back to it.
//!
//! [`overrides`] decides which ClusterResourceOverrides and ResourceOverrides apply to a
//! placement, renders each selected manifest for each cluster, and plans override snapshots.
//!
//! [`eviction`] judges a `ClusterResourcePlacementEviction` against its placement, bindings and
//! disruption budget.

pub mod eviction;
pub mod overrides;
pub mod scheduler;
