//! `NodeOverlay` (`karpenter.sh/v1alpha1`): a change to the price of the instance types (and
//! offerings) its requirements match, as Karpenter's scheduler and consolidation see them. The
//! cloud still bills (and launches at) the real price; an overlay only steers choices, for
//! example towards instance types covered by a savings plan.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::node_claim::RequirementOperator;

/// Pattern of `priceAdjustment`: a signed amount (`-0.5`, `+1.2`), a percentage increase
/// (`+10%`) or a decrease of less than 100 % (`-15%`), or `-100%`.
pub const PRICE_ADJUSTMENT_PATTERN: &str =
    r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$";
/// Pattern of `price`: an unsigned decimal.
pub const PRICE_PATTERN: &str = r"^\d+(\.\d+)?$";

/// A change to the price of the instance types a set of requirements matches.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1alpha1",
    kind = "NodeOverlay",
    plural = "nodeoverlays",
    singular = "nodeoverlay",
    shortname = "overlays",
    category = "karpenter",
    status = "NodeOverlayStatus",
    derive = "PartialEq",
    doc = "NodeOverlay changes the price Karpenter sees for the instance types its requirements match.",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
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
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlaySpec {
    /// Which instance types and offerings the overlay applies to, by well-known labels
    /// (instance type, zone, capacity type, SKU labels, `karpenter.sh/nodepool`) and the pools'
    /// template labels.
    #[schemars(length(max = 100))]
    pub requirements: Vec<OverlayRequirement>,
    /// A change to the price: a signed amount (`-0.05`, `+0.1`) or percentage (`+10%`,
    /// `-15%`, floored at zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = PRICE_ADJUSTMENT_PATTERN))]
    pub price_adjustment: Option<String>,
    /// A price that replaces the offering's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = PRICE_PATTERN))]
    pub price: Option<String>,
    /// Extended resources to add to matching instance types. Flotilla's simulated members do
    /// not model extended resources, so an overlay that sets it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Overlays of higher weight take precedence (1–10000; absent counts as 0). Two matching
    /// the same offering at the same weight conflict, and the later one (by name) is not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub weight: Option<i32>,
}

/// A node selector requirement (without `minValues`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverlayRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte` or `Lte`.
    pub operator: RequirementOperator,
    /// The values (one integer for `Gt`/`Lt`/`Gte`/`Lte`, none for `Exists`/`DoesNotExist`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// Whether the overlay is in force.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlayStatus {
    /// `ValidationSucceeded` (False with `Conflict` when an overlay of the same weight already
    /// changes an offering it matches) and `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
