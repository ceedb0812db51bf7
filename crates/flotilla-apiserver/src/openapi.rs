//! `/openapi/v3`: the index and one document per group-version, built from the registry.
//!
//! kubectl needs these for `apply`/`create` (it checks that PATCH accepts `fieldValidation` and
//! then lets the server validate strictly) and for `explain` (component schemas tagged with
//! `x-kubernetes-group-version-kind`).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::discovery::KUBERNETES_VERSION;
use crate::registry::{ResourceInfo, Snapshot};

/// The document at `/openapi/v3/<rest>` (empty `rest` is the index).
pub fn document(snap: &Snapshot, rest: &str) -> Option<Value> {
    let docs = snap.openapi.get_or_init(|| build_all(snap));
    docs.get(rest).cloned()
}

/// `io.k8s.api.apps.v1.Deployment`, `io.kubernetes-fleet.placement.v1beta1.ClusterResourcePlacement`.
pub fn schema_name(info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "io.k8s.api.core".to_string()
    } else if let Some(short) = info.group.strip_suffix(".k8s.io") {
        format!("io.k8s.api.{}", short.split('.').next().unwrap_or(short))
    } else if !info.group.contains('.') {
        format!("io.k8s.api.{}", info.group)
    } else {
        info.group.split('.').rev().collect::<Vec<_>>().join(".")
    };
    format!("{group}.{}.{}", info.version, info.kind)
}

fn build_all(snap: &Snapshot) -> HashMap<String, Value> {
    let mut docs = HashMap::new();
    let mut index = Map::new();
    for (group, versions) in snap.groups() {
        for version in versions {
            let resources = snap.resources_in(group, version);
            if resources.is_empty() {
                continue;
            }
            let key = if group.is_empty() {
                format!("api/{version}")
            } else {
                format!("apis/{group}/{version}")
            };
            let doc = group_version_document(&resources);
            let hash = fnv_hex(&doc.to_string());
            index.insert(
                key.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}),
            );
            docs.insert(key, doc);
        }
    }
    docs.insert(String::new(), json!({"paths": index}));
    docs
}

fn fnv_hex(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016X}")
}

fn query_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

fn group_version_document(resources: &[std::sync::Arc<ResourceInfo>]) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert("io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(), json!({"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}));
    for info in resources {
        let name = schema_name(info);
        let gvk = json!({"group": info.group, "version": info.version, "kind": info.kind});
        let mut schema = (*info.schema).clone();
        schema["x-kubernetes-group-version-kind"] = json!([gvk]);
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.entry("apiVersion").or_insert_with(|| json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}));
            props.entry("kind").or_insert_with(|| json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}));
            props.entry("metadata").or_insert_with(
                || json!({"type": "object", "description": "Standard object's metadata."}),
            );
        }
        schemas.insert(name.clone(), schema);
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let mut patch_types = vec![
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ];
        if info.is_kubernetes_kind() {
            patch_types.push("application/strategic-merge-patch+json");
        }
        let patch_content: Map<String, Value> = patch_types
            .iter()
            .map(|t| (t.to_string(), json!({"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}})))
            .collect();
        let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}});
        let write_params = vec![
            query_param(
                "dryRun",
                "When present, indicates that modifications should not be persisted.",
            ),
            query_param(
                "fieldManager",
                "fieldManager is a name associated with the actor or entity that is making these changes.",
            ),
            query_param(
                "fieldValidation",
                "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
            ),
        ];
        let mut patch_params = write_params.clone();
        patch_params.push(query_param(
            "force",
            "Force is going to \"force\" Apply requests.",
        ));
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let collection = if info.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", info.plural)
        } else {
            format!("{base}/{}", info.plural)
        };
        let op = |action: &str, extra: Value| {
            let mut o = json!({"operationId": format!("{action}{}", info.kind), "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk, "responses": ok});
            if let (Some(o), Some(extra)) = (o.as_object_mut(), extra.as_object()) {
                o.extend(extra.clone());
            }
            o
        };
        paths.insert(
            format!("{collection}/{{name}}"),
            json!({
                "get": op("get", json!({})),
                "put": op("put", json!({"parameters": write_params, "requestBody": {"content": {"application/json": {"schema": reference}}}})),
                "patch": op("patch", json!({"parameters": patch_params, "requestBody": {"content": patch_content}})),
                "delete": op("delete", json!({})),
            }),
        );
        paths.insert(
            collection,
            json!({
                "get": op("list", json!({})),
                "post": op("post", json!({"parameters": write_params, "requestBody": {"content": {"application/json": {"schema": reference}}}})),
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{}.{}.0", KUBERNETES_VERSION.0, KUBERNETES_VERSION.1)},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}
