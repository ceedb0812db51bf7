//! Node termination (reference §6): a Karpenter node being deleted — by disruption,
//! expiration, its pool's deletion or `kubectl delete node` — is tainted
//! `karpenter.sh/disrupted`, its claim deleted too, and drained in the reference's four tiers
//! through evictions that honour PodDisruptionBudgets and `do-not-disrupt`, until the claim's
//! termination time forces what is left, its claim saying so (`Drained` False, then True, and
//! `VolumesDetached`). Once drained, its finalizer is released; the claim's own finalizer then
//! releases the instance (`InstanceTerminating`).

use std::collections::HashMap;

use flotilla_api::nodes::NodeClaim;
use flotilla_api::nodes::{TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION};
use flotilla_nodes::termination::{DrainPod, drain};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};

use super::claims::set;
use super::disruption::{tainted, with_taint};
use super::view::View;
use super::{COMPONENT, reference, status_write};
use crate::actions::{Action, EventNote, Plan};
use crate::objects::ObjectRef;

pub use flotilla_nodes::pdb::Budgets;

/// The instant a node's pods are forced out: its claim's termination timestamp.
fn forced_at(view: &View<'_>, node: &Node) -> Option<Timestamp> {
    let claim = view.claim_of(node)?;
    claim
        .metadata
        .annotations
        .as_ref()?
        .get(TERMINATION_TIMESTAMP_ANNOTATION)?
        .parse()
        .ok()
}

/// Drains `node` one pass's worth: evictions, forced deletions, and the finalizer once empty.
fn terminate(node: &Node, view: &View<'_>, budgets: &mut Budgets, plan: &mut Plan, now: Timestamp) {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if let Some(claim) = view.claim_of(node)
        && claim.metadata.deletion_timestamp.is_none()
    {
        plan.push(Action::Delete(reference(claim)));
    }
    if !tainted(node) {
        plan.push(Action::update(&with_taint(node, true)));
        return;
    }
    let pods: &[&Pod] = view.pods_on(name);
    let by_key: HashMap<String, &Pod> = pods
        .iter()
        .map(|p| (flotilla_nodes::pod::key(p), *p))
        .collect();
    let drain_pods: Vec<DrainPod> = pods.iter().map(|p| DrainPod::from_pod(p).0).collect();
    let outcome = drain(&drain_pods, budgets, forced_at(view, node), now);
    for key in &outcome.evict {
        if let Some(pod) = by_key.get(key) {
            plan.push(Action::Delete(ObjectRef::of(*pod)));
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                ObjectRef::of(*pod),
                "Evicted",
                format!("Evicted pod: node {name} is being terminated"),
            )));
        }
    }
    for forced in &outcome.force {
        if let Some(pod) = by_key.get(&forced.key) {
            plan.push(Action::Delete(ObjectRef::of(*pod)));
            plan.push(Action::Record(EventNote::warning(
                COMPONENT,
                ObjectRef::of(*pod),
                "Forced",
                format!("Deleted pod: node {name} reached its termination grace period"),
            )));
        }
    }
    if let Some(at) = outcome.wake_at {
        plan.wake(at);
    }
    if let Some(claim) = view.claim_of(node) {
        drain_conditions(claim, name, pods.len(), outcome.drained, plan, now);
    }
    if outcome.drained {
        let mut released = node.clone();
        if let Some(f) = released.metadata.finalizers.as_mut() {
            f.retain(|f| f != TERMINATION_FINALIZER);
        }
        plan.push(Action::update(&released));
    }
}

/// The claim's `Drained` and `VolumesDetached` conditions while its node drains: Drained is
/// False while `left` pods remain, then True; VolumesDetached turns True once drained (a
/// simulated node has no volume attachments to wait for). Written only when they change.
fn drain_conditions(
    claim: &NodeClaim,
    node: &str,
    left: usize,
    drained: bool,
    plan: &mut Plan,
    now: Timestamp,
) {
    let before = claim.status.clone().unwrap_or_default();
    let mut status = before.clone();
    if drained {
        set(
            &mut status,
            "Drained",
            "True",
            "Drained",
            String::new(),
            now,
        );
        set(
            &mut status,
            "VolumesDetached",
            "True",
            "VolumesDetached",
            "no volume attachments remain".into(),
            now,
        );
    } else {
        let message = format!("waiting for {left} pod(s) to leave node {node}");
        set(&mut status, "Drained", "False", "Draining", message, now);
    }
    if status != before {
        plan.push(status_write(claim, &status));
    }
}

/// One termination pass over the member's nodes being deleted, evicting within `budgets`.
pub fn reconcile(view: &View<'_>, mut budgets: Budgets, now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    for node in &view.state.nodes {
        let ours = node
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == TERMINATION_FINALIZER);
        if ours && node.metadata.deletion_timestamp.is_some() {
            terminate(node, view, &mut budgets, &mut plan, now);
        }
    }
    plan
}
