//! Fixtures shared by the override tests: override snapshots, manifests and clusters.

use std::collections::BTreeMap;

use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use flotilla_placement::overrides::ClusterView;
use serde_json::{Value, json};

/// The placement every test renders for.
pub const PLACEMENT: &str = "crp-example";

/// Labels of a latest snapshot with `index` of override `name`.
fn labels(name: &str, index: u32, latest: bool) -> Value {
    json!({
        "kubernetes-fleet.io/parent-resource-override": name,
        "kubernetes-fleet.io/override-index": index.to_string(),
        "kubernetes-fleet.io/is-latest-snapshot": latest.to_string(),
    })
}

/// The latest snapshot (index 0) of the ClusterResourceOverride `name` with `spec`.
pub fn cro(name: &str, spec: Value) -> ClusterResourceOverrideSnapshot {
    cro_at(name, 0, true, spec)
}

/// Snapshot `index` of the ClusterResourceOverride `name`, latest or not.
pub fn cro_at(
    name: &str,
    index: u32,
    latest: bool,
    spec: Value,
) -> ClusterResourceOverrideSnapshot {
    serde_json::from_value(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourceOverrideSnapshot",
        "metadata": {"name": format!("{name}-{index}"), "labels": labels(name, index, latest)},
        "spec": {"overrideSpec": spec, "overrideHash": "h"}
    }))
    .expect("ClusterResourceOverrideSnapshot")
}

/// The latest snapshot (index 0) of the ResourceOverride `namespace/name` with `spec`.
pub fn ro(namespace: &str, name: &str, spec: Value) -> ResourceOverrideSnapshot {
    serde_json::from_value(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourceOverrideSnapshot",
        "metadata": {"name": format!("{name}-0"), "namespace": namespace, "labels": labels(name, 0, true)},
        "spec": {"overrideSpec": spec, "overrideHash": "h"}
    }))
    .expect("ResourceOverrideSnapshot")
}

/// A ClusterResourceOverride spec selecting `selectors` with `rules`.
pub fn cro_spec(selectors: Value, rules: Value) -> Value {
    json!({"clusterResourceSelectors": selectors, "policy": {"overrideRules": rules}})
}

/// A ResourceOverride spec selecting `selectors` with `rules`.
pub fn ro_spec(selectors: Value, rules: Value) -> Value {
    json!({"resourceSelectors": selectors, "policy": {"overrideRules": rules}})
}

/// A cluster selector with one term matching `key=value`.
pub fn on(key: &str, value: &str) -> Value {
    json!({"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {key: value}}}]})
}

/// A JSON patch rule for the clusters `selector` selects.
pub fn patch_rule(selector: Value, operations: Value) -> Value {
    json!({"clusterSelector": selector, "jsonPatchOverrides": operations})
}

/// A Delete rule for the clusters `selector` selects.
pub fn delete_rule(selector: Value) -> Value {
    json!({"clusterSelector": selector, "overrideType": "Delete"})
}

/// The ClusterResourceOverride of the KubeFleet-style example
/// (`flotilla-api/src/tests/fixtures/cluster-resource-override.yaml`), as JSON.
pub fn example_cro() -> ClusterResourceOverrideSnapshot {
    cro(
        "example-cro",
        json!({
            "placement": {"name": PLACEMENT},
            "clusterResourceSelectors": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "version": "v1", "name": "secret-reader"}],
            "policy": {"overrideRules": [
                {
                    "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
                    "jsonPatchOverrides": [
                        {"op": "remove", "path": "/rules/0/verbs/2"},
                        {"op": "add", "path": "/metadata/annotations", "value": {"fleet.example.com/placed-on": "${MEMBER-CLUSTER-NAME}"}}
                    ]
                },
                {
                    "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "test"}}}]},
                    "overrideType": "Delete"
                }
            ]}
        }),
    )
}

/// The ResourceOverride of the KubeFleet-style example
/// (`flotilla-api/src/tests/fixtures/resource-override.yaml`), as JSON.
pub fn example_ro() -> ResourceOverrideSnapshot {
    ro(
        "test-namespace",
        "example-ro",
        json!({
            "placement": {"name": PLACEMENT},
            "resourceSelectors": [{"group": "apps", "kind": "Deployment", "version": "v1", "name": "test-nginx"}],
            "policy": {"overrideRules": [
                {
                    "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
                    "jsonPatchOverrides": [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.20.0"}]
                },
                {
                    "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchExpressions": [{"key": "region", "operator": "Exists"}]}}]},
                    "jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels/region", "value": "${MEMBER-CLUSTER-LABEL-KEY-region}"}]
                },
                {
                    "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "test"}}}]},
                    "overrideType": "Delete"
                }
            ]}
        }),
    )
}

/// The ClusterRole the example ClusterResourceOverride selects.
pub fn secret_reader() -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "secret-reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "watch", "list"]}]
    })
}

/// A Namespace.
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// A Deployment with one nginx container.
pub fn deployment(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": 2,
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2"}]}}
        }
    })
}

/// A ConfigMap.
pub fn config_map(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"key": "value"}
    })
}

/// A member cluster's name and labels.
pub struct Member {
    name: String,
    labels: BTreeMap<String, String>,
}

/// A member cluster named `name` with `labels`.
pub fn member(name: &str, labels: &[(&str, &str)]) -> Member {
    Member {
        name: name.to_string(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

impl Member {
    /// The view rendering reads.
    pub fn view(&self) -> ClusterView<'_> {
        ClusterView {
            name: &self.name,
            labels: &self.labels,
        }
    }
}
