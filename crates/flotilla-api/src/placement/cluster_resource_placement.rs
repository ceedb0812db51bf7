//! `ClusterResourcePlacement` (`crp`): selects cluster-scoped hub resources (a namespace brings
//! its content) and places them on member clusters picked by a policy, rolled out by a strategy.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::{PlacementPolicy, PlacementType};
use super::selector::ResourceSelectorTerm;
use super::status::PlacementStatus;
use super::strategy::{RolloutStrategy, RolloutStrategyType};

/// Desired state of a placement, shared by `ClusterResourcePlacement` and the namespaced
/// `ResourcePlacement`.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourcePlacement",
    plural = "clusterresourceplacements",
    singular = "clusterresourceplacement",
    shortname = "crp",
    category = "fleet",
    category = "fleet-placement",
    status = "PlacementStatus",
    derive = "PartialEq",
    doc = "ClusterResourcePlacement selects cluster-scoped resources and places them onto selected member clusters.",
    printcolumn(name = "Gen", type_ = "string", json_path = ".metadata.generation"),
    printcolumn(
        name = "Type",
        type_ = "string",
        json_path = ".spec.policy.placementType",
        priority = 1
    ),
    printcolumn(
        name = "Scheduled",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status"#
    ),
    printcolumn(
        name = "Scheduled-Gen",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].observedGeneration"#
    ),
    printcolumn(
        name = "Work-Synchronized",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementWorkSynchronized")].status"#,
        priority = 1
    ),
    printcolumn(
        name = "Work-Synchronized-Gen",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementWorkSynchronized")].observedGeneration"#,
        priority = 1
    ),
    printcolumn(
        name = "Available",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status"#
    ),
    printcolumn(
        name = "Available-Gen",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].observedGeneration"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSpec {
    /// Selectors of the resources to place, ORed (1 to 100).
    #[schemars(length(min = 1, max = 100))]
    pub resource_selectors: Vec<ResourceSelectorTerm>,
    /// How to pick member clusters; all joined clusters when unset. Cannot be removed once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PlacementPolicy>,
    /// How to roll changes out to the picked clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RolloutStrategy>,
    /// How many old policy and resource snapshots to keep. Default 10, 1..1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000), extend("default" = 10))]
    pub revision_history_limit: Option<i32>,
    /// Where placement status is visible; immutable. Default `ClusterScopeOnly`, the only
    /// value a `ResourcePlacement` (whose status is already in its namespace) accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ClusterScopeOnly"))]
    pub status_reporting_scope: Option<StatusReportingScope>,
}

impl PlacementSpec {
    /// The placement type, `PickAll` when no policy or type is given.
    pub fn placement_type(&self) -> PlacementType {
        self.policy
            .as_ref()
            .and_then(|p| p.placement_type)
            .unwrap_or_default()
    }

    /// The rollout strategy type, `RollingUpdate` when unset.
    pub fn rollout_strategy_type(&self) -> RolloutStrategyType {
        self.strategy
            .as_ref()
            .and_then(|s| s.type_)
            .unwrap_or_default()
    }
}

/// Where a placement's status is made visible.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum StatusReportingScope {
    /// Only on the cluster-scoped placement.
    #[default]
    ClusterScopeOnly,
    /// Also as a `ClusterResourcePlacementStatus` in the one selected namespace.
    NamespaceAccessible,
}
