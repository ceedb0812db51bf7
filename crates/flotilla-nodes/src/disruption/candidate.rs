//! Which nodes may be disrupted at all, and at what cost (reference §2, "Candidate rejected
//! when" and "Cost and order"). The controller reads the member's objects into [`NodeFacts`];
//! [`rejection`] says why a node is not a candidate, in words a person can act on.

use flotilla_api::nodes::DO_NOT_DISRUPT_ANNOTATION;
use flotilla_apimachinery::go_duration;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use crate::pdb::Budgets;
use crate::pod;

/// Annotation on mirror (static) pods, which the kubelet owns.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// Annotation that makes a pod cheaper or dearer to delete.
const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// How forcefully a method disrupts: consolidation is graceful; drift is eventual, and an
/// eventual disruption ignores pod-level blocks when the pool sets `terminationGracePeriod`
/// (the grace period will force the pods out anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Consolidation and emptiness.
    Graceful,
    /// Drift.
    Eventual,
}

/// A pod's `karpenter.sh/do-not-disrupt` annotation, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoNotDisrupt {
    /// No annotation (or one that protects nothing any more).
    No,
    /// `"true"`: protected while it runs.
    Always,
    /// A duration from the pod's start: protected until this instant.
    Until(Timestamp),
}

impl DoNotDisrupt {
    /// Reads the annotation `value` of a pod that started at `started` (Karpenter accepts
    /// `"true"` or a duration; anything else is ignored, and the caller reports it).
    pub fn read(value: Option<&str>, started: Option<Timestamp>) -> Result<Self, String> {
        match value {
            None => Ok(DoNotDisrupt::No),
            Some("true") => Ok(DoNotDisrupt::Always),
            Some(text) => match (go_duration::parse(text), started) {
                (Some(duration), Some(start)) => Ok(start
                    .checked_add(duration)
                    .map_or(DoNotDisrupt::Always, DoNotDisrupt::Until)),
                (Some(_), None) => Ok(DoNotDisrupt::Always),
                (None, _) => Err(format!(
                    "karpenter.sh/do-not-disrupt={text:?} is neither \"true\" nor a duration; ignored"
                )),
            },
        }
    }

    /// Whether it protects the pod at `now`.
    pub fn active(&self, now: Timestamp) -> bool {
        match self {
            DoNotDisrupt::No => false,
            DoNotDisrupt::Always => true,
            DoNotDisrupt::Until(until) => now < *until,
        }
    }
}

/// What the PodDisruptionBudgets covering a pod allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdbVerdict {
    /// No budget covers it, or its budget allows a disruption.
    Free,
    /// Its budget allows no disruption now.
    Blocked(String),
    /// More than one budget covers it (the eviction API refuses such pods).
    Multiple(Vec<String>),
}

/// What disruption needs to know about one pod on a node.
#[derive(Debug, Clone, PartialEq)]
pub struct PodFacts {
    /// `namespace/name`.
    pub key: String,
    /// Owned by a DaemonSet (goes with the node, needs no new home).
    pub daemon_set: bool,
    /// A static (mirror) pod.
    pub mirror: bool,
    /// Succeeded or Failed.
    pub terminal: bool,
    /// Being deleted.
    pub terminating: bool,
    /// Its `do-not-disrupt` annotation.
    pub do_not_disrupt: DoNotDisrupt,
    /// What its PodDisruptionBudgets allow.
    pub pdb: PdbVerdict,
    /// `spec.priority`.
    pub priority: i32,
    /// `controller.kubernetes.io/pod-deletion-cost`.
    pub deletion_cost: i32,
}

impl PodFacts {
    /// A running pod `key` with no protection, no PodDisruptionBudget, and default priority
    /// and deletion cost; the controller sets what differs.
    pub fn new(key: &str) -> PodFacts {
        PodFacts {
            key: key.to_string(),
            daemon_set: false,
            mirror: false,
            terminal: false,
            terminating: false,
            do_not_disrupt: DoNotDisrupt::No,
            pdb: PdbVerdict::Free,
            priority: 0,
            deletion_cost: 0,
        }
    }

    /// Reads `pod`, covered by `budgets`. The second value says why an annotation was ignored
    /// (an invalid `karpenter.sh/do-not-disrupt`), for an event.
    pub fn from_pod(pod: &Pod, budgets: &Budgets) -> (PodFacts, Option<String>) {
        let (mut facts, warning) = PodFacts::read(pod);
        facts.pdb = budgets.verdict(&facts.key);
        (facts, warning)
    }

    /// Reads everything but [`PodFacts::pdb`], which is left [`PdbVerdict::Free`]: a DaemonSet
    /// owner; a mirror pod (annotated `kubernetes.io/config.mirror` or owned by its Node);
    /// `do-not-disrupt` counted from `status.startTime`; `spec.priority`; the deletion cost
    /// (0 when unparsable).
    pub(crate) fn read(pod: &Pod) -> (PodFacts, Option<String>) {
        let started = pod
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0);
        let (do_not_disrupt, warning) =
            match DoNotDisrupt::read(pod::annotation(pod, DO_NOT_DISRUPT_ANNOTATION), started) {
                Ok(read) => (read, None),
                Err(warning) => (DoNotDisrupt::No, Some(warning)),
            };
        let facts = PodFacts {
            daemon_set: pod::owned_by(pod, "DaemonSet"),
            mirror: pod::annotation(pod, MIRROR_ANNOTATION).is_some() || pod::owned_by(pod, "Node"),
            terminal: pod::is_terminal(pod),
            terminating: pod.metadata.deletion_timestamp.is_some(),
            do_not_disrupt,
            priority: pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0),
            deletion_cost: pod::annotation(pod, DELETION_COST_ANNOTATION)
                .and_then(|cost| cost.parse().ok())
                .unwrap_or(0),
            ..PodFacts::new(&pod::key(pod))
        };
        (facts, warning)
    }

    /// Whether disrupting the node means finding this pod a new home: active, not a DaemonSet
    /// or mirror pod.
    pub fn reschedulable(&self) -> bool {
        !self.terminal && !self.terminating && !self.daemon_set && !self.mirror
    }

    /// Karpenter's eviction cost: `clamp(1 + deletionCost/2^27 + priority/2^25, −10, 10)`.
    pub fn eviction_cost(&self) -> f64 {
        (1.0 + f64::from(self.deletion_cost) / 2f64.powi(27)
            + f64::from(self.priority) / 2f64.powi(25))
        .clamp(-10.0, 10.0)
    }
}

/// What disruption needs to know about one node (and its claim).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    /// The node's name.
    pub name: String,
    /// The claim's name.
    pub claim: String,
    /// The pool that owns it (`karpenter.sh/nodepool`), if it still exists.
    pub pool: Option<String>,
    /// Initialized (`karpenter.sh/initialized`).
    pub initialized: bool,
    /// Being deleted, marked for deletion, or its instance terminating.
    pub deleting: bool,
    /// Already part of a disruption command.
    pub queued: bool,
    /// Nominated for a pending pod by the provisioner.
    pub nominated: bool,
    /// The node's `karpenter.sh/do-not-disrupt` is `"true"` (or the pool's template says so).
    pub do_not_disrupt: bool,
    /// Its claim is `Consolidatable` (no pod arrived or left for `consolidateAfter`).
    pub consolidatable: bool,
    /// Since when its claim is `Drifted`, if it is.
    pub drifted_since: Option<Timestamp>,
    /// The pods bound to it.
    pub pods: Vec<PodFacts>,
    /// When the claim was created.
    pub created: Timestamp,
    /// The claim's lifetime (`None`: Never).
    pub lifetime: Option<SignedDuration>,
    /// The hourly price of its offering.
    pub price: f64,
}

impl NodeFacts {
    /// The pods that need new homes if the node goes.
    pub fn reschedulable(&self) -> impl Iterator<Item = &PodFacts> {
        self.pods.iter().filter(|p| p.reschedulable())
    }

    /// Empty: no pod needs a new home (DaemonSet and mirror pods do not count).
    pub fn is_empty(&self) -> bool {
        self.reschedulable().next().is_none()
    }

    /// Karpenter's disruption cost: the pods' eviction costs, scaled by how much of the
    /// node's lifetime remains (a node about to expire is cheap to disrupt).
    pub fn disruption_cost(&self, now: Timestamp) -> f64 {
        let total: f64 = self.reschedulable().map(PodFacts::eviction_cost).sum();
        let remaining = match self.lifetime {
            None => 1.0,
            Some(lifetime) => {
                let age = now.duration_since(self.created);
                ((lifetime - age).as_secs_f64() / lifetime.as_secs_f64()).clamp(0.0, 1.0)
            }
        };
        total * remaining
    }

    /// What moving its pods costs (Karpenter's `RescheduleDisruptionCost`): one for the node
    /// plus each reschedulable pod's eviction cost, negative ones counting as zero.
    pub fn reschedule_cost(&self) -> f64 {
        let pods: f64 = self
            .reschedulable()
            .map(|p| p.eviction_cost().max(0.0))
            .sum();
        1.0 + pods
    }

    /// Consolidation's order (v1.14+): price per unit of disruption, highest first — the
    /// node that saves most for least disruption goes first.
    pub fn consolidation_priority(&self) -> f64 {
        self.price / self.reschedule_cost()
    }
}

/// Why `node` cannot be disrupted by a method of `class` at `now`; `None` when it is a
/// candidate. `grace_period_set`: the node's pool sets `terminationGracePeriod`.
pub fn rejection(
    node: &NodeFacts,
    class: Class,
    grace_period_set: bool,
    now: Timestamp,
) -> Option<String> {
    if node.queued {
        return Some("the node is already being disrupted".into());
    }
    if node.pool.is_none() {
        return Some("the node's NodePool no longer exists".into());
    }
    if !node.initialized {
        return Some("the node is not initialized".into());
    }
    if node.deleting {
        return Some("the node is being deleted".into());
    }
    if node.nominated {
        return Some("the node is nominated for a pending pod".into());
    }
    if node.do_not_disrupt {
        return Some("the node has karpenter.sh/do-not-disrupt=true".into());
    }
    if class == Class::Eventual && grace_period_set {
        return None;
    }
    for pod in node.pods.iter().filter(|p| !p.terminal && !p.terminating) {
        if pod.do_not_disrupt.active(now) {
            return Some(format!("pod {} has karpenter.sh/do-not-disrupt", pod.key));
        }
        if !pod.reschedulable() {
            continue;
        }
        match &pod.pdb {
            PdbVerdict::Free => {}
            PdbVerdict::Blocked(pdb) => {
                return Some(format!(
                    "pod {} is protected by PodDisruptionBudget {pdb}, which allows no disruption now",
                    pod.key
                ));
            }
            PdbVerdict::Multiple(pdbs) => {
                return Some(format!(
                    "pod {} is covered by more than one PodDisruptionBudget ({})",
                    pod.key,
                    pdbs.join(", ")
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
