//! `MemberUpgrade` (`mup`): one member's upgrade, created by an update run in the member's hub
//! namespace (`fleet-member-<name>`) and carried out by the member agent through its provider:
//! the control plane first, then each node pool node by node. The agent reports progress in
//! the status; the run reads it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::update_run::UpgradeType;

/// Label on a member upgrade naming its update run.
pub const UPGRADE_RUN_LABEL: &str = "updates.flotilla.dev/update-run";

/// What to upgrade the member to; set by the run, immutable.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "MemberUpgrade",
    plural = "memberupgrades",
    singular = "memberupgrade",
    shortname = "mup",
    namespaced,
    category = "fleet",
    category = "fleet-updates",
    status = "MemberUpgradeStatus",
    derive = "PartialEq",
    doc = "MemberUpgrade is one member cluster's upgrade, carried out by its member agent.",
    printcolumn(name = "Update-Run", type_ = "string", json_path = ".spec.updateRun"),
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.type"),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".spec.kubernetesVersion"
    ),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Progress", type_ = "string", json_path = ".status.progress"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Message",
        type_ = "string",
        json_path = ".status.message",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MemberUpgradeSpec {
    /// The update run that asked for it.
    pub update_run: String,
    /// The kind of upgrade.
    #[serde(rename = "type")]
    pub upgrade_type: UpgradeType,
    /// The control plane's target, for `Full` and `ControlPlaneOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Target image per family (full names); pools of other families keep their image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_images: Vec<String>,
}

/// Progress of a member upgrade, reported by the member agent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberUpgradeStatus {
    /// Where the upgrade is.
    #[serde(default)]
    pub phase: UpgradePhase,
    /// `done/total` steps (the control plane counts one, each node one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// What is happening, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the agent started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_time: Option<Time>,
}

/// Phases of a member upgrade.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum UpgradePhase {
    #[default]
    Pending,
    Running,
    Succeeded,
    Failed,
}
