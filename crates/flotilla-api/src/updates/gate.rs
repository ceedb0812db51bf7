//! `Gate` (`gate`): a checkpoint of an update run, created by the run when it reaches a
//! stage's or group's gate and deleted with the run. An `Approval` gate waits for a person; a
//! `ScheduledStart` gate completes by itself at `scheduledStartTime`. Either completes early
//! when a user sets its state: `kubectl patch gate NAME --type=merge
//! -p '{"status":{"state":"Completed"}}' --subresource=status`, or `flotilla gate approve NAME`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::strategy::GateType;

/// Label on a gate naming its update run, for `kubectl get gates -l`.
pub const GATE_RUN_LABEL: &str = "updates.flotilla.dev/update-run";

/// What a gate guards; set by its run, immutable.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "Gate",
    plural = "gates",
    singular = "gate",
    category = "fleet",
    category = "fleet-updates",
    status = "GateResourceStatus",
    derive = "PartialEq",
    selectable = ".spec.target.updateRun",
    doc = "Gate is a checkpoint of an update run: an approval a person gives, or a scheduled start.",
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.gateType"),
    printcolumn(
        name = "Update-Run",
        type_ = "string",
        json_path = ".spec.target.updateRun"
    ),
    printcolumn(name = "Stage", type_ = "string", json_path = ".spec.target.stage"),
    printcolumn(name = "Group", type_ = "string", json_path = ".spec.target.group"),
    printcolumn(name = "Timing", type_ = "string", json_path = ".spec.target.timing"),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(
        name = "Scheduled-Start",
        type_ = "date",
        json_path = ".spec.scheduledStartTime"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct GateSpec {
    /// `Approval` or `ScheduledStart`.
    pub gate_type: GateType,
    /// The configured display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Where the gate stands in its run.
    pub target: GateTarget,
    /// For `ScheduledStart`: the absolute time it completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_start_time: Option<Time>,
}

/// Where a gate stands.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateTarget {
    /// The update run.
    pub update_run: String,
    /// The stage.
    pub stage: String,
    /// The group, for a group's gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `Before` or `After`.
    pub timing: Timing,
}

/// Before or after its stage or group.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum Timing {
    #[default]
    Before,
    After,
}

/// A gate's state: the only thing a user changes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateResourceStatus {
    /// `Pending` until completed (by a person, or by time for a scheduled start) or skipped
    /// (its group or stage was skipped).
    #[serde(default)]
    pub state: GateState,
}

/// The states of a gate object.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum GateState {
    #[default]
    Pending,
    Skipped,
    Completed,
}
