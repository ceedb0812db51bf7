//! `/openapi/v2`: the Swagger 2.0 document kubectl still reads, in the gnostic protobuf form it
//! asks for, to validate the items of a `kind: List` file client-side (`kubectl get -o yaml`
//! writes one; `kubectl apply -f` of it needs this) and for `kubectl apply`'s patch metadata.
//! Served as JSON to clients that ask for JSON.
//!
//! One definition per served kind and version, named as in `/openapi/v3` and tagged with
//! `x-kubernetes-group-version-kind`, converted from the served OpenAPI v3 schema the way
//! kubectl's validator reads it: objects with their properties and required fields, maps,
//! arrays and primitives; what v2 cannot say (int-or-string, preserved unknown fields) becomes
//! a schema of no type, which accepts any value, so a client never refuses what the server
//! accepts. Paths are not listed (clients read them from discovery and `/openapi/v3`).

use serde_json::{Map, Value, json};

use crate::discovery::KUBERNETES_VERSION;
use crate::openapi::schema_name;
use crate::registry::Snapshot;

/// The media type of the protobuf form (kubectl asks for its `@v1.0` spelling).
pub const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The document of `snap`, as JSON and as protobuf (built once per snapshot).
pub fn served(snap: &Snapshot) -> &(bytes::Bytes, bytes::Bytes) {
    snap.openapi_v2.get_or_init(|| {
        let doc = swagger(snap);
        let json = serde_json::to_vec(&doc).unwrap_or_default();
        (json.into(), protobuf(&doc).into())
    })
}

/// The document as Swagger 2.0 JSON.
pub fn swagger(snap: &Snapshot) -> Value {
    let mut definitions = Map::new();
    for info in snap.all_resources() {
        let mut schema = v2_schema(&info.schema);
        schema["x-kubernetes-group-version-kind"] =
            json!([{"group": info.group, "version": info.version, "kind": info.kind}]);
        definitions.insert(schema_name(&info), schema);
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v{}.{}.0", KUBERNETES_VERSION.0, KUBERNETES_VERSION.1)},
        "paths": {},
        "definitions": definitions,
    })
}

/// A served OpenAPI v3 (structural) schema as a Swagger 2.0 schema kubectl validates with.
fn v2_schema(v3: &Value) -> Value {
    let mut out = Map::new();
    let untyped = v3["x-kubernetes-int-or-string"] == true
        || v3["x-kubernetes-preserve-unknown-fields"] == true;
    if let Some(extensions) = v3.as_object() {
        for (key, value) in extensions
            .iter()
            .filter(|(k, _)| k.starts_with("x-kubernetes-"))
        {
            out.insert(key.clone(), value.clone());
        }
    }
    if untyped {
        return Value::Object(out);
    }
    if let Some(t) = v3["type"].as_str() {
        out.insert("type".into(), json!(t));
    }
    for key in ["format", "enum", "required"] {
        if let Some(v) = v3.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(properties) = v3["properties"].as_object() {
        let converted: Map<String, Value> = properties
            .iter()
            .map(|(name, schema)| (name.clone(), v2_schema(schema)))
            .collect();
        out.insert("properties".into(), Value::Object(converted));
    }
    match &v3["additionalProperties"] {
        Value::Bool(b) => {
            out.insert("additionalProperties".into(), json!(b));
        }
        schema @ Value::Object(_) => {
            out.insert("additionalProperties".into(), v2_schema(schema));
        }
        _ => {}
    }
    if v3["items"].is_object() {
        out.insert("items".into(), v2_schema(&v3["items"]));
    }
    Value::Object(out)
}

/// The Swagger document `doc` as gnostic's `openapi.v2.Document` protobuf message.
pub fn protobuf(doc: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, doc["swagger"].as_str().unwrap_or("2.0"));
    let mut info = Vec::new();
    string(
        &mut info,
        1,
        doc["info"]["title"].as_str().unwrap_or_default(),
    );
    string(
        &mut info,
        2,
        doc["info"]["version"].as_str().unwrap_or_default(),
    );
    message(&mut out, 2, &info);
    message(&mut out, 8, &[]);
    let mut definitions = Vec::new();
    for (name, schema) in doc["definitions"].as_object().into_iter().flatten() {
        message(&mut definitions, 1, &named_schema(name, schema));
    }
    message(&mut out, 9, &definitions);
    out
}

/// `openapi.v2.NamedSchema`: a name and a schema.
fn named_schema(name: &str, schema: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, name);
    message(&mut out, 2, &schema_message(schema));
    out
}

/// `openapi.v2.Schema`, from the fields [`v2_schema`] writes.
fn schema_message(schema: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(format) = schema["format"].as_str() {
        string(&mut out, 2, format);
    }
    for required in schema["required"].as_array().into_iter().flatten() {
        string(&mut out, 19, required.as_str().unwrap_or_default());
    }
    for value in schema["enum"].as_array().into_iter().flatten() {
        message(&mut out, 20, &any(value));
    }
    match &schema["additionalProperties"] {
        Value::Bool(b) => {
            let mut item = Vec::new();
            key(&mut item, 2, 0);
            varint(&mut item, u64::from(*b));
            message(&mut out, 21, &item);
        }
        additional @ Value::Object(_) => {
            let mut item = Vec::new();
            message(&mut item, 1, &schema_message(additional));
            message(&mut out, 21, &item);
        }
        _ => {}
    }
    if let Some(t) = schema["type"].as_str() {
        let mut item = Vec::new();
        string(&mut item, 1, t);
        message(&mut out, 22, &item);
    }
    if schema["items"].is_object() {
        let mut item = Vec::new();
        message(&mut item, 1, &schema_message(&schema["items"]));
        message(&mut out, 23, &item);
    }
    if let Some(properties) = schema["properties"].as_object() {
        let mut item = Vec::new();
        for (name, property) in properties {
            message(&mut item, 1, &named_schema(name, property));
        }
        message(&mut out, 25, &item);
    }
    for (name, value) in schema
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("x-"))
    {
        let mut named = Vec::new();
        string(&mut named, 1, name);
        message(&mut named, 2, &any(value));
        message(&mut out, 31, &named);
    }
    out
}

/// `openapi.v2.Any` holding `value` as YAML (JSON is YAML).
fn any(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 2, &value.to_string());
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn message(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    message(out, field, s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn document() -> Value {
        swagger(&Registry::new(crate::hub::builtin_definitions()).snapshot())
    }

    #[test]
    fn kinds_are_defined_with_their_group_version_kind_and_open_ends_accept_anything() {
        let doc = document();
        let deployment = &doc["definitions"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"][0]["kind"],
            "Deployment"
        );
        let spec = &deployment["properties"]["spec"];
        assert_eq!(spec["properties"]["replicas"]["type"], "integer");
        assert_eq!(spec["required"], json!(["selector", "template"]));
        // maxSurge is an int-or-string: no type, so any value passes.
        let surge = &spec["properties"]["strategy"]["properties"]["rollingUpdate"]["properties"]["maxSurge"];
        assert!(surge.get("type").is_none(), "{surge}");
        let labels = &deployment["properties"]["metadata"]["properties"]["labels"];
        assert_eq!(labels["additionalProperties"]["type"], "string");
        assert!(
            doc["definitions"]
                .as_object()
                .unwrap()
                .contains_key("io.kubernetes-fleet.placement.v1beta1.ClusterResourcePlacement")
        );
    }

    #[test]
    fn the_protobuf_form_carries_every_definition() {
        let doc = document();
        let bytes = protobuf(&doc);
        // Field 1 is the version string; every definition name appears in the message.
        assert_eq!(&bytes[..5], b"\x0a\x032.0");
        let text = String::from_utf8_lossy(&bytes);
        for name in doc["definitions"].as_object().unwrap().keys() {
            assert!(text.contains(name.as_str()), "{name} missing");
        }
        assert!(text.contains("x-kubernetes-group-version-kind"));
    }
}
