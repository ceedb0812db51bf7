//! The part of an object field managers can own.
//!
//! Server-side apply and update tracking ignore identity and system metadata (`apiVersion`,
//! `kind`, `metadata.name`, `uid`, `resourceVersion`, `managedFields`, ...): of `metadata` only
//! labels, annotations, finalizers and owner references are ownable. Writes to the `status`
//! subresource own only `status`; writes to the main resource (or another subresource such as
//! `scale`) own everything but `status`.

use serde_json::{Map, Value};

use super::object::Part;

const OWNABLE_METADATA: [&str; 4] = ["labels", "annotations", "finalizers", "ownerReferences"];

fn is_status(subresource: Option<&str>) -> bool {
    subresource == Some("status")
}

/// Whether the top-level field `name` is ownable through `subresource`.
fn owns_top_level(name: &str, subresource: Option<&str>) -> bool {
    match name {
        "apiVersion" | "kind" | "metadata" => false,
        "status" => is_status(subresource),
        _ => !is_status(subresource),
    }
}

/// The ownable part of `object` for writes through `subresource`, borrowed (what
/// [`ownable`] copies).
pub(crate) fn ownable_part<'v>(object: &'v Value, subresource: Option<&str>) -> Part<'v> {
    let Some(object) = object.as_object() else {
        return Part::default();
    };
    let top = object
        .iter()
        .filter(|(name, _)| owns_top_level(name, subresource))
        .map(|(name, value)| (name.as_str(), value))
        .collect();
    let metadata = match object.get("metadata") {
        Some(Value::Object(metadata)) if !is_status(subresource) => metadata
            .iter()
            .filter(|(name, _)| OWNABLE_METADATA.contains(&name.as_str()))
            .map(|(name, value)| (name.as_str(), value))
            .collect(),
        _ => Vec::new(),
    };
    Part { top, metadata }
}

/// The ownable view of `object` for writes through `subresource`.
pub(crate) fn ownable(object: &Value, subresource: Option<&str>) -> Value {
    let mut view = Map::new();
    let Some(object) = object.as_object() else {
        return Value::Object(view);
    };
    for (name, value) in object {
        if owns_top_level(name, subresource) {
            view.insert(name.clone(), value.clone());
        }
    }
    if !is_status(subresource) {
        let metadata: Map<String, Value> = object
            .get("metadata")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(name, _)| OWNABLE_METADATA.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        if !metadata.is_empty() {
            view.insert("metadata".to_owned(), Value::Object(metadata));
        }
    }
    Value::Object(view)
}

/// Replaces the ownable part of `object` with `view`, leaving everything else (identity,
/// system metadata, the other subresource) untouched and keeping field order.
pub(crate) fn splice(object: &mut Value, view: Value, subresource: Option<&str>) {
    let (Value::Object(target), Value::Object(mut view)) = (object, view) else {
        return;
    };
    let view_metadata = match view.shift_remove("metadata") {
        Some(Value::Object(metadata)) => metadata,
        _ => Map::new(),
    };
    target.retain(|name, _| !owns_top_level(name, subresource) || view.contains_key(name));
    for (name, value) in view {
        target.insert(name, value);
    }
    if is_status(subresource) {
        return;
    }
    if !target.contains_key("metadata") && view_metadata.is_empty() {
        return;
    }
    if let Value::Object(metadata) = target
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        metadata.retain(|name, _| {
            !OWNABLE_METADATA.contains(&name.as_str()) || view_metadata.contains_key(name)
        });
        for (name, value) in view_metadata {
            metadata.insert(name, value);
        }
    }
}
