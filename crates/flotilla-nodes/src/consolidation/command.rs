//! What consolidation decides, and why: a command to delete or replace candidates, the
//! candidate sets it rejected on the way, and how the search went.

use std::fmt;

use super::balanced::PoolScore;
use crate::scheduling::NewClaim;
use crate::scheduling::instance_types::MinValuesShortfall;

/// Which consolidation method produced a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Several nodes at once, replaced by at most one.
    MultiNode,
    /// One node, replaced by at most one.
    SingleNode,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::MultiNode => "multi-node consolidation",
            Method::SingleNode => "single-node consolidation",
        })
    }
}

/// What to do with the candidates.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Delete them: their pods fit on the remaining nodes.
    Delete,
    /// Launch this node, then delete them. Its options are cheapest first and every one's worst
    /// launch price is below the candidates' total price.
    Replace(NewClaim),
}

/// A consolidation command.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// The method that produced it.
    pub method: Method,
    /// The candidates' node names, in the caller's order.
    pub candidates: Vec<String>,
    /// Delete or replace.
    pub action: Action,
    /// What the candidates cost together, per hour.
    pub candidates_price: f64,
    /// The scores of the Balanced pools among the candidates' (all approved); empty when none
    /// is Balanced.
    pub scores: Vec<PoolScore>,
}

impl Command {
    /// The cheapest option's price of the replacement, if any.
    pub fn replacement_price(&self) -> Option<f64> {
        match &self.action {
            Action::Delete => None,
            Action::Replace(claim) => claim.cheapest_price(),
        }
    }
}

impl fmt::Display for Command {
    /// `multi-node consolidation: delete a, b ($0.3000/h): their pods fit on other nodes`, or
    /// `… replace a, b ($0.3000/h) with one node from pool "default" (12 options, cheapest
    /// kwok-… at $0.1000/h)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let candidates = self.candidates.join(", ");
        match &self.action {
            Action::Delete => write!(
                f,
                "{}: delete {candidates} (${:.4}/h): their pods fit on other nodes",
                self.method, self.candidates_price
            ),
            Action::Replace(claim) => {
                write!(
                    f,
                    "{}: replace {candidates} (${:.4}/h) with one node from pool {:?}",
                    self.method, self.candidates_price, claim.pool
                )?;
                if let Some(cheapest) = claim.instance_type_options.first() {
                    write!(
                        f,
                        " ({} options, cheapest {} at ${:.4}/h)",
                        claim.instance_type_options.len(),
                        cheapest.name,
                        cheapest.price
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// Why a set of candidates cannot be consolidated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Rejection {
    /// A pod of a candidate would not schedule anywhere else.
    #[error("pod {pod} would not schedule: {reason}")]
    PodUnschedulable {
        /// The pod.
        pod: String,
        /// The scheduler's reason.
        reason: String,
    },
    /// The pods would need more than one new node.
    #[error("the pods would need {0} new nodes, and consolidation replaces with at most one")]
    TooManyReplacements(usize),
    /// No replacement option is cheaper than the candidates.
    #[error(
        "replacement would not be cheaper: no option's worst launch price is below the candidates' ${candidates_price:.4}/h{}",
        cheapest.map(|p| format!(" (cheapest option ${p:.4}/h)")).unwrap_or_default()
    )]
    NotCheaper {
        /// What the candidates cost together.
        candidates_price: f64,
        /// The cheapest option the pods could use, before the price filter.
        cheapest: Option<f64>,
    },
    /// Every cheaper option is an instance type a candidate already runs, not cheaper than that
    /// candidate (multi-node's `filterOutSameInstanceType`): deleting alone would disrupt less.
    #[error("replacement would be an instance type the candidates already run, at no lower price")]
    SameInstanceType,
    /// Spot candidates would be replaced by spot, and spot-to-spot consolidation is off.
    #[error("spot-to-spot consolidation is disabled: a spot node is not replaced by a spot node")]
    SpotToSpotDisabled,
    /// Single-node spot-to-spot needs enough cheaper types for the launch to stay flexible.
    #[error("spot-to-spot consolidation needs {needed} cheaper instance types, found {found}")]
    TooFewCheaperSpotTypes {
        /// How many it needs.
        needed: usize,
        /// How many there are.
        found: usize,
    },
    /// The cheaper options no longer span the pool's `minValues`.
    #[error("the cheaper options break the pool's {0}")]
    MinValues(MinValuesShortfall),
    /// A Balanced pool finds the move disrupts too much for what it saves.
    #[error(
        "NodePool {:?} has consolidation policy Balanced and the move saves too little for its disruption: {}",
        .0.pool,
        .0
    )]
    Unbalanced(PoolScore),
}

/// A candidate set a method tried and rejected.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// The candidates' node names.
    pub candidates: Vec<String>,
    /// Why.
    pub why: Rejection,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot consolidate {}: {}",
            self.candidates.join(", "),
            self.why
        )
    }
}

/// What a consolidation method decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// The command to run, if any.
    pub command: Option<Command>,
    /// The candidate sets tried and rejected, in the order tried.
    pub rejected: Vec<Rejected>,
    /// How many scheduling simulations were run.
    pub simulations: usize,
    /// Whether the caller's stop callback ended the search early.
    pub stopped: bool,
    /// Whether some candidate was skipped because its pool had no budget left (Karpenter then
    /// does not mark the cluster consolidated).
    pub constrained_by_budgets: bool,
    /// Single-node only: the pools whose candidates were not examined because the search
    /// stopped, to try first next time.
    pub unexamined_pools: Vec<String>,
}
