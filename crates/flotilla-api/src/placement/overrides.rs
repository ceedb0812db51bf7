//! `ClusterResourceOverride` and `ResourceOverride`: per-cluster changes to placed resources,
//! applied to the manifests of each member's Work. Rules select clusters by label; each rule
//! either patches the selected resources (RFC 6902 JSON patch, whose values may use the
//! variables `${MEMBER-CLUSTER-NAME}` and `${MEMBER-CLUSTER-LABEL-KEY-<key>}`) or keeps them
//! off the cluster (`Delete`). A ResourceOverride wins over a ClusterResourceOverride.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::policy::ClusterSelector;
use super::selector::ResourceSelectorTerm;

/// Overrides of cluster-scoped resources (and, through a namespace, everything in it).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourceOverride",
    plural = "clusterresourceoverrides",
    singular = "clusterresourceoverride",
    category = "fleet",
    category = "fleet-placement",
    derive = "PartialEq",
    doc = "ClusterResourceOverride changes selected cluster-scoped resources on the clusters its rules select."
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceOverrideSpec {
    /// The placement the override belongs to (immutable); without it, it applies at the next
    /// rollout of any placement selecting the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementRef>,
    /// The resources, by name (1..20; label selectors are not supported).
    #[schemars(length(min = 1, max = 20))]
    pub cluster_resource_selectors: Vec<ResourceSelectorTerm>,
    /// The rules.
    pub policy: OverridePolicy,
}

/// Overrides of namespaced resources, in the override's namespace.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ResourceOverride",
    plural = "resourceoverrides",
    singular = "resourceoverride",
    category = "fleet",
    category = "fleet-placement",
    namespaced,
    derive = "PartialEq",
    doc = "ResourceOverride changes selected namespaced resources on the clusters its rules select."
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceOverrideSpec {
    /// The placement the override belongs to (immutable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementRef>,
    /// The resources, by group, version, kind and name (1..20).
    #[schemars(length(min = 1, max = 20))]
    pub resource_selectors: Vec<NamespacedResourceSelector>,
    /// The rules.
    pub policy: OverridePolicy,
}

/// The placement an override belongs to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementRef {
    /// Name of the placement.
    pub name: String,
    /// `Cluster` (a ClusterResourcePlacement, the default) or `Namespaced` (a
    /// ResourcePlacement in the override's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Cluster"))]
    pub scope: Option<PlacementScope>,
}

/// The scope of a referenced placement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum PlacementScope {
    /// A ClusterResourcePlacement.
    #[default]
    Cluster,
    /// A ResourcePlacement in the same namespace.
    Namespaced,
}

/// One namespaced resource, in the override's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedResourceSelector {
    /// API group; empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
}

/// The rules of an override, applied in order (a later rule wins on the same field).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverridePolicy {
    /// 1..20 rules.
    #[schemars(length(min = 1, max = 20))]
    pub override_rules: Vec<OverrideRule>,
}

/// One rule: which clusters, and what to do to the resources there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverrideRule {
    /// The clusters (label selectors only). Empty selects every cluster; absent selects none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<ClusterSelector>,
    /// `JSONPatch` (default) or `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "JSONPatch"))]
    pub override_type: Option<OverrideType>,
    /// The patch operations (1..20), for `JSONPatch` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 20))]
    pub json_patch_overrides: Option<Vec<JsonPatchOverride>>,
}

/// What a rule does.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum OverrideType {
    /// Patch the resources.
    #[default]
    #[serde(rename = "JSONPatch")]
    JsonPatch,
    /// Do not place the resources on the selected clusters.
    Delete,
}

/// One RFC 6902 operation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JsonPatchOverride {
    /// `add`, `remove` or `replace`.
    pub op: JsonPatchOp,
    /// JSON pointer of the target field.
    #[schemars(regex(pattern = r"^/.*"))]
    pub path: String,
    /// The value (not for `remove`); strings may use the override variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "any_json")]
    pub value: Option<Value>,
}

/// Any JSON value (apiextensions' `JSON`): kept as written, not typed.
fn any_json(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"x-kubernetes-preserve-unknown-fields": true})
}

/// A JSON patch operation an override may use.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JsonPatchOp {
    /// Add a value.
    Add,
    /// Remove the field.
    Remove,
    /// Replace the value.
    Replace,
}
