//! What a member cluster runs: its control plane's Kubernetes version and each node pool's
//! node image, as the member agent reports them (`status.versions` of the InternalMemberCluster,
//! mirrored into the MemberCluster). Cluster update orchestration reads it to decide which
//! members an update run still has to upgrade and to predict how long each will take.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The versions a member cluster runs, as its provider reports them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersions {
    /// The control plane's Kubernetes version, `MAJOR.MINOR.PATCH` (no leading `v`).
    pub kubernetes_version: String,
    /// The node pools, in the provider's order.
    #[serde(default)]
    pub node_pools: Vec<NodePoolVersion>,
    /// The distinct images of the node pools, in pool order, comma-separated: the
    /// `Node-Images` column (a printer column shows only the first of a list's values).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_images: String,
    /// Whether the cluster is running or stopped (deallocated), as its provider reports it:
    /// update runs skip a stopped cluster with that reason instead of failing on it.
    #[serde(default)]
    pub power_state: PowerState,
    /// How long the provider expects upgrade steps to take, for predicting timelines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_durations: Option<UpgradeDurations>,
    /// When the versions were observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_time: Option<Time>,
}

/// A cluster's power state (AKS can stop a cluster: its nodes are deallocated and nothing in
/// it can change until it is started again).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum PowerState {
    /// The cluster runs.
    #[default]
    Running,
    /// The cluster is stopped.
    Stopped,
}

/// The node image of one node pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolVersion {
    /// The pool's name, e.g. `system`.
    pub name: String,
    /// The pool's node image, full name `<family>-<version>`, e.g.
    /// `AKSUbuntu-2204gen2containerd-202510.13.0`. While the pool is being upgraded node by
    /// node it still names the image the pool had: it changes once every node runs the new one.
    pub image: String,
    /// The image family, e.g. `AKSUbuntu-2204gen2containerd`.
    pub image_family: String,
    /// The image version within the family, e.g. `202510.13.0`.
    pub image_version: String,
    /// How many nodes the pool has.
    pub node_count: u32,
}

/// Expected durations of upgrade steps, in seconds.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeDurations {
    /// Upgrading the control plane.
    pub control_plane_seconds: u64,
    /// Upgrading (reimaging) one node.
    pub node_seconds: u64,
}

/// Splits a full node image name `<family>-<version>` at its last `-`:
/// `AKSUbuntu-2204gen2containerd-202510.13.0` is family `AKSUbuntu-2204gen2containerd`,
/// version `202510.13.0`. `None` when the name has no `-` or either part is empty.
pub fn split_image(image: &str) -> Option<(&str, &str)> {
    image
        .rsplit_once('-')
        .filter(|(family, version)| !family.is_empty() && !version.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_split_at_their_last_dash() {
        assert_eq!(
            split_image("AKSUbuntu-2204gen2containerd-202510.13.0"),
            Some(("AKSUbuntu-2204gen2containerd", "202510.13.0"))
        );
        assert_eq!(
            split_image("AKSAzureLinux-V3gen2-202511.02.0"),
            Some(("AKSAzureLinux-V3gen2", "202511.02.0"))
        );
        assert_eq!(split_image("ubuntu"), None);
        assert_eq!(split_image("ubuntu-"), None);
        assert_eq!(split_image("-1.0"), None);
    }
}
