//! `ClusterApprovalRequest` (`careq`): created by a staged update run for an `Approval` task;
//! a user approves it by setting the `Approved` condition, the run accepts it. Its namespaced
//! twin [`ApprovalRequest`] (`areq`) has the same [`ApprovalRequestSpec`] and
//! [`ApprovalRequestStatus`] and gates a `StagedUpdateRun` of its namespace.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::twin::namespaced_twin;

/// What an approval request is for; immutable.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(
    CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema,
)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterApprovalRequest",
    plural = "clusterapprovalrequests",
    singular = "clusterapprovalrequest",
    shortname = "careq",
    category = "fleet",
    category = "fleet-placement",
    status = "ApprovalRequestStatus",
    derive = "PartialEq",
    selectable = ".spec.parentStageRollout",
    selectable = ".spec.targetStage",
    doc = "ClusterApprovalRequest asks a user to approve a stage of a ClusterStagedUpdateRun.",
    printcolumn(
        name = "Update-Run",
        type_ = "string",
        json_path = ".spec.parentStageRollout"
    ),
    printcolumn(name = "Stage", type_ = "string", json_path = ".spec.targetStage"),
    printcolumn(
        name = "Approved",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Approved")].status"#
    ),
    printcolumn(
        name = "ApprovalAccepted",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ApprovalAccepted")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestSpec {
    /// The staged update run asking for approval.
    pub parent_stage_rollout: String,
    /// The stage to approve.
    pub target_stage: String,
}

namespaced_twin! {
    /// A request to approve a stage of a `StagedUpdateRun` of its namespace, served at
    /// `placement.kubernetes-fleet.io` v1beta1 (stored) and v1 like `ClusterApprovalRequest`.
    pub struct ApprovalRequest: twin of ClusterApprovalRequest {
        spec: ApprovalRequestSpec,
        status: ApprovalRequestStatus,
        plural: "approvalrequests",
        singular: "approvalrequest",
        short_name: "areq",
        description: "ApprovalRequest asks a user to approve a stage of a StagedUpdateRun of its namespace.",
        derive: [],
    }
}

/// Observed state of an approval request.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestStatus {
    /// `Approved` (set by the user) and `ApprovalAccepted` (set by the run, final).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// Label naming the update run an approval request belongs to (KubeFleet's).
pub const TARGET_UPDATE_RUN_LABEL: &str = "kubernetes-fleet.io/targetupdaterun";
/// Label naming the stage an approval request gates.
pub const TARGET_UPDATING_STAGE_LABEL: &str = "kubernetes-fleet.io/targetUpdatingStage";
/// Label saying whether the request gates the stage's start (`beforeStage`) or its end
/// (`afterStage`).
pub const TASK_TYPE_LABEL: &str = "kubernetes-fleet.io/taskType";
/// Label set to `"true"` on the approval requests of the newest run of a placement.
pub const IS_LATEST_UPDATE_RUN_APPROVAL_LABEL: &str =
    "kubernetes-fleet.io/isLatestUpdateRunApproval";
/// The `taskType` label value of a request made before a stage starts.
pub const BEFORE_STAGE_TASK: &str = "beforeStage";
/// The `taskType` label value of a request made after a stage's clusters are updated.
pub const AFTER_STAGE_TASK: &str = "afterStage";
/// The user's condition: `Approved=True` lets the run go on.
pub const APPROVED_CONDITION: &str = "Approved";
/// The run's condition acknowledging an approval; once True it is final.
pub const APPROVAL_ACCEPTED_CONDITION: &str = "ApprovalAccepted";
