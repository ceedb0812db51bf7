//! Resource selectors: which hub resources a placement propagates.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Selects hub resources to place. All fields are ANDed; at most one of `name` and
/// `labelSelector` may be set, and with neither every resource of the kind is selected.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelectorTerm {
    /// API group of the selected resources; empty for the core group (e.g. namespaces).
    pub group: String,
    /// API version of the selected resources.
    pub version: String,
    /// Kind of the selected resources. Selecting a `Namespace` selects its content too, unless
    /// `selectionScope` says otherwise.
    pub kind: String,
    /// Name of the one resource to select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Label query over the resources of the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// What selecting a namespace includes. Default `NamespaceWithResources`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "NamespaceWithResources"))]
    pub selection_scope: Option<SelectionScope>,
}

/// What a namespace selector includes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum SelectionScope {
    /// Only the namespace object itself.
    NamespaceOnly,
    /// The namespace and every resource in it.
    #[default]
    NamespaceWithResources,
    /// The namespace and the resources in it matched by the placement's other selectors.
    NamespaceWithResourceSelectors,
}
