//! The scheduler's and the resource selector's immutable records, named and labelled as
//! KubeFleet names them so tooling written for KubeFleet finds them:
//!
//! - `ClusterSchedulingPolicySnapshot` (`csps`), `<placement>-<policyIndex>`: the placement's
//!   policy and its hash; its status lists every cluster the scheduler considered, selected or
//!   not, with its score and the reason.
//! - `ClusterResourceSnapshot` (`crs`), `<placement>-<resourceIndex>-snapshot` (and
//!   `<placement>-<resourceIndex>-<subindex>` for further chunks): the selected resources.
//!
//! A `ResourcePlacement`'s are their namespaced twins in its namespace, named and labelled the
//! same way (the label keys keep KubeFleet's `parent-CRP` spelling for both scopes):
//! [`SchedulingPolicySnapshot`] (`sps`) and [`ResourceSnapshot`] (`rs`), served at v1beta1 only
//! as in KubeFleet.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::policy::PlacementPolicy;
use crate::crd::twin::namespaced_twin;

/// Label naming the placement a snapshot or binding belongs to (a `ClusterResourcePlacement`,
/// or a `ResourcePlacement` of the same namespace).
pub const PARENT_PLACEMENT_LABEL: &str = "kubernetes-fleet.io/parent-CRP";
/// Label with a policy snapshot's index.
pub const POLICY_INDEX_LABEL: &str = "kubernetes-fleet.io/policy-index";
/// Label with a resource snapshot's index.
pub const RESOURCE_INDEX_LABEL: &str = "kubernetes-fleet.io/resource-index";
/// Label marking the latest snapshot of a placement (`"true"` / `"false"`).
pub const IS_LATEST_SNAPSHOT_LABEL: &str = "kubernetes-fleet.io/is-latest-snapshot";
/// Annotation with PickN's number of clusters (kept out of the policy hash).
pub const NUMBER_OF_CLUSTERS_ANNOTATION: &str = "kubernetes-fleet.io/number-of-clusters";
/// Annotation on the first resource snapshot of a group: how many chunks the group has.
pub const NUMBER_OF_RESOURCE_SNAPSHOTS_ANNOTATION: &str =
    "kubernetes-fleet.io/number-of-resource-snapshots";
/// Annotation on the first resource snapshot of a group: the hash of the whole group.
pub const RESOURCE_GROUP_HASH_ANNOTATION: &str = "kubernetes-fleet.io/resource-hash";
/// Annotation on further chunks: their subindex within the group.
pub const SUBINDEX_ANNOTATION: &str = "kubernetes-fleet.io/subindex-of-resource-snapshot";

/// A placement's scheduling policy at one index; immutable.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterSchedulingPolicySnapshot",
    plural = "clusterschedulingpolicysnapshots",
    singular = "clusterschedulingpolicysnapshot",
    shortname = "csps",
    category = "fleet",
    category = "fleet-placement",
    status = "SchedulingPolicySnapshotStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ClusterSchedulingPolicySnapshot records a placement's scheduling policy and every scheduling decision made for it.",
    printcolumn(name = "Gen", type_ = "string", json_path = ".metadata.generation"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SchedulingPolicySnapshotSpec {
    /// The policy; absent means PickAll with no constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PlacementPolicy>,
    /// SHA-256 of the policy without numberOfClusters (base64 in JSON, as `[]byte`).
    pub policy_hash: String,
}

namespaced_twin! {
    /// A `ResourcePlacement`'s scheduling policy at one index, in its namespace; immutable.
    pub struct SchedulingPolicySnapshot: twin of ClusterSchedulingPolicySnapshot {
        spec: SchedulingPolicySnapshotSpec,
        status: SchedulingPolicySnapshotStatus,
        plural: "schedulingpolicysnapshots",
        singular: "schedulingpolicysnapshot",
        short_name: "sps",
        description: "SchedulingPolicySnapshot records a ResourcePlacement's scheduling policy and every scheduling decision made for it.",
        derive: [Default],
    }
}

/// What the scheduler decided under a policy snapshot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulingPolicySnapshotStatus {
    /// Generation of the placement the decisions were made for (KubeFleet's JSON name,
    /// `observedCRPGeneration`).
    #[serde(default, rename = "observedCRPGeneration")]
    pub observed_crp_generation: i64,
    /// `Scheduled` (SchedulingPolicyFulfilled / SchedulingPolicyUnfulfilled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Every cluster considered: the selected ones first, then the rejected ones with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000))]
    pub target_clusters: Vec<ClusterDecision>,
}

/// The scheduler's verdict on one cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDecision {
    /// The member cluster.
    pub cluster_name: String,
    /// Whether the cluster was picked.
    pub selected: bool,
    /// The cluster's score, when it passed the filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_score: Option<ClusterScore>,
    /// Why the cluster was picked or rejected, in words.
    pub reason: String,
}

/// A cluster's score under a policy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterScore {
    /// Sum of the preferred-affinity weights (with property sorters' proportional weights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity_score: Option<i32>,
    /// Topology spread score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_score: Option<i32>,
}

/// The resources a placement selected, at one index; immutable.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourceSnapshot",
    plural = "clusterresourcesnapshots",
    singular = "clusterresourcesnapshot",
    shortname = "crs",
    category = "fleet",
    category = "fleet-placement",
    status = "ResourceSnapshotStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ClusterResourceSnapshot records the resources a placement selected, one chunk of one index.",
    printcolumn(name = "Gen", type_ = "string", json_path = ".metadata.generation"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSnapshotSpec {
    /// The selected objects, as they were on the hub.
    #[schemars(schema_with = "embedded_objects")]
    pub selected_resources: Vec<Value>,
}

namespaced_twin! {
    /// The resources a `ResourcePlacement` selected, at one index, in its namespace; immutable.
    pub struct ResourceSnapshot: twin of ClusterResourceSnapshot {
        spec: ResourceSnapshotSpec,
        status: ResourceSnapshotStatus,
        plural: "resourcesnapshots",
        singular: "resourcesnapshot",
        short_name: "rs",
        description: "ResourceSnapshot records the resources a ResourcePlacement selected, one chunk of one index.",
        derive: [Default],
    }
}

/// Observed state of a resource snapshot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSnapshotStatus {
    /// Conditions of the snapshot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The schema of a list of whole Kubernetes objects kept as they are.
pub(crate) fn embedded_objects(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true
        }
    })
}
