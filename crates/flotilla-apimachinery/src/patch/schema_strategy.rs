//! List semantics read from an OpenAPI v3 structural schema (a CRD's `openAPIV3Schema`).

use serde_json::Value;

use super::strategy::{BuiltinStrategy, ListStrategy, PatchStrategy};

/// List semantics declared by a structural schema: `x-kubernetes-patch-strategy` /
/// `x-kubernetes-patch-merge-key` and `x-kubernetes-list-type` / `x-kubernetes-list-map-keys`.
///
/// The schema is walked through `properties`, `additionalProperties` and `items`. Where the
/// schema says nothing about a list (no node for the path — `metadata` of a CRD, fields under
/// `x-kubernetes-preserve-unknown-fields` — or a node without any of these extensions) the
/// answer falls back to [`BuiltinStrategy`], so `metadata.finalizers` and embedded pod
/// templates keep their Kubernetes semantics.
#[derive(Debug, Clone, Copy)]
pub struct SchemaStrategy<'a> {
    schema: &'a Value,
}

impl<'a> SchemaStrategy<'a> {
    /// Wraps the root of a structural schema (the value of `openAPIV3Schema`).
    pub fn new(schema: &'a Value) -> Self {
        Self { schema }
    }

    /// The schema node describing the field at `path`, if the schema describes it.
    fn node(&self, path: &[&str]) -> Option<&'a Value> {
        let mut node = self.schema;
        for name in path {
            // Array indices are omitted from paths: step through `items` implicitly.
            while let Some(items) = node.get("items").filter(|items| items.is_object()) {
                node = items;
            }
            node = node
                .get("properties")
                .and_then(|properties| properties.get(*name))
                .or_else(|| {
                    node.get("additionalProperties")
                        .filter(|additional| additional.is_object())
                })?;
        }
        Some(node)
    }

    /// The strategy the schema node declares, if it declares one.
    fn declared(node: &Value) -> Option<ListStrategy> {
        if let Some(strategy) = node
            .get("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
        {
            let strategies: Vec<&str> = strategy.split(',').map(str::trim).collect();
            if strategies.contains(&"merge") {
                return Some(
                    match node
                        .get("x-kubernetes-patch-merge-key")
                        .and_then(Value::as_str)
                    {
                        Some(key) => ListStrategy::MergeByKey(key.to_owned()),
                        None => ListStrategy::MergePrimitives,
                    },
                );
            }
            if strategies.contains(&"replace") {
                return Some(ListStrategy::Atomic);
            }
        }
        match node.get("x-kubernetes-list-type").and_then(Value::as_str)? {
            "map" => Some(
                Self::map_keys(node)
                    .and_then(|keys| keys.into_iter().next())
                    .map_or(ListStrategy::Atomic, ListStrategy::MergeByKey),
            ),
            "set" => Some(ListStrategy::MergePrimitives),
            _ => Some(ListStrategy::Atomic),
        }
    }

    /// `x-kubernetes-list-map-keys` of a node, if present and non-empty.
    fn map_keys(node: &Value) -> Option<Vec<String>> {
        let keys: Vec<String> = node
            .get("x-kubernetes-list-map-keys")?
            .as_array()?
            .iter()
            .filter_map(|key| key.as_str().map(str::to_owned))
            .collect();
        (!keys.is_empty()).then_some(keys)
    }
}

impl PatchStrategy for SchemaStrategy<'_> {
    fn list_strategy(&self, path: &[&str]) -> ListStrategy {
        self.node(path)
            .and_then(Self::declared)
            .unwrap_or_else(|| BuiltinStrategy.list_strategy(path))
    }

    fn list_map_keys(&self, path: &[&str]) -> Vec<String> {
        let Some(node) = self
            .node(path)
            .filter(|node| Self::declared(node).is_some())
        else {
            return BuiltinStrategy.list_map_keys(path);
        };
        if let Some(keys) = Self::map_keys(node) {
            return keys;
        }
        match Self::declared(node) {
            Some(ListStrategy::MergeByKey(key)) => vec![key],
            _ => Vec::new(),
        }
    }
}
