//! A pool's budgets together: per reason, the most restrictive active budget less the nodes
//! already disrupting, with the budget (or error) that sets each figure.

use flotilla_api::nodes::node_pool::DEFAULT_BUDGET_NODES;
use flotilla_api::nodes::{AllowedDisruptions, Budget, DisruptionReason};
use jiff::Timestamp;

use super::{BudgetError, Limit, budget_limit};

/// The node counts of a pool that budgets are measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolCounts {
    /// The pool's nodes that are managed, initialized and whose instance is not terminating:
    /// what percentages are of.
    pub nodes: u64,
    /// Of those, the nodes already being disrupted (not Ready, or marked for deletion): they
    /// use up the allowance.
    pub disrupting: u64,
}

/// What sets the figure for one reason.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// The most restrictive active budget covering the reason (the first, on a tie).
    Budget {
        /// Its position in `spec.disruption.budgets`; `None` for the default budget of a pool
        /// that lists none.
        index: Option<usize>,
        /// The budget.
        budget: Budget,
        /// Its limit, before the nodes already disrupting are taken off.
        limit: u64,
    },
    /// No active budget covers the reason.
    NoActiveBudget,
    /// A budget (not necessarily one covering the reason) is invalid, which closes the pool.
    Invalid {
        /// The first invalid budget's position in `spec.disruption.budgets`.
        index: usize,
        /// What is wrong with it.
        error: BudgetError,
    },
}

/// How many more nodes may be disrupted for one reason, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ReasonAllowance {
    /// The reason.
    pub reason: DisruptionReason,
    /// How many more nodes may be disrupted for it now.
    pub allowed: Limit,
    /// What sets the figure.
    pub basis: Basis,
}

/// How many more nodes of a pool may be disrupted now, for every reason.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolAllowances {
    /// The counts the figures are computed from.
    pub counts: PoolCounts,
    /// One entry per reason, in [`DisruptionReason::ALL`] order.
    pub reasons: Vec<ReasonAllowance>,
}

/// How many more of a pool's nodes may be disrupted at `now` for each reason, given its
/// `budgets` (`spec.disruption.budgets`) and its node `counts`.
///
/// - Absent budgets mean the default, one budget of `10%`. An explicitly empty list means no
///   budgets, so no limit (as in Karpenter, where the default applies only to an absent
///   field).
/// - A budget covers a reason when its `reasons` is absent or empty or names the reason; the
///   smallest limit among the budgets covering a reason wins, and none means no limit.
/// - Any invalid budget, even one covering other reasons only, gives 0 for every reason: the
///   pool fails closed until the budget is fixed.
/// - The nodes already disrupting are taken off, never going below 0.
pub fn allowed_disruptions(
    budgets: Option<&[Budget]>,
    counts: PoolCounts,
    now: Timestamp,
) -> PoolAllowances {
    let default = [Budget {
        nodes: DEFAULT_BUDGET_NODES.to_string(),
        ..Budget::default()
    }];
    let (budgets, indexed) = match budgets {
        Some(budgets) => (budgets, true),
        None => (&default[..], false),
    };
    let limits: Result<Vec<Limit>, (usize, BudgetError)> = budgets
        .iter()
        .enumerate()
        .map(|(index, budget)| budget_limit(budget, counts.nodes, now).map_err(|e| (index, e)))
        .collect();
    let reasons = DisruptionReason::ALL
        .into_iter()
        .map(|reason| match &limits {
            Err((index, error)) => ReasonAllowance {
                reason,
                allowed: Limit::Nodes(0),
                basis: Basis::Invalid {
                    index: *index,
                    error: error.clone(),
                },
            },
            Ok(limits) => {
                let tightest = budgets
                    .iter()
                    .zip(limits)
                    .enumerate()
                    .filter(|(_, (budget, _))| covers(budget, reason))
                    .min_by_key(|(_, (_, limit))| **limit);
                match tightest {
                    Some((index, (budget, &Limit::Nodes(limit)))) => ReasonAllowance {
                        reason,
                        allowed: Limit::Nodes(limit).less(counts.disrupting),
                        basis: Basis::Budget {
                            index: indexed.then_some(index),
                            budget: budget.clone(),
                            limit,
                        },
                    },
                    _ => ReasonAllowance {
                        reason,
                        allowed: Limit::Unlimited,
                        basis: Basis::NoActiveBudget,
                    },
                }
            }
        })
        .collect();
    PoolAllowances { counts, reasons }
}

/// Whether `budget` limits disruptions for `reason`: it names no reasons, or names this one.
fn covers(budget: &Budget, reason: DisruptionReason) -> bool {
    budget
        .reasons
        .as_ref()
        .is_none_or(|reasons| reasons.is_empty() || reasons.contains(&reason))
}

impl PoolAllowances {
    /// How many more nodes may be disrupted for `reason` now.
    pub fn allowed(&self, reason: DisruptionReason) -> Limit {
        self.reasons
            .iter()
            .find(|entry| entry.reason == reason)
            .map_or(Limit::Nodes(0), |entry| entry.allowed)
    }

    /// The figures as `status.allowedDisruptions`, each with its explanation. Status has no
    /// "unlimited": a reason no budget limits may disrupt every node not already
    /// disrupting, and its message says that no budget limits it.
    pub fn to_status(&self) -> Vec<AllowedDisruptions> {
        self.reasons
            .iter()
            .map(|entry| AllowedDisruptions {
                reason: entry.reason.as_str().to_string(),
                allowed: self.status_figure(entry.allowed),
                message: Some(self.message(entry)),
            })
            .collect()
    }

    /// The figures on one line, for the `Allowed-Disruptions` column
    /// (`Underutilized=1 Empty=1 Drifted=0`), with the same numbers as
    /// [`to_status`](Self::to_status).
    pub fn summary(&self) -> String {
        self.reasons
            .iter()
            .map(|entry| {
                let figure = self.status_figure(entry.allowed);
                format!("{}={figure}", entry.reason.as_str())
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `allowed` as a status number, never more than the nodes not already disrupting (a
    /// budget of 10 on a pool of 2 nodes allows 2; unlimited allows them all), so the figure
    /// shown never rises when a more restrictive budget becomes active.
    fn status_figure(&self, allowed: Limit) -> i64 {
        let left = self.counts.nodes.saturating_sub(self.counts.disrupting);
        let nodes = match allowed {
            Limit::Nodes(nodes) => nodes.min(left),
            Limit::Unlimited => left,
        };
        i64::try_from(nodes).unwrap_or(i64::MAX)
    }

    /// Why `entry` has its figure, for users: `budget 2 ("0", schedule "0 9 * * 1-5" for 8h)
    /// is active: 0 of 12 nodes`, `no active budget limits Drifted`, or the invalid budget.
    fn message(&self, entry: &ReasonAllowance) -> String {
        let PoolCounts { nodes, disrupting } = self.counts;
        let text = match &entry.basis {
            Basis::Budget {
                index,
                budget,
                limit,
            } => {
                let name = index.map_or("the default budget".to_string(), |index| {
                    format!("budget {index}")
                });
                let limit = (*limit).min(nodes);
                match (&budget.schedule, &budget.duration) {
                    (Some(schedule), Some(duration)) => format!(
                        "{name} ({:?}, schedule {schedule:?} for {duration}) is active: {limit} of {nodes} nodes",
                        budget.nodes
                    ),
                    _ => format!("{name} ({:?}): {limit} of {nodes} nodes", budget.nodes),
                }
            }
            Basis::NoActiveBudget => {
                format!("no active budget limits {}", entry.reason.as_str())
            }
            Basis::Invalid { index, error } => {
                return format!(
                    "budget {index} is invalid, so no node of this pool may be disrupted for any reason: {error}"
                );
            }
        };
        if disrupting > 0 {
            format!("{text}, {disrupting} already disrupting")
        } else {
            text
        }
    }
}
