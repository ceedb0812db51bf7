//! Draining a node that is being terminated (reference §6, Karpenter's
//! `node/termination/terminator`).
//!
//! - **What the node waits for.** Every pod on it except finished pods, mirror pods (the
//!   kubelet owns them), pods that tolerate the `karpenter.sh/disrupted:NoSchedule` taint
//!   (they may stay to the end) and pods stuck terminating more than a minute past their
//!   deletion timestamp. The node is drained when none is left; the controller still waits
//!   Karpenter's `MinDrainTime` before it reports `Drained`.
//! - **Tiers.** Pods are evicted in four tiers, each only once every pod of the earlier tiers
//!   is gone: non-critical pods, non-critical DaemonSet pods, critical pods, critical DaemonSet
//!   pods (critical: priority class `system-cluster-critical` or `system-node-critical`).
//! - **Eviction.** Through the Eviction API, so each eviction must pass the pod's
//!   PodDisruptionBudget ([`Budgets`]); a refusal waits for the next pass. Pods with an active
//!   `karpenter.sh/do-not-disrupt` are never evicted, but the node waits for them.
//! - **Forcing.** When the node's pool sets `terminationGracePeriod`, the node must be gone at
//!   its termination time. A pod is deleted outright once `now` is after the termination time
//!   less the pod's own grace period, whatever its tier, budget or `do-not-disrupt`, with a
//!   grace period of the time left (at least one second), so it gets as much of its grace as
//!   the node has.
//!
//! Deadlines that Karpenter checks with "after" are passed one nanosecond after the instant,
//! and [`DrainPlan::wake_at`] asks for that instant.

use flotilla_api::nodes::DISRUPTED_TAINT;
use flotilla_apimachinery::go_duration;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use crate::disruption::candidate::{DoNotDisrupt, PodFacts};
use crate::pdb::Budgets;
use crate::scheduling::taints::{Effect, Taint, Toleration};

/// A pod's grace period when it sets none (the API server's default).
pub const DEFAULT_GRACE_SECONDS: i64 = 30;

/// How long past its deletion timestamp a terminating pod may stay before the drain stops
/// waiting for it.
const STUCK_TERMINATING: SignedDuration = SignedDuration::from_secs(60);

/// Priority classes whose pods drain last.
const CRITICAL_PRIORITY_CLASSES: [&str; 2] = ["system-cluster-critical", "system-node-critical"];

/// When a node deleted at `deletion` must be gone: `deletion` plus the pool's
/// `terminationGracePeriod` (a Go duration); `None` when the pool sets none (or it does not
/// parse), and then pods are never forced.
pub fn termination_time(deletion: Timestamp, grace_period: Option<&str>) -> Option<Timestamp> {
    deletion
        .checked_add(go_duration::parse(grace_period?)?)
        .ok()
}

/// The drain tiers, in the order they leave the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Non-critical pods not owned by a DaemonSet.
    NonCritical,
    /// Non-critical DaemonSet pods.
    NonCriticalDaemonSet,
    /// Critical pods not owned by a DaemonSet.
    Critical,
    /// Critical DaemonSet pods.
    CriticalDaemonSet,
}

impl Tier {
    /// The tier's pods, in words.
    fn describe(self) -> &'static str {
        match self {
            Tier::NonCritical => "non-critical pod",
            Tier::NonCriticalDaemonSet => "non-critical DaemonSet pod",
            Tier::Critical => "critical pod",
            Tier::CriticalDaemonSet => "critical DaemonSet pod",
        }
    }
}

/// What the drain needs to know about one pod on the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainPod {
    /// `namespace/name`.
    pub key: String,
    /// Owned by a DaemonSet.
    pub daemon_set: bool,
    /// A mirror (static) pod.
    pub mirror: bool,
    /// Succeeded or Failed.
    pub terminal: bool,
    /// Priority class `system-cluster-critical` or `system-node-critical`.
    pub critical: bool,
    /// Tolerates the `karpenter.sh/disrupted:NoSchedule` taint.
    pub tolerates_disrupted_taint: bool,
    /// Its `karpenter.sh/do-not-disrupt` annotation.
    pub do_not_disrupt: DoNotDisrupt,
    /// `spec.terminationGracePeriodSeconds`.
    pub grace_seconds: i64,
    /// `metadata.deletionTimestamp` of a pod being deleted: when it should be gone.
    pub deletion_timestamp: Option<Timestamp>,
}

impl DrainPod {
    /// A running, non-critical pod `key` with no protection and the default grace period; the
    /// caller sets what differs.
    pub fn new(key: &str) -> DrainPod {
        DrainPod {
            key: key.to_string(),
            daemon_set: false,
            mirror: false,
            terminal: false,
            critical: false,
            tolerates_disrupted_taint: false,
            do_not_disrupt: DoNotDisrupt::No,
            grace_seconds: DEFAULT_GRACE_SECONDS,
            deletion_timestamp: None,
        }
    }

    /// Reads `pod` (what [`PodFacts`] reads, plus its priority class, tolerations, grace period
    /// and deletion timestamp). The second value says why an annotation was ignored, for an
    /// event.
    pub fn from_pod(pod: &Pod) -> (DrainPod, Option<String>) {
        let (facts, warning) = PodFacts::read(pod);
        let spec = pod.spec.as_ref();
        let disrupted = Taint::new(DISRUPTED_TAINT, "", Effect::NoSchedule);
        let drain_pod = DrainPod {
            key: facts.key,
            daemon_set: facts.daemon_set,
            mirror: facts.mirror,
            terminal: facts.terminal,
            critical: spec
                .and_then(|s| s.priority_class_name.as_deref())
                .is_some_and(|class| CRITICAL_PRIORITY_CLASSES.contains(&class)),
            tolerates_disrupted_taint: spec
                .and_then(|s| s.tolerations.as_ref())
                .into_iter()
                .flatten()
                .filter_map(Toleration::from_k8s)
                .any(|t| t.tolerates(&disrupted)),
            do_not_disrupt: facts.do_not_disrupt,
            grace_seconds: spec
                .and_then(|s| s.termination_grace_period_seconds)
                .unwrap_or(DEFAULT_GRACE_SECONDS),
            deletion_timestamp: pod.metadata.deletion_timestamp.as_ref().map(|t| t.0),
        };
        (drain_pod, warning)
    }

    /// The pod's drain tier.
    pub fn tier(&self) -> Tier {
        match (self.critical, self.daemon_set) {
            (false, false) => Tier::NonCritical,
            (false, true) => Tier::NonCriticalDaemonSet,
            (true, false) => Tier::Critical,
            (true, true) => Tier::CriticalDaemonSet,
        }
    }

    /// When a terminating pod stops holding up the drain (a minute past its deletion
    /// timestamp).
    fn stuck_after(&self) -> Option<Timestamp> {
        self.deletion_timestamp
            .map(|at| at.checked_add(STUCK_TERMINATING).unwrap_or(Timestamp::MAX))
    }

    /// Whether the node waits for this pod at `now`.
    fn holds_node(&self, now: Timestamp) -> bool {
        !self.terminal
            && !self.mirror
            && !self.tolerates_disrupted_taint
            && self.stuck_after().is_none_or(|stuck| now <= stuck)
    }

    /// After when the pod is forced off a node that must be gone at `end`: `end` less the
    /// pod's grace period.
    fn forced_after(&self, end: Timestamp) -> Timestamp {
        let grace = SignedDuration::from_secs(self.grace_seconds.max(0));
        end.checked_sub(grace).unwrap_or(Timestamp::MIN)
    }
}

/// A pod to delete outright, bypassing its budget and `do-not-disrupt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forced {
    /// `namespace/name`.
    pub key: String,
    /// The grace period to delete it with: the time left before the node's termination time,
    /// at least one second.
    pub grace_seconds: i64,
}

/// A pod the node waits for, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// `namespace/name`.
    pub key: String,
    /// Why it is not evicted now, as a sentence naming the pod and what holds it.
    pub reason: String,
}

/// What one drain pass does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainPlan {
    /// Pods to evict now through the Eviction API, in order (each already passed its budget).
    pub evict: Vec<String>,
    /// Pods to delete outright now.
    pub force: Vec<Forced>,
    /// Pods the node waits for and that are neither evicted nor forced now.
    pub waiting: Vec<Waiting>,
    /// Nothing holds up the node any more.
    pub drained: bool,
    /// The earliest instant the plan changes by time alone (a pod's forcing deadline passes,
    /// a `do-not-disrupt` duration ends, a terminating pod is given up on).
    pub wake_at: Option<Timestamp>,
}

impl DrainPlan {
    /// Asks to look again at `at` (keeps the earliest).
    fn wake(&mut self, at: Timestamp) {
        self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
    }

    /// Records that `pod` waits because of `reason`.
    fn wait(&mut self, pod: &DrainPod, reason: String) {
        self.waiting.push(Waiting {
            key: pod.key.clone(),
            reason,
        });
    }
}

/// The first instant after `at`.
fn just_after(at: Timestamp) -> Timestamp {
    at.checked_add(SignedDuration::from_nanos(1))
        .unwrap_or(Timestamp::MAX)
}

/// `n` pods, in words.
fn pods(n: usize) -> String {
    match n {
        1 => "1 pod".to_string(),
        n => format!("{n} pods"),
    }
}

/// One drain pass over the pods on a node that must be gone at `termination_time` (if ever),
/// evicting through `budgets` (which records the evictions it lets through).
pub fn drain(
    pods_on_node: &[DrainPod],
    budgets: &mut Budgets,
    termination_time: Option<Timestamp>,
    now: Timestamp,
) -> DrainPlan {
    let mut plan = DrainPlan::default();
    let holding: Vec<&DrainPod> = pods_on_node.iter().filter(|p| p.holds_node(now)).collect();
    plan.drained = holding.is_empty();
    let Some(current) = holding.iter().map(|p| p.tier()).min() else {
        return plan;
    };
    for pod in holding.iter().copied() {
        if let Some(stuck) = pod.stuck_after() {
            plan.wake(just_after(stuck));
            plan.wait(
                pod,
                format!(
                    "pod {} is terminating; the node waits for it until {stuck}",
                    pod.key
                ),
            );
            continue;
        }
        let forcing = match termination_time {
            Some(end) => {
                let after = pod.forced_after(end);
                if now > after {
                    plan.force.push(Forced {
                        key: pod.key.clone(),
                        grace_seconds: end.duration_since(now).as_secs().max(1),
                    });
                    continue;
                }
                plan.wake(just_after(after));
                format!(
                    "; it will be forced after {after}, when the node's termination grace \
                     period runs out"
                )
            }
            None => String::new(),
        };
        if pod.tier() > current {
            let earlier = holding.iter().filter(|p| p.tier() < pod.tier()).count();
            plan.wait(
                pod,
                format!(
                    "pod {} is a {} and waits for {} of earlier drain tiers to leave the node{forcing}",
                    pod.key,
                    pod.tier().describe(),
                    pods(earlier),
                ),
            );
            continue;
        }
        match pod.do_not_disrupt {
            DoNotDisrupt::Always => {
                plan.wait(
                    pod,
                    format!(
                        "pod {} has karpenter.sh/do-not-disrupt=true{}",
                        pod.key,
                        if forcing.is_empty() {
                            "; the node waits until the pod finishes or the annotation is removed"
                        } else {
                            &forcing
                        }
                    ),
                );
                continue;
            }
            DoNotDisrupt::Until(until) if now < until => {
                plan.wake(until);
                plan.wait(
                    pod,
                    format!(
                        "pod {} has karpenter.sh/do-not-disrupt until {until}{forcing}",
                        pod.key
                    ),
                );
                continue;
            }
            DoNotDisrupt::Until(_) | DoNotDisrupt::No => {}
        }
        match budgets.try_evict(&pod.key) {
            Ok(()) => plan.evict.push(pod.key.clone()),
            Err(refusal) => plan.wait(pod, format!("{refusal}{forcing}")),
        }
    }
    plan
}

#[cfg(test)]
mod tests;
