//! `ClusterResourcePlacementEviction` (`crpe`): a one-shot request to remove a placement's
//! resources from one member cluster by deleting its binding, subject to the placement's
//! [`ClusterResourcePlacementDisruptionBudget`](super::ClusterResourcePlacementDisruptionBudget).
//!
//! The spec is immutable and the eviction is evaluated once: `Valid=False` or any `Executed`
//! condition is final; to try again, delete and re-create the object. An eviction does not keep
//! the scheduler from picking the cluster again (taint the cluster for that).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Condition type: whether the eviction targets a placement and cluster it can act on.
pub const EVICTION_VALID: &str = "Valid";
/// Condition type: whether the eviction was carried out (final either way).
pub const EVICTION_EXECUTED: &str = "Executed";
/// Reason of `Valid=True`.
pub const EVICTION_VALID_REASON: &str = "ClusterResourcePlacementEvictionValid";
/// Reason of `Valid=False`.
pub const EVICTION_INVALID_REASON: &str = "ClusterResourcePlacementEvictionInvalid";
/// Reason of `Executed=True`.
pub const EVICTION_EXECUTED_REASON: &str = "ClusterResourcePlacementEvictionExecuted";
/// Reason of `Executed=False`.
pub const EVICTION_NOT_EXECUTED_REASON: &str = "ClusterResourcePlacementEvictionNotExecuted";

/// Which placement to evict from which cluster; immutable.
#[allow(clippy::duplicated_attributes)]
#[derive(
    CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema,
)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourcePlacementEviction",
    plural = "clusterresourceplacementevictions",
    singular = "clusterresourceplacementeviction",
    shortname = "crpe",
    category = "fleet",
    category = "fleet-placement",
    status = "PlacementEvictionStatus",
    derive = "PartialEq",
    doc = "ClusterResourcePlacementEviction removes a ClusterResourcePlacement's resources from one member cluster, once.",
    printcolumn(
        name = "Valid",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Valid")].status"#
    ),
    printcolumn(
        name = "Executed",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Executed")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementEvictionSpec {
    /// The ClusterResourcePlacement to evict from (immutable).
    #[schemars(length(max = 255))]
    pub placement_name: String,
    /// The member cluster to evict the placement's resources from (immutable).
    #[schemars(length(max = 255))]
    pub cluster_name: String,
}

/// Observed state of an eviction.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementEvictionStatus {
    /// `Valid` and `Executed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
