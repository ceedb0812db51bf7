//! core/v1 Events as Kubernetes' event recorder writes them, so `kubectl describe` explains
//! what the simulated controllers did.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::actions::EventNote;
use crate::objects::{ObjectRef, time};

/// The Event recording `note` at `now`; `unique` distinguishes events recorded in the same
/// nanosecond (the recorder names events `<object>.<hex nanoseconds>`).
pub fn event(note: &EventNote, now: Timestamp, unique: u64) -> Event {
    let r = &note.regarding;
    let nanos = u64::try_from(now.as_nanosecond()).unwrap_or_default();
    let namespace = if r.namespace.is_empty() {
        "default"
    } else {
        &r.namespace
    };
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{}.{:x}", r.name, nanos.wrapping_add(unique))),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some(r.api_version.clone()),
            kind: Some(r.kind.clone()),
            namespace: (!r.namespace.is_empty()).then(|| r.namespace.clone()),
            name: Some(r.name.clone()),
            uid: Some(r.uid.clone()),
            ..Default::default()
        },
        reason: Some(note.reason.clone()),
        message: Some(note.message.clone()),
        type_: Some(note.kind.as_str().to_string()),
        source: Some(EventSource {
            component: Some(note.component.to_string()),
            host: None,
        }),
        reporting_component: Some(note.component.to_string()),
        reporting_instance: Some(String::new()),
        first_timestamp: Some(time(now)),
        last_timestamp: Some(time(now)),
        count: Some(1),
        ..Default::default()
    }
}

/// The component that reports on objects of `kind` (`ReplicaSet` → `replicaset-controller`).
pub fn controller_component(kind: &str) -> &'static str {
    match kind {
        "Deployment" => "deployment-controller",
        "ReplicaSet" => "replicaset-controller",
        "StatefulSet" => "statefulset-controller",
        "DaemonSet" => "daemonset-controller",
        "Job" => "job-controller",
        _ => "kube-controller-manager",
    }
}

/// `SuccessfulCreate` as the owner's controller reports creating pod `pod`.
pub fn created_pod(owner: &ObjectRef, pod: &str) -> EventNote {
    let message = if owner.kind == "StatefulSet" {
        format!("create Pod {pod} in StatefulSet {} successful", owner.name)
    } else {
        format!("Created pod: {pod}")
    };
    EventNote::normal(
        controller_component(&owner.kind),
        owner.clone(),
        "SuccessfulCreate",
        message,
    )
}

/// `SuccessfulDelete` as the owner's controller reports deleting pod `pod`.
pub fn deleted_pod(owner: &ObjectRef, pod: &str) -> EventNote {
    let message = if owner.kind == "StatefulSet" {
        format!("delete Pod {pod} in StatefulSet {} successful", owner.name)
    } else {
        format!("Deleted pod: {pod}")
    };
    EventNote::normal(
        controller_component(&owner.kind),
        owner.clone(),
        "SuccessfulDelete",
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(kind: &str) -> ObjectRef {
        ObjectRef {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            namespace: "shop".into(),
            name: "web".into(),
            uid: "u1".into(),
        }
    }

    #[test]
    fn messages_follow_each_controller() {
        assert_eq!(
            created_pod(&owner("ReplicaSet"), "web-x").message,
            "Created pod: web-x"
        );
        assert_eq!(
            created_pod(&owner("StatefulSet"), "web-0").message,
            "create Pod web-0 in StatefulSet web successful"
        );
        assert_eq!(
            deleted_pod(&owner("StatefulSet"), "web-2").message,
            "delete Pod web-2 in StatefulSet web successful"
        );
        let note = deleted_pod(&owner("DaemonSet"), "web-y");
        assert_eq!(
            (note.reason.as_str(), note.component, note.message.as_str()),
            (
                "SuccessfulDelete",
                "daemonset-controller",
                "Deleted pod: web-y"
            )
        );
    }

    #[test]
    fn events_name_and_describe_their_object() {
        let now: Timestamp = "2026-01-01T00:00:00.5Z".parse().unwrap();
        let e = event(&created_pod(&owner("ReplicaSet"), "web-x"), now, 1);
        assert_eq!(
            e.metadata.name.as_deref(),
            Some(format!("web.{:x}", now.as_nanosecond() + 1).as_str())
        );
        assert_eq!(e.metadata.namespace.as_deref(), Some("shop"));
        assert_eq!(e.involved_object.kind.as_deref(), Some("ReplicaSet"));
        assert_eq!(e.involved_object.uid.as_deref(), Some("u1"));
        assert_eq!(e.type_.as_deref(), Some("Normal"));
        assert_eq!(e.count, Some(1));
        assert_eq!(
            e.first_timestamp.unwrap().0,
            "2026-01-01T00:00:00Z".parse().unwrap()
        );
        let mut node = owner("Node");
        node.namespace.clear();
        let e = event(&created_pod(&node, "x"), now, 0);
        assert_eq!(e.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(e.involved_object.namespace, None);
    }
}
