//! Validation kube-apiserver applies to built-in kinds beyond their schemas, for the rules that
//! keep a fleet safe: ConfigMap and Secret payloads bounded at 1 MiB, and workloads whose
//! selector must select their own pod template.

use base64::Engine as _;
use flotilla_apimachinery::selector::from_label_selector_json;
use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

/// kube's `MaxSecretSize`, which bounds ConfigMaps too: 1 MiB.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

fn too_long(field: &str) -> FieldError {
    FieldError::new(
        FieldErrorType::TooLong,
        field,
        None,
        format!("must have at most {MAX_PAYLOAD_BYTES} bytes"),
    )
}

/// A ConfigMap's keys and values (binaryData decoded) together within 1 MiB.
pub fn validate_config_map(cm: &Value) -> Vec<FieldError> {
    let mut size = 0usize;
    if let Some(data) = cm["data"].as_object() {
        size += data
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum::<usize>();
    }
    if let Some(binary) = cm["binaryData"].as_object() {
        size += binary
            .iter()
            .map(|(k, v)| k.len() + decoded_len(v))
            .sum::<usize>();
    }
    if size > MAX_PAYLOAD_BYTES {
        // kube reports the whole object (its root path prints as `[]`).
        vec![too_long("[]")]
    } else {
        Vec::new()
    }
}

/// A Secret's decoded values together within 1 MiB.
pub fn validate_secret(secret: &Value) -> Vec<FieldError> {
    let size: usize = secret["data"]
        .as_object()
        .map(|d| d.values().map(decoded_len).sum())
        .unwrap_or(0);
    if size > MAX_PAYLOAD_BYTES {
        vec![too_long("data")]
    } else {
        Vec::new()
    }
}

fn decoded_len(v: &Value) -> usize {
    let text = v.as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_or(text.len(), |bytes| bytes.len())
}

/// A Deployment's, ReplicaSet's, StatefulSet's or DaemonSet's selector must be non-empty and
/// select the labels of its own pod template.
pub fn validate_workload_selector(workload: &Value) -> Vec<FieldError> {
    let selector = &workload["spec"]["selector"];
    let labels = workload
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let empty = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.is_empty())
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(|e| e.is_empty());
    if selector.is_null() {
        return Vec::new(); // the schema reports the missing required selector
    }
    if empty {
        return vec![FieldError::invalid(
            "spec.selector",
            selector.clone(),
            "empty selector is invalid for deployment",
        )];
    }
    match from_label_selector_json(selector) {
        Ok(parsed) if !parsed.matches(&labels) => vec![FieldError::invalid(
            "spec.template.metadata.labels",
            json!(labels),
            "`selector` does not match template `labels`",
        )],
        _ => Vec::new(),
    }
}

/// A ReplicationController's selector (a label map, defaulted from the template when absent)
/// must select its template's labels.
pub fn validate_replication_controller(rc: &Value) -> Vec<FieldError> {
    let Some(selector) = rc.pointer("/spec/selector").and_then(Value::as_object) else {
        return Vec::new();
    };
    let labels = rc
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let matches = selector
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
    if matches {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            "spec.template.metadata.labels",
            json!(labels),
            "`selector` does not match template `labels`",
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_bounded_at_one_mebibyte() {
        let at = json!({"data": {"k": "x".repeat(MAX_PAYLOAD_BYTES - 1)}});
        assert!(validate_config_map(&at).is_empty());
        let over = json!({"data": {"k": "x".repeat(MAX_PAYLOAD_BYTES)}});
        assert_eq!(validate_config_map(&over)[0].field, "[]");
        let binary = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_PAYLOAD_BYTES]);
        let mixed = json!({"data": {"a": "b"}, "binaryData": {"bin": binary}});
        assert_eq!(validate_config_map(&mixed).len(), 1);
        let secret = json!({"data": {"k": base64::engine::general_purpose::STANDARD.encode(vec![1u8; MAX_PAYLOAD_BYTES + 1])}});
        assert_eq!(validate_secret(&secret)[0].field, "data");
        assert!(validate_secret(&json!({"data": {"k": "eA=="}})).is_empty());
    }

    #[test]
    fn workload_selectors_must_select_their_template() {
        let ok = json!({"spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a", "tier": "x"}}}}});
        assert!(validate_workload_selector(&ok).is_empty());
        let mismatch = json!({"spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "b"}}}}});
        let errs = validate_workload_selector(&mismatch);
        assert_eq!(errs[0].field, "spec.template.metadata.labels");
        let empty =
            json!({"spec": {"selector": {}, "template": {"metadata": {"labels": {"app": "b"}}}}});
        assert_eq!(validate_workload_selector(&empty)[0].field, "spec.selector");
        let rc_bad = json!({"spec": {"selector": {"a": "1"}, "template": {"metadata": {"labels": {"a": "2"}}}}});
        assert_eq!(validate_replication_controller(&rc_bad).len(), 1);
        let rc_ok = json!({"spec": {"selector": {"a": "1"}, "template": {"metadata": {"labels": {"a": "1"}}}}});
        assert!(validate_replication_controller(&rc_ok).is_empty());
    }
}
