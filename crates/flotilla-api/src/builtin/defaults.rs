//! kube-apiserver's Go defaulting of built-in kinds that a schema `default` cannot express:
//! values copied from other fields, and defaults of items inside lists (kubectl replaces a
//! list whole, so a default the server did not set shows as a change on the next apply).
//! Applied to every write of these kinds, before validation.

use serde_json::{Map, Value, json};

/// Applies the Go-side defaults of built-in kind `kind` of `group` to `obj`.
pub fn apply(group: &str, kind: &str, obj: &mut Value) {
    match (group, kind) {
        ("", "LimitRange") => limit_range(obj),
        ("discovery.k8s.io", "EndpointSlice") => endpoint_slice(obj),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => webhooks(obj, false),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => webhooks(obj, true),
        _ => {}
    }
}

/// `key: value` unless `obj` has `key`.
fn or_insert(obj: &mut Map<String, Value>, key: &str, value: Value) {
    obj.entry(key).or_insert(value);
}

/// Each Container limit: a default limit from `max`, a default request from the default
/// limit, else from `min` (kube's `SetDefaults_LimitRangeItem`).
fn limit_range(obj: &mut Value) {
    let Some(limits) = obj
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for limit in limits.iter_mut().filter_map(Value::as_object_mut) {
        if limit.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        let read = |limit: &Map<String, Value>, key: &str| {
            limit
                .get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = read(limit, "default");
        for (resource, q) in read(limit, "max") {
            default.entry(resource).or_insert(q);
        }
        let mut request = read(limit, "defaultRequest");
        for (resource, q) in default.iter().chain(read(limit, "min").iter()) {
            request.entry(resource.clone()).or_insert_with(|| q.clone());
        }
        if !default.is_empty() {
            limit.insert("default".into(), Value::Object(default));
        }
        if !request.is_empty() {
            limit.insert("defaultRequest".into(), Value::Object(request));
        }
    }
}

/// Each endpoint's conditions (empty), each port's name (empty) and protocol (TCP), as kube
/// stores them.
fn endpoint_slice(obj: &mut Value) {
    if let Some(endpoints) = obj.get_mut("endpoints").and_then(Value::as_array_mut) {
        for endpoint in endpoints.iter_mut().filter_map(Value::as_object_mut) {
            or_insert(endpoint, "conditions", json!({}));
        }
    }
    if let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            or_insert(port, "name", json!(""));
            or_insert(port, "protocol", json!("TCP"));
        }
    }
}

/// Each webhook's failure and match policies, selectors, timeout (and for mutating ones the
/// reinvocation policy), each rule's scope and a service's port (kube's
/// `SetDefaults_ValidatingWebhook`, `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`,
/// `SetDefaults_ServiceReference`).
fn webhooks(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        or_insert(hook, "failurePolicy", json!("Fail"));
        or_insert(hook, "matchPolicy", json!("Equivalent"));
        or_insert(hook, "namespaceSelector", json!({}));
        or_insert(hook, "objectSelector", json!({}));
        or_insert(hook, "timeoutSeconds", json!(10));
        if mutating {
            or_insert(hook, "reinvocationPolicy", json!("Never"));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                or_insert(rule, "scope", json!("*"));
            }
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            or_insert(service, "port", json!(443));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_limits_get_default_limits_and_requests() {
        let mut lr = json!({"spec": {"limits": [
            {"type": "Container", "default": {"cpu": "500m"}, "max": {"cpu": "1", "memory": "1Gi"}, "min": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "2"}}
        ]}});
        apply("", "LimitRange", &mut lr);
        assert_eq!(
            lr["spec"]["limits"][0],
            json!({"type": "Container", "default": {"cpu": "500m", "memory": "1Gi"},
                   "defaultRequest": {"cpu": "500m", "memory": "1Gi"},
                   "max": {"cpu": "1", "memory": "1Gi"}, "min": {"memory": "64Mi"}})
        );
        assert_eq!(
            lr["spec"]["limits"][1],
            json!({"type": "Pod", "max": {"cpu": "2"}}),
            "only containers"
        );
        let mut explicit = json!({"spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "100m"}}]}});
        apply("", "LimitRange", &mut explicit);
        assert_eq!(
            explicit["spec"]["limits"][0]["defaultRequest"],
            json!({"cpu": "100m"})
        );
    }

    #[test]
    fn endpoint_slices_get_conditions_and_port_defaults() {
        let mut e = json!({"endpoints": [{"addresses": ["10.1.2.3"]}, {"addresses": ["10.1.2.4"], "conditions": {"ready": true}}],
            "ports": [{"port": 80}]});
        apply("discovery.k8s.io", "EndpointSlice", &mut e);
        assert_eq!(e["endpoints"][0]["conditions"], json!({}));
        assert_eq!(e["endpoints"][1]["conditions"], json!({"ready": true}));
        assert_eq!(
            e["ports"][0],
            json!({"port": 80, "name": "", "protocol": "TCP"})
        );
    }

    #[test]
    fn webhooks_get_their_policies_selectors_timeout_and_rule_scope() {
        let mut m = json!({"webhooks": [{"name": "m.example.com", "failurePolicy": "Ignore",
            "clientConfig": {"service": {"name": "s", "namespace": "n"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}]});
        apply(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            &mut m,
        );
        let hook = &m["webhooks"][0];
        assert_eq!(hook["failurePolicy"], "Ignore", "kept");
        assert_eq!(hook["matchPolicy"], "Equivalent");
        assert_eq!(hook["namespaceSelector"], json!({}));
        assert_eq!(hook["objectSelector"], json!({}));
        assert_eq!(hook["timeoutSeconds"], 10);
        assert_eq!(hook["reinvocationPolicy"], "Never");
        assert_eq!(hook["rules"][0]["scope"], "*");
        assert_eq!(hook["clientConfig"]["service"]["port"], 443);
        let mut v = json!({"webhooks": [{"name": "v.example.com"}]});
        apply(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            &mut v,
        );
        assert_eq!(v["webhooks"][0]["failurePolicy"], "Fail");
        assert!(v["webhooks"][0].get("reinvocationPolicy").is_none());
    }
}
