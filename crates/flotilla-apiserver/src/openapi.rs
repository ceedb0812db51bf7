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

/// A path parameter (`{namespace}`, `{name}`), declared so that client generators and
/// schemathesis can fill it in.
fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

/// `#/components/schemas/<name>` as a reference.
fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A 200 answer of `schema`.
fn ok(schema: Value) -> Value {
    json!({"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}})
}

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";

/// The shared schemas every group-version document refers to.
fn meta_schemas() -> Map<String, Value> {
    let string = json!({"type": "string"});
    let mut schemas = Map::new();
    schemas.insert(PATCH.into(), json!({"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}));
    schemas.insert(LIST_META.into(), json!({"type": "object", "description": "ListMeta describes metadata that synthetic resources must have, including lists.",
        "properties": {"resourceVersion": string, "continue": string, "remainingItemCount": {"type": "integer", "format": "int64"}, "selfLink": string}}));
    schemas.insert(STATUS.into(), json!({"type": "object", "description": "Status is a return value for calls that don't return other objects.",
        "properties": {"apiVersion": string, "kind": string, "status": string, "message": string, "reason": string, "code": {"type": "integer", "format": "int32"},
            "details": {"type": "object"}, "metadata": schema_ref(LIST_META)},
        "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Status"}]}));
    schemas.insert(DELETE_OPTIONS.into(), json!({"type": "object", "description": "DeleteOptions may be provided when deleting an API object.",
        "properties": {"apiVersion": string, "kind": string, "dryRun": {"type": "array", "items": string}, "gracePeriodSeconds": {"type": "integer", "format": "int64"},
            "orphanDependents": {"type": "boolean"}, "propagationPolicy": string,
            "preconditions": {"type": "object", "properties": {"uid": string, "resourceVersion": string}}}}));
    schemas
}

/// The query parameters of a list (and watch) request.
fn list_params() -> Vec<Value> {
    [
        ("labelSelector", "A selector to restrict the list of returned objects by their labels."),
        ("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
        ("limit", "limit is a maximum number of responses to return for a list call."),
        ("continue", "The continue option should be set when retrieving more results from the server."),
        ("resourceVersion", "resourceVersion sets a constraint on what resource versions a request may be served from."),
        ("resourceVersionMatch", "resourceVersionMatch determines how resourceVersion is applied to list calls."),
        ("timeoutSeconds", "Timeout for the list/watch call."),
        ("watch", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications."),
        ("allowWatchBookmarks", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
        ("sendInitialEvents", "`sendInitialEvents=true` may be set together with `watch=true`."),
    ]
    .into_iter()
    .map(|(name, description)| query_param(name, description))
    .collect()
}

/// The query parameters of a write (create, update, patch).
fn write_params() -> Vec<Value> {
    vec![
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
    ]
}

/// The query parameters of a delete.
fn delete_params() -> Vec<Value> {
    [
        (
            "dryRun",
            "When present, indicates that modifications should not be persisted.",
        ),
        (
            "gracePeriodSeconds",
            "The duration in seconds before the object should be deleted.",
        ),
        (
            "orphanDependents",
            "Deprecated: please use the PropagationPolicy.",
        ),
        (
            "propagationPolicy",
            "Whether and how garbage collection will be performed.",
        ),
    ]
    .into_iter()
    .map(|(name, description)| query_param(name, description))
    .collect()
}

/// The object schema of `info`, tagged with its group, version and kind.
fn object_schema(info: &ResourceInfo, gvk: &Value) -> Value {
    let mut schema = (*info.schema).clone();
    schema["x-kubernetes-group-version-kind"] = json!([gvk]);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.entry("apiVersion").or_insert_with(|| json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}));
        props.entry("kind").or_insert_with(|| json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}));
        props.entry("metadata").or_insert_with(
            || json!({"type": "object", "description": "Standard object's metadata."}),
        );
    }
    schema
}

/// The schema of `info`'s List kind: `items` of the object schema, list metadata.
fn list_schema(info: &ResourceInfo, item: &str) -> Value {
    json!({
        "type": "object",
        "description": format!("{} is a list of {}.", info.list_kind, info.kind),
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": schema_ref(item)},
            "metadata": schema_ref(LIST_META),
        },
        "x-kubernetes-group-version-kind": [{"group": info.group, "version": info.version, "kind": info.list_kind}],
    })
}

fn group_version_document(resources: &[std::sync::Arc<ResourceInfo>]) -> Value {
    let mut paths = Map::new();
    let mut schemas = meta_schemas();
    for info in resources {
        let name = schema_name(info);
        let list_name = format!("{name}List");
        let gvk = json!({"group": info.group, "version": info.version, "kind": info.kind});
        schemas.insert(name.clone(), object_schema(info, &gvk));
        schemas.insert(list_name.clone(), list_schema(info, &name));
        let reference = schema_ref(&name);
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
            .map(|t| (t.to_string(), json!({"schema": schema_ref(PATCH)})))
            .collect();
        let mut patch_params = write_params();
        patch_params.push(query_param(
            "force",
            "Force is going to \"force\" Apply requests.",
        ));
        let body = json!({"content": {"application/json": {"schema": reference}}});
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let namespace = path_param(
            "namespace",
            "object name and auth scope, such as for teams and projects",
        );
        let object_name = path_param("name", &format!("name of the {}", info.kind));
        let (collection, collection_params) = if info.namespaced {
            (
                format!("{base}/namespaces/{{namespace}}/{}", info.plural),
                vec![namespace],
            )
        } else {
            (format!("{base}/{}", info.plural), vec![])
        };
        let mut object_params = collection_params.clone();
        object_params.push(object_name);
        let op = |action: &str, id: &str, responses: Value, extra: Value| {
            let mut o = json!({"operationId": id, "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk, "responses": responses});
            if let (Some(o), Some(extra)) = (o.as_object_mut(), extra.as_object()) {
                o.extend(extra.clone());
            }
            o
        };
        let kind = &info.kind;
        let object_ops = |suffix: &str, put: bool| {
            let what = format!("{kind}{suffix}");
            let mut ops = json!({
                "parameters": object_params,
                "get": op("get", &format!("read{what}"), ok(reference.clone()), json!({})),
                "patch": op("patch", &format!("patch{what}"), ok(reference.clone()), json!({"parameters": patch_params, "requestBody": {"content": patch_content}})),
            });
            if put {
                ops["put"] = op(
                    "put",
                    &format!("replace{what}"),
                    ok(reference.clone()),
                    json!({"parameters": write_params(), "requestBody": body}),
                );
            }
            ops
        };
        let mut object = object_ops("", true);
        object["delete"] = op(
            "delete",
            &format!("delete{kind}"),
            ok(schema_ref(STATUS)),
            json!({"parameters": delete_params(), "requestBody": {"content": {"application/json": {"schema": schema_ref(DELETE_OPTIONS)}}}}),
        );
        paths.insert(format!("{collection}/{{name}}"), object);
        if info.status_subresource {
            paths.insert(
                format!("{collection}/{{name}}/status"),
                object_ops("Status", true),
            );
        }
        let collection_delete_params = [list_params(), delete_params()].concat();
        paths.insert(
            collection.clone(),
            json!({
                "parameters": collection_params,
                "get": op("list", &format!("list{kind}"), ok(schema_ref(&list_name)), json!({"parameters": list_params()})),
                "post": op("post", &format!("create{kind}"), ok(reference.clone()), json!({"parameters": write_params(), "requestBody": body})),
                "delete": op("deletecollection", &format!("deleteCollection{kind}"), ok(schema_ref(STATUS)), json!({"parameters": collection_delete_params})),
            }),
        );
        if info.namespaced {
            paths.insert(
                format!("{base}/{}", info.plural),
                json!({"get": op("list", &format!("list{kind}ForAllNamespaces"), ok(schema_ref(&list_name)), json!({"parameters": list_params()}))}),
            );
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{}.{}.0", KUBERNETES_VERSION.0, KUBERNETES_VERSION.1)},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// Every document of a hub serving the built-in kinds.
    fn documents() -> HashMap<String, Value> {
        let registry = Registry::new(crate::hub::builtin_definitions());
        build_all(&registry.snapshot())
    }

    #[test]
    fn every_path_parameter_is_declared_and_every_reference_resolves() {
        let docs = documents();
        let core = &docs["api/v1"];
        assert!(core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"].is_object());
        for (key, doc) in docs.iter().filter(|(k, _)| !k.is_empty()) {
            let schemas = doc["components"]["schemas"].as_object().unwrap();
            for (path, item) in doc["paths"].as_object().unwrap() {
                let declared: Vec<&str> = item["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "path" && p["required"] == true)
                    .filter_map(|p| p["name"].as_str())
                    .collect();
                let used: Vec<&str> = path
                    .split('/')
                    .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                    .collect();
                assert_eq!(declared, used, "{key}: {path}");
            }
            let text = doc.to_string();
            for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
                let name = &reference[..reference.find('"').unwrap()];
                assert!(
                    schemas.contains_key(name),
                    "{key}: {name} is referred to, not defined"
                );
            }
        }
    }

    #[test]
    fn lists_answer_with_the_list_kind() {
        let docs = documents();
        let apps = &docs["apis/apps/v1"];
        let list = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"];
        let schema = &list["responses"]["200"]["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(
            schema,
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentList"
        );
        let list_schema = &apps["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentList"];
        assert_eq!(
            list_schema["properties"]["items"]["items"]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.Deployment"
        );
        assert_eq!(
            list_schema["x-kubernetes-group-version-kind"][0]["kind"],
            "DeploymentList"
        );
        let all = &apps["paths"]["/apis/apps/v1/deployments"]["get"];
        assert_eq!(all["operationId"], "listDeploymentForAllNamespaces");
        let ids: Vec<&str> = apps["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|op| op["operationId"].as_str())
            .collect();
        let unique: std::collections::HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "operation ids are unique");
    }
}
