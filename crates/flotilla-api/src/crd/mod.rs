//! Turning derived CRDs into the definitions the engine serves: the second served version,
//! a self-contained structural schema, and the metadata schemars cannot emit.

pub(crate) mod cel;
pub(crate) mod schema;
pub(crate) mod twin;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceSubresourceStatus, CustomResourceSubresources,
    JSONSchemaProps,
};

/// The version most fleet kinds are also served at, next to the derived (storage) version.
const EXTRA_VERSION: &str = "v1";

/// Finishes a CRD derived with `#[derive(CustomResource)]` at `v1beta1` (see [`finished`])
/// and serves it at `v1` too with the same schema and columns (only `v1beta1` is the storage
/// version, as in KubeFleet).
pub(crate) fn served_versions(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let mut crd = finished(crd);
    let mut extra = crd.spec.versions[0].clone();
    extra.name = EXTRA_VERSION.to_string();
    extra.storage = false;
    crd.spec.versions.insert(0, extra);
    crd
}

/// Finishes a CRD derived with `#[derive(CustomResource)]` at `v1beta1`, served at that one
/// version: makes its schema self-contained and structural and gives it a status subresource.
/// For the kinds KubeFleet serves at `v1beta1` only (the namespaced snapshots and bindings).
pub(crate) fn finished(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        if let Some(validation) = version.schema.as_mut()
            && let Some(props) = validation.open_api_v3_schema.take()
        {
            validation.open_api_v3_schema = Some(finish_custom_schema(props));
        }
        let subresources = version
            .subresources
            .get_or_insert_with(CustomResourceSubresources::default);
        subresources
            .status
            .get_or_insert_with(|| CustomResourceSubresourceStatus(serde_json::json!({})));
        version.served = true;
        version.storage = true;
    }
    crd
}

/// Rewrites a derived root schema into the shape controller-gen emits: self-contained,
/// structural, with `apiVersion`, `kind` and `metadata` declared at the root.
fn finish_custom_schema(props: JSONSchemaProps) -> JSONSchemaProps {
    let mut value = serde_json::to_value(props).expect("JSONSchemaProps serializes");
    schema::finalize(&mut value);
    schema::strip_list_item_defaults(&mut value, false);
    schema::declare_type_meta(&mut value);
    serde_json::from_value(value).expect("finalized schema is a JSONSchemaProps")
}
