//! Structural-schema checks (`apiextensions.k8s.io` rules), for user CRDs and Flotilla's own:
//! every node typed, no `$ref`, arrays with items, and no typing inside logical junctors.

use flotilla_apimachinery::FieldError;
use serde_json::{Map, Value, json};

use super::path::Path;

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];
const JUNCTORS: &[&str] = &["allOf", "anyOf", "oneOf", "not"];
/// Keys a schema inside `allOf`/`anyOf`/`oneOf`/`not` may not set.
const FORBIDDEN_IN_JUNCTORS: &[&str] = &[
    "type",
    "default",
    "additionalProperties",
    "nullable",
    "description",
];

/// Checks that `schema`, found at `path`, is a structural root schema.
pub(crate) fn check(schema: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match schema.as_object() {
        Some(root) => {
            if root.get("type") != Some(&json!("object")) {
                errors.push(FieldError::invalid(
                    path.child("type"),
                    root.get("type").cloned().unwrap_or(Value::Null),
                    "must be object at the root",
                ));
            }
            node(root, path, false, &mut errors);
        }
        None => errors.push(FieldError::invalid(
            path,
            schema.clone(),
            "must be a schema object",
        )),
    }
    errors
}

fn node(schema: &Map<String, Value>, path: &Path, in_junctor: bool, errors: &mut Vec<FieldError>) {
    if schema.contains_key("$ref") {
        errors.push(FieldError::forbidden(
            path.child("$ref"),
            "must not be set: schemas must be self-contained",
        ));
    }
    let int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&json!(true));
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    if in_junctor {
        for key in FORBIDDEN_IN_JUNCTORS {
            if schema.contains_key(*key) {
                errors.push(FieldError::forbidden(
                    path.child(key),
                    "must not be used inside allOf, anyOf, oneOf or not",
                ));
            }
        }
    } else {
        match schema.get("type") {
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
            Some(other) => errors.push(FieldError::not_supported(
                path.child("type"),
                other.clone(),
                TYPES,
            )),
            None if !int_or_string && !preserve => errors.push(FieldError::required(
                path.child("type"),
                "must not be empty for specified fields",
            )),
            None => {}
        }
    }
    if schema.get("type") == Some(&json!("array")) && !schema.contains_key("items") {
        errors.push(FieldError::required(
            path.child("items"),
            "must be specified for arrays",
        ));
    }
    if schema.contains_key("properties") && schema.contains_key("additionalProperties") {
        errors.push(FieldError::forbidden(
            path.child("additionalProperties"),
            "additionalProperties and properties are mutually exclusive",
        ));
    }
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            child(
                prop,
                &path.child("properties").key(name),
                in_junctor,
                errors,
            );
        }
    }
    match schema.get("items") {
        Some(items @ Value::Object(_)) => child(items, &path.child("items"), in_junctor, errors),
        Some(other @ Value::Array(_)) => errors.push(FieldError::invalid(
            path.child("items"),
            other.clone(),
            "must be a single schema",
        )),
        _ => {}
    }
    if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
        child(
            additional,
            &path.child("additionalProperties"),
            in_junctor,
            errors,
        );
    }
    for junctor in JUNCTORS {
        match schema.get(*junctor) {
            Some(Value::Array(branches)) => {
                for (i, branch) in branches.iter().enumerate() {
                    let path = path.child(junctor).index(i);
                    if !(int_or_string && *junctor == "anyOf" && is_int_or_string_branch(branch)) {
                        child(branch, &path, true, errors);
                    }
                }
            }
            Some(single @ Value::Object(_)) => child(single, &path.child(junctor), true, errors),
            _ => {}
        }
    }
}

fn child(schema: &Value, path: &Path, in_junctor: bool, errors: &mut Vec<FieldError>) {
    match schema.as_object() {
        Some(schema) => node(schema, path, in_junctor, errors),
        None => errors.push(FieldError::invalid(
            path,
            schema.clone(),
            "must be a schema object",
        )),
    }
}

/// `anyOf: [{type: integer}, {type: string}]` is the one typed junctor allowed, next to
/// `x-kubernetes-int-or-string`.
fn is_int_or_string_branch(branch: &Value) -> bool {
    branch == &json!({"type": "integer"}) || branch == &json!({"type": "string"})
}
