//! `ResourcePlacement` (`rp`): the namespaced placement. It selects namespaced resources in its
//! own namespace (never a namespace or a cluster-scoped kind) and places them on member
//! clusters exactly as a [`ClusterResourcePlacement`] does, with the same [`PlacementSpec`] and
//! [`PlacementStatus`]; its placement-level condition types are prefixed `ResourcePlacement…`
//! (`ResourcePlacementScheduled`, …). Its scheduling policy snapshots, resource snapshots and
//! bindings are the namespaced [`super::SchedulingPolicySnapshot`],
//! [`super::ResourceSnapshot`] and [`super::ResourceBinding`], in the same namespace.

use super::cluster_resource_placement::{ClusterResourcePlacement, PlacementSpec};
use super::status::PlacementStatus;
use crate::crd::twin::namespaced_twin;

namespaced_twin! {
    /// A placement of namespaced resources of its own namespace, served at
    /// `placement.kubernetes-fleet.io` v1beta1 (stored) and v1 like `ClusterResourcePlacement`.
    pub struct ResourcePlacement: twin of ClusterResourcePlacement {
        spec: PlacementSpec,
        status: PlacementStatus,
        plural: "resourceplacements",
        singular: "resourceplacement",
        short_name: "rp",
        description: "ResourcePlacement selects namespaced resources in its own namespace and places them onto selected member clusters.",
        derive: [],
    }
}
