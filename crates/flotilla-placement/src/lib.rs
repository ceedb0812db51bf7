//! Placement decisions as pure functions over the API types.
//!
//! [`scheduler`] is KubeFleet's scheduler: from a placement policy, the member clusters, the
//! placement's bindings and the time, it decides which clusters the placement uses, why each
//! other cluster is not used, and which bindings to create, refresh or unschedule.
//! [`scheduler::requeue`] says which member-cluster changes should send placements back to it.

pub mod controller;
pub mod scheduler;
pub mod selection;
pub mod snapshot;
