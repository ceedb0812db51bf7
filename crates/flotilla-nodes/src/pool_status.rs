//! A NodePool's status, from its nodes and budgets: the resources its nodes add up to, how
//! many more nodes may be disrupted now for each reason (and which budget says so), the
//! lifetime in force and where it comes from, and conditions saying whether the pool can
//! launch and disrupt at all. Also when that status will next change by itself (a budget
//! window opening or closing), so the controller can wake then.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::nodes::{
    DISRUPTED_TAINT, INITIALIZED_LABEL, NODEPOOL_LABEL, NodePool, NodePoolStatus,
};
use flotilla_apimachinery::cron::Schedule;
use flotilla_apimachinery::go_duration;
use flotilla_apimachinery::quantity::{format_cpu, format_memory, parse_milli, parse_units};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::budget::{Basis, PoolCounts, allowed_disruptions};
use crate::expiration::expire_after;

/// Whether `node` belongs to the pool named `pool`.
pub fn in_pool(node: &Node, pool: &str) -> bool {
    label(node, NODEPOOL_LABEL) == Some(pool)
}

fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// Whether `node` is Ready.
pub fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// Whether `node` is on its way out: deleting, or tainted for disruption.
pub fn node_leaving(node: &Node) -> bool {
    node.metadata.deletion_timestamp.is_some()
        || node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| taints.iter().any(|t| t.key == DISRUPTED_TAINT))
}

/// The budget counts of a pool's nodes: initialized and not deleting ones, and of those the
/// ones NotReady or already leaving.
pub fn counts(nodes: &[&Node]) -> PoolCounts {
    let counted: Vec<&&Node> = nodes
        .iter()
        .filter(|n| label(n, INITIALIZED_LABEL) == Some("true"))
        .filter(|n| n.metadata.deletion_timestamp.is_none())
        .collect();
    PoolCounts {
        nodes: counted.len() as u64,
        disrupting: counted
            .iter()
            .filter(|n| !node_ready(n) || node_leaving(n))
            .count() as u64,
    }
}

/// The capacity the pool's nodes add up to, as `status.resources` shows it.
fn resources(nodes: &[&Node]) -> std::collections::BTreeMap<String, Quantity> {
    let mut cpu_milli = 0u64;
    let mut memory = 0u64;
    let mut pods = 0u64;
    for node in nodes {
        let Some(capacity) = node.status.as_ref().and_then(|s| s.capacity.as_ref()) else {
            continue;
        };
        let read = |key: &str, parse: fn(&str) -> Option<i128>| {
            capacity
                .get(key)
                .and_then(|q| parse(&q.0))
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(0)
        };
        cpu_milli += read("cpu", parse_milli);
        memory += read("memory", parse_units);
        pods += read("pods", parse_units);
    }
    [
        ("cpu", format_cpu(cpu_milli)),
        ("memory", format_memory(memory)),
        ("nodes", nodes.len().to_string()),
        ("pods", pods.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Quantity(v)))
    .collect()
}

/// The condition saying whether the pool's nodes launch and register.
pub const REGISTRATION_HEALTHY: &str = "NodeRegistrationHealthy";

/// `NodeRegistrationHealthy` while no node of the pool's current spec has registered yet.
fn awaiting_registration() -> (&'static str, &'static str, String) {
    (
        "Unknown",
        "AwaitingReconciliation",
        "waiting for a node of this pool's current spec to register".into(),
    )
}

/// The pool's `NodeRegistrationHealthy` condition, as Karpenter keeps it: Unknown when the pool
/// is new or its spec changed (a new generation), True once a node has registered since then,
/// False when a launch failed since then (`launch_failure`: when, and why) and no node has
/// registered. True stays True for the generation.
fn registration_health(
    pool: &NodePool,
    nodes: &[&Node],
    launch_failure: Option<(Timestamp, &str)>,
) -> (&'static str, &'static str, String) {
    let current = pool
        .status
        .as_ref()
        .and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == REGISTRATION_HEALTHY)
        })
        .filter(|c| c.observed_generation == pool.metadata.generation);
    let Some(current) = current else {
        return awaiting_registration();
    };
    if current.status == "True" {
        return ("True", REGISTRATION_HEALTHY, String::new());
    }
    let since = current.last_transition_time.0;
    let registered = nodes.iter().any(|node| {
        node.metadata
            .creation_timestamp
            .as_ref()
            .is_some_and(|t| t.0 >= since)
    });
    match launch_failure {
        _ if registered => ("True", REGISTRATION_HEALTHY, String::new()),
        Some((at, why)) if at >= since => ("False", "LaunchFailed", why.to_string()),
        _ if current.status == "False" => ("False", "LaunchFailed", current.message.clone()),
        _ => awaiting_registration(),
    }
}

/// What the pool's status should be at `now`, given its nodes, whether its node class exists
/// and its latest launch failure (when, and why). Conditions keep their transition times from
/// the current status.
pub fn pool_status(
    pool: &NodePool,
    nodes: &[&Node],
    node_class_ready: Result<(), String>,
    launch_failure: Option<(Timestamp, &str)>,
    now: Timestamp,
) -> NodePoolStatus {
    let registration = registration_health(pool, nodes, launch_failure);
    let budgets = pool
        .spec
        .disruption
        .as_ref()
        .and_then(|d| d.budgets.as_deref());
    let allowances = allowed_disruptions(budgets, counts(nodes), now);
    let lifetime = expire_after(&pool.spec);
    let mut status = pool.status.clone().unwrap_or_default();
    status.resources = resources(nodes);
    status.nodes = Some(i64::try_from(nodes.len()).unwrap_or(i64::MAX));
    status.allowed_disruptions = allowances.to_status();
    status.allowed_disruptions_summary = Some(allowances.summary());
    status.expire_after = Some(lifetime.text.clone());
    status.expire_after_source = Some(lifetime.source.field().to_string());
    // A budget that cannot be read closes the pool; the figures' message says which and why.
    let invalid_budget = allowances
        .reasons
        .iter()
        .zip(&status.allowed_disruptions)
        .find(|(allowance, _)| matches!(allowance.basis, Basis::Invalid { .. }))
        .and_then(|(_, figure)| figure.message.clone());
    let generation = pool.metadata.generation;
    let mut set = |type_: &str, ok: Result<(), String>, good: &str, bad: &str| {
        let (status_text, reason, message) = match ok {
            Ok(()) => ("True", good, String::new()),
            Err(message) => ("False", bad, message),
        };
        set_condition(
            &mut status.conditions,
            NewCondition {
                type_,
                status: status_text,
                reason,
                message,
                observed_generation: generation,
            },
            now,
        );
    };
    let class_ok = node_class_ready.clone();
    set(
        "NodeClassReady",
        class_ok,
        "NodeClassReady",
        "NodeClassNotFound",
    );
    let budgets_ok = invalid_budget.clone().map_or(Ok(()), Err);
    set(
        "ValidationSucceeded",
        budgets_ok,
        "ValidationSucceeded",
        "BudgetInvalid",
    );
    let ready = match (node_class_ready, invalid_budget) {
        (Err(message), _) => Err(message),
        (Ok(()), Some(message)) => Err(message),
        (Ok(()), None) => Ok(()),
    };
    set("Ready", ready, "Ready", "NotReady");
    let (value, reason, message) = registration;
    set_condition(
        &mut status.conditions,
        NewCondition {
            type_: REGISTRATION_HEALTHY,
            status: value,
            reason,
            message,
            observed_generation: generation,
        },
        now,
    );
    status
}

/// When a budget of `pool` next opens or closes after `now` (the status changes by itself
/// then); `None` when no budget has a schedule.
pub fn next_budget_change(pool: &NodePool, now: Timestamp) -> Option<Timestamp> {
    let budgets = pool.spec.disruption.as_ref()?.budgets.as_ref()?;
    budgets
        .iter()
        .filter_map(|budget| {
            let schedule = Schedule::parse(budget.schedule.as_deref()?).ok()?;
            let duration = go_duration::parse(budget.duration.as_deref()?)?;
            let opens = schedule.next_after(now);
            // The window holding `now`, if any, closes `duration` after the latest firing at
            // or before `now`.
            let closes = schedule
                .next_after(now.checked_sub(duration).ok()?)
                .filter(|hit| *hit <= now)
                .and_then(|hit| hit.checked_add(duration).ok())
                .filter(|end| *end > now);
            [opens, closes].into_iter().flatten().min()
        })
        .min()
}

#[cfg(test)]
mod tests;
