//! `ClusterResourceBinding` (`crb`): the scheduler's decision to place a placement's resources on
//! one member cluster, which the rollout moves from `Scheduled` to `Bound` (and, when the cluster
//! is no longer picked, to `Unscheduled` until its resources are removed).
//!
//! A `ResourcePlacement`'s bindings are the namespaced twin [`ResourceBinding`] (`rb`), in its
//! namespace, with the same spec and status (v1beta1 only, as in KubeFleet).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::snapshots::ClusterDecision;
use super::status::{
    DiffedResourcePlacement, DriftedResourcePlacement, FailedResourcePlacement, NamespacedName,
};
use super::strategy::{ApplyStrategy, DeleteStrategy};
use crate::crd::twin::namespaced_twin;

/// Annotation on an `Unscheduled` binding with the state it had before (KubeFleet's
/// `PreviousBindingStateAnnotation`), so a cluster picked again gets its binding back as it
/// was.
pub const PREVIOUS_STATE_ANNOTATION: &str = "kubernetes-fleet.io/previous-binding-state";

/// What a binding places where.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourceBinding",
    plural = "clusterresourcebindings",
    singular = "clusterresourcebinding",
    shortname = "crb",
    category = "fleet",
    category = "fleet-placement",
    status = "ResourceBindingStatus",
    derive = "PartialEq",
    doc = "ClusterResourceBinding binds a placement's resources to one member cluster.",
    printcolumn(
        name = "WorkSynchronized",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="WorkSynchronized")].status"#
    ),
    printcolumn(
        name = "ResourcesApplied",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Applied")].status"#
    ),
    printcolumn(
        name = "ResourceAvailable",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Available")].status"#,
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingSpec {
    /// `Scheduled`, `Bound` or `Unscheduled`.
    pub state: BindingState,
    /// The (first) resource snapshot of the index this binding places.
    #[serde(default)]
    pub resource_snapshot_name: String,
    /// ResourceOverride snapshots that apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_override_snapshots: Vec<NamespacedName>,
    /// ClusterResourceOverride snapshots that apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_resource_override_snapshots: Vec<String>,
    /// The policy snapshot the scheduler created this binding under.
    #[serde(default)]
    pub scheduling_policy_snapshot_name: String,
    /// The member cluster.
    pub target_cluster: String,
    /// Why the scheduler picked the cluster.
    #[serde(default)]
    pub cluster_decision: ClusterDecision,
    /// How to apply on the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_strategy: Option<ApplyStrategy>,
    /// Whether placed resources are deleted or left when the placement goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_strategy: Option<DeleteStrategy>,
}

namespaced_twin! {
    /// What a `ResourcePlacement`'s binding places where, in the placement's namespace.
    pub struct ResourceBinding: twin of ClusterResourceBinding {
        spec: ResourceBindingSpec,
        status: ResourceBindingStatus,
        plural: "resourcebindings",
        singular: "resourcebinding",
        short_name: "rb",
        description: "ResourceBinding binds a ResourcePlacement's resources to one member cluster.",
        derive: [],
    }
}

/// The lifecycle state of a binding.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum BindingState {
    /// Picked by the scheduler, not yet rolled out.
    Scheduled,
    /// Rolled out: Work is generated for it.
    Bound,
    /// No longer picked: its resources are to be removed.
    Unscheduled,
}

/// Observed state of a binding on its member.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingStatus {
    /// Resources that failed to apply or are unavailable (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub failed_placements: Vec<FailedResourcePlacement>,
    /// Resources that drifted on the member (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub drifted_placements: Vec<DriftedResourcePlacement>,
    /// Resources that differ from the hub manifests (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub diffed_placements: Vec<DiffedResourcePlacement>,
    /// RolloutStarted, Overridden, WorkSynchronized, Applied, Available, DiffReported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
