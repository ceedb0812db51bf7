//! Helpers shared by the per-kind rules: reading loosely-typed JSON and checks that several
//! kinds make (label selectors, immutable fields, name length).

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::path::Path;

/// The object's `spec` as `T`, when it matches its schema (an object that does not gets
/// only the schema's errors: it cannot be read, and the schema already names every bad field).
pub(crate) fn spec<T: DeserializeOwned>(object: &Value) -> Option<T> {
    object
        .get("spec")
        .and_then(|spec| serde_json::from_value(spec.clone()).ok())
}

/// The list at `key` of `value`, empty when absent or not a list.
pub(crate) fn list<'a>(value: Option<&'a Value>, key: &str) -> &'a [Value] {
    value
        .and_then(|v| v.get(key))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The string at `key` of `value`, if it is one.
pub(crate) fn string<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a str> {
    value.and_then(|v| v.get(key)).and_then(Value::as_str)
}

/// The non-null value at `key` of `value`.
pub(crate) fn field<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value.and_then(|v| v.get(key)).filter(|v| !v.is_null())
}

/// Whether `key` of `value` is set to something other than null or an empty list.
pub(crate) fn is_set(value: Option<&Value>, key: &str) -> bool {
    match field(value, key) {
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
        None => false,
    }
}

/// `path: Invalid value: <new>: field is immutable` when `new` differs from `old`.
pub(crate) fn immutable(
    path: &Path,
    new: Option<&Value>,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    if new != old {
        errors.push(FieldError::invalid(
            path,
            new.cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
}

/// `metadata.name` of fleet kinds is at most 63 characters (KubeFleet's CEL rule), so that
/// derived names stay valid labels.
pub(crate) fn name_at_most_63(object: &Value, errors: &mut Vec<FieldError>) {
    if let Some(name) = object.pointer("/metadata/name").and_then(Value::as_str)
        && name.len() > 63
    {
        errors.push(FieldError::new(
            FieldErrorType::TooLong,
            "metadata.name",
            None,
            "may not be more than 63 bytes",
        ));
    }
}

/// Checks a `metav1.LabelSelector`'s expressions: known operators, values required for
/// `In`/`NotIn` and forbidden for `Exists`/`DoesNotExist`.
///
/// Label keys are deliberately not checked: KubeFleet's published examples carry keys such
/// as `fleet.azure.com/___location` that must keep applying unchanged.
pub(crate) fn label_selector(selector: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let expressions = path.child("matchExpressions");
    for (i, expression) in list(selector, "matchExpressions").iter().enumerate() {
        let path = expressions.index(i);
        let has_values = is_set(Some(expression), "values");
        match string(Some(expression), "operator") {
            Some("In" | "NotIn") if !has_values => errors.push(FieldError::required(
                path.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            Some("Exists" | "DoesNotExist") if has_values => errors.push(FieldError::forbidden(
                path.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            Some("In" | "NotIn" | "Exists" | "DoesNotExist") => {}
            Some(other) => errors.push(FieldError::not_supported(
                path.child("operator"),
                Value::String(other.to_string()),
                &["DoesNotExist", "Exists", "In", "NotIn"],
            )),
            None => errors.push(FieldError::required(path.child("operator"), "")),
        }
    }
}
