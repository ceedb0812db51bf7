//! Computed cells of the built-in kinds' Tables: what kube-apiserver's Go table printers show
//! that no JSONPath can express (counts, `ready/total`, ports, selectors, pod and node status).
//!
//! A built-in kind's printer column names one in its `jsonPath` as `printer:NAME` or
//! `printer:NAME:ARGS` (the registry drops such columns from user CRDs: that is no valid
//! JSONPath). Each printer is a pure function of the object (and the clock, for ages).

use jiff::Timestamp;
use serde_json::Value;

use super::{age, eval_json_path};
use crate::selector::selector_text;

/// The marker of a computed column's `jsonPath`.
pub const PREFIX: &str = "printer:";

/// A built-in kind's own `Name` column, wherever its table puts it.
pub const NAME_COLUMN: &str = "printer:name";

/// The cell a `printer:` column shows for `obj`.
pub fn cell(spec: &str, obj: &Value, now: Timestamp) -> Value {
    let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
    let text = |s: String| Value::String(s);
    match name {
        "age" => text(age(
            obj.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            now,
        )),
        "count" => Value::from(args.split(',').map(|p| count(first(p, obj))).sum::<usize>()),
        "count-text" => text(
            args.split(',')
                .map(|p| count(first(p, obj)))
                .sum::<usize>()
                .to_string(),
        ),
        "ratio" => {
            let (a, b) = args.split_once(',').unwrap_or((args, args));
            text(format!("{}/{}", int(first(a, obj)), int(first(b, obj))))
        }
        "int" => text(int(first(args, obj)).to_string()),
        "name" => text(
            obj.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        "text" | "name-of" => text(
            first(args, obj)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        "since" => text(match first(args, obj).and_then(Value::as_str) {
            Some(t) => age(t, now),
            None => "<unknown>".to_string(),
        }),
        "object" => text(object_ref(first(args, obj), false)),
        "object-lower" => text(object_ref(first(args, obj), true)),
        "condition" => match condition(obj, args) {
            Some(status) => Value::Bool(status == "True"),
            None => Value::Bool(false),
        },
        "job-status" => text(job_status(obj)),
        "join" => text(or_none(join(all(args, obj)))),
        // A LabelSelector or a plain label map (node selector, quota, pod labels).
        "selector" | "labels" => text(or_none(selector(first(args, obj)))),
        "pod-ready" => text(pod_ready(obj)),
        "pod-restarts" => text(restarts(obj).to_string()),
        "pod-status" => text(pod_status(obj)),
        "node-status" => text(node_status(obj)),
        "node-roles" => text(or_none(node_roles(obj))),
        "service-ports" => text(or_none(service_ports(obj))),
        "external-ip" => text(external_ip(obj)),
        _ => Value::Null,
    }
}

/// The first value a JSONPath finds, if any.
fn first<'a>(path: &str, obj: &'a Value) -> Option<&'a Value> {
    let pointer = format!("/{}", path.trim_start_matches('.').replace('.', "/"));
    obj.pointer(&pointer)
}

/// Every value a JSONPath (with `[*]`) finds.
fn all(path: &str, obj: &Value) -> Vec<Value> {
    eval_json_path(path, obj).unwrap_or_default()
}

/// `Kind/name` of an object reference (`kind/name` for events, as kube prints them).
fn object_ref(v: Option<&Value>, lower: bool) -> String {
    let Some(r) = v else {
        return "<none>".to_string();
    };
    let kind = r["kind"].as_str().unwrap_or_default();
    let kind = if lower {
        kind.to_lowercase()
    } else {
        kind.to_string()
    };
    format!("{kind}/{}", r["name"].as_str().unwrap_or_default())
}

/// The status of the condition of `type_`, if the object has it.
fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?
        .get("status")?
        .as_str()
}

/// A Job's state: `Complete`, `Failed`, `Suspended`, `Terminating` or `Running`.
fn job_status(obj: &Value) -> String {
    for state in [
        "Complete",
        "Failed",
        "Suspended",
        "FailureTarget",
        "SuccessCriteriaMet",
    ] {
        if condition(obj, state) == Some("True") {
            return state.to_string();
        }
    }
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return "Terminating".to_string();
    }
    "Running".to_string()
}

fn count(v: Option<&Value>) -> usize {
    match v {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

fn int(v: Option<&Value>) -> i64 {
    v.and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s
    }
}

fn join(values: Vec<Value>) -> String {
    values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A LabelSelector (or a plain label map) as kube prints it; empty for anything else.
fn selector(v: Option<&Value>) -> String {
    v.filter(|v| v.is_object())
        .and_then(selector_text)
        .unwrap_or_default()
}

fn statuses(obj: &Value) -> &[Value] {
    obj.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ready/total` containers.
fn pod_ready(obj: &Value) -> String {
    let total = obj
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let ready = statuses(obj)
        .iter()
        .filter(|s| s["ready"].as_bool() == Some(true))
        .count();
    format!("{ready}/{total}")
}

fn restarts(obj: &Value) -> i64 {
    statuses(obj)
        .iter()
        .filter_map(|s| s["restartCount"].as_i64())
        .sum()
}

/// The pod's status as `kubectl get pods` shows it: `Terminating` while deleted, a waiting or
/// terminated container's reason, else the pod's reason or phase.
fn pod_status(obj: &Value) -> String {
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return "Terminating".to_string();
    }
    for s in statuses(obj) {
        if let Some(reason) = s.pointer("/state/waiting/reason").and_then(Value::as_str) {
            return reason.to_string();
        }
        if let Some(reason) = s
            .pointer("/state/terminated/reason")
            .and_then(Value::as_str)
            && obj.pointer("/status/phase").and_then(Value::as_str) != Some("Running")
        {
            return reason.to_string();
        }
    }
    obj.pointer("/status/reason")
        .or_else(|| obj.pointer("/status/phase"))
        .and_then(Value::as_str)
        .unwrap_or("Pending")
        .to_string()
}

/// `Ready`, `NotReady` or `Unknown`, then `,SchedulingDisabled` when cordoned.
fn node_status(obj: &Value) -> String {
    let ready = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str());
    let mut status = match ready {
        Some("True") => "Ready",
        Some("False") => "NotReady",
        _ => "Unknown",
    }
    .to_string();
    if obj.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    status
}

/// Roles from `node-role.kubernetes.io/<role>` labels (and `kubernetes.io/role`), sorted.
fn node_roles(obj: &Value) -> String {
    let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) else {
        return String::new();
    };
    let mut roles: Vec<&str> = labels
        .iter()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            _ if k == "kubernetes.io/role" => v.as_str(),
            _ => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    roles.join(",")
}

/// `80/TCP,443:30443/TCP`.
fn service_ports(obj: &Value) -> String {
    let Some(ports) = obj.pointer("/spec/ports").and_then(Value::as_array) else {
        return String::new();
    };
    ports
        .iter()
        .map(|p| {
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(node) => format!("{}:{node}/{protocol}", int(p.get("port"))),
                None => format!("{}/{protocol}", int(p.get("port"))),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A Service's external addresses: load balancer ingress, else `externalIPs`; `<pending>` for
/// a LoadBalancer without one, `<none>` otherwise.
fn external_ip(obj: &Value) -> String {
    let mut ips: Vec<String> = obj
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|i| i["ip"].as_str().or_else(|| i["hostname"].as_str()))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(external) = obj.pointer("/spec/externalIPs").and_then(Value::as_array) {
        ips.extend(external.iter().filter_map(Value::as_str).map(String::from));
    }
    if !ips.is_empty() {
        return ips.join(",");
    }
    match obj.pointer("/spec/type").and_then(Value::as_str) {
        Some("LoadBalancer") => "<pending>".to_string(),
        Some("ExternalName") => obj
            .pointer("/spec/externalName")
            .and_then(Value::as_str)
            .unwrap_or("<none>")
            .to_string(),
        _ => "<none>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-01-01T00:10:00Z".parse().unwrap()
    }

    #[test]
    fn counts_ratios_and_joins() {
        let cm = json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cell("count-text:.data,.binaryData", &cm, now()), json!("3"));
        assert_eq!(cell("count:.webhooks", &json!({}), now()), json!(0));
        let d = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}},
            "status": {"readyReplicas": 2}});
        assert_eq!(
            cell("ratio:.status.readyReplicas,.spec.replicas", &d, now()),
            json!("2/3")
        );
        assert_eq!(cell("int:.status.updatedReplicas", &d, now()), json!("0"));
        assert_eq!(
            cell("join:.spec.template.spec.containers[*].image", &d, now()),
            json!("x,y")
        );
        let created = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(cell("age", &created, now()), json!("10m"));
    }

    #[test]
    fn references_conditions_and_jobs() {
        let hpa = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}}});
        assert_eq!(
            cell("object:.spec.scaleTargetRef", &hpa, now()),
            json!("Deployment/web")
        );
        let ev = json!({"involvedObject": {"kind": "Pod", "name": "p"}, "lastTimestamp": "2026-01-01T00:09:00Z"});
        assert_eq!(
            cell("object-lower:.involvedObject", &ev, now()),
            json!("pod/p")
        );
        assert_eq!(cell("since:.lastTimestamp", &ev, now()), json!("60s"));
        assert_eq!(
            cell("since:.firstTimestamp", &ev, now()),
            json!("<unknown>")
        );
        let crd = json!({"status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert_eq!(cell("condition:Established", &crd, now()), json!(true));
        assert_eq!(cell("condition:NamesAccepted", &crd, now()), json!(false));
        let done = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(cell("job-status", &done, now()), json!("Complete"));
        assert_eq!(cell("job-status", &json!({}), now()), json!("Running"));
    }

    #[test]
    fn selectors_and_label_maps() {
        let d = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}});
        assert_eq!(cell("selector:.spec.selector", &d, now()), json!("app=web"));
        let rc = json!({"spec": {"selector": {"b": "2", "a": "1"}}});
        assert_eq!(
            cell("selector:.spec.selector", &rc, now()),
            json!("a=1,b=2")
        );
        assert_eq!(
            cell("labels:.spec.nodeSelector", &json!({}), now()),
            json!("<none>")
        );
    }

    #[test]
    fn pods_show_readiness_restarts_and_status() {
        let pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "restartCount": 1}, {"ready": false, "restartCount": 2,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(cell("pod-ready", &pod, now()), json!("1/2"));
        assert_eq!(cell("pod-restarts", &pod, now()), json!("3"));
        assert_eq!(cell("pod-status", &pod, now()), json!("CrashLoopBackOff"));
        let done = json!({"status": {"phase": "Succeeded", "containerStatuses": [
            {"state": {"terminated": {"reason": "Completed"}}}]}});
        assert_eq!(cell("pod-status", &done, now()), json!("Completed"));
        let going = json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running"}});
        assert_eq!(cell("pod-status", &going, now()), json!("Terminating"));
        assert_eq!(cell("pod-status", &json!({}), now()), json!("Pending"));
    }

    #[test]
    fn nodes_show_status_and_roles() {
        let node = json!({"metadata": {"labels": {"node-role.kubernetes.io/control-plane": "",
                "node-role.kubernetes.io/worker": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(
            cell("node-status", &node, now()),
            json!("Ready,SchedulingDisabled")
        );
        assert_eq!(
            cell("node-roles", &node, now()),
            json!("control-plane,worker")
        );
        assert_eq!(cell("node-status", &json!({}), now()), json!("Unknown"));
        assert_eq!(cell("node-roles", &json!({}), now()), json!("<none>"));
    }

    #[test]
    fn services_show_ports_and_external_addresses() {
        let svc = json!({"spec": {"type": "LoadBalancer", "ports": [
            {"port": 80, "protocol": "TCP"}, {"port": 443, "nodePort": 30443}]}});
        assert_eq!(
            cell("service-ports", &svc, now()),
            json!("80/TCP,443:30443/TCP")
        );
        assert_eq!(cell("external-ip", &svc, now()), json!("<pending>"));
        let cluster_ip = json!({"spec": {"type": "ClusterIP"}});
        assert_eq!(cell("external-ip", &cluster_ip, now()), json!("<none>"));
        assert_eq!(cell("service-ports", &cluster_ip, now()), json!("<none>"));
    }
}
