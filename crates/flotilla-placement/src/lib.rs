//! Placement decisions as pure functions over the API types.
//!
//! [`scheduler`] is KubeFleet's scheduler: from a placement policy, the member clusters, the
//! placement's bindings and the time, it decides which clusters the placement uses, why each
//! other cluster is not used, and which bindings to create, refresh or unschedule.
//! [`scheduler::requeue`] says which member-cluster changes should send placements back to it.
//! [`rollout`] is KubeFleet's RollingUpdate: from the bindings' readiness, it decides which
//! bindings to bind, update or delete this round within `maxUnavailable` and `maxSurge`, and
//! why the others wait. [`status`] rolls Work results up into binding conditions and binding
//! conditions up into the placement's status, with KubeFleet's condition types, order and
//! reasons. [`selection`] and [`snapshot`] decide what a placement selects and how it is
//! recorded. [`controller`] holds the kube-rs controllers: thin shells over all of these.
//!
//! [`overrides`] decides which ClusterResourceOverrides and ResourceOverrides apply to a
//! placement, renders each selected manifest for each cluster, and plans override snapshots.
//!
//! [`placement_key::PlacementKey`] names a placement of either kind: a
//! `ClusterResourcePlacement`, or a namespaced `ResourcePlacement`, which the same cores serve.
//!
//! [`eviction`] judges a `ClusterResourcePlacementEviction` against its placement, bindings and
//! disruption budget.

pub mod controller;
pub mod eviction;
pub mod overrides;
pub mod placement_key;
pub mod rollout;
pub mod scheduler;
pub mod selection;
pub mod snapshot;
pub mod status;
pub mod update_run;
