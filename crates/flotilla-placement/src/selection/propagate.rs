//! Which hub objects are placed as they are, and what of them is stripped first.

use serde_json::{Map, Value};

/// Annotation `kubectl apply` leaves on objects; it describes the hub copy, not the placed one.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether a selected object is placed. Objects made by a controller (with owner references)
/// are left to the member's own controllers, objects being deleted are not placed again, and
/// the objects every namespace gets on its own (the `kube-root-ca.crt` ConfigMap, the
/// `default` ServiceAccount and service-account token Secrets) would collide with the
/// member's.
pub fn should_place(object: &Value) -> bool {
    let metadata = &object["metadata"];
    if metadata["deletionTimestamp"].is_string() {
        return false;
    }
    if metadata["ownerReferences"]
        .as_array()
        .is_some_and(|owners| !owners.is_empty())
    {
        return false;
    }
    let name = metadata["name"].as_str().unwrap_or_default();
    match (object["apiVersion"].as_str(), object["kind"].as_str()) {
        (Some("v1"), Some("ConfigMap")) => name != "kube-root-ca.crt",
        (Some("v1"), Some("ServiceAccount")) => name != "default",
        (Some("v1"), Some("Secret")) => {
            object["type"].as_str() != Some("kubernetes.io/service-account-token")
        }
        _ => true,
    }
}

/// The object as it is placed: without what the hub's API server set (identity, versions,
/// timestamps, field ownership, status) and without what the member's API server will set
/// itself (a Service's cluster IPs and node ports, a Job's generated selector).
pub fn placeable_copy(object: &Value) -> Value {
    let mut copy = object.clone();
    let Some(fields) = copy.as_object_mut() else {
        return copy;
    };
    fields.remove("status");
    if let Some(metadata) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "selfLink",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "ownerReferences",
            "finalizers",
        ] {
            metadata.remove(field);
        }
        remove_from_map(metadata, "annotations", LAST_APPLIED);
    }
    let api_version = fields.get("apiVersion").and_then(Value::as_str);
    let kind = fields.get("kind").and_then(Value::as_str);
    match (api_version, kind) {
        (Some("v1"), Some("Service")) => strip_service(fields),
        (Some("batch/v1"), Some("Job")) => strip_job(fields),
        _ => {}
    }
    copy
}

/// Removes `key` from the map at `metadata[field]`, and the map itself if that empties it.
fn remove_from_map(metadata: &mut Map<String, Value>, field: &str, key: &str) {
    if let Some(map) = metadata.get_mut(field).and_then(Value::as_object_mut) {
        map.remove(key);
        if map.is_empty() {
            metadata.remove(field);
        }
    }
}

/// Drops the addresses and ports the member allocates for a Service.
fn strip_service(fields: &mut Map<String, Value>) {
    let Some(spec) = fields.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.remove("clusterIP");
    spec.remove("clusterIPs");
    spec.remove("healthCheckNodePort");
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.remove("nodePort");
        }
    }
}

/// Drops the selector and labels the API server generated for a Job without
/// `manualSelector`: the member generates its own, with its own uid.
fn strip_job(fields: &mut Map<String, Value>) {
    let Some(spec) = fields.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    spec.remove("selector");
    let labels = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("metadata"))
        .and_then(Value::as_object_mut);
    if let Some(metadata) = labels {
        for key in [
            "controller-uid",
            "batch.kubernetes.io/controller-uid",
            "job-name",
            "batch.kubernetes.io/job-name",
        ] {
            remove_from_map(metadata, "labels", key);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn controller_made_deleting_and_per_namespace_objects_are_not_placed() {
        let owned = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "ownerReferences": [{"kind": "Deployment", "name": "web"}]}});
        let deleting = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}});
        let root_ca = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt"}});
        let default_sa =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
        let token = json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "t"}});
        for object in [owned, deleting, root_ca, default_sa, token] {
            assert!(!should_place(&object), "{object}");
        }
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "ownerReferences": []}});
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "app"}});
        assert!(should_place(&config));
        assert!(should_place(&sa));
    }

    #[test]
    fn server_fields_and_member_allocations_are_stripped() {
        let service = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "app", "uid": "u", "resourceVersion": "7",
                "generation": 1, "creationTimestamp": "t", "managedFields": [], "finalizers": ["x"],
                "labels": {"app": "web"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"],
                "ports": [{"port": 80, "nodePort": 30080}], "selector": {"app": "web"}},
            "status": {"loadBalancer": {}}
        });
        assert_eq!(
            placeable_copy(&service),
            json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "app", "labels": {"app": "web"}},
                "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}
            })
        );
    }

    #[test]
    fn generated_job_selectors_are_stripped_but_manual_ones_kept() {
        let job = |manual: bool| {
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"manualSelector": manual, "selector": {"matchLabels": {"controller-uid": "u"}},
                    "template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "j", "app": "x"}}}}})
        };
        let generated = placeable_copy(&job(false));
        assert_eq!(generated["spec"].get("selector"), None);
        assert_eq!(
            generated["spec"]["template"]["metadata"]["labels"],
            json!({"app": "x"})
        );
        assert_eq!(placeable_copy(&job(true)), job(true));
    }
}
