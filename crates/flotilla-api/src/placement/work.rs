//! `Work`: the manifests one member cluster should run for one placement (with that cluster's
//! overrides applied), in the member's hub namespace `fleet-member-<name>`. The member agent
//! applies them and writes per-manifest results back into the status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::status::PatchDetail;
use super::strategy::{ApplyStrategy, ReportBackStrategy};

/// What a member should run.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "Work",
    plural = "works",
    singular = "work",
    category = "fleet",
    category = "fleet-placement",
    namespaced,
    status = "WorkStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "Work carries the manifests placed on one member cluster; the member agent applies them."
)]
#[serde(rename_all = "camelCase")]
pub struct WorkSpec {
    /// The manifests.
    #[serde(default)]
    pub workload: WorkloadTemplate,
    /// How to apply them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_strategy: Option<ApplyStrategy>,
    /// Whether member-side status is reported back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_back_strategy: Option<ReportBackStrategy>,
}

/// The manifests of a Work.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadTemplate {
    /// Whole Kubernetes objects, in the order the placement selected them.
    #[serde(default)]
    #[schemars(schema_with = "super::snapshots::embedded_objects")]
    pub manifests: Vec<Value>,
}

/// What the member agent found applying a Work.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkStatus {
    /// Applied, Available (or DiffReported with ReportDiff).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// One entry per manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_conditions: Vec<ManifestCondition>,
}

/// Which manifest of a Work an entry is about.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkResourceIdentifier {
    /// Index of the manifest in the Work.
    pub ordinal: i32,
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Resource (plural).
    #[serde(default)]
    pub resource: String,
    /// Namespace, empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
}

/// The result of applying one manifest.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestCondition {
    /// The manifest.
    pub identifier: WorkResourceIdentifier,
    /// Applied, Available, DiffReported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Drift found on the member object, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_details: Option<DriftDetails>,
    /// Differences from the hub manifest, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_details: Option<DiffDetails>,
}

/// Drift of one applied object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftDetails {
    /// When it was observed.
    pub observation_time: Option<Time>,
    /// Generation of the member object.
    #[serde(default)]
    pub observed_in_member_cluster_generation: i64,
    /// When drift was first observed.
    pub first_drifted_observed_time: Option<Time>,
    /// The drifted fields (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_drifts: Vec<PatchDetail>,
}

/// Differences of one object from its hub manifest.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffDetails {
    /// When they were observed.
    pub observation_time: Option<Time>,
    /// Generation of the member object, absent if it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_in_member_cluster_generation: Option<i64>,
    /// When a difference was first observed.
    pub first_diffed_observed_time: Option<Time>,
    /// The differing fields (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_diffs: Vec<PatchDetail>,
}
