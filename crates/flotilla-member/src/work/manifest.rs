//! What of a manifest counts: the view of an object that comparisons and the spec hash see,
//! and the clean copy of a manifest the agent writes.
//!
//! Both follow KubeFleet (`discardFieldsIrrelevantInComparisonFrom` and
//! `sanitizeManifestObject`): system metadata, `status`, owner references, managed fields and
//! reserved labels and annotations never count, so that the agent's own bookkeeping (its owner
//! reference, spec hash and last-applied annotation) and the member's (UIDs, generations,
//! defaulted system labels) are never mistaken for drift.

use serde_json::{Map, Value};

/// The field manager the agent writes with (KubeFleet's).
pub const FIELD_MANAGER: &str = "work-api-agent";

/// Annotation holding the hash of the manifest last applied, so that drift checks can tell a
/// member-side change (drift) from a hub-side change (a new manifest to apply).
pub const SPEC_HASH_ANNOTATION: &str = "kubernetes-fleet.io/spec-hash";

/// Annotation holding the manifest last applied with client-side apply: the base of the next
/// three-way merge.
pub const LAST_APPLIED_ANNOTATION: &str = "kubernetes-fleet.io/last-applied-configuration";

/// kubectl's last-applied annotation, dropped from manifests (it describes the hub copy).
const KUBECTL_LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Kubernetes' limit on the total size of an object's annotations (keys plus values).
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// Label and annotation keys containing one of these are reserved for Kubernetes and Fleet and
/// never compared (KubeFleet matches them anywhere in the key, so `app.kubernetes.io/name` is
/// ignored too).
const RESERVED_KEY_PARTS: [&str; 3] = ["kubernetes.io/", "k8s.io/", "kubernetes-fleet.io/"];

/// Metadata the API server owns: never compared and never written.
const SYSTEM_METADATA: [&str; 9] = [
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// The view of `object` that comparisons and the spec hash see: without `status`, the
/// system metadata, `metadata.name`/`namespace`/`generateName` (equal by construction),
/// finalizers, and reserved labels and annotations; label and annotation maps left empty are
/// dropped.
pub fn comparable(object: &Value) -> Value {
    let mut view = object.clone();
    let Some(fields) = view.as_object_mut() else {
        return view;
    };
    fields.remove("status");
    if let Some(metadata) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in
            SYSTEM_METADATA
                .iter()
                .chain(&["name", "namespace", "generateName", "finalizers"])
        {
            metadata.remove(*field);
        }
        for map in ["labels", "annotations"] {
            if let Some(entries) = metadata.get_mut(map).and_then(Value::as_object_mut) {
                entries.retain(|key, _| !RESERVED_KEY_PARTS.iter().any(|part| key.contains(part)));
                if entries.is_empty() {
                    metadata.remove(map);
                }
            }
        }
    }
    view
}

/// The manifest's spec hash: FNV-1a (64-bit, hex) of the canonical JSON (keys sorted) of its
/// [`comparable`] view. KubeFleet uses SHA-256; any stable hash serves, as only this agent
/// reads the annotation back.
pub fn spec_hash(manifest: &Value) -> String {
    flotilla_apimachinery::canonical::fnv_hash(&comparable(manifest))
}

/// The manifest as the agent writes it: without `status`, system metadata (owner references
/// included: the agent adds its own), and the agent's and kubectl's bookkeeping annotations.
pub(crate) fn sanitized(manifest: &Value) -> Value {
    let mut object = manifest.clone();
    if let Some(fields) = object.as_object_mut() {
        fields.remove("status");
        if let Some(metadata) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in SYSTEM_METADATA {
                metadata.remove(field);
            }
            if let Some(annotations) = metadata
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
            {
                for key in [
                    SPEC_HASH_ANNOTATION,
                    LAST_APPLIED_ANNOTATION,
                    KUBECTL_LAST_APPLIED_ANNOTATION,
                ] {
                    annotations.remove(key);
                }
                if annotations.is_empty() {
                    metadata.remove("annotations");
                }
            }
        }
    }
    object
}

/// The annotation `key` of `object`, if set.
pub(crate) fn annotation<'v>(object: &'v Value, key: &str) -> Option<&'v str> {
    object.pointer("/metadata/annotations")?.get(key)?.as_str()
}

/// Sets the annotation `key` on `object` (a JSON object), creating the maps it needs.
pub(crate) fn set_annotation(object: &mut Value, key: &str, value: String) {
    if let Some(annotations) = metadata_map(object, "annotations") {
        annotations.insert(key.to_owned(), Value::String(value));
    }
}

/// Records `object` (a [`sanitized`] manifest, so without the annotation) as its own
/// last-applied configuration, as client-side apply does. Returns false, leaving the
/// annotation empty, when it would push the annotations past Kubernetes' size limit; the
/// caller then falls back to server-side apply, as KubeFleet does.
pub(crate) fn record_last_applied(object: &mut Value) -> bool {
    let configuration = object.to_string();
    set_annotation(object, LAST_APPLIED_ANNOTATION, configuration);
    let size: usize = object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .map_or(0, |annotations| {
            annotations
                .iter()
                .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
                .sum()
        });
    if size <= ANNOTATIONS_SIZE_LIMIT {
        return true;
    }
    set_annotation(object, LAST_APPLIED_ANNOTATION, String::new());
    false
}

/// `metadata.<field>` of `object` as a map, created when absent; `None` if `object` or
/// `metadata` is not a JSON object.
fn metadata_map<'v>(object: &'v mut Value, field: &str) -> Option<&'v mut Map<String, Value>> {
    let metadata = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    let entry = metadata
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live_config_map() -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "cfg", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["f"], "managedFields": [{"manager": "m"}],
                "ownerReferences": [{"kind": "AppliedWork", "name": "w", "uid": "a"}],
                "labels": {"app": "shop", "app.kubernetes.io/name": "shop"},
                "annotations": {SPEC_HASH_ANNOTATION: "x", "note": "hi"}
            },
            "data": {"k": "v"},
            "status": {"anything": true}
        })
    }

    #[test]
    fn comparable_view_drops_bookkeeping() {
        assert_eq!(
            comparable(&live_config_map()),
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"labels": {"app": "shop"}, "annotations": {"note": "hi"}},
                "data": {"k": "v"}
            })
        );
        let only_reserved = json!({"metadata": {"labels": {"k8s.io/x": "1"}, "annotations": {}}});
        assert_eq!(comparable(&only_reserved), json!({"metadata": {}}));
    }

    #[test]
    fn sanitized_keeps_identity_and_user_fields() {
        assert_eq!(
            sanitized(&live_config_map()),
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {
                    "name": "cfg", "namespace": "shop", "finalizers": ["f"],
                    "labels": {"app": "shop", "app.kubernetes.io/name": "shop"},
                    "annotations": {"note": "hi"}
                },
                "data": {"k": "v"}
            })
        );
        let only_bookkeeping =
            json!({"metadata": {"annotations": {KUBECTL_LAST_APPLIED_ANNOTATION: "{}"}}});
        assert_eq!(sanitized(&only_bookkeeping), json!({"metadata": {}}));
    }

    #[test]
    fn spec_hash_ignores_key_order_and_bookkeeping_only() {
        let a =
            json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "1", "b": "2"}});
        let b = json!({"data": {"b": "2", "a": "1"}, "kind": "ConfigMap",
                       "metadata": {"name": "a", "uid": "x",
                                    "annotations": {SPEC_HASH_ANNOTATION: "old"}}});
        let c =
            json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "1", "b": "3"}});
        assert_eq!(spec_hash(&a), spec_hash(&b));
        assert_ne!(spec_hash(&a), spec_hash(&c));
        assert_eq!(spec_hash(&a).len(), 16);
    }

    #[test]
    fn last_applied_records_the_object_unless_too_large() {
        let mut small = json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
        assert!(record_last_applied(&mut small));
        let recorded: Value =
            serde_json::from_str(annotation(&small, LAST_APPLIED_ANNOTATION).unwrap()).unwrap();
        assert_eq!(
            recorded,
            json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}})
        );

        let mut large = json!({"kind": "ConfigMap", "metadata": {"name": "a"},
                               "data": {"k": "x".repeat(ANNOTATIONS_SIZE_LIMIT)}});
        assert!(!record_last_applied(&mut large));
        assert_eq!(annotation(&large, LAST_APPLIED_ANNOTATION), Some(""));
    }
}
