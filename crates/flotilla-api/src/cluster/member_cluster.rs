//! `MemberCluster` (`cluster.kubernetes-fleet.io`): one member cluster of the fleet, as KubeFleet
//! defines it. The hub creates one per joined cluster; the member agent reports heartbeats,
//! properties and resource usage into its status, which the scheduler reads.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::Subject;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;

use super::versions::ClusterVersions;
use serde::{Deserialize, Serialize};

/// Prefix of each member's namespace on the hub: `fleet-member-<name>`.
pub const MEMBER_NAMESPACE_PREFIX: &str = "fleet-member-";

/// Longest member name, so that the member's namespace `fleet-member-<name>` is still a DNS
/// label.
pub const MAX_MEMBER_NAME: usize = 63 - MEMBER_NAMESPACE_PREFIX.len();

/// Desired state of a MemberCluster.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "MemberCluster",
    plural = "memberclusters",
    singular = "membercluster",
    shortname = "cluster",
    category = "fleet",
    category = "fleet-cluster",
    status = "MemberClusterStatus",
    derive = "PartialEq",
    doc = "MemberCluster represents a member cluster within the fleet, on the hub cluster.",
    printcolumn(
        name = "Joined",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Joined")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Member-Agent-Last-Seen",
        type_ = "date",
        json_path = r#".status.agentStatus[?(@.type=="MemberAgent")].lastReceivedHeartbeat"#
    ),
    printcolumn(
        name = "Node-Count",
        type_ = "string",
        json_path = r".status.properties.kubernetes-fleet\.io/node-count.value"
    ),
    printcolumn(
        name = "Available-CPU",
        type_ = "string",
        json_path = ".status.resourceUsage.available.cpu"
    ),
    printcolumn(
        name = "Available-Memory",
        type_ = "string",
        json_path = ".status.resourceUsage.available.memory"
    ),
    printcolumn(
        name = "Kubernetes-Version",
        type_ = "string",
        json_path = ".status.versions.kubernetesVersion"
    ),
    printcolumn(
        name = "Allocatable-CPU",
        type_ = "string",
        json_path = ".status.resourceUsage.allocatable.cpu",
        priority = 1
    ),
    printcolumn(
        name = "Allocatable-Memory",
        type_ = "string",
        json_path = ".status.resourceUsage.allocatable.memory",
        priority = 1
    ),
    printcolumn(
        name = "Node-Images",
        type_ = "string",
        json_path = ".status.versions.nodeImages",
        priority = 1
    ),
    printcolumn(
        name = "Power-State",
        type_ = "string",
        json_path = ".status.versions.powerState",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MemberClusterSpec {
    /// The identity the member agent uses to reach the hub; the hub grants it the minimal
    /// permissions the agent needs.
    pub identity: Subject,

    /// How often, in seconds, the member agent sends a heartbeat to the hub. Default 60, 1..600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600), extend("default" = 60))]
    pub heartbeat_period_seconds: Option<i32>,

    /// Taints of the member cluster; placements that do not tolerate them are not scheduled here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub taints: Option<Vec<Taint>>,

    /// How deleting this member cluster is validated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_options: Option<DeleteOptions>,
}

/// A taint on a member cluster: placements that do not tolerate it are not scheduled on it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key.
    pub key: String,
    /// The taint value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The effect on placements that do not tolerate the taint; only `NoSchedule` exists.
    pub effect: TaintEffect,
}

/// The effect of a taint (shared by member-cluster taints and placement tolerations).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum TaintEffect {
    /// Placements that do not tolerate the taint are not scheduled on the cluster.
    #[default]
    NoSchedule,
}

/// Options for deleting a member cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions {
    /// How strictly the deletion is validated. Default `Strict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Strict"))]
    pub validation_mode: Option<DeleteValidationMode>,
}

/// How deleting a member cluster is validated.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum DeleteValidationMode {
    /// Skip the validation.
    Skip,
    /// Refuse to delete while placements still target the cluster.
    #[default]
    Strict,
}

/// Observed state of a MemberCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberClusterStatus {
    /// Conditions of the member cluster: `ReadyToJoin`, `Joined`, `Healthy`,
    /// `ClusterPropertyProviderStarted`, `ClusterPropertyCollectionSucceeded`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,

    /// Properties observed on the member cluster, by property name (a label-like name such as
    /// `kubernetes-fleet.io/node-count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, PropertyValue>>,

    /// The observed resource usage of the member cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_usage: Option<ResourceUsage>,

    /// Namespaces managed by Fleet on the member cluster, mapped to the Work that created them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<BTreeMap<String, String>>,

    /// Status reported by each agent running in the member cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_status: Option<Vec<AgentStatus>>,

    /// What the member runs: its control plane's Kubernetes version and each node pool's
    /// node image, as its member agent reports them. Flotilla's own field (KubeFleet has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<ClusterVersions>,
}

/// The observed value of one cluster property.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropertyValue {
    /// The value, a Kubernetes quantity (`5`, `12.5`, `3Gi`).
    pub value: String,
    /// When the value was observed.
    pub observation_time: Time,
}

/// The observed resource usage of a member cluster, summed over its nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUsage {
    /// Total capacity of all nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Allocatable capacity of all nodes (capacity minus system reservations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<BTreeMap<String, Quantity>>,
    /// Available capacity (allocatable minus what workloads request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<BTreeMap<String, Quantity>>,
    /// When the usage was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_time: Option<Time>,
}

/// Status reported by one agent running in the member cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    /// The agent type.
    #[serde(rename = "type")]
    pub type_: AgentType,
    /// Conditions of the agent: `Joined`, `Healthy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// When the hub last received a heartbeat from the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_received_heartbeat: Option<Time>,
}

/// The kind of agent running in a member cluster.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum AgentType {
    /// Joins and leaves the fleet and applies placed resources.
    MemberAgent,
    /// Exposes multi-cluster services through an L4 load balancer.
    MultiClusterServiceAgent,
    /// Exports and imports services across clusters.
    ServiceExportImportAgent,
}
