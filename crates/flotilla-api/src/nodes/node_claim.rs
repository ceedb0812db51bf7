//! `NodeClaim` (`karpenter.sh/v1`): one node Karpenter asked the cloud for, from request to
//! termination. Its conditions tell the node's story: `Launched` → `Registered` →
//! `Initialized` (together `Ready`), then `Consolidatable`, `Drifted`, `DisruptionReason`,
//! `Drained`, `InstanceTerminating`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::node_pool::{DURATION_OR_NEVER_PATTERN, DURATION_PATTERN};

/// One node requested from the cloud.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1",
    kind = "NodeClaim",
    plural = "nodeclaims",
    singular = "nodeclaim",
    shortname = "nc",
    shortname = "nodeclaims",
    category = "karpenter",
    status = "NodeClaimStatus",
    derive = "PartialEq",
    doc = "NodeClaim is one node Karpenter requested from the cloud, from launch to termination.",
    printcolumn(
        name = "Type",
        type_ = "string",
        json_path = r".metadata.labels.node\.kubernetes\.io/instance-type"
    ),
    printcolumn(
        name = "Capacity",
        type_ = "string",
        json_path = r".metadata.labels.karpenter\.sh/capacity-type"
    ),
    printcolumn(
        name = "Zone",
        type_ = "string",
        json_path = r".metadata.labels.topology\.kubernetes\.io/zone"
    ),
    printcolumn(name = "Node", type_ = "string", json_path = ".status.nodeName"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Disruption",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="DisruptionReason")].reason"#
    ),
    printcolumn(
        name = "ID",
        type_ = "string",
        json_path = ".status.providerID",
        priority = 1
    ),
    printcolumn(
        name = "NodePool",
        type_ = "string",
        json_path = r".metadata.labels.karpenter\.sh/nodepool",
        priority = 1
    ),
    printcolumn(
        name = "NodeClass",
        type_ = "string",
        json_path = ".spec.nodeClassRef.name",
        priority = 1
    ),
    printcolumn(
        name = "ImageID",
        type_ = "string",
        json_path = ".status.imageID",
        priority = 1
    ),
    printcolumn(
        name = "Drifted",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Drifted")].reason"#,
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimSpec {
    /// Taints the node carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Taints the node carries until something on it removes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_taints: Vec<Taint>,
    /// What the instance must satisfy (instance types, zones, capacity types, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// The resources the pods planned for this node request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// The node class (cloud settings).
    pub node_class_ref: NodeClassReference,
    /// Most time the node may take to drain once deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub termination_grace_period: Option<String>,
    /// The node's lifetime (`Never`: forever).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_OR_NEVER_PATTERN))]
    pub expire_after: Option<String>,
}

/// A node selector requirement with Karpenter's `minValues` (and its `Gte`/`Lte` operators).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirementWithMinValues {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte` or `Lte`.
    pub operator: RequirementOperator,
    /// The values (one integer for `Gt`/`Lt`/`Gte`/`Lte`, none for `Exists`/`DoesNotExist`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Least number of distinct values of this key the launch options must keep (flexibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    pub min_values: Option<i32>,
}

/// Operators of a requirement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum RequirementOperator {
    #[default]
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    Gte,
    Lte,
}

/// The requests of the pods a claim was made for.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ResourceRequirements {
    /// Resource requests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
}

/// A reference to a node class object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct NodeClassReference {
    /// API group of the node class (`karpenter.azure.com`): a group, not an `apiVersion`.
    #[schemars(regex(pattern = r"^[^/]*$"))]
    pub group: String,
    /// Kind of the node class (`AKSNodeClass`).
    pub kind: String,
    /// Name of the node class.
    pub name: String,
}

/// What the cloud and the node report about a claim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimStatus {
    /// The node's name once it registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The cloud's id of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
    /// The node image the instance runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "imageID")]
    pub image_id: Option<String>,
    /// The instance's capacity.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    /// What pods may use of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: BTreeMap<String, Quantity>,
    /// The conditions telling the claim's story.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// When a workload pod last arrived on or left the node (consolidation waits
    /// `consolidateAfter` after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pod_event_time: Option<Time>,
}
