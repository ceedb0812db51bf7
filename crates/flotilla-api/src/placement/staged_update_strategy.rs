//! `ClusterStagedUpdateStrategy` (`csus`): a reusable list of stages that staged update runs
//! follow to roll a placement out cluster group by cluster group. Its namespaced twin
//! [`StagedUpdateStrategy`] (`sus`) has the same [`UpdateStrategySpec`] and serves the
//! [`super::StagedUpdateRun`]s of its namespace.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::twin::namespaced_twin;

/// Pattern of a stage name.
pub const STAGE_NAME_PATTERN: &str = "^[a-z0-9]+$";
/// Pattern of a `maxConcurrency` string: a 1–100% percentage.
pub const MAX_CONCURRENCY_PATTERN: &str = "^(100|[1-9][0-9]?)%$";
/// Pattern of a task `waitTime`: a Go duration in hours, minutes and seconds.
pub const WAIT_TIME_PATTERN: &str = r"^(?:[0-9]+(\.[0-9]+)?(?:s|m|h))+$";

/// The stages of a staged update strategy.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterStagedUpdateStrategy",
    plural = "clusterstagedupdatestrategies",
    singular = "clusterstagedupdatestrategy",
    shortname = "csus",
    category = "fleet",
    category = "fleet-placement",
    derive = "PartialEq",
    doc = "ClusterStagedUpdateStrategy defines a reusable strategy: the stages, and their order, in which placed resources are updated on member clusters."
)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategySpec {
    /// The stages, in order (at most 31).
    #[schemars(length(max = 31))]
    pub stages: Vec<StageConfig>,
}

namespaced_twin! {
    /// The stages `StagedUpdateRun`s of its namespace follow, served at
    /// `placement.kubernetes-fleet.io` v1beta1 (stored) and v1 like
    /// `ClusterStagedUpdateStrategy`. Like it, it has no status.
    pub struct StagedUpdateStrategy: twin of ClusterStagedUpdateStrategy {
        spec: UpdateStrategySpec,
        plural: "stagedupdatestrategies",
        singular: "stagedupdatestrategy",
        short_name: "sus",
        description: "StagedUpdateStrategy defines a reusable strategy for the StagedUpdateRuns of its namespace: the stages, and their order, in which placed resources are updated on member clusters.",
        derive: [],
    }
}

/// One update stage: a group of clusters updated together, with gates around it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageConfig {
    /// Stage name, unique within the strategy.
    #[schemars(length(max = 63), regex(pattern = STAGE_NAME_PATTERN))]
    pub name: String,
    /// Clusters of the stage: empty selects every scheduled cluster, unset selects none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Cluster label whose integer value orders the clusters (then the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sorting_label_key: Option<String>,
    /// How many clusters of the stage update at once: an integer ≥ 1 or a 1–100% percentage
    /// of the stage (rounded down, at least 1). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1, "pattern" = MAX_CONCURRENCY_PATTERN))]
    pub max_concurrency: Option<IntOrString>,
    /// Tasks to complete after the stage before the next one starts (at most 2, one per type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2))]
    pub after_stage_tasks: Option<Vec<StageTask>>,
    /// Tasks to complete before the stage starts (at most 1, `Approval` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1))]
    pub before_stage_tasks: Option<Vec<StageTask>>,
}

/// A gate before or after a stage.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageTask {
    /// The task type.
    #[serde(rename = "type")]
    pub type_: StageTaskType,
    /// How long to wait (`1h`, `90m`, `1h0m0s`); required for `TimedWait`, forbidden otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = WAIT_TIME_PATTERN))]
    pub wait_time: Option<String>,
}

/// Type of a stage task.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum StageTaskType {
    /// Wait a fixed time.
    TimedWait,
    /// Wait for a user to approve the approval request the run creates (a
    /// `ClusterApprovalRequest` for a `ClusterStagedUpdateRun`, an `ApprovalRequest` in its
    /// namespace for a `StagedUpdateRun`).
    Approval,
}
