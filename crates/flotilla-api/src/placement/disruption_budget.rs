//! `ClusterResourcePlacementDisruptionBudget` (`crpdb`): how many of a placement's clusters
//! evictions may take down. It protects the `ClusterResourcePlacement` of the same name.
//!
//! `maxUnavailable` and `minAvailable` are mutually exclusive; each is an integer (≥ 0) or a
//! percentage of the placement's `numberOfClusters`, rounded up. For a PickAll placement only an
//! integer `minAvailable` is meaningful (the number of clusters is not known in advance); an
//! eviction under any other budget is blocked as misconfigured. PickFixed placements cannot be
//! evicted from at all.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pattern of the string form of `maxUnavailable` / `minAvailable`: a percentage from 0% to
/// 100% (the integer form is checked by `validate`).
pub const BUDGET_PERCENT_PATTERN: &str = "^(100|[0-9]{1,2})%$";

/// The budget; at most one of the two fields may be set.
#[allow(clippy::duplicated_attributes)]
#[derive(
    CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema,
)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourcePlacementDisruptionBudget",
    plural = "clusterresourceplacementdisruptionbudgets",
    singular = "clusterresourceplacementdisruptionbudget",
    shortname = "crpdb",
    category = "fleet",
    category = "fleet-placement",
    derive = "PartialEq",
    doc = "ClusterResourcePlacementDisruptionBudget limits how many clusters of the ClusterResourcePlacement of the same name evictions may disrupt.",
    printcolumn(
        name = "Max-Unavailable",
        type_ = "string",
        json_path = ".spec.maxUnavailable"
    ),
    printcolumn(
        name = "Min-Available",
        type_ = "string",
        json_path = ".spec.minAvailable"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementDisruptionBudgetSpec {
    /// How many of the placement's clusters may be unavailable at once for an eviction to
    /// proceed: an integer or a percentage of `numberOfClusters` (PickN only), rounded up.
    /// 0 allows no eviction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = BUDGET_PERCENT_PATTERN))]
    pub max_unavailable: Option<IntOrString>,
    /// How many of the placement's clusters must stay available: an integer, or (PickN only)
    /// a percentage of `numberOfClusters`, rounded up. 0 allows an eviction whenever at least one cluster is
    /// available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = BUDGET_PERCENT_PATTERN))]
    pub min_available: Option<IntOrString>,
}
