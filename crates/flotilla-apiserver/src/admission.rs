//! The admission chain every write passes: body kind checks, unknown-field policy, defaulting,
//! validation (metadata, schema, per-kind rules) and field-manager bookkeeping.

use flotilla_apimachinery::{FieldError, managed_fields, patch, schema};
use serde_json::{Value, json};

use crate::engine::{FieldValidation, WriteOptions};
use crate::object::{self, meta_str, metadata_mut};
use crate::registry::{ResourceInfo, split_api_version};
use crate::status::{ApiError, ApiResult};

/// Fields of `ObjectMeta`; anything else in `metadata` is an unknown field.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Checks that a body is an object of this kind in a served version of this group.
pub fn check_body_kind(info: &ResourceInfo, mut body: Value) -> ApiResult<Value> {
    let Value::Object(fields) = &mut body else {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): expected a JSON object",
            info.kind
        )));
    };
    if info.is_kubernetes_kind() {
        // kube-apiserver's typed decoding takes a built-in kind's missing kind and apiVersion
        // from the URL (Python's typed models and client-node send none).
        for (field, value) in [
            ("kind", info.kind.clone()),
            ("apiVersion", info.api_version()),
        ] {
            if fields.get(field).is_none_or(|v| v.as_str() == Some("")) {
                fields.insert(field.into(), Value::String(value));
            }
        }
    }
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = body
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{}'",
            truncate(&body.to_string())
        )));
    }
    if api_version.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'apiVersion' is missing in '{}'",
            truncate(&body.to_string())
        )));
    }
    let (group, _) = split_api_version(api_version);
    if group != info.group
        || api_version != info.api_version() && !served_elsewhere(info, api_version)
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            info.api_version()
        )));
    }
    if kind != info.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            info.kind
        )));
    }
    if !body.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: metadata must be an object",
            info.kind, info.version, info.kind
        )));
    }
    let mut body = body;
    body["apiVersion"] = Value::String(info.api_version());
    Ok(body)
}

/// Versions of one kind share a schema, so a body in any served version of the group converts.
fn served_elsewhere(info: &ResourceInfo, api_version: &str) -> bool {
    let (_, v) = split_api_version(api_version);
    v == info.storage_version || v == info.version
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Fills or checks `metadata.namespace` against the URL.
pub fn check_namespace(
    info: &ResourceInfo,
    obj: &mut Value,
    url_ns: Option<&str>,
) -> ApiResult<()> {
    let meta = metadata_mut(obj);
    if !info.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let Some(url_ns) = url_ns else {
        return Err(ApiError::bad_request(format!(
            "{} is namespaced: the request must name a namespace",
            info.plural
        )));
    };
    match meta.get("namespace").and_then(Value::as_str) {
        None | Some("") => {
            meta.insert("namespace".into(), Value::String(url_ns.to_string()));
            Ok(())
        }
        Some(ns) if ns == url_ns => Ok(()),
        Some(_) => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
    }
}

/// Applies the `fieldValidation` policy: drops unknown fields (and reports duplicates), or
/// rejects the request when strict. Returns warnings for the `Warn` policy.
pub fn prune_unknown(
    info: &ResourceInfo,
    obj: &mut Value,
    opts: &WriteOptions,
) -> ApiResult<Vec<String>> {
    let mut unknown: Vec<String> = schema::prune(&info.schema, obj);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let extra: Vec<String> = meta
            .keys()
            .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in extra {
            meta.remove(&k);
            unknown.push(format!(".metadata.{k}"));
        }
    }
    let mut problems: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{}\"", p.trim_start_matches('.')))
        .collect();
    problems.extend(
        opts.duplicate_fields
            .iter()
            .map(|p| format!("duplicate field \"{p}\"")),
    );
    match opts.field_validation {
        FieldValidation::Strict if !problems.is_empty() => Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
            info.kind,
            info.version,
            info.kind,
            problems.join(", ")
        ))),
        FieldValidation::Warn => Ok(problems),
        _ => Ok(vec![]),
    }
}

/// Structural-schema defaulting.
pub fn default_object(info: &ResourceInfo, obj: &mut Value) {
    schema::apply_defaults(&info.schema, obj);
    if info.is_kubernetes_kind() {
        drop_empty_optional(&info.schema, obj);
    }
}

/// Removes optional empty maps and lists, as a built-in kind's Go type drops them on its way
/// through kube-apiserver (`omitempty`): a ConfigMap whose last key was removed has no `data`,
/// an orphaned object no `ownerReferences`. Structs (`properties`) and required fields stay.
pub fn drop_empty_optional(schema: &Value, obj: &mut Value) {
    match obj {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let Some(properties) = properties else {
                return;
            };
            fields.retain(|name, value| {
                let Some(field_schema) = properties.get(name) else {
                    return true;
                };
                drop_empty_optional(field_schema, value);
                let is_map = field_schema.get("additionalProperties").is_some();
                let empty = match value {
                    Value::Object(m) => is_map && m.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    _ => false,
                };
                !empty || required.contains(&name.as_str())
            });
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    drop_empty_optional(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// Full validation: metadata, schema, and the kind's own rules, which may ask what `served`
/// (the registry the write goes through) serves. 422 naming every bad field. On an update
/// (`old` is the stored object), the schema walk skips every value left exactly as stored
/// (`schema::validate_update`, Kubernetes' ratcheting); the kind's own rules see the whole
/// object.
pub fn validate(
    info: &ResourceInfo,
    obj: &Value,
    old: Option<&Value>,
    served: &dyn flotilla_api::ServedKinds,
) -> ApiResult<()> {
    let mut errs = object::validate_metadata(info, obj);
    let schema_errors = match old {
        Some(old) => schema::validate_update(&info.schema, obj, old),
        None => schema::validate(&info.schema, obj),
    };
    if info.is_kubernetes_kind()
        && let Some(wrong) = schema_errors
            .iter()
            .find(|e| e.error_type == flotilla_apimachinery::FieldErrorType::TypeInvalid)
    {
        // A built-in kind is decoded into its Go type before anything else looks at it: a
        // value of the wrong JSON type is a malformed request (400), not an invalid object.
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {}",
            wrong.message(),
            kind = info.kind,
            version = info.version,
        )));
    }
    errs.extend(
        schema_errors
            .into_iter()
            .filter(|e| !e.field.starts_with("metadata")),
    );
    errs.extend(flotilla_api::validate(
        &info.group,
        &info.kind,
        obj,
        old,
        served,
    ));
    if let Some(old) = old {
        errs.extend(immutable_metadata(old, obj));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        let name = meta_str(obj, "name").unwrap_or_default();
        Err(ApiError::invalid(
            &info.qualified_kind(),
            &crate::engine::target(info, name),
            &errs,
        ))
    }
}

fn immutable_metadata(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["name", "namespace", "uid"] {
        if meta_str(old, field) != meta_str(new, field) {
            errs.push(FieldError::invalid(
                format!("metadata.{field}"),
                json!(meta_str(new, field)),
                "field is immutable",
            ));
        }
    }
    errs
}

/// Records `manager` as the owner of the fields this (non-apply) write changed.
pub fn record_manager(
    info: &ResourceInfo,
    old: Option<&Value>,
    obj: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: &str,
) {
    if manager.is_empty() {
        return;
    }
    let semantics = patch::SchemaStrategy::new(&info.schema);
    managed_fields::record_update(
        old,
        obj,
        manager,
        subresource,
        &info.api_version(),
        now,
        &semantics,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_empty_maps_and_lists_go_structs_and_required_fields_stay() {
        let schema = json!({"type": "object", "required": ["endpoints"], "properties": {
            "data": {"type": "object", "additionalProperties": {"type": "string"}},
            "endpoints": {"type": "array", "items": {"type": "object"}},
            "spec": {"type": "object", "properties": {
                "selector": {"type": "object", "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                "ports": {"type": "array", "items": {"type": "object", "properties": {
                    "names": {"type": "array", "items": {"type": "string"}}}}}}},
            "metadata": {"type": "object", "properties": {
                "ownerReferences": {"type": "array", "items": {"type": "object"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}});
        let mut obj = json!({"data": {}, "endpoints": [], "spec": {"selector": {"matchLabels": {}},
            "ports": [{"names": []}]}, "metadata": {"ownerReferences": [], "labels": {"a": "b"}},
            "unknown": {}});
        drop_empty_optional(&schema, &mut obj);
        assert_eq!(
            obj,
            json!({"endpoints": [], "spec": {"selector": {}, "ports": [{}]},
                "metadata": {"labels": {"a": "b"}}, "unknown": {}})
        );
    }
}
