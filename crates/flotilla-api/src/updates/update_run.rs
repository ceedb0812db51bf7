//! `UpdateRun` (`ur`): one upgrade of many member clusters — what to upgrade to
//! (`managedClusterUpdate`) and in what order (a strategy by reference, inline, or none: all
//! members one by one). kubectl drives it by patching the spec: `state: Run` starts or
//! resumes it, `state: Stop` stops it (upgrades in flight finish), `skip` lists targets to
//! skip, and raising `attempt` starts a Failed run again, retrying only what failed or was
//! skipped. The status is laid out as AKS's: run → stages → groups → members, each level with
//! its state, times and error.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::strategy::{GateType, UpdateRunStrategy};

/// A cluster update run.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "UpdateRun",
    plural = "updateruns",
    singular = "updaterun",
    shortname = "ur",
    category = "fleet",
    category = "fleet-updates",
    status = "UpdateRunStatus",
    derive = "PartialEq",
    doc = "UpdateRun upgrades the Kubernetes version and/or node images of member clusters, stage by stage and group by group.",
    printcolumn(
        name = "Upgrade",
        type_ = "string",
        json_path = ".spec.managedClusterUpdate.upgrade.type"
    ),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".spec.managedClusterUpdate.upgrade.kubernetesVersion"
    ),
    printcolumn(
        name = "Images",
        type_ = "string",
        json_path = ".spec.managedClusterUpdate.nodeImageSelection.type"
    ),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(
        name = "Progress",
        type_ = "string",
        json_path = ".status.progressSummary"
    ),
    printcolumn(
        name = "Failures",
        type_ = "integer",
        json_path = ".status.failureCount"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Message",
        type_ = "string",
        json_path = ".status.error.message",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunSpec {
    /// A `FleetUpdateStrategy` to copy when the run is first seen (not with `strategy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy_name: Option<String>,
    /// An inline strategy (not with `updateStrategyName`). Neither: all members one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<UpdateRunStrategy>,
    /// What to upgrade to.
    pub managed_cluster_update: ManagedClusterUpdate,
    /// `NotStarted` (default: a new run waits), `Run` (start or resume) or `Stop` (stop
    /// starting new upgrades; those in flight finish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "NotStarted"))]
    pub state: Option<RunAction>,
    /// Targets to skip; each may be added while the run is NotStarted, Running or Failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<SkipTarget>,
    /// Raise to start a Failed run again: it retries only what failed or was skipped by the
    /// system; completed members are left alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub attempt: Option<u32>,
    /// Set on runs an `AutoUpgradeProfile` generated: the profile's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_upgrade_profile_name: Option<String>,
}

/// The requested run state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum RunAction {
    #[default]
    NotStarted,
    Run,
    Stop,
}

/// What the run upgrades members to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterUpdate {
    /// The kind of upgrade.
    pub upgrade: UpgradeSpec,
    /// How node image versions are chosen (default `Latest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<NodeImageSelection>,
}

/// The kind of upgrade and its Kubernetes version.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeSpec {
    /// `Full` (control plane, then node pools and images), `ControlPlaneOnly` or
    /// `NodeImageOnly`.
    #[serde(rename = "type")]
    pub upgrade_type: UpgradeType,
    /// `MAJOR.MINOR.PATCH`: required for `Full` and `ControlPlaneOnly`, forbidden for
    /// `NodeImageOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = super::catalog::KUBERNETES_VERSION_PATTERN))]
    pub kubernetes_version: Option<String>,
}

/// The kinds of upgrade.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum UpgradeType {
    #[default]
    Full,
    ControlPlaneOnly,
    NodeImageOnly,
}

/// How node image versions are chosen.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSelection {
    /// `Latest` (newest in the member's region when its upgrade starts), `Consistent` (per
    /// family, the newest version every region of the run has) or `Custom`.
    #[serde(rename = "type")]
    pub selection_type: NodeImageSelectionType,
    /// For `Custom`: full image names (`<family>-<version>`), at most one per family; pools of
    /// other families are not upgraded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub custom_node_image_versions: Vec<NodeImageVersionRef>,
}

/// The node image selection types.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum NodeImageSelectionType {
    #[default]
    Latest,
    Consistent,
    Custom,
}

/// A node image by full name, e.g. `AKSUbuntu-2204gen2containerd-202510.13.0`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageVersionRef {
    /// The full image name.
    #[schemars(length(max = 128))]
    pub version: String,
}

/// Something to skip.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkipTarget {
    /// `Member`, `Group`, `Stage` (with its wait and gates) or `AfterStageWait` (named after
    /// its stage).
    #[serde(rename = "type")]
    pub target_type: SkipTargetType,
    /// The member, group or stage name.
    pub name: String,
}

/// The kinds of skip target.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum SkipTargetType {
    #[default]
    Member,
    Group,
    Stage,
    AfterStageWait,
}

/// The state of a run, stage, group, member, gate or wait.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum UpdateState {
    #[default]
    NotStarted,
    Running,
    Pending,
    Skipped,
    Stopping,
    Stopped,
    Failed,
    Completed,
}

impl UpdateState {
    /// Whether nothing more will happen at this level (short of a restart).
    pub fn is_final(self) -> bool {
        matches!(self, Self::Skipped | Self::Completed | Self::Failed)
    }
}

/// An error at some level: a code and a message, as ARM's `ErrorDetail`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetail {
    /// Machine-readable code, e.g. `UpgradeFailed`, `NodeImageVersionNotAvailable`.
    pub code: String,
    /// What happened, for people.
    pub message: String,
}

/// State and times of one level.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// The state.
    #[serde(default)]
    pub state: UpdateState,
    /// When it started running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When it reached a final state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_time: Option<Time>,
    /// Why it failed, is pending or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// Observed state of a run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunStatus {
    /// The run's own state, times and error.
    #[serde(flatten)]
    pub progress: Progress,
    /// `done/total` members, for the printer column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_summary: Option<String>,
    /// Failed members in the run.
    #[serde(default)]
    pub failure_count: u32,
    /// The `attempt` the status reflects.
    #[serde(default)]
    pub observed_attempt: u32,
    /// The strategy the run follows, copied from `updateStrategyName` or `strategy` (or the
    /// implicit one-by-one stage); frozen once the run starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<UpdateRunStrategy>,
    /// The node images a `Consistent` run chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<SelectedNodeImages>,
    /// Per stage.
    #[serde(default)]
    pub stages: Vec<StageStatus>,
}

/// The node images a `Consistent` run chose, per family.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectedNodeImages {
    /// Full image names, one per family.
    #[serde(default)]
    pub selected_node_image_versions: Vec<NodeImageVersionRef>,
}

/// Observed state of a stage.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageStatus {
    /// Stage name.
    pub name: String,
    /// State, times and error.
    #[serde(flatten)]
    pub progress: Progress,
    /// Failed members in the stage.
    #[serde(default)]
    pub failure_count: u32,
    /// Resolved failure threshold.
    #[serde(default)]
    pub max_allowed_failures: u32,
    /// Resolved concurrency ceiling across the stage's groups.
    #[serde(default)]
    pub max_concurrency: u32,
    /// Per group.
    #[serde(default)]
    pub groups: Vec<GroupStatus>,
    /// Gates before the stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<GateStatus>,
    /// Gates after the stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<GateStatus>,
    /// The wait after the stage, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_stage_wait_status: Option<WaitStatus>,
}

/// Observed state of a group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupStatus {
    /// Group name.
    pub name: String,
    /// State, times and error.
    #[serde(flatten)]
    pub progress: Progress,
    /// Failed members in the group.
    #[serde(default)]
    pub failure_count: u32,
    /// Resolved failure threshold.
    #[serde(default)]
    pub max_allowed_failures: u32,
    /// Resolved concurrency.
    #[serde(default)]
    pub max_concurrency: u32,
    /// Per member, in update order.
    #[serde(default)]
    pub members: Vec<MemberStatus>,
    /// Gates before the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<GateStatus>,
    /// Gates after the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<GateStatus>,
}

/// Observed state of one member's upgrade.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatus {
    /// Member name.
    pub name: String,
    /// State, times and error (a Pending member's error says why and until when).
    #[serde(flatten)]
    pub progress: Progress,
    /// The `MemberUpgrade` carrying the upgrade out, in the member's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// What is happening or happened, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Observed state of a gate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateStatus {
    /// The configured display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The gate's type.
    #[serde(rename = "type")]
    pub gate_type: GateType,
    /// The `Gate` object's name, once the run has reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// State and times.
    #[serde(flatten)]
    pub progress: Progress,
}

/// Observed state of an after-stage wait.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitStatus {
    /// State and times.
    #[serde(flatten)]
    pub progress: Progress,
    /// The wait's length.
    pub wait_duration_in_seconds: u32,
}
