//! The Eviction API's check against PodDisruptionBudgets, over a cluster's budgets and pods
//! read once (`pkg/registry/core/pod/storage/eviction.go`):
//!
//! 1. A pod that has finished, is still `Pending` or is already being deleted is evicted
//!    without consulting any budget.
//! 2. A pod selected by more than one budget is refused (the API does not support it).
//! 3. A pod selected by no budget is evicted.
//! 4. A pod that is not Ready is evicted without using up the budget when the budget's
//!    `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or when the budget is itself healthy
//!    (`currentHealthy ≥ desiredHealthy > 0`, the default `IfHealthyBudget`).
//! 5. Otherwise the eviction uses one of the budget's allowed disruptions, and is refused with
//!    429 when none is left.
//!
//! The counts are computed from the pods themselves (what the disruption controller would
//! write), not read from the stored status, so a pass of evictions is checked against the
//! cluster as it is rather than as the controller last saw it.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::{Health, NamespacedPods, PdbError};
use crate::disruption::candidate::PdbVerdict;
use crate::pod;

/// One budget and the evictions made against it so far.
#[derive(Debug, Clone)]
struct Ledger {
    /// `namespace/name`.
    key: String,
    /// Its counts, or why it cannot be evaluated.
    health: Result<Health, PdbError>,
    /// `unhealthyPodEvictionPolicy: AlwaysAllow`.
    always_allow_unhealthy: bool,
    /// Disruptions used by evictions through [`Budgets::try_evict`].
    evicted: i32,
}

/// What the Eviction API needs to know about a pod selected by at least one budget.
#[derive(Debug, Clone)]
struct Covered {
    /// Indices of the budgets that select it.
    budgets: Vec<usize>,
    /// Finished, `Pending` or being deleted: evicted without consulting the budgets.
    exempt: bool,
    /// Ready.
    ready: bool,
}

/// What an eviction of one pod would do now.
enum Check {
    /// Goes through without using a budget.
    Free,
    /// Goes through and uses one disruption of this budget.
    Uses(usize),
    /// Is refused: the verdict and the message.
    Refused(PdbVerdict, String),
}

/// A cluster's PodDisruptionBudgets as the Eviction API enforces them, keyed by pod
/// (`namespace/name`). Pods it was not built with are selected by no budget.
#[derive(Debug, Clone, Default)]
pub struct Budgets {
    budgets: Vec<Ledger>,
    pods: HashMap<String, Covered>,
}

impl Budgets {
    /// Reads every budget of `pdbs` against `pods` (all of a cluster's pods).
    pub fn new(pdbs: &[PodDisruptionBudget], pods: &[Pod]) -> Budgets {
        let namespaced = NamespacedPods::new(pods);
        let mut covered: HashMap<String, Covered> = HashMap::new();
        let budgets = pdbs
            .iter()
            .enumerate()
            .map(|(index, pdb)| {
                let assessment = namespaced.assess(pdb);
                for p in &assessment.selected {
                    covered
                        .entry(pod::key(p))
                        .or_insert_with(|| Covered {
                            budgets: Vec::new(),
                            exempt: pod::is_terminal(p)
                                || pod::phase(p) == "Pending"
                                || p.metadata.deletion_timestamp.is_some(),
                            ready: pod::is_ready(p),
                        })
                        .budgets
                        .push(index);
                }
                Ledger {
                    key: assessment.key,
                    health: assessment.health,
                    always_allow_unhealthy: pdb
                        .spec
                        .as_ref()
                        .and_then(|s| s.unhealthy_pod_eviction_policy.as_deref())
                        == Some("AlwaysAllow"),
                    evicted: 0,
                }
            })
            .collect();
        Budgets {
            budgets,
            pods: covered,
        }
    }

    /// What the budgets covering `pod` allow now: [`PdbVerdict::Free`] when an eviction would
    /// go through. This is the Eviction API's answer, which lets through a few pods that
    /// Karpenter's own candidate check holds back (a `Pending` pod, or an unready pod of a
    /// healthy budget, under a budget with no disruption left).
    pub fn verdict(&self, pod: &str) -> PdbVerdict {
        match self.check(pod) {
            Check::Free | Check::Uses(_) => PdbVerdict::Free,
            Check::Refused(verdict, _) => verdict,
        }
    }

    /// Evicts `pod` if its budgets allow it, using one of its budget's allowed disruptions;
    /// `Err` with why not, naming the pod and the budget.
    pub fn try_evict(&mut self, pod: &str) -> Result<(), String> {
        match self.check(pod) {
            Check::Free => Ok(()),
            Check::Uses(index) => {
                self.budgets[index].evicted += 1;
                Ok(())
            }
            Check::Refused(_, message) => Err(message),
        }
    }

    /// What evicting `pod` would do now.
    fn check(&self, pod: &str) -> Check {
        let Some(covered) = self.pods.get(pod).filter(|c| !c.exempt) else {
            return Check::Free;
        };
        let index = match covered.budgets.as_slice() {
            [] => return Check::Free,
            [index] => *index,
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|i| self.budgets[*i].key.clone())
                    .collect();
                let message = format!(
                    "cannot evict pod {pod}: it is selected by more than one PodDisruptionBudget \
                     ({}), which the eviction API does not support",
                    names.join(", ")
                );
                return Check::Refused(PdbVerdict::Multiple(names), message);
            }
        };
        let budget = &self.budgets[index];
        let refused =
            |message: String| Check::Refused(PdbVerdict::Blocked(budget.key.clone()), message);
        let health = match &budget.health {
            Ok(health) => health,
            Err(error) => {
                return refused(format!(
                    "cannot evict pod {pod}: its PodDisruptionBudget {} cannot be evaluated \
                     ({error}), so it allows no disruption",
                    budget.key
                ));
            }
        };
        if !covered.ready
            && (budget.always_allow_unhealthy
                || (health.current_healthy >= health.desired_healthy && health.desired_healthy > 0))
        {
            return Check::Free;
        }
        if health.disruptions_allowed - budget.evicted > 0 {
            return Check::Uses(index);
        }
        let evicting = match budget.evicted {
            0 => String::new(),
            n => format!(", {n} of them already being evicted"),
        };
        refused(format!(
            "cannot evict pod {pod} as it would violate its disruption budget {}, which needs \
             {} healthy pods and has {}{evicting}",
            budget.key, health.desired_healthy, health.current_healthy
        ))
    }
}

#[cfg(test)]
mod tests;
