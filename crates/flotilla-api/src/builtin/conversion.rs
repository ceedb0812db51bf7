//! Conversion between the served shapes of a built-in kind:
//! - HorizontalPodAutoscaler, stored as `autoscaling/v2` and also served as `autoscaling/v1`
//!   (`kubectl autoscale` writes v1). As kube-apiserver does, what v1 cannot say (metrics other
//!   than CPU, behavior, conditions) travels in `autoscaling.alpha` annotations, so a v2 object
//!   read and written back through v1 loses nothing.
//! - Event, stored as a core `v1` Event and also served as `events.k8s.io/v1`, whose fields
//!   are the same under other names (`note` is `message`, `regarding` is `involvedObject`,
//!   `deprecatedCount` is `count`, …): one resource in two shapes, as in kube-apiserver, so
//!   `kubectl events` and `kubectl describe` see what either API wrote.

use serde_json::{Map, Value, json};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// kube's CPU utilization target when an HPA names no metric.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// Converts `obj` (of `kind`, in whatever group and version its `apiVersion` says) to
/// `group`/`version`, in place. Kinds whose versions share one shape only get their
/// `apiVersion` rewritten.
pub fn convert(group: &str, kind: &str, obj: &mut Value, version: &str) {
    let from = obj["apiVersion"].as_str().unwrap_or_default().to_string();
    let from_version = from.rsplit('/').next().unwrap_or_default();
    if (group, kind) == ("autoscaling", "HorizontalPodAutoscaler") {
        match (from_version, version) {
            ("v1", "v2") => hpa_v1_to_v2(obj),
            ("v2", "v1") => hpa_v2_to_v1(obj),
            _ => {}
        }
    }
    if kind == "Event" {
        match (from.as_str(), group) {
            ("v1", "events.k8s.io") => rename_event_fields(obj, CORE_TO_EVENTS),
            ("events.k8s.io/v1", "") => rename_event_fields(obj, EVENTS_TO_CORE),
            _ => {}
        }
    }
    obj["apiVersion"] = Value::String(if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    });
}

/// A core Event's fields and their `events.k8s.io/v1` names (kube's conversion); fields
/// not listed (`reason`, `type`, `action`, `related`, `eventTime`, `series`,
/// `reportingInstance`, `metadata`) have one name in both.
const CORE_TO_EVENTS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

/// [`CORE_TO_EVENTS`] the other way.
const EVENTS_TO_CORE: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Moves each `from` field of an Event to its `to` name.
fn rename_event_fields(obj: &mut Value, names: &[(&str, &str)]) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let moved: Vec<(&str, Value)> = names
        .iter()
        .filter_map(|(from, to)| map.remove(*from).map(|v| (*to, v)))
        .collect();
    for (to, value) in moved {
        map.insert(to.to_string(), value);
    }
}

fn is_cpu_utilization(metric: &Value) -> bool {
    metric["type"] == "Resource"
        && metric.pointer("/resource/name") == Some(&json!("cpu"))
        && metric.pointer("/resource/target/type") == Some(&json!("Utilization"))
}

fn annotations(obj: &mut Value) -> &mut Map<String, Value> {
    let meta = obj
        .as_object_mut()
        .expect("an object")
        .entry("metadata")
        .or_insert_with(|| json!({}));
    let annotations = meta
        .as_object_mut()
        .expect("metadata is an object")
        .entry("annotations")
        .or_insert_with(|| json!({}));
    annotations.as_object_mut().expect("annotations are a map")
}

/// Drops `metadata.annotations` when conversion emptied it.
fn tidy_annotations(obj: &mut Value) {
    if let Some(meta) = obj["metadata"].as_object_mut()
        && meta
            .get("annotations")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        meta.remove("annotations");
    }
}

/// Parses and removes a JSON annotation.
fn take_json(obj: &mut Value, key: &str) -> Option<Value> {
    let text = annotations(obj).remove(key)?;
    serde_json::from_str(text.as_str()?).ok()
}

fn put_json(obj: &mut Value, key: &str, value: &Value) {
    annotations(obj).insert(key.into(), Value::String(value.to_string()));
}

fn hpa_v1_to_v2(obj: &mut Value) {
    let mut metrics: Vec<Value> = Vec::new();
    if let Some(cpu) = obj.pointer("/spec/targetCPUUtilizationPercentage").cloned() {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": cpu}}}));
    }
    if let Some(Value::Array(more)) = take_json(obj, METRICS) {
        metrics.extend(more);
    }
    if metrics.is_empty() {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}));
    }
    let behavior = take_json(obj, BEHAVIOR);
    let conditions = take_json(obj, CONDITIONS);
    let extra_current = take_json(obj, CURRENT_METRICS);
    tidy_annotations(obj);
    if let Some(spec) = obj["spec"].as_object_mut() {
        spec.remove("targetCPUUtilizationPercentage");
        spec.insert("metrics".into(), Value::Array(metrics));
        if let Some(b) = behavior {
            spec.insert("behavior".into(), b);
        }
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        let mut current: Vec<Value> = Vec::new();
        if let Some(cpu) = status.remove("currentCPUUtilizationPercentage") {
            current.push(json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": cpu}}}));
        }
        if let Some(Value::Array(more)) = extra_current {
            current.extend(more);
        }
        if !current.is_empty() {
            status.insert("currentMetrics".into(), Value::Array(current));
        }
        if let Some(c) = conditions {
            status.insert("conditions".into(), c);
        }
    }
}

fn hpa_v2_to_v1(obj: &mut Value) {
    let metrics = obj
        .pointer_mut("/spec")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.remove("metrics"))
        .and_then(|m| m.as_array().cloned())
        .unwrap_or_default();
    let behavior = obj
        .pointer_mut("/spec")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.remove("behavior"));
    let (cpu, other): (Vec<Value>, Vec<Value>) = metrics.into_iter().partition(is_cpu_utilization);
    if let Some(target) = cpu
        .first()
        .and_then(|m| m.pointer("/resource/target/averageUtilization").cloned())
        && let Some(spec) = obj["spec"].as_object_mut()
    {
        spec.insert("targetCPUUtilizationPercentage".into(), target);
    }
    if !other.is_empty() {
        put_json(obj, METRICS, &Value::Array(other));
    }
    if let Some(b) = behavior {
        put_json(obj, BEHAVIOR, &b);
    }
    let status = obj
        .get_mut("status")
        .and_then(Value::as_object_mut)
        .map(|status| {
            let current = status
                .remove("currentMetrics")
                .and_then(|m| m.as_array().cloned())
                .unwrap_or_default();
            let conditions = status.remove("conditions");
            let (cpu, other): (Vec<Value>, Vec<Value>) = current.into_iter().partition(|m| {
                m["type"] == "Resource" && m.pointer("/resource/name") == Some(&json!("cpu"))
            });
            if let Some(now) = cpu
                .first()
                .and_then(|m| m.pointer("/resource/current/averageUtilization").cloned())
            {
                status.insert("currentCPUUtilizationPercentage".into(), now);
            }
            (other, conditions)
        });
    if let Some((other, conditions)) = status {
        if !other.is_empty() {
            put_json(obj, CURRENT_METRICS, &Value::Array(other));
        }
        if let Some(c) = conditions {
            put_json(obj, CONDITIONS, &c);
        }
    }
    tidy_annotations(obj);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_core_event_is_an_events_k8s_io_event_under_other_names_and_back() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "involvedObject": {"kind": "Deployment", "name": "web"},
            "reason": "ScalingReplicaSet", "message": "Scaled up to 3", "type": "Normal",
            "source": {"component": "deployment-controller"}, "count": 2,
            "firstTimestamp": "2026-11-28T10:00:00Z", "lastTimestamp": "2026-11-28T10:05:00Z",
            "reportingComponent": "deployment-controller", "reportingInstance": "cm-1",
        });
        let mut events = core.clone();
        convert("events.k8s.io", "Event", &mut events, "v1");
        assert_eq!(events["apiVersion"], "events.k8s.io/v1");
        assert_eq!(events["note"], "Scaled up to 3");
        assert_eq!(events["regarding"]["name"], "web");
        assert_eq!(events["deprecatedCount"], 2);
        assert_eq!(
            events["deprecatedSource"]["component"],
            "deployment-controller"
        );
        assert_eq!(events["reportingController"], "deployment-controller");
        assert_eq!(events["reason"], "ScalingReplicaSet");
        assert!(events.get("message").is_none() && events.get("involvedObject").is_none());
        let mut back = events;
        convert("", "Event", &mut back, "v1");
        assert_eq!(back, core, "nothing is lost either way");
    }

    use super::*;
    use proptest::prelude::*;

    fn v1(cpu: Option<i64>) -> Value {
        let mut hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 5}});
        if let Some(cpu) = cpu {
            hpa["spec"]["targetCPUUtilizationPercentage"] = json!(cpu);
        }
        hpa
    }

    #[test]
    fn v1_cpu_target_becomes_a_v2_resource_metric() {
        let mut hpa = v1(Some(70));
        convert("autoscaling", "HorizontalPodAutoscaler", &mut hpa, "v2");
        assert_eq!(hpa["apiVersion"], "autoscaling/v2");
        assert_eq!(
            hpa["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70}}}])
        );
        assert!(hpa["spec"].get("targetCPUUtilizationPercentage").is_none());
        assert!(hpa["metadata"].get("annotations").is_none());
        let mut no_target = v1(None);
        convert(
            "autoscaling",
            "HorizontalPodAutoscaler",
            &mut no_target,
            "v2",
        );
        assert_eq!(
            no_target["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
    }

    #[test]
    fn what_v1_cannot_say_rides_in_annotations_and_comes_back() {
        let v2 = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {"keep": "me"}},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}}},
            "status": {"currentReplicas": 2, "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}],
                "conditions": [{"type": "AbleToScale", "status": "True"}]}});
        let mut as_v1 = v2.clone();
        convert("autoscaling", "HorizontalPodAutoscaler", &mut as_v1, "v1");
        assert_eq!(as_v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(as_v1["status"]["currentCPUUtilizationPercentage"], 40);
        assert!(as_v1["metadata"]["annotations"][METRICS].is_string());
        assert!(as_v1["status"].get("conditions").is_none());
        let mut back = as_v1;
        convert("autoscaling", "HorizontalPodAutoscaler", &mut back, "v2");
        assert_eq!(back, v2);
    }

    #[test]
    fn other_kinds_only_change_api_version() {
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        convert("", "ConfigMap", &mut cm, "v1");
        assert_eq!(
            cm,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})
        );
    }

    proptest! {
        #[test]
        fn any_v1_cpu_target_survives_a_round_trip(cpu in 1i64..100, min in 1i64..5) {
            let mut hpa = v1(Some(cpu));
            hpa["spec"]["minReplicas"] = json!(min);
            let original = hpa.clone();
            convert("autoscaling", "HorizontalPodAutoscaler", &mut hpa, "v2");
            convert("autoscaling", "HorizontalPodAutoscaler", &mut hpa, "v1");
            prop_assert_eq!(hpa, original);
        }
    }
}
