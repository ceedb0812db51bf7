//! Pods and PodDisruptionBudgets for the tests of the budgets and the drain.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// `text` as an instant.
pub(crate) fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A Running, Ready pod `default/<name>` labelled `app=<app>`.
pub(crate) fn pod(name: &str, app: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            labels: Some([("app".to_string(), app.to_string())].into()),
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
    }
}

/// `pod` in `phase`, not Ready unless Running.
pub(crate) fn in_phase(mut pod: Pod, phase: &str) -> Pod {
    let status = pod.status.get_or_insert_default();
    status.phase = Some(phase.into());
    if phase != "Running" {
        status.conditions = None;
    }
    pod
}

/// `pod` running but not Ready.
pub(crate) fn unready(mut pod: Pod) -> Pod {
    pod.status.get_or_insert_default().conditions = None;
    pod
}

/// `pod` being deleted, to be gone at `at`.
pub(crate) fn deleting(mut pod: Pod, gone_at: &str) -> Pod {
    pod.metadata.deletion_timestamp = Some(Time(at(gone_at)));
    pod
}

/// A selector with `matchLabels`.
pub(crate) fn labels(pairs: &[(&str, &str)]) -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        match_expressions: None,
    })
}

/// A selector with one `matchExpressions` entry.
pub(crate) fn expression(key: &str, operator: &str, values: &[&str]) -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }]),
    })
}

/// A count for `minAvailable` or `maxUnavailable`.
pub(crate) fn int(n: i32) -> Option<IntOrString> {
    Some(IntOrString::Int(n))
}

/// A percentage (or any text) for `minAvailable` or `maxUnavailable`.
pub(crate) fn text(value: &str) -> Option<IntOrString> {
    Some(IntOrString::String(value.into()))
}

/// A budget `default/<name>` at generation 1.
pub(crate) fn budget(
    name: &str,
    selector: Option<LabelSelector>,
    min_available: Option<IntOrString>,
    max_unavailable: Option<IntOrString>,
) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            generation: Some(1),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            selector,
            min_available,
            max_unavailable,
            unhealthy_pod_eviction_policy: None,
        }),
        status: None,
    }
}
