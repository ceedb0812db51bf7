//! PodDisruptionBudget arithmetic (`policy/v1`), as Kubernetes' disruption controller computes
//! a budget's status and as the Eviction API enforces it.
//!
//! - **Selection.** A budget selects the pods of its namespace that its `spec.selector`
//!   matches (`matchLabels` and `matchExpressions` In/NotIn/Exists/DoesNotExist). An empty
//!   selector (`{}`) selects every pod of the namespace, as `policy/v1` does; an absent (null)
//!   selector selects none.
//! - **Counts.** `currentHealthy` counts the selected pods that run, are Ready and are not being
//!   deleted. With `minAvailable` as a count, `expectedPods` is the number of selected pods and
//!   `desiredHealthy` the count. With `minAvailable` as a percentage or with `maxUnavailable`,
//!   Kubernetes sums the scale of the pods' controllers; Flotilla has no scale subresource to
//!   ask, so `expectedPods` is the number of selected pods that have not finished (a pod being
//!   deleted still counts, as its controller's scale usually still does). The percentage is of
//!   `expectedPods`, rounded up; `desiredHealthy` is `minAvailable`, or `expectedPods −
//!   maxUnavailable` (never below 0). When both are set, `maxUnavailable` wins, as in the
//!   controller (validation forbids setting both).
//! - **Neither set.** `policy/v1` defaults neither field (only `v1beta1` defaulted
//!   `minAvailable: 1`), and the controller then leaves `expectedPods` at 0, which allows no
//!   disruption at all: such a budget blocks every voluntary eviction of the pods it selects.
//! - **Allowed.** `disruptionsAllowed = max(0, currentHealthy − desiredHealthy)`, and 0 whenever
//!   `expectedPods` is 0 (a budget that matches no pods yet is safe when its first pods come).
//! - **Malformed budgets** (an invalid selector, a negative count, a percentage that is not
//!   one from 0% to 100%) never panic: the budget allows nothing, its status says why with
//!   the `SyncFailed` reason, and evictions of the pods it selects are refused. An invalid
//!   selector selects no pod (there is no telling which it meant).
//!
//! [`Budgets`] is the Eviction API's side: for each pod, whether an eviction would pass now,
//! and one allowed disruption consumed per eviction made, so that a pass of evictions never
//! exceeds a budget.

use std::collections::HashMap;

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_apimachinery::selector::{LabelSelector, from_label_selector_json};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Map, Value};

use crate::pod;

mod budgets;

pub use budgets::Budgets;

/// The condition the disruption controller keeps on every budget.
const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";

/// Why a budget cannot be evaluated; it then allows no disruption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdbError {
    /// `spec.selector` is not a valid label selector.
    #[error("spec.selector is invalid: {0}")]
    Selector(String),
    /// `spec.minAvailable` or `spec.maxUnavailable` is neither a count nor a percentage.
    #[error(
        "spec.{field} {value} is neither a non-negative count nor a percentage from 0% to 100%"
    )]
    Value {
        /// `minAvailable` or `maxUnavailable`.
        field: &'static str,
        /// The value as written.
        value: String,
    },
}

/// The counts the disruption controller reports for a budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    /// `expectedPods`: how many pods the budget expects (see the module documentation).
    pub expected_pods: i32,
    /// `currentHealthy`: selected pods that run, are Ready and are not being deleted.
    pub current_healthy: i32,
    /// `desiredHealthy`: how many must stay healthy.
    pub desired_healthy: i32,
    /// `disruptionsAllowed`: how many may be evicted now.
    pub disruptions_allowed: i32,
}

/// What one budget makes of the pods of its namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment<'a> {
    /// The budget's `namespace/name`.
    pub key: String,
    /// The pods it selects.
    pub selected: Vec<&'a Pod>,
    /// Its counts, or why it cannot be evaluated.
    pub health: Result<Health, PdbError>,
}

/// A pod with its labels as selectors read them.
#[derive(Debug, Clone)]
struct Labelled<'a> {
    pod: &'a Pod,
    labels: Map<String, Value>,
}

/// A cluster's pods grouped by namespace, read once so that many budgets can be assessed
/// against them.
#[derive(Debug, Clone, Default)]
pub struct NamespacedPods<'a> {
    by_namespace: HashMap<&'a str, Vec<Labelled<'a>>>,
}

impl<'a> NamespacedPods<'a> {
    /// Groups `pods` by namespace.
    pub fn new(pods: impl IntoIterator<Item = &'a Pod>) -> Self {
        let mut by_namespace: HashMap<&str, Vec<Labelled>> = HashMap::new();
        for pod in pods {
            let labels = pod
                .metadata
                .labels
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            by_namespace
                .entry(pod.metadata.namespace.as_deref().unwrap_or_default())
                .or_default()
                .push(Labelled { pod, labels });
        }
        NamespacedPods { by_namespace }
    }

    /// What `pdb` makes of the pods of its namespace.
    pub fn assess(&self, pdb: &PodDisruptionBudget) -> Assessment<'a> {
        let namespace = pdb.metadata.namespace.as_deref().unwrap_or_default();
        let key = format!(
            "{namespace}/{}",
            pdb.metadata.name.as_deref().unwrap_or_default()
        );
        let selector = match selector(pdb) {
            Ok(selector) => selector,
            Err(error) => {
                return Assessment {
                    key,
                    selected: Vec::new(),
                    health: Err(error),
                };
            }
        };
        let selected: Vec<&Pod> = match selector {
            None => Vec::new(),
            Some(selector) => self
                .by_namespace
                .get(namespace)
                .into_iter()
                .flatten()
                .filter(|p| selector.matches(&p.labels))
                .map(|p| p.pod)
                .collect(),
        };
        let health = health(pdb, &selected);
        Assessment {
            key,
            selected,
            health,
        }
    }
}

/// The budget's selector; `None` for a null selector, which selects nothing.
fn selector(pdb: &PodDisruptionBudget) -> Result<Option<LabelSelector>, PdbError> {
    let Some(selector) = pdb.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return Ok(None);
    };
    let json = serde_json::to_value(selector).map_err(|e| PdbError::Selector(e.to_string()))?;
    from_label_selector_json(&json).map(Some).map_err(|errors| {
        PdbError::Selector(
            errors
                .iter()
                .map(|e| e.message())
                .collect::<Vec<_>>()
                .join("; "),
        )
    })
}

/// Whether a selected pod counts as healthy: running, Ready and not being deleted.
pub(crate) fn is_healthy(pod: &Pod) -> bool {
    pod::phase(pod) == "Running" && pod::is_ready(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// A count as an `i32` status field.
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `value` of `field` scaled against `total`: a non-negative count as is, a percentage from
/// 0% to 100% of `total` rounded up (`intstr.GetScaledValueFromIntOrPercent` with validation's
/// bounds).
fn scaled(field: &'static str, value: &IntOrString, total: i32) -> Result<i32, PdbError> {
    let invalid = |text: String| PdbError::Value { field, value: text };
    match value {
        IntOrString::Int(n) if *n >= 0 => Ok(*n),
        IntOrString::Int(n) => Err(invalid(n.to_string())),
        IntOrString::String(text) => {
            let percent = text
                .strip_suffix('%')
                .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<i64>().ok())
                .filter(|percent| *percent <= 100)
                .ok_or_else(|| invalid(format!("{text:?}")))?;
            let scaled = (percent * i64::from(total.max(0)) + 99) / 100;
            Ok(i32::try_from(scaled).unwrap_or(i32::MAX))
        }
    }
}

/// The budget's `maxUnavailable` and `minAvailable`.
fn limits(pdb: &PodDisruptionBudget) -> (Option<&IntOrString>, Option<&IntOrString>) {
    pdb.spec.as_ref().map_or((None, None), |s| {
        (s.max_unavailable.as_ref(), s.min_available.as_ref())
    })
}

/// The counts of `pdb` over the pods it selects.
fn health(pdb: &PodDisruptionBudget, selected: &[&Pod]) -> Result<Health, PdbError> {
    let not_finished = count(selected.iter().filter(|p| !pod::is_terminal(p)).count());
    let (expected_pods, desired_healthy) = match limits(pdb) {
        (Some(max), _) => (
            not_finished,
            (not_finished - scaled("maxUnavailable", max, not_finished)?).max(0),
        ),
        (None, Some(min @ IntOrString::Int(_))) => {
            (count(selected.len()), scaled("minAvailable", min, 0)?)
        }
        (None, Some(min)) => (not_finished, scaled("minAvailable", min, not_finished)?),
        (None, None) => (0, 0),
    };
    let current_healthy = count(selected.iter().filter(|p| is_healthy(p)).count());
    let disruptions_allowed = if expected_pods <= 0 {
        0
    } else {
        (current_healthy - desired_healthy).max(0)
    };
    Ok(Health {
        expected_pods,
        current_healthy,
        desired_healthy,
        disruptions_allowed,
    })
}

/// The `DisruptionAllowed` condition's status, reason and message for `health`.
fn explain(pdb: &PodDisruptionBudget, health: &Health) -> (&'static str, &'static str, String) {
    let neither = limits(pdb) == (None, None);
    let Health {
        expected_pods,
        current_healthy,
        desired_healthy,
        disruptions_allowed,
    } = *health;
    if neither {
        return (
            "False",
            "InsufficientPods",
            "neither minAvailable nor maxUnavailable is set, so no disruption is allowed".into(),
        );
    }
    if expected_pods == 0 {
        return (
            "False",
            "InsufficientPods",
            "the budget selects no pods yet, so no disruption is allowed".into(),
        );
    }
    let counts = format!(
        "{current_healthy} of {expected_pods} expected pods are healthy and {desired_healthy} must be"
    );
    match disruptions_allowed {
        0 => (
            "False",
            "InsufficientPods",
            format!("{counts}: no disruption is allowed"),
        ),
        1 => (
            "True",
            "SufficientPods",
            format!("{counts}: 1 disruption is allowed"),
        ),
        n => (
            "True",
            "SufficientPods",
            format!("{counts}: {n} disruptions are allowed"),
        ),
    }
}

/// The status the disruption controller writes for `pdb` over the cluster's `pods` at `now`.
///
/// The `DisruptionAllowed` condition is True with reason `SufficientPods` while a disruption is
/// allowed and False with `InsufficientPods` otherwise; its transition time moves only when its
/// status does. A budget that cannot be evaluated keeps its last counts and observed generation
/// but allows nothing, with reason `SyncFailed` and the error as message (the controller's
/// fail-safe). `disruptedPods` is never written: Flotilla's evictions delete the pod at once,
/// so `currentHealthy` already leaves it out.
pub fn status(
    pdb: &PodDisruptionBudget,
    pods: &NamespacedPods<'_>,
    now: Timestamp,
) -> PodDisruptionBudgetStatus {
    let old = pdb.status.clone().unwrap_or_default();
    let mut conditions = old.conditions.clone().unwrap_or_default();
    let (mut status, (allowed, reason, message)) = match pods.assess(pdb).health {
        Ok(health) => (
            PodDisruptionBudgetStatus {
                current_healthy: Some(health.current_healthy),
                desired_healthy: Some(health.desired_healthy),
                expected_pods: Some(health.expected_pods),
                disruptions_allowed: Some(health.disruptions_allowed),
                observed_generation: pdb.metadata.generation,
                ..Default::default()
            },
            explain(pdb, &health),
        ),
        Err(error) => (
            PodDisruptionBudgetStatus {
                disruptions_allowed: Some(0),
                ..old
            },
            ("False", "SyncFailed", error.to_string()),
        ),
    };
    set_condition(
        &mut conditions,
        NewCondition {
            type_: DISRUPTION_ALLOWED,
            status: allowed,
            reason,
            message,
            observed_generation: status.observed_generation,
        },
        Timestamp::from_second(now.as_second()).unwrap_or(now),
    );
    status.conditions = Some(conditions);
    status
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
