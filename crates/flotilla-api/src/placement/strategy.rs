//! Rollout, apply, delete and report-back strategies of a placement.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pattern of `maxUnavailable` / `maxSurge` strings: a 0–100% percentage (integers are
/// checked by `validate`, as a schema `pattern` only constrains strings).
pub const INT_OR_PERCENT_PATTERN: &str = "^((100|[0-9]{1,2})%|[0-9]+)$";

/// How changes of the selected resources roll out to the picked clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// The rollout type; `External` hands the rollout to staged update runs (and cannot be
    /// switched back). Default `RollingUpdate`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "RollingUpdate"))]
    pub type_: Option<RolloutStrategyType>,
    /// The resource snapshot index to roll out (latest when unset); only for `RollingUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_snapshot_index: Option<String>,
    /// Rolling update parameters; only for `RollingUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateConfig>,
    /// When and how resources are applied on member clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_strategy: Option<ApplyStrategy>,
    /// What happens to placed resources when the placement is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_strategy: Option<DeleteStrategy>,
    /// How the status of applied resources is reported back to the hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_back_strategy: Option<ReportBackStrategy>,
}

/// The rollout type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum RolloutStrategyType {
    /// Replace resources cluster by cluster within `maxUnavailable` / `maxSurge`.
    #[default]
    RollingUpdate,
    /// An external controller (staged update runs) drives the rollout.
    External,
}

/// Parameters of a rolling update. Percentages are of the target cluster count, rounded up.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateConfig {
    /// How many target clusters may be unavailable during the rollout. Default `25%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "25%", "pattern" = INT_OR_PERCENT_PATTERN))]
    pub max_unavailable: Option<IntOrString>,
    /// How many clusters may be scheduled above the target. Default `25%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "25%", "pattern" = INT_OR_PERCENT_PATTERN))]
    pub max_surge: Option<IntOrString>,
    /// Seconds to wait before treating resources whose availability cannot be tracked as
    /// available. Default 60.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 60))]
    pub unavailable_period_seconds: Option<i32>,
}

/// When and how Fleet applies resources on member clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyStrategy {
    /// How the hub manifest is compared with the member's live object. Default
    /// `PartialComparison`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "PartialComparison"))]
    pub comparison_option: Option<ComparisonOption>,
    /// When to (re-)apply manifests. Default `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Always"))]
    pub when_to_apply: Option<WhenToApply>,
    /// The apply method. Default `ClientSideApply`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ClientSideApply"))]
    pub type_: Option<ApplyStrategyType>,
    /// Whether Fleet may apply to objects also owned by non-Fleet owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_co_ownership: Option<bool>,
    /// Server-side apply options; only with `type: ServerSideApply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply_config: Option<ServerSideApplyConfig>,
    /// What to do with objects that already exist on the member. Default `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Always"))]
    pub when_to_take_over: Option<WhenToTakeOver>,
}

/// How drift and differences are computed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ComparisonOption {
    /// Compare only the fields the hub manifest sets.
    #[default]
    PartialComparison,
    /// Compare every field of the object.
    FullComparison,
}

/// When manifests are applied.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum WhenToApply {
    /// Always apply, overwriting member-side changes to managed fields.
    #[default]
    Always,
    /// Stop applying on clusters where drift was found.
    IfNotDrifted,
}

/// The apply method.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ApplyStrategyType {
    /// Three-way merge with a last-applied annotation, like `kubectl apply`.
    #[default]
    ClientSideApply,
    /// Server-side apply with Fleet as field manager.
    ServerSideApply,
    /// Only report differences; apply nothing.
    ReportDiff,
}

/// Server-side apply options.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerSideApplyConfig {
    /// Force the apply through field-manager conflicts, taking over the fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// What to do with objects that already exist on the member.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum WhenToTakeOver {
    /// Take them over and apply.
    #[default]
    Always,
    /// Take them over only if they match the hub manifest.
    IfNoDiff,
    /// Never take over pre-existing objects.
    Never,
}

/// What happens to placed resources when the placement is deleted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteStrategy {
    /// Delete or abandon the placed resources. Default `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Delete"))]
    pub propagation_policy: Option<DeletePropagationPolicy>,
}

/// Deletion propagation of a placement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum DeletePropagationPolicy {
    /// Leave placed resources on the members.
    Abandon,
    /// Delete placed resources from the members.
    #[default]
    Delete,
}

/// How member-side status is reported back to the hub.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportBackStrategy {
    /// Disabled, or mirror the status to `destination`. Default `Disabled`.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "Disabled"))]
    pub type_: ReportBackStrategyType,
    /// Where mirrored status goes; required with `Mirror`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<ReportBackDestination>,
}

/// Report-back type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ReportBackStrategyType {
    /// No back-reporting.
    #[default]
    Disabled,
    /// Copy member status verbatim to the destination.
    Mirror,
}

/// Destination of mirrored status.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ReportBackDestination {
    /// The original hub object (only when exactly one cluster is picked).
    OriginalResource,
    /// The Work objects on the hub.
    WorkAPI,
}
