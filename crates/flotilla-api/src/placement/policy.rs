//! Placement policies: which member clusters receive the selected resources.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cluster::member_cluster::TaintEffect;

/// How to pick member clusters. Only joined clusters that satisfy the rules are picked.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementPolicy {
    /// The placement type; immutable. Default `PickAll`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "PickAll"))]
    pub placement_type: Option<PlacementType>,
    /// Names of the member clusters to pick; only for `PickFixed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub cluster_names: Option<Vec<String>>,
    /// How many clusters to pick; required for `PickN` and only valid there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub number_of_clusters: Option<i32>,
    /// Cluster affinity rules; only for `PickAll` and `PickN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// How to spread the picked clusters over topology domains; only for `PickN`. ANDed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// Taints this placement tolerates; tolerations can be added but not changed or removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub tolerations: Option<Vec<Toleration>>,
}

/// The type of a placement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum PlacementType {
    /// Every cluster that satisfies the rules.
    #[default]
    PickAll,
    /// The best `numberOfClusters` clusters that satisfy the rules.
    PickN,
    /// Exactly the clusters named in `clusterNames`.
    PickFixed,
}

/// Cluster scheduling rules.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    /// Cluster affinity rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<ClusterAffinity>,
}

/// Required and preferred cluster affinity.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// Clusters must match these terms at scheduling time (changes later are ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<ClusterSelector>,
    /// Weighted terms; a cluster scores the sum of the weights of the terms it matches (PickN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<PreferredClusterSelector>>,
}

/// A set of cluster selector terms, ORed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelector {
    /// The terms; a cluster matching any of them matches.
    #[schemars(length(max = 10))]
    pub cluster_selector_terms: Vec<ClusterSelectorTerm>,
}

/// A weighted preference for clusters matching a term.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferredClusterSelector {
    /// Weight added to a matching cluster's score, in -100..100.
    #[schemars(range(min = -100, max = 100))]
    pub weight: i32,
    /// The term a cluster must match to get the weight.
    pub preference: ClusterSelectorTerm,
}

/// One cluster selector term: its label and property selectors are ANDed.
///
/// `metricSorter` is accepted as an alias of `propertySorter` (the name older Azure Fleet
/// documentation uses), so such YAML applies unchanged; setting both is invalid.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelectorTerm {
    /// Label query over member clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Property query over member clusters; only in required terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_selector: Option<PropertySelector>,
    /// Sorts matching clusters by a property and scales the weight; only in preferred terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_sorter: Option<PropertySorter>,
    /// Deprecated alias of `propertySorter`, kept for YAML written against older Fleet docs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_sorter: Option<PropertySorter>,
}

impl ClusterSelectorTerm {
    /// The sorter of this term, whether given as `propertySorter` or its alias `metricSorter`:
    /// what the scheduler should read.
    pub fn property_sorter(&self) -> Option<&PropertySorter> {
        self.property_sorter
            .as_ref()
            .or(self.metric_sorter.as_ref())
    }
}

/// Property requirements, ANDed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropertySelector {
    /// The requirements.
    pub match_expressions: Vec<PropertySelectorRequirement>,
}

/// A requirement on one cluster property.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropertySelectorRequirement {
    /// The property name, e.g. `kubernetes-fleet.io/node-count` or
    /// `resources.kubernetes-fleet.io/available-cpu`.
    pub name: String,
    /// How the observed value compares with the given one.
    pub operator: PropertySelectorOperator,
    /// Exactly one value, a Kubernetes quantity.
    #[schemars(length(max = 1))]
    pub values: Vec<String>,
}

/// Comparison operator of a property requirement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum PropertySelectorOperator {
    /// Greater than.
    Gt,
    /// Greater than or equal to.
    Ge,
    /// Equal to.
    Eq,
    /// Not equal to.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal to.
    Le,
}

/// Sorts clusters by a property to scale a preferred term's weight linearly.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropertySorter {
    /// The property to sort by.
    pub name: String,
    /// Which end of the range gets the full weight.
    pub sort_order: PropertySortOrder,
}

/// Sort order of a property sorter.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum PropertySortOrder {
    /// Higher values are preferred: `(v - min) / (max - min) * weight`.
    Descending,
    /// Lower values are preferred: `(1 - (v - min) / (max - min)) * weight`.
    Ascending,
}

/// How to spread picked clusters over the domains of a cluster label.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    /// Largest allowed difference between the most and least loaded domain. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("default" = 1))]
    pub max_skew: Option<i32>,
    /// The cluster label whose values are the topology domains.
    pub topology_key: String,
    /// What to do when the constraint cannot be met (`DoNotSchedule` when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_unsatisfiable: Option<UnsatisfiableConstraintAction>,
}

/// What the scheduler does with an unsatisfiable spread constraint.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum UnsatisfiableConstraintAction {
    /// Do not pick a cluster that would violate the constraint.
    #[default]
    DoNotSchedule,
    /// Pick it anyway, preferring clusters that reduce the skew.
    ScheduleAnyway,
}

/// Lets a placement tolerate matching member-cluster taints.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// The taint key; empty (with `Exists`) matches every key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// How the key relates to the value. Default `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Equal"))]
    pub operator: Option<TolerationOperator>,
    /// The taint value to match; empty with `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The taint effect to match; empty matches every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
}

/// Toleration operator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum TolerationOperator {
    /// Key and value must be equal.
    #[default]
    Equal,
    /// The key must exist; any value matches.
    Exists,
}
