//! How many nodes one budget allows: a count or a rounded-up percentage while active, any
//! number while not.

use flotilla_api::nodes::Budget;
use jiff::Timestamp;

use super::{BudgetError, budget_active};

/// How many nodes may be disrupted. `Nodes` orders below `Unlimited`, so the smallest of
/// several limits is the most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Limit {
    /// At most this many.
    Nodes(u64),
    /// No budget limits the number (Karpenter's `MaxInt32`).
    Unlimited,
}

impl Limit {
    /// The limit left once `disrupting` nodes are already being disrupted (never below 0).
    pub fn less(self, disrupting: u64) -> Limit {
        match self {
            Limit::Nodes(nodes) => Limit::Nodes(nodes.saturating_sub(disrupting)),
            Limit::Unlimited => Limit::Unlimited,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Nodes(nodes) => write!(f, "{nodes}"),
            Limit::Unlimited => f.write_str("unlimited"),
        }
    }
}

/// How many of a pool's `nodes` nodes `budget` lets be disrupted at `now`: its count, or its
/// percentage of `nodes` rounded up (`10%` of 1 node is 1, of 0 nodes 0), while it is active;
/// [`Limit::Unlimited`] while it is not.
///
/// `nodes` is checked even while the budget is inactive, so a typo shows up at once rather
/// than when the window next opens.
pub fn budget_limit(budget: &Budget, nodes: u64, now: Timestamp) -> Result<Limit, BudgetError> {
    let share = NodeShare::parse(&budget.nodes)?;
    Ok(if budget_active(budget, now)? {
        Limit::Nodes(share.of(nodes))
    } else {
        Limit::Unlimited
    })
}

/// A budget's `nodes`: a count, or a percentage of the pool.
enum NodeShare {
    Count(u64),
    Percent(u64),
}

impl NodeShare {
    /// `text` as a count (`"5"`) or a percentage from 0% to 100% (`"20%"`).
    fn parse(text: &str) -> Result<Self, BudgetError> {
        let number = |digits: &str| {
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse::<u64>().ok())
                .flatten()
        };
        let share = match text.strip_suffix('%') {
            Some(percent) => number(percent)
                .filter(|&percent| percent <= 100)
                .map(NodeShare::Percent),
            None => number(text).map(NodeShare::Count),
        };
        share.ok_or_else(|| BudgetError::Nodes {
            nodes: text.to_string(),
        })
    }

    /// The number of nodes this share is of a pool of `nodes` nodes, rounded up.
    fn of(&self, nodes: u64) -> u64 {
        match *self {
            NodeShare::Count(count) => count,
            NodeShare::Percent(percent) => {
                (u128::from(percent) * u128::from(nodes)).div_ceil(100) as u64
            }
        }
    }
}
