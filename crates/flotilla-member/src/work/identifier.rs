//! Naming a Work's manifests with KubeFleet's `WorkResourceIdentifier`
//! (`{ordinal, group, version, kind, resource, namespace, name}`), and the per-manifest errors
//! of manifests that cannot be applied at all.
//!
//! `resource` (the plural) is derived as kube-rs derives it for
//! [`ApiResource::from_gvk`]: the lowercase kind plus `s`, with the English rules kube-rs applies
//! (`-es` after s/x/z/ch/sh, `-ies` after a consonant and `y`, `endpoints` unchanged). That
//! gives the right plural for every built-in kind (kube-rs tests it against Kubernetes'
//! swagger) and is the URL the agent's kube client uses, so the identifier and the request can
//! never disagree; a CRD with an irregular plural needs discovery, which the shell has.

use flotilla_api::placement::work::WorkResourceIdentifier;
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;

/// Why a manifest cannot be applied, with what could be read of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("manifest {} ({}): {problem}", identifier.ordinal, describe(identifier))]
pub struct ManifestError {
    /// Everything that could be read of the manifest (at least its ordinal).
    pub identifier: WorkResourceIdentifier,
    /// What is wrong with it.
    pub problem: ManifestProblem,
}

/// What is wrong with a manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestProblem {
    /// The manifest is not a JSON object.
    #[error("the manifest is not a JSON object")]
    NotAnObject,
    /// A required field (`apiVersion`, `kind`, `metadata.name`) is absent, empty or not a
    /// string.
    #[error("{0} is missing")]
    Missing(&'static str),
    /// `apiVersion` is neither `VERSION` nor `GROUP/VERSION`.
    #[error("apiVersion {0:?} is not VERSION or GROUP/VERSION")]
    InvalidApiVersion(String),
    /// `metadata.generateName` is set: the agent could not find the object again, so KubeFleet
    /// refuses such manifests.
    #[error("metadata.generateName {0:?} is set; objects with generated names cannot be placed")]
    GenerateName(String),
    /// An earlier manifest (this ordinal) already names the same object.
    #[error("manifest {0} already places the same object (group, kind, namespace and name)")]
    Duplicate(i32),
}

/// Identifies the manifest at `ordinal`, or says why it cannot be applied.
///
/// The checks are KubeFleet's decoding checks plus a required name: a JSON object with
/// `apiVersion` `VERSION` or `GROUP/VERSION`, a `kind`, no `metadata.generateName` (rejected
/// even next to a name, as KubeFleet does) and a `metadata.name`.
pub fn identify(
    ordinal: usize,
    manifest: &Value,
) -> Result<WorkResourceIdentifier, Box<ManifestError>> {
    let identifier = best_effort(ordinal, manifest);
    let fail = |problem| {
        Err(Box::new(ManifestError {
            identifier: identifier.clone(),
            problem,
        }))
    };
    if !manifest.is_object() {
        return fail(ManifestProblem::NotAnObject);
    }
    let Some(api_version) = text(manifest, "/apiVersion") else {
        return fail(ManifestProblem::Missing("apiVersion"));
    };
    if split_api_version(api_version).is_none() {
        return fail(ManifestProblem::InvalidApiVersion(api_version.to_owned()));
    }
    if text(manifest, "/kind").is_none() {
        return fail(ManifestProblem::Missing("kind"));
    }
    if let Some(generate_name) = text(manifest, "/metadata/generateName") {
        return fail(ManifestProblem::GenerateName(generate_name.to_owned()));
    }
    if text(manifest, "/metadata/name").is_none() {
        return fail(ManifestProblem::Missing("metadata.name"));
    }
    Ok(identifier)
}

/// Whether two identifiers name the same member object: same group, kind, namespace and name,
/// whatever the version (a manifest moving to another version of its kind keeps its object).
pub(crate) fn same_target(a: &WorkResourceIdentifier, b: &WorkResourceIdentifier) -> bool {
    (&a.group, &a.kind, &a.namespace, &a.name) == (&b.group, &b.kind, &b.namespace, &b.name)
}

/// The plural resource name of `kind` (see the module docs).
pub fn plural(group: &str, version: &str, kind: &str) -> String {
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)).plural
}

/// Whatever can be read of a manifest: fields that are absent or malformed stay empty.
fn best_effort(ordinal: usize, manifest: &Value) -> WorkResourceIdentifier {
    let (group, version) = text(manifest, "/apiVersion")
        .and_then(split_api_version)
        .unwrap_or_default();
    let kind = text(manifest, "/kind").unwrap_or_default();
    let resource = if kind.is_empty() {
        String::new()
    } else {
        plural(group, version, kind)
    };
    WorkResourceIdentifier {
        ordinal: i32::try_from(ordinal).unwrap_or(i32::MAX),
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
        resource,
        namespace: text(manifest, "/metadata/namespace")
            .unwrap_or_default()
            .to_owned(),
        name: text(manifest, "/metadata/name")
            .unwrap_or_default()
            .to_owned(),
    }
}

/// `GROUP/VERSION` → (group, version); `VERSION` → ("", version); anything else → `None`.
fn split_api_version(api_version: &str) -> Option<(&str, &str)> {
    match api_version.split_once('/') {
        None => Some(("", api_version)),
        Some((group, version))
            if !group.is_empty() && !version.is_empty() && !version.contains('/') =>
        {
            Some((group, version))
        }
        Some(_) => None,
    }
}

/// The non-empty string at `pointer`.
fn text<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `apps/v1 Deployment web/api` (or as much of it as is known) for error messages.
pub(crate) fn describe(id: &WorkResourceIdentifier) -> String {
    let group_version = if id.group.is_empty() {
        id.version.clone()
    } else {
        format!("{}/{}", id.group, id.version)
    };
    let name = if id.namespace.is_empty() {
        id.name.clone()
    } else {
        format!("{}/{}", id.namespace, id.name)
    };
    [group_version, id.kind.clone(), name]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifies_core_and_grouped_kinds() {
        let id = identify(
            3,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "namespace": "shop"}}),
        )
        .unwrap();
        assert_eq!(
            id,
            WorkResourceIdentifier {
                ordinal: 3,
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                resource: "deployments".into(),
                namespace: "shop".into(),
                name: "web".into(),
            }
        );
        let ns = identify(
            0,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        )
        .unwrap();
        assert_eq!(
            (ns.group.as_str(), ns.resource.as_str()),
            ("", "namespaces")
        );
        assert_eq!(ns.namespace, "");
    }

    #[test]
    fn plurals_follow_kube_rules() {
        for (kind, resource) in [
            ("Ingress", "ingresses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Endpoints", "endpoints"),
            ("PriorityClass", "priorityclasses"),
            ("CustomResourceDefinition", "customresourcedefinitions"),
            ("Gateway", "gateways"),
            ("Proxy", "proxies"),
            ("Widget", "widgets"),
        ] {
            assert_eq!(plural("g", "v1", kind), resource, "{kind}");
        }
    }

    #[test]
    fn rejects_each_malformed_manifest_with_its_problem() {
        let cases = [
            (json!("text"), ManifestProblem::NotAnObject),
            (
                json!({"kind": "ConfigMap", "metadata": {"name": "a"}}),
                ManifestProblem::Missing("apiVersion"),
            ),
            (
                json!({"apiVersion": "a/b/c", "kind": "ConfigMap", "metadata": {"name": "a"}}),
                ManifestProblem::InvalidApiVersion("a/b/c".into()),
            ),
            (
                json!({"apiVersion": "/v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
                ManifestProblem::InvalidApiVersion("/v1".into()),
            ),
            (
                json!({"apiVersion": "v1", "metadata": {"name": "a"}}),
                ManifestProblem::Missing("kind"),
            ),
            (
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ""}}),
                ManifestProblem::Missing("metadata.name"),
            ),
            (
                json!({"apiVersion": "v1", "kind": "ConfigMap"}),
                ManifestProblem::Missing("metadata.name"),
            ),
            (
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "a", "generateName": "a-"}}),
                ManifestProblem::GenerateName("a-".into()),
            ),
        ];
        for (manifest, problem) in cases {
            let error = identify(7, &manifest).unwrap_err();
            assert_eq!(error.problem, problem, "{manifest}");
            assert_eq!(error.identifier.ordinal, 7);
        }
    }

    #[test]
    fn errors_name_the_manifest() {
        let error = identify(
            2,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "shop"}}),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "manifest 2 (apps/v1 Deployment shop/): metadata.name is missing"
        );
        assert_eq!(error.identifier.resource, "deployments");
    }
}
