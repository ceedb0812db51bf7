//! Rules for user `CustomResourceDefinition`s, created at run time: the definition must name
//! a servable kind with one storage version and a structural schema per version.

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

use super::common::{field, immutable, list, string};
use super::format::{is_dns1035_label, is_dns1123_subdomain};
use super::path::Path;
use super::structural;

const SCOPES: &[&str] = &["Cluster", "Namespaced"];
const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];

/// Validates a CRD on create (`old` is `None`) or update.
pub(crate) fn validate(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = new.get("spec");
    let path = Path::new("spec");
    let group = string(spec, "group").unwrap_or_default();
    if group.is_empty() {
        errors.push(FieldError::required(path.child("group"), ""));
    } else if !group.contains('.') || !is_dns1123_subdomain(group) {
        errors.push(FieldError::invalid(
            path.child("group"),
            json!(group),
            "should be a domain with at least one dot",
        ));
    }
    names(field(spec, "names"), &path.child("names"), &mut errors);
    match string(spec, "scope") {
        None => errors.push(FieldError::required(path.child("scope"), "")),
        Some(scope) if !SCOPES.contains(&scope) => errors.push(FieldError::not_supported(
            path.child("scope"),
            json!(scope),
            SCOPES,
        )),
        Some(_) => {}
    }
    versions(spec, &path.child("versions"), &mut errors);

    let plural = string(field(spec, "names"), "plural").unwrap_or_default();
    let expected = format!("{plural}.{group}");
    let name = new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !plural.is_empty() && !group.is_empty() && name != expected {
        errors.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            format!("must be spec.names.plural+\".\"+spec.group ({expected:?})"),
        ));
    }

    if let Some(old) = old {
        let old_spec = old.get("spec");
        for name in ["group", "scope"] {
            immutable(
                &path.child(name),
                field(spec, name),
                field(old_spec, name),
                &mut errors,
            );
        }
    }
    errors
}

fn names(names: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let lowercase_label = |field_name: &str, value: &str, errors: &mut Vec<FieldError>| {
        if !is_dns1035_label(value) {
            errors.push(FieldError::invalid(
                path.child(field_name),
                json!(value),
                "a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-', \
                 start with an alphabetic character, and end with an alphanumeric character",
            ));
        }
    };
    match string(names, "plural") {
        None | Some("") => errors.push(FieldError::required(path.child("plural"), "")),
        Some(plural) => lowercase_label("plural", plural, errors),
    }
    if let Some(singular) = string(names, "singular").filter(|s| !s.is_empty()) {
        lowercase_label("singular", singular, errors);
    }
    for key in ["kind", "listKind"] {
        match string(names, key) {
            None | Some("") if key == "kind" => {
                errors.push(FieldError::required(path.child(key), ""))
            }
            Some(kind) if !kind.is_empty() && !is_dns1035_label(&kind.to_lowercase()) => errors
                .push(FieldError::invalid(
                    path.child(key),
                    json!(kind),
                    "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
                )),
            _ => {}
        }
    }
    for key in ["shortNames", "categories"] {
        for (i, item) in list(names, key).iter().enumerate() {
            if !item.as_str().is_some_and(is_dns1035_label) {
                errors.push(FieldError::invalid(
                    path.child(key).index(i),
                    item.clone(),
                    "must be a lowercase RFC 1035 label",
                ));
            }
        }
    }
}

fn versions(spec: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let versions = list(spec, "versions");
    if versions.is_empty() {
        errors.push(FieldError::required(path, "must have at least one version"));
        return;
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .count();
    if storage != 1 {
        errors.push(FieldError::invalid(
            path,
            json!(storage),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, version) in versions.iter().enumerate() {
        let path = path.index(i);
        let version = Some(version);
        match field(version, "name") {
            Some(Value::String(name)) if is_dns1035_label(name) => {
                if versions[..i]
                    .iter()
                    .any(|v| v.get("name") == Some(&json!(name)))
                {
                    errors.push(FieldError::new(
                        FieldErrorType::Duplicate,
                        path.child("name"),
                        Some(json!(name)),
                        "",
                    ));
                }
            }
            Some(other) => errors.push(FieldError::invalid(
                path.child("name"),
                other.clone(),
                "must be a DNS-1035 label",
            )),
            None => errors.push(FieldError::required(path.child("name"), "")),
        }
        let schema_path = path.child("schema").child("openAPIV3Schema");
        match field(field(version, "schema"), "openAPIV3Schema") {
            Some(schema) => errors.extend(structural::check(schema, &schema_path)),
            None => errors.push(FieldError::required(schema_path, "schemas are required")),
        }
        columns(
            list(version, "additionalPrinterColumns"),
            &path.child("additionalPrinterColumns"),
            errors,
        );
    }
}

fn columns(columns: &[Value], path: &Path, errors: &mut Vec<FieldError>) {
    for (i, column) in columns.iter().enumerate() {
        let path = path.index(i);
        let column = Some(column);
        for key in ["name", "jsonPath"] {
            if string(column, key).is_none_or(str::is_empty) {
                errors.push(FieldError::required(path.child(key), ""));
            }
        }
        match string(column, "type") {
            None => errors.push(FieldError::required(path.child("type"), "")),
            Some(t) if !COLUMN_TYPES.contains(&t) => errors.push(FieldError::not_supported(
                path.child("type"),
                json!(t),
                COLUMN_TYPES,
            )),
            Some(_) => {}
        }
    }
}
