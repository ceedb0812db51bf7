//! `ClusterStagedUpdateRun` (`csur`): one staged rollout of a `ClusterResourcePlacement`'s
//! resource snapshot, following a `ClusterStagedUpdateStrategy`. Its namespaced twin
//! [`StagedUpdateRun`] (`sur`) has the same [`UpdateRunSpec`] and [`UpdateRunStatus`] and rolls
//! out a `ResourcePlacement` of its namespace following a `StagedUpdateStrategy` of its
//! namespace, gated by `ApprovalRequest`s there.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::staged_update_strategy::{StageTaskType, UpdateStrategySpec};
use super::status::NamespacedName;
use super::strategy::ApplyStrategy;
use crate::crd::twin::namespaced_twin;

/// Name of the final stage of every run, which deletes the bindings no longer scheduled.
pub const DELETE_STAGE_NAME: &str = "kubernetes-fleet.io/deleteStage";

/// Desired state of a staged update run. Only `state` may change after creation.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterStagedUpdateRun",
    plural = "clusterstagedupdateruns",
    singular = "clusterstagedupdaterun",
    shortname = "csur",
    category = "fleet",
    category = "fleet-placement",
    status = "UpdateRunStatus",
    derive = "PartialEq",
    selectable = ".spec.placementName",
    doc = "ClusterStagedUpdateRun rolls the resources selected by a ClusterResourcePlacement out to member clusters stage by stage.",
    printcolumn(
        name = "Placement",
        type_ = "string",
        json_path = ".spec.placementName"
    ),
    printcolumn(
        name = "Resource-Snapshot-Index",
        type_ = "string",
        json_path = ".status.resourceSnapshotIndexUsed"
    ),
    printcolumn(
        name = "Policy-Snapshot-Index",
        type_ = "string",
        json_path = ".status.policySnapshotIndexUsed"
    ),
    printcolumn(
        name = "Initialized",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Initialized")].status"#
    ),
    printcolumn(
        name = "Succeeded",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Succeeded")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Progressing",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Progressing")].status"#,
        priority = 1
    ),
    printcolumn(
        name = "Strategy",
        type_ = "string",
        json_path = ".spec.stagedRolloutStrategyName",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunSpec {
    /// The placement to roll out (a `ClusterResourcePlacement`, or for a `StagedUpdateRun` a
    /// `ResourcePlacement` of its namespace); immutable.
    #[schemars(length(max = 255))]
    pub placement_name: String,
    /// The resource snapshot index to roll out (latest when unset); immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_snapshot_index: Option<String>,
    /// The strategy to follow (a `ClusterStagedUpdateStrategy`, or for a `StagedUpdateRun` a
    /// `StagedUpdateStrategy` of its namespace); immutable.
    pub staged_rollout_strategy_name: String,
    /// Desired state of the run. Default `Run`: seed 004's runs, which have no `state`,
    /// start as soon as they are initialized (recent KubeFleet defaults to `Initialize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Run"))]
    pub state: Option<UpdateRunState>,
}

namespaced_twin! {
    /// A staged rollout of a `ResourcePlacement` of its namespace, following a
    /// `StagedUpdateStrategy` of its namespace; served at `placement.kubernetes-fleet.io`
    /// v1beta1 (stored) and v1 like `ClusterStagedUpdateRun`.
    pub struct StagedUpdateRun: twin of ClusterStagedUpdateRun {
        spec: UpdateRunSpec,
        status: UpdateRunStatus,
        plural: "stagedupdateruns",
        singular: "stagedupdaterun",
        short_name: "sur",
        description: "StagedUpdateRun rolls the resources selected by a ResourcePlacement of its namespace out to member clusters stage by stage.",
        derive: [],
    }
}

/// Desired state of an update run. `Initialize → Run ⇄ Stop`; nothing goes back to
/// `Initialize` and `Initialize` cannot go to `Stop`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum UpdateRunState {
    /// Compute the stages but do not start.
    Initialize,
    /// Execute, or resume.
    #[default]
    Run,
    /// Stop after the clusters in flight finish.
    Stop,
}

/// Observed state of a staged update run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunStatus {
    /// The placement's policy snapshot index the run is based on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_snapshot_index_used: Option<String>,
    /// Cluster count of that policy snapshot; the run fails if it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_observed_cluster_count: Option<i64>,
    /// The resource snapshot index the run rolls out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_snapshot_index_used: Option<String>,
    /// The placement's apply strategy when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_strategy: Option<ApplyStrategy>,
    /// The strategy as it was when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_update_strategy_snapshot: Option<UpdateStrategySpec>,
    /// Status of each stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages_status: Option<Vec<StageUpdatingStatus>>,
    /// Status of the final deletion stage (`kubernetes-fleet.io/deleteStage`), which removes
    /// resources from clusters no longer picked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_stage_status: Option<StageUpdatingStatus>,
    /// Run conditions: `Initialized`, `Progressing`, `Succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// Status of one stage of a run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageUpdatingStatus {
    /// The stage name.
    pub stage_name: String,
    /// Status of each cluster of the stage, in update order.
    pub clusters: Vec<ClusterUpdatingStatus>,
    /// Status of the after-stage tasks (at most 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2))]
    pub after_stage_task_status: Option<Vec<StageTaskStatus>>,
    /// Status of the before-stage tasks (at most 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1))]
    pub before_stage_task_status: Option<Vec<StageTaskStatus>>,
    /// When the stage started updating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the stage finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Time>,
    /// Stage conditions: `Progressing`, `Succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// Status of one cluster within a stage.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterUpdatingStatus {
    /// The cluster.
    pub cluster_name: String,
    /// ResourceOverride snapshots applied to the cluster, fixed at run start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_override_snapshots: Option<Vec<NamespacedName>>,
    /// ClusterResourceOverride snapshots applied to the cluster, fixed at run start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_resource_override_snapshots: Option<Vec<String>>,
    /// Cluster conditions: `Started`, `Succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// Status of one before- or after-stage task.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageTaskStatus {
    /// The task type.
    #[serde(rename = "type")]
    pub type_: StageTaskType,
    /// The approval request created for an `Approval` task (a `ClusterApprovalRequest`, or
    /// for a `StagedUpdateRun` an `ApprovalRequest` in its namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request_name: Option<String>,
    /// Task conditions: `ApprovalRequestCreated`, `ApprovalRequestApproved`, `WaitTimeElapsed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}
