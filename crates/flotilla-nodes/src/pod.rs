//! What the node controllers read off a Kubernetes pod: its key, phase, readiness, owners and
//! annotations — shared by the scheduler's model, the disruption candidates, the
//! PodDisruptionBudget arithmetic and the drain.

use k8s_openapi::api::core::v1::Pod;

/// A pod's `namespace/name`, the key every decision names it by.
pub fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The pod's `status.phase` (`Pending` if unset, as the API server defaults it).
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending")
}

/// Whether the pod has finished: `Succeeded` or `Failed`.
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Whether the pod's `Ready` condition is `True` (`podutil.IsPodReady`).
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Whether an owner reference of the pod has kind `kind`.
pub fn owned_by(pod: &Pod, kind: &str) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.kind == kind)
}

/// The pod's annotation `name`, if set.
pub fn annotation<'a>(pod: &'a Pod, name: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(name))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    #[test]
    fn reads_key_phase_readiness_owners_and_annotations() {
        let pod = Pod {
            metadata: ObjectMeta {
                namespace: Some("default".into()),
                name: Some("web-1".into()),
                owner_references: Some(vec![OwnerReference {
                    kind: "ReplicaSet".into(),
                    ..Default::default()
                }]),
                annotations: Some([("a".to_string(), "b".to_string())].into()),
                ..Default::default()
            },
            status: Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(key(&pod), "default/web-1");
        assert_eq!(phase(&pod), "Running");
        assert!(is_ready(&pod) && !is_terminal(&pod));
        assert!(owned_by(&pod, "ReplicaSet") && !owned_by(&pod, "DaemonSet"));
        assert_eq!(annotation(&pod, "a"), Some("b"));
        assert_eq!(annotation(&pod, "c"), None);

        let bare = Pod::default();
        assert_eq!((key(&bare).as_str(), phase(&bare)), ("/", "Pending"));
        assert!(!is_ready(&bare) && !is_terminal(&bare));
    }
}
