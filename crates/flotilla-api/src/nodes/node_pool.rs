//! `NodePool` (`karpenter.sh/v1`): a template for the nodes Karpenter launches in a member
//! cluster and the rules for disrupting them. Shaped exactly as Karpenter v1, so the NodePools
//! of AKS node auto-provisioning apply unchanged — including `spec.disruption.expireAfter`, the
//! older (v1beta1) place AKS's documents put expiry, accepted next to v1's
//! `spec.template.spec.expireAfter`; the status says which one is in force.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::node_claim::{NodeClassReference, NodeSelectorRequirementWithMinValues};

/// Pattern of `consolidateAfter` and `expireAfter`: a duration of whole h/m/s, or `Never`.
pub const DURATION_OR_NEVER_PATTERN: &str = "^(([0-9]+(s|m|h))+|Never)$";
/// Pattern of `terminationGracePeriod`: a duration of whole h/m/s.
pub const DURATION_PATTERN: &str = "^([0-9]+(s|m|h))+$";
/// Pattern of a budget's `nodes`: a count, or a percentage up to 100%.
pub const BUDGET_NODES_PATTERN: &str = "^((100|[0-9]{1,2})%|[0-9]+)$";
/// Pattern of a budget's `duration`: hours and/or minutes (Go may append `0s`).
pub const BUDGET_DURATION_PATTERN: &str = "^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$";
/// Most budgets a pool may have.
pub const MAX_BUDGETS: usize = 50;
/// Default expiry of a node: 30 days.
pub const DEFAULT_EXPIRE_AFTER: &str = "720h";
/// The budget a pool has when it names none: 10% of its nodes.
pub const DEFAULT_BUDGET_NODES: &str = "10%";

/// A template for nodes and the rules for disrupting them.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1",
    kind = "NodePool",
    plural = "nodepools",
    singular = "nodepool",
    shortname = "np",
    shortname = "nodepools",
    category = "karpenter",
    status = "NodePoolStatus",
    scale = r#"{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.nodes"}"#,
    derive = "PartialEq",
    doc = "NodePool is a template for the nodes Karpenter launches and the rules for disrupting them.",
    printcolumn(
        name = "NodeClass",
        type_ = "string",
        json_path = ".spec.template.spec.nodeClassRef.name"
    ),
    printcolumn(
        name = "Nodes",
        type_ = "string",
        json_path = ".status.resources.nodes"
    ),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Allowed-Disruptions",
        type_ = "string",
        json_path = ".status.allowedDisruptionsSummary"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Weight",
        type_ = "integer",
        json_path = ".spec.weight",
        priority = 1
    ),
    printcolumn(
        name = "CPU",
        type_ = "string",
        json_path = ".status.resources.cpu",
        priority = 1
    ),
    printcolumn(
        name = "Memory",
        type_ = "string",
        json_path = ".status.resources.memory",
        priority = 1
    ),
    printcolumn(
        name = "Expire-After",
        type_ = "string",
        json_path = ".status.expireAfter",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSpec {
    /// What the pool's NodeClaims (and so its nodes) look like. Karpenter requires it; AKS's
    /// documents leave it out, meaning a template of defaults.
    #[serde(default, skip_serializing_if = "NodeClaimTemplate::is_empty")]
    pub template: NodeClaimTemplate,
    /// How and when the pool's nodes may be disrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"consolidateAfter": "0s"}))]
    pub disruption: Option<Disruption>,
    /// Most resources (`cpu`, `memory`, `nodes`, …) the pool's nodes may add up to.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
    /// Pools are tried by weight, highest first (1–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub weight: Option<i32>,
    /// A static pool: keep exactly this many nodes whatever the pods ask for (Karpenter's
    /// static capacity; only `limits.nodes` applies, consolidation and weight do not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i64>,
}

/// The NodeClaim template of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplate {
    /// Labels and annotations every node of the pool gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMetadata>,
    /// The NodeClaim spec.
    #[serde(default, skip_serializing_if = "NodeClaimTemplateSpec::is_empty")]
    pub spec: NodeClaimTemplateSpec,
}

impl NodeClaimTemplate {
    /// Whether the template sets nothing (all defaults).
    pub fn is_empty(&self) -> bool {
        *self == NodeClaimTemplate::default()
    }
}

/// Labels and annotations of a template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMetadata {
    /// Labels of every node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of every node (`karpenter.sh/do-not-disrupt: "true"` protects them all).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The spec of the pool's NodeClaims.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplateSpec {
    /// Taints every node carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Taints a node carries until something on it removes them (not counted when scheduling).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_taints: Vec<Taint>,
    /// What instance types, zones, capacity types… the pool may launch (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// The node class (cloud settings) of the nodes; absent: the `default` AKSNodeClass, as
    /// AKS node auto-provisioning does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassReference>,
    /// Most time a node may take to drain once deleted; then its pods are deleted, bypassing
    /// PodDisruptionBudgets and `do-not-disrupt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub termination_grace_period: Option<String>,
    /// A node's lifetime: once this old it is replaced, whatever the budgets say. `Never`
    /// keeps nodes forever; absent: `spec.disruption.expireAfter`, else 720h.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_OR_NEVER_PATTERN))]
    pub expire_after: Option<String>,
}

impl NodeClaimTemplateSpec {
    /// Whether the spec sets nothing (all defaults).
    pub fn is_empty(&self) -> bool {
        *self == NodeClaimTemplateSpec::default()
    }
}

/// How and when a pool's nodes may be disrupted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// Which nodes consolidation considers: `WhenEmpty`, `WhenEmptyOrUnderutilized`
    /// (default) or `Balanced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "WhenEmptyOrUnderutilized"))]
    pub consolidation_policy: Option<ConsolidationPolicy>,
    /// How long a node must go without pods arriving or leaving before it may be
    /// consolidated; `Never` turns emptiness and consolidation off (not drift). Default `0s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_OR_NEVER_PATTERN))]
    #[schemars(extend("default" = "0s"))]
    pub consolidate_after: Option<String>,
    /// Karpenter v1beta1's place for a node's lifetime, where AKS's documents put it; used
    /// when `spec.template.spec.expireAfter` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_OR_NEVER_PATTERN))]
    pub expire_after: Option<String>,
    /// How many nodes may be disrupted at once, and when (the most restrictive active budget
    /// wins); default one budget of 10%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 50))]
    #[schemars(extend("default" = [{"nodes": "10%"}]))]
    pub budgets: Option<Vec<Budget>>,
}

/// Which nodes consolidation considers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ConsolidationPolicy {
    /// Only nodes with no workload pods.
    WhenEmpty,
    /// Empty nodes, and nodes whose pods fit elsewhere or on a cheaper replacement.
    #[default]
    WhenEmptyOrUnderutilized,
    /// As `WhenEmptyOrUnderutilized`, but a move must save enough of the pool's cost for the
    /// share of its disruption it causes (Karpenter's balanced scoring, k = 2).
    Balanced,
}

impl ConsolidationPolicy {
    /// The policy as spelt in the API, for conditions and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsolidationPolicy::WhenEmpty => "WhenEmpty",
            ConsolidationPolicy::WhenEmptyOrUnderutilized => "WhenEmptyOrUnderutilized",
            ConsolidationPolicy::Balanced => "Balanced",
        }
    }
}

/// A limit on how many of a pool's nodes may be disrupted at once.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The reasons this budget limits; absent: every reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<DisruptionReason>>,
    /// How many nodes: a count (`"5"`) or a percentage of the pool's nodes (`"20%"`, rounded
    /// up).
    #[serde(default = "default_budget_nodes")]
    #[schemars(regex(pattern = BUDGET_NODES_PATTERN))]
    #[schemars(extend("default" = "10%"))]
    pub nodes: String,
    /// When the budget is active, as cron (UTC; five fields or a macro such as `@daily`);
    /// absent: always. Needs `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How long the budget stays active after each time the schedule fires. Needs `schedule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = BUDGET_DURATION_PATTERN))]
    pub duration: Option<String>,
}

/// A budget's `nodes` when it names none.
fn default_budget_nodes() -> String {
    DEFAULT_BUDGET_NODES.to_string()
}

/// Why a node is disrupted, as budgets name it.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum DisruptionReason {
    /// Its pods fit on other nodes or on a cheaper replacement.
    Underutilized,
    /// It runs no workload pods.
    Empty,
    /// It no longer matches its pool or node class.
    Drifted,
}

impl DisruptionReason {
    /// Every reason, in the order budgets are reported.
    pub const ALL: [DisruptionReason; 3] = [
        DisruptionReason::Underutilized,
        DisruptionReason::Empty,
        DisruptionReason::Drifted,
    ];

    /// The reason as Karpenter writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            DisruptionReason::Underutilized => "Underutilized",
            DisruptionReason::Empty => "Empty",
            DisruptionReason::Drifted => "Drifted",
        }
    }
}

/// What the pool's nodes add up to and what may be disrupted now.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// The resources of the pool's nodes, `nodes` included.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, Quantity>,
    /// How many nodes the pool has (Karpenter's `status.nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<i64>,
    /// `Ready`, `NodeClassReady`, `ValidationSucceeded`, `NodeRegistrationHealthy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// How many more nodes may be disrupted now, per reason (budgets minus nodes already
    /// disrupting), with the budget that sets each figure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_disruptions: Vec<AllowedDisruptions>,
    /// `allowedDisruptions` on one line for the printer column: `Underutilized=1 Empty=1
    /// Drifted=0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_disruptions_summary: Option<String>,
    /// The node lifetime in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<String>,
    /// Where that lifetime comes from: `spec.template.spec.expireAfter`,
    /// `spec.disruption.expireAfter`, or `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after_source: Option<String>,
}

/// How many nodes of a pool may be disrupted now for one reason.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedDisruptions {
    /// The reason.
    pub reason: String,
    /// How many more nodes may be disrupted for it now.
    pub allowed: i64,
    /// Why: the budget that sets the figure, or the error that closed the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
