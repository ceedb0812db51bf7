//! Kubernetes RBAC: which user may do what, decided from Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings exactly as kube-apiserver's RBAC authorizer decides (no aggregation).
//!
//! The decision ([`Policy::authorize`]) is a pure function over an in-memory index of the four
//! kinds; [`cache::PolicyCache`] keeps that index in step with the store through a watch, so
//! every hub replica authorizes from the same stored policy. [`bootstrap`] holds the built-in
//! roles (`fleet-admin`, `fleet-viewer`, the per-member agent roles).

pub mod attributes;
pub mod bootstrap;
pub mod cache;
mod policy;
pub mod reconcile;
mod rule;

pub use attributes::{Attributes, ResourceAttributes};
pub use policy::{Decision, Policy, RbacKind};
pub use rule::PolicyRule;

#[cfg(test)]
mod tests;
