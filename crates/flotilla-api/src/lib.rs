//! Flotilla's API: the resource types of the fleet (KubeFleet-compatible), the CRD-shaped
//! definitions the generic API engine serves (fleet kinds and core Kubernetes kinds), and the
//! per-kind validation rules a structural schema cannot express.
//!
//! - [`fleet_crds`] and [`core_crds`] build every definition from scratch (schema generation
//!   is not free: build them once at start-up). Schemas are self-contained and structural.
//! - Defaults live in the schemas, on leaf fields, exactly where KubeFleet's markers put them;
//!   like kube-apiserver, an engine applies a default only inside an object that is present, so
//!   readers must treat an absent parent as "all defaults" (see
//!   [`placement::PlacementSpec::placement_type`]).
//! - Int-or-string fields carry `x-kubernetes-int-or-string: true` without a `type`; their
//!   `pattern` constrains the string form only, and [`validate`] checks the integer form.
//! - [`validate`] runs after schema validation and defaulting and adds the rules of
//!   KubeFleet's CEL expressions and webhooks, and of apiextensions for user CRDs; the few rules
//!   that depend on other kinds ask a [`ServedKinds`].
//! - The namespaced placement kinds (`ResourcePlacement` and its snapshots and bindings) are
//!   twins of the cluster-scoped ones over the same spec and status types (`crd::twin`).

mod builtin;
pub mod cluster;
pub mod conditions;
mod crd;
pub mod nodes;
pub mod placement;
pub mod updates;
mod validation;

pub use builtin::conversion::convert;
pub use builtin::defaults::apply as apply_builtin_defaults;
pub use builtin::{NO_GENERATION_ANNOTATION, STORAGE_GROUP_ANNOTATION, core_crds};
pub use validation::{ServedKinds, validate};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Flotilla's own kinds (KubeFleet's `cluster.kubernetes-fleet.io` and
/// `placement.kubernetes-fleet.io`) as CRDs, stored at v1beta1 and, except the namespaced
/// snapshots and bindings KubeFleet's v1 lacks, served at v1 too.
pub fn fleet_crds() -> Vec<CustomResourceDefinition> {
    let mut crds = cluster::crds();
    crds.extend(placement::crds());
    crds.extend(updates::crds());
    crds
}

/// [`fleet_crds`] as `flotilla crds` prints them for a hub that is a plain Kubernetes cluster:
/// with Flotilla's own rules of its kinds as CEL rules the kube-apiserver evaluates (Flotilla's
/// hub runs the same rules in Rust instead).
pub fn exported_crds() -> Vec<CustomResourceDefinition> {
    fleet_crds().into_iter().map(crd::cel::with_rules).collect()
}

/// What a member cluster serves: the core Kubernetes kinds, the fleet's member-side kinds
/// (`AppliedWork`) and node auto-provisioning's (`NodePool`, `NodeClaim`, `AKSNodeClass`).
/// Simulated members serve exactly these.
pub fn member_crds() -> Vec<CustomResourceDefinition> {
    let mut crds = core_crds();
    crds.extend(placement::member_crds());
    crds.extend(nodes::crds());
    crds
}

#[cfg(test)]
mod tests;
