//! Observed state of a placement: selected resources and per-cluster placement status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Observed state of a placement.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementStatus {
    /// The resources the selectors selected (meaningful once `observedResourceIndex` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_resources: Option<Vec<ResourceIdentifier>>,
    /// Index of the resource snapshot the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_resource_index: Option<String>,
    /// Placement status on each picked cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_statuses: Option<Vec<PerClusterPlacementStatus>>,
    /// Placement conditions, `ClusterResourcePlacement`-prefixed: `…Scheduled`,
    /// `…RolloutStarted`, `…Overridden`, `…WorkSynchronized`, `…Applied`, `…Available`,
    /// `…DiffReported`, `…StatusSynced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// Identifies one Kubernetes resource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// API group; empty for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace; empty for cluster-scoped resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The envelope object that carried the resource, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<EnvelopeIdentifier>,
}

/// Identifies an envelope object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvelopeIdentifier {
    /// Name of the envelope.
    pub name: String,
    /// Namespace of the envelope; empty when cluster-scoped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Envelope type. Default `ConfigMap`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ConfigMap"))]
    pub type_: Option<EnvelopeType>,
}

/// Envelope type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum EnvelopeType {
    /// A ConfigMap-based envelope (legacy).
    #[default]
    ConfigMap,
    /// A `ClusterResourceEnvelope`.
    ClusterResourceEnvelope,
    /// A `ResourceEnvelope`.
    ResourceEnvelope,
}

/// A namespaced object reference.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedName {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
}

/// Placement status of the selected resources on one cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerClusterPlacementStatus {
    /// The cluster; empty when the scheduler could not fill this slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    /// Index of the resource snapshot being rolled out to the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_resource_index: Option<String>,
    /// ResourceOverride snapshots that apply to the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applicable_resource_overrides: Option<Vec<NamespacedName>>,
    /// ClusterResourceOverride snapshots that apply to the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applicable_cluster_resource_overrides: Option<Vec<String>>,
    /// Resources that failed to apply or are unavailable (at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub failed_placements: Option<Vec<FailedResourcePlacement>>,
    /// Resources that drifted from the hub manifest (at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub drifted_placements: Option<Vec<DriftedResourcePlacement>>,
    /// Resources that differ from the hub manifest (at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub diffed_placements: Option<Vec<DiffedResourcePlacement>>,
    /// Per-cluster conditions: `Scheduled`, `RolloutStarted`, `Overridden`,
    /// `WorkSynchronized`, `Applied`, `Available`, `DiffReported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// A resource that failed to be placed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedResourcePlacement {
    /// The resource.
    #[serde(flatten)]
    pub resource: ResourceIdentifier,
    /// The failed condition.
    pub condition: Condition,
}

/// One JSON-patch-like difference between the member and the hub.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchDetail {
    /// JSON pointer of the differing field.
    pub path: String,
    /// Value on the member; empty if absent there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_in_member: Option<String>,
    /// Value in the hub manifest; empty if absent there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_in_hub: Option<String>,
}

/// A resource whose member copy drifted from the hub manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftedResourcePlacement {
    /// The resource.
    #[serde(flatten)]
    pub resource: ResourceIdentifier,
    /// When the drift was observed.
    pub observation_time: Time,
    /// Generation of the member object that drifted.
    pub target_cluster_observed_generation: i64,
    /// When drift was first observed.
    pub first_drifted_observed_time: Time,
    /// The drifted fields (possibly truncated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_drifts: Option<Vec<PatchDetail>>,
}

/// A resource whose member copy differs from the hub manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffedResourcePlacement {
    /// The resource.
    #[serde(flatten)]
    pub resource: ResourceIdentifier,
    /// When the difference was observed.
    pub observation_time: Time,
    /// Generation of the member object, absent if it does not exist yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster_observed_generation: Option<i64>,
    /// When a difference was first observed.
    pub first_diffed_observed_time: Time,
    /// The differing fields (possibly truncated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_diffs: Option<Vec<PatchDetail>>,
}
