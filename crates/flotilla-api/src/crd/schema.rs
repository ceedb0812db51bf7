//! Schema generation and post-processing shared by fleet and core kinds.
//!
//! Every schema leaves here self-contained (no `$ref`, no definitions) and structural in the
//! Kubernetes sense, with list and default metadata that schemars cannot derive.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use schemars::transform::AddNullable;
use serde_json::{Map, Value, json};

/// Generates the inlined OpenAPI v3 schema of `T` exactly as kube-derive does for CRDs.
pub(crate) fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Declares `apiVersion`, `kind` and `metadata` at the root, as controller-gen does; the engine
/// owns `metadata` itself, so its schema is only `type: object`.
pub(crate) fn declare_type_meta(root: &mut Value) {
    let Some(root) = root.as_object_mut() else {
        return;
    };
    root.insert("type".into(), json!("object"));
    let props = root.entry("properties").or_insert_with(|| json!({}));
    let Some(props) = props.as_object_mut() else {
        return;
    };
    props.entry("apiVersion").or_insert_with(|| {
        json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."})
    });
    props.entry("kind").or_insert_with(|| {
        json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."})
    });
    props.insert("metadata".into(), json!({"type": "object"}));
}

/// Final clean-up shared by every schema: drops generator-only keys and marks free-form
/// objects and well-known keyed lists.
pub(crate) fn finalize(schema: &mut Value) {
    if let Some(root) = schema.as_object_mut() {
        for key in ["$schema", "$defs", "definitions", "title"] {
            root.remove(key);
        }
    }
    walk(schema);
}

/// Moves `default`s found inside list items into their descriptions (custom kinds only).
///
/// JSON merge patch (what kubectl's client-side apply sends for custom kinds) replaces lists
/// wholesale, so a list item the server defaults never equals the applied one and every
/// re-apply of an unchanged file would report `configured`. The seed's own status output shows
/// strategy stages without `maxConcurrency`, i.e. undefaulted. Readers apply these defaults
/// through the types' effective-value helpers instead.
pub(crate) fn strip_list_item_defaults(node: &mut Value, in_item: bool) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    if in_item && let Some(default) = obj.remove("default") {
        let note = format!("Defaults to {default}.");
        let description = match obj.get("description").and_then(Value::as_str) {
            Some(d) => format!("{d} {note}"),
            None => note,
        };
        obj.insert("description".into(), Value::String(description));
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props
            .values_mut()
            .for_each(|p| strip_list_item_defaults(p, in_item));
    }
    if let Some(items) = obj.get_mut("items") {
        strip_list_item_defaults(items, true);
    }
    if let Some(additional) = obj.get_mut("additionalProperties") {
        strip_list_item_defaults(additional, in_item);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            branches
                .iter_mut()
                .for_each(|b| strip_list_item_defaults(b, in_item));
        }
    }
}

fn walk(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    mark_free_form(obj);
    shorten_description(obj);
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            annotate_keyed_list(name, prop);
            walk(prop);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        walk(items);
    }
    if let Some(additional) = obj.get_mut("additionalProperties")
        && additional.is_object()
    {
        walk(additional);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            branches.iter_mut().for_each(walk);
        }
    }
}

/// An object schema without properties or additionalProperties accepts anything: say so, or a
/// pruning engine would drop its content (FieldsV1, RawExtension, JSON, ...).
fn mark_free_form(obj: &mut Map<String, Value>) {
    if obj.get("type") == Some(&json!("object"))
        && !obj.contains_key("properties")
        && !obj.contains_key("additionalProperties")
    {
        obj.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    }
}

/// Descriptions longer than this keep only their first paragraph: inlining repeats shared
/// types' long essays (Quantity's is 2 KiB) at every use.
const MAX_DESCRIPTION: usize = 1024;

fn shorten_description(obj: &mut Map<String, Value>) {
    if let Some(Value::String(description)) = obj.get_mut("description")
        && description.len() > MAX_DESCRIPTION
        && let Some((first, _)) = description.split_once("\n\n")
    {
        *description = first.to_string();
    }
}

/// Lists whose items are identified by a key: declared `x-kubernetes-list-type: map` with
/// `x-kubernetes-list-map-keys`, so server-side apply and strategic merge (whose patch merge key
/// is the first map key) merge them item by item. The first candidate key that the item schema
/// requires is used. CRD schemas cannot carry `x-kubernetes-patch-*`, hence this form.
const KEYED_LISTS: &[(&str, &[&str])] = &[
    ("conditions", &["type"]),
    ("agentStatus", &["type"]),
    ("containers", &["name"]),
    ("initContainers", &["name"]),
    ("ephemeralContainers", &["name"]),
    ("volumes", &["name"]),
    ("imagePullSecrets", &["name"]),
    ("env", &["name"]),
    ("volumeMounts", &["mountPath"]),
    ("volumeDevices", &["devicePath"]),
    ("resourceClaims", &["name"]),
    ("hostAliases", &["ip"]),
    ("ports", &["containerPort", "port"]),
    ("ownerReferences", &["uid"]),
];

fn annotate_keyed_list(name: &str, prop: &mut Value) {
    let Some((_, candidates)) = KEYED_LISTS.iter().find(|(list, _)| *list == name) else {
        return;
    };
    let Some(obj) = prop.as_object_mut() else {
        return;
    };
    if obj.get("type") != Some(&json!("array")) || obj.contains_key("x-kubernetes-list-type") {
        return;
    }
    let required: Vec<String> = obj
        .get("items")
        .and_then(|items| items.get("required"))
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let Some(key) = candidates.iter().find(|k| required.iter().any(|r| r == *k)) else {
        return;
    };
    let mut map_keys = vec![json!(key)];
    // Ports are keyed by number and protocol; protocol defaults to TCP as in kube-apiserver.
    if name == "ports"
        && let Some(protocol) = obj
            .get_mut("items")
            .and_then(|items| items.pointer_mut("/properties/protocol"))
            .and_then(Value::as_object_mut)
    {
        protocol.insert("default".into(), json!("TCP"));
        map_keys.push(json!("protocol"));
    }
    obj.insert("x-kubernetes-list-type".into(), json!("map"));
    obj.insert("x-kubernetes-list-map-keys".into(), Value::Array(map_keys));
}
