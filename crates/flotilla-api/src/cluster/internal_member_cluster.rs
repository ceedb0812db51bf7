//! `InternalMemberCluster`: the hub's channel to one member agent, in the member's own
//! namespace `fleet-member-<name>`. The hub writes the spec (join or leave, heartbeat period);
//! the agent writes the status (its heartbeats, properties and resource usage), which the hub
//! copies into the `MemberCluster`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::member_cluster::{AgentStatus, PropertyValue, ResourceUsage};
use super::versions::ClusterVersions;

/// Desired state of an InternalMemberCluster, written by the hub.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "InternalMemberCluster",
    plural = "internalmemberclusters",
    singular = "internalmembercluster",
    shortname = "imc",
    category = "fleet",
    category = "fleet-cluster",
    namespaced,
    status = "InternalMemberClusterStatus",
    derive = "PartialEq",
    doc = "InternalMemberCluster is the hub's view of one member cluster, shared with its member agent.",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct InternalMemberClusterSpec {
    /// Whether the member should be in the fleet (`Join`) or leave it (`Leave`).
    pub state: ClusterState,
    /// How often, in seconds, the member agent sends a heartbeat. Default 60, 1..600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600), extend("default" = 60))]
    pub heartbeat_period_seconds: Option<i32>,
}

/// Whether a member cluster should be part of the fleet.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ClusterState {
    /// The member joins (or stays in) the fleet.
    Join,
    /// The member leaves the fleet: its agent removes what the fleet placed and stops.
    Leave,
}

/// Observed state of an InternalMemberCluster, written by the member agent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InternalMemberClusterStatus {
    /// Conditions of the member cluster as its agent sees them
    /// (`ClusterPropertyProviderStarted`, `ClusterPropertyCollectionSucceeded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Properties observed on the member cluster, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, PropertyValue>>,
    /// The observed resource usage of the member cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_usage: Option<ResourceUsage>,
    /// Status of each agent of the member cluster (joined, healthy, last heartbeat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_status: Option<Vec<AgentStatus>>,
    /// What the member runs (control plane version, node pool images), when the agent has a
    /// provider that can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<ClusterVersions>,
}
