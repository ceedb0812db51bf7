//! Rules of `MemberCluster` that its schema cannot express (KubeFleet's webhook).

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

use super::common::{field, list, string};
use super::format::{is_dns1123_label, is_label_value, is_qualified_name};
use super::path::Path;
use crate::cluster::member_cluster::{MAX_MEMBER_NAME, MEMBER_NAMESPACE_PREFIX};

/// Validates a member cluster: its name is a DNS label short enough for its namespace, its
/// identity is a proper RBAC subject and its taints are well-formed and unique.
pub(crate) fn validate(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(name) = new.pointer("/metadata/name").and_then(Value::as_str) {
        if !is_dns1123_label(name) {
            errors.push(FieldError::invalid(
                "metadata.name",
                json!(name),
                "a member cluster name must be a DNS-1123 label: lower case alphanumeric \
                 characters or '-', starting and ending with an alphanumeric character \
                 (e.g. 'member-1', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ));
        } else if name.len() > MAX_MEMBER_NAME {
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                "metadata.name",
                Some(json!(name)),
                format!(
                    "may not be more than {MAX_MEMBER_NAME} bytes (the member's namespace \
                     {MEMBER_NAMESPACE_PREFIX}<name> must be a DNS label)"
                ),
            ));
        }
    }
    let spec = new.get("spec");
    let path = Path::new("spec");
    identity(
        field(spec, "identity"),
        &path.child("identity"),
        &mut errors,
    );
    let taints_path = path.child("taints");
    let taints = list(spec, "taints");
    for (i, taint) in taints.iter().enumerate() {
        let path = taints_path.index(i);
        let taint = Some(taint);
        let key = string(taint, "key").unwrap_or_default();
        if !is_qualified_name(key) {
            errors.push(FieldError::invalid(
                path.child("key"),
                json!(key),
                "must be a qualified name",
            ));
        }
        if let Some(value) = string(taint, "value")
            && !is_label_value(value)
        {
            errors.push(FieldError::invalid(
                path.child("value"),
                json!(value),
                "must be a valid label value",
            ));
        }
        let same = |t: &Value| {
            string(Some(t), "key") == Some(key) && t.get("effect") == field(taint, "effect")
        };
        if taints[..i].iter().any(same) {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                path,
                Some(json!({"key": key, "effect": field(taint, "effect")})),
                "taints must be unique by key and effect",
            ));
        }
    }
    errors
}

/// The identity is an RBAC subject: a User, Group or ServiceAccount (with a namespace).
fn identity(identity: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    match string(identity, "kind") {
        Some("ServiceAccount") => {
            if string(identity, "namespace").is_none_or(str::is_empty) {
                errors.push(FieldError::required(
                    path.child("namespace"),
                    "must be set for a ServiceAccount",
                ));
            }
        }
        Some("User" | "Group") | None => {}
        Some(other) => errors.push(FieldError::not_supported(
            path.child("kind"),
            json!(other),
            &["Group", "ServiceAccount", "User"],
        )),
    }
}
