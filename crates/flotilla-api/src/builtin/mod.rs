//! Core Kubernetes kinds the hub stores, described as CRDs so the generic engine serves them
//! like any other kind. Schemas come from k8s-openapi, inlined into one structural schema.

mod column;
pub(crate) mod conversion;
pub mod defaults;
mod kinds;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    JSONSchemaProps, SelectableField,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::crd::schema::finalize;
use kinds::{CORE_KINDS, CoreKind};

/// Marks the definition of a built-in kind whose objects carry no `metadata.generation`.
pub const NO_GENERATION_ANNOTATION: &str = "internal.flotilla.io/no-generation";
/// Annotation on a built-in kind's definition naming the group its objects are stored with,
/// when not its own (see `CoreKind::stored_with`).
pub const STORAGE_GROUP_ANNOTATION: &str = "internal.flotilla.io/storage-group";

/// CRD-shaped definitions of every built-in kind kube-apiserver 1.37 serves by default (its
/// storable ones), with kubectl's names, short names, categories, subresources and columns. The
/// group is `""` for the core group; the definition's name is then `<plural>`.
pub fn core_crds() -> Vec<CustomResourceDefinition> {
    CORE_KINDS.iter().map(definition).collect()
}

fn definition(kind: &CoreKind) -> CustomResourceDefinition {
    let name = if kind.group.is_empty() {
        kind.plural.to_string()
    } else {
        format!("{}.{}", kind.plural, kind.group)
    };
    let strings = |items: &[&str]| -> Option<Vec<String>> {
        (!items.is_empty()).then(|| items.iter().map(|s| s.to_string()).collect())
    };
    let subresources = (kind.status || kind.scale).then(|| CustomResourceSubresources {
        status: kind
            .status
            .then(|| CustomResourceSubresourceStatus(json!({}))),
        scale: kind.scale.then(|| CustomResourceSubresourceScale {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            // The engine prints the workload's LabelSelector (or, for a ReplicationController,
            // its label map) as the Scale's selector string, as kube-apiserver does.
            label_selector_path: Some(".spec.selector".into()),
        }),
    });
    let selectable_fields = (!kind.selectable.is_empty()).then(|| {
        kind.selectable
            .iter()
            .map(|path| SelectableField {
                json_path: path.to_string(),
            })
            .collect()
    });
    // The engine reads this to leave `metadata.generation` unset, as kube does for the kind.
    let annotations: std::collections::BTreeMap<String, String> = [
        (!kind.generation).then(|| (NO_GENERATION_ANNOTATION.to_string(), "true".to_string())),
        kind.stored_with
            .map(|group| (STORAGE_GROUP_ANNOTATION.to_string(), group.to_string())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let annotations = (!annotations.is_empty()).then_some(annotations);
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(name),
            annotations,
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: kind.group.into(),
            names: CustomResourceDefinitionNames {
                kind: kind.kind.into(),
                list_kind: Some(format!("{}List", kind.kind)),
                plural: kind.plural.into(),
                singular: Some(kind.kind.to_lowercase()),
                short_names: strings(kind.short_names),
                categories: strings(kind.categories),
            },
            scope: if kind.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
            versions: std::iter::once((kind.version, schema(kind)))
                .chain(kind.also_served.iter().map(|(version, generate)| {
                    let mut older = generate();
                    finalize(&mut older);
                    let older = serde_json::from_value(older).expect("generated schema");
                    (*version, older)
                }))
                .map(|(version, schema)| CustomResourceDefinitionVersion {
                    name: version.into(),
                    served: true,
                    storage: version == kind.version,
                    additional_printer_columns: Some(column::definitions(kind.columns)),
                    schema: Some(CustomResourceValidation {
                        open_api_v3_schema: Some(schema),
                    }),
                    selectable_fields: selectable_fields.clone(),
                    subresources: subresources.clone(),
                    deprecated: None,
                    deprecation_warning: None,
                })
                .collect(),
            conversion: None,
            preserve_unknown_fields: None,
        },
        status: None,
    }
}

/// The kind's structural schema, with the few defaults kube-apiserver's defaulting makes
/// load-bearing for the hub.
fn schema(kind: &CoreKind) -> JSONSchemaProps {
    let mut schema = (kind.schema)();
    if (kind.group, kind.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition") {
        // JSONSchemaProps is recursive; the engine validates user schemas itself.
        set(
            &mut schema,
            "/properties/spec/properties/versions/items/properties/schema/properties/openAPIV3Schema",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                   "description": "The OpenAPI v3 schema of this version (validated by the engine, stored as given)."}),
        );
    }
    finalize(&mut schema);
    match kind.kind {
        "Namespace" => set_default(
            &mut schema,
            "/properties/status/properties/phase",
            json!("Active"),
        ),
        "Deployment" | "StatefulSet" | "ReplicaSet" | "ReplicationController" => set_default(
            &mut schema,
            "/properties/spec/properties/replicas",
            json!(1),
        ),
        "Service" => set_default(
            &mut schema,
            "/properties/spec/properties/type",
            json!("ClusterIP"),
        ),
        "Secret" => set_default(&mut schema, "/properties/type", json!("Opaque")),
        _ => {}
    }
    serde_json::from_value(schema).expect("generated schema is a JSONSchemaProps")
}

fn set(schema: &mut Value, pointer: &str, value: Value) {
    let node = schema
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("schema has {pointer}"));
    *node = value;
}

fn set_default(schema: &mut Value, pointer: &str, default: Value) {
    let node = schema
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("schema has {pointer}"));
    node["default"] = default;
}
