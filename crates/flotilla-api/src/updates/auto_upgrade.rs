//! `AutoUpgradeProfile` (`aup`): keeps members on a release channel. When the catalog gains a
//! release in the profile's channel, the profile creates and starts an update run with a
//! name derived from the profile and the versions (generating again finds the same run).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::update_run::NodeImageSelectionType;

/// Label on the runs a profile generates: the profile's name (`kubectl get updateruns -l
/// updates.flotilla.dev/auto-upgrade-profile=NAME` lists them).
pub const AUTO_UPGRADE_PROFILE_LABEL: &str = "updates.flotilla.dev/auto-upgrade-profile";

/// Pattern of a pinned `MAJOR.MINOR`.
pub const MINOR_VERSION_PATTERN: &str = r"^[0-9]+\.[0-9]+$";

/// A release channel and how runs for it are made.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "AutoUpgradeProfile",
    plural = "autoupgradeprofiles",
    singular = "autoupgradeprofile",
    shortname = "aup",
    category = "fleet",
    category = "fleet-updates",
    status = "AutoUpgradeProfileStatus",
    derive = "PartialEq",
    doc = "AutoUpgradeProfile keeps member clusters on a release channel by generating and starting update runs when a new release appears.",
    printcolumn(name = "Channel", type_ = "string", json_path = ".spec.channel"),
    printcolumn(
        name = "Target",
        type_ = "string",
        json_path = ".spec.targetKubernetesVersion"
    ),
    printcolumn(name = "Disabled", type_ = "boolean", json_path = ".spec.disabled"),
    printcolumn(
        name = "Last-Trigger",
        type_ = "string",
        json_path = ".status.lastTriggerStatus"
    ),
    printcolumn(
        name = "Last-Run",
        type_ = "string",
        json_path = ".status.lastTriggeredRun"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(name = "Message", type_ = "string", json_path = ".status.message"),
    printcolumn(
        name = "Last-Trigger-Message",
        type_ = "string",
        json_path = ".status.lastTriggerMessage",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct AutoUpgradeProfileSpec {
    /// The release channel.
    pub channel: Channel,
    /// For `TargetKubernetesVersion` only (and required there): the pinned `MAJOR.MINOR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = MINOR_VERSION_PATTERN))]
    pub target_kubernetes_version: Option<String>,
    /// For `TargetKubernetesVersion` only: follow the minor under long-term support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_term_support: Option<bool>,
    /// `Latest` or `Consistent` (not for the `NodeImage` channel, which uses `Latest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<NodeImageSelectionType>,
    /// The `FleetUpdateStrategy` generated runs follow; none: members one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy_name: Option<String>,
    /// A disabled profile generates nothing; runs it made are left alone.
    #[serde(default)]
    pub disabled: bool,
    /// Beyond AKS: when the profile is created (or enabled), bring lagging members to the
    /// channel at once instead of waiting for the next release.
    #[serde(default)]
    pub catch_up: bool,
}

/// Release channels.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Channel {
    /// Latest patch of minor N−1 (N: the newest GA minor).
    #[default]
    Stable,
    /// Latest patch of minor N.
    Rapid,
    /// The newest node images; no Kubernetes upgrade.
    NodeImage,
    /// Latest patch of the pinned `targetKubernetesVersion` minor.
    TargetKubernetesVersion,
}

/// What the profile last did.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoUpgradeProfileStatus {
    /// When it last generated (or tried to generate) a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_triggered_at: Option<Time>,
    /// `Succeeded` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger_status: Option<TriggerStatus>,
    /// Why the last trigger failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger_error: Option<String>,
    /// The versions the last trigger upgraded to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_trigger_upgrade_versions: Vec<String>,
    /// What the last trigger did, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger_message: Option<String>,
    /// The run the last trigger made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_triggered_run: Option<String>,
    /// Members outside the support window of the channel's target, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported_members: Vec<String>,
    /// Where the channel pointed when the profile last looked (the versions a run for it would
    /// upgrade to): a release that adds a version here is a new release. Absent until the
    /// profile has looked once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_versions: Option<Vec<String>>,
    /// What the profile is doing now, for people: watching, disabled, why the channel has no
    /// target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Outcome of a trigger.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum TriggerStatus {
    #[default]
    Succeeded,
    Failed,
}
