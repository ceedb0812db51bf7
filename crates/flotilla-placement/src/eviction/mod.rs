//! KubeFleet's eviction controller (`pkg/controllers/clusterresourceplacementeviction/`) as one
//! pure function: [`evaluate`] judges a `ClusterResourcePlacementEviction` against its
//! placement, the placement's bindings and its disruption budget, and says whether to delete
//! the target binding, with the `Valid` and `Executed` conditions explaining why.
//!
//! In KubeFleet's order:
//!
//! 1. Invalid (`Valid=False`, final): the placement is missing or being deleted, is PickFixed,
//!    or has no binding, or more than one, for the cluster.
//! 2. Executed without deleting anything: the binding is already being deleted.
//! 3. Not executed: the binding is not `Bound` (nor `Unscheduled` after being `Bound`), so
//!    nothing was placed yet.
//! 4. Executed: the binding failed (a terminal `False` Overridden, WorkSynchronized, Applied
//!    or Available) or only reports diffs — no budget protects it; or the placement has no
//!    disruption budget.
//! 5. Otherwise the budget decides: executed iff it allows at least one more disruption, where
//!    `available` counts the placement's bindings with `Available=True` at their generation,
//!    `total` all its bindings, and `N` is PickN's `numberOfClusters` (percentages of `N` round
//!    up): allowed = `maxUnavailable − (total − available)` or `available − minAvailable`, and 0
//!    when the budget sets neither. A PickAll placement has no `N`, so there only an integer
//!    `minAvailable` counts; `maxUnavailable` or a percentage blocks as misconfigured.
//!
//! The messages are KubeFleet's, and a budget decision adds the numbers behind it, e.g.
//! `...; the disruption budget allows 0 more: 2 available, minAvailable 2`.
//!
//! Departure: a budget value the schema should have rejected (a string that is not a
//! percentage) blocks the eviction as misconfigured; KubeFleet reads it as 0.

mod binding;
mod budget;

use flotilla_api::conditions::NewCondition;
use flotilla_api::placement::eviction::{
    EVICTION_EXECUTED, EVICTION_EXECUTED_REASON, EVICTION_INVALID_REASON,
    EVICTION_NOT_EXECUTED_REASON, EVICTION_VALID, EVICTION_VALID_REASON,
};
use flotilla_api::placement::policy::PlacementType;
use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourcePlacement, ClusterResourcePlacementEviction,
    PlacementDisruptionBudgetSpec,
};

use budget::BudgetCheck;

/// Everything one eviction is judged on.
#[derive(Clone, Copy, Debug)]
pub struct EvictionInput<'a> {
    /// The eviction's `spec.clusterName`.
    pub cluster: &'a str,
    /// The ClusterResourcePlacement named by `spec.placementName`, if it exists.
    pub placement: Option<&'a ClusterResourcePlacement>,
    /// Every binding of the placement (labelled with it), whatever its state or cluster.
    pub bindings: &'a [ClusterResourceBinding],
    /// The spec of the disruption budget named as the placement, if it exists.
    pub budget: Option<&'a PlacementDisruptionBudgetSpec>,
}

/// The verdict on one eviction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `Valid=False`: the eviction cannot act on its target, now or later.
    Invalid {
        /// Why.
        message: String,
    },
    /// `Valid=True`, `Executed=False`: the eviction is refused.
    NotExecuted {
        /// Why.
        message: String,
    },
    /// `Valid=True`, `Executed=True`.
    Executed {
        /// The binding to delete (none when it is already being deleted).
        delete_binding: Option<String>,
        /// Why the eviction was allowed.
        message: String,
    },
}

impl Verdict {
    /// The conditions to set on the eviction (`Valid`, then `Executed` for a valid one),
    /// observed at `generation`.
    pub fn conditions(&self, generation: Option<i64>) -> Vec<NewCondition<'static>> {
        let condition = |type_, status, reason, message: &str| NewCondition {
            type_,
            status,
            reason,
            message: message.to_string(),
            observed_generation: generation,
        };
        let valid = condition(EVICTION_VALID, "True", EVICTION_VALID_REASON, VALID);
        match self {
            Verdict::Invalid { message } => vec![condition(
                EVICTION_VALID,
                "False",
                EVICTION_INVALID_REASON,
                message,
            )],
            Verdict::NotExecuted { message } => vec![
                valid,
                condition(
                    EVICTION_EXECUTED,
                    "False",
                    EVICTION_NOT_EXECUTED_REASON,
                    message,
                ),
            ],
            Verdict::Executed { message, .. } => vec![
                valid,
                condition(EVICTION_EXECUTED, "True", EVICTION_EXECUTED_REASON, message),
            ],
        }
    }
}

const VALID: &str = "Eviction is valid";
const MISSING_PLACEMENT: &str = "Failed to find ClusterResourcePlacement targeted by eviction";
const DELETING_PLACEMENT: &str = "Found deleting ClusterResourcePlacement targeted by eviction";
const PICK_FIXED: &str =
    "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction";
const MISSING_BINDING: &str =
    "Failed to find scheduler decision for placement in cluster targeted by eviction";
const MULTIPLE_BINDINGS: &str =
    "Found more than one scheduler decision for placement in cluster targeted by eviction";
const BINDING_DELETING: &str = "Eviction is allowed, resources propagated by placement is currently being removed from cluster targeted by eviction";
const NOTHING_PLACED: &str =
    "Eviction is blocked, placement has not propagated resources to target cluster yet";
const BINDING_FAILED: &str = "Eviction is allowed, placement has failed";
const NO_BUDGET: &str =
    "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified";

/// Whether an eviction is done with: `Valid=False` at its generation, or any `Executed`
/// condition. A final eviction is never evaluated again.
pub fn is_final(eviction: &ClusterResourcePlacementEviction) -> bool {
    let conditions = eviction
        .status
        .as_ref()
        .map_or(&[][..], |s| s.conditions.as_slice());
    let generation = eviction.metadata.generation.unwrap_or_default();
    conditions.iter().any(|c| {
        c.type_ == EVICTION_EXECUTED
            || (c.type_ == EVICTION_VALID
                && c.status == "False"
                && c.observed_generation.unwrap_or_default() == generation)
    })
}

/// Judges one eviction.
pub fn evaluate(input: &EvictionInput<'_>) -> Verdict {
    let invalid = |message: &str| Verdict::Invalid {
        message: message.to_string(),
    };
    let Some(placement) = input.placement else {
        return invalid(MISSING_PLACEMENT);
    };
    if placement.metadata.deletion_timestamp.is_some() {
        return invalid(DELETING_PLACEMENT);
    }
    let placement_type = placement.spec.placement_type();
    if placement_type == PlacementType::PickFixed {
        return invalid(PICK_FIXED);
    }
    let mut targets = input
        .bindings
        .iter()
        .filter(|b| b.spec.target_cluster == input.cluster);
    let target = match (targets.next(), targets.next()) {
        (None, _) => return invalid(MISSING_BINDING),
        (Some(_), Some(_)) => return invalid(MULTIPLE_BINDINGS),
        (Some(target), None) => target,
    };
    let executed = |delete: bool, message: String| Verdict::Executed {
        delete_binding: delete.then(|| target.metadata.name.clone().unwrap_or_default()),
        message,
    };
    if binding::is_deleting(target) {
        return executed(false, BINDING_DELETING.to_string());
    }
    if !binding::may_have_placed(target) {
        return Verdict::NotExecuted {
            message: NOTHING_PLACED.to_string(),
        };
    }
    if binding::has_failed(target) || binding::is_diff_reported(target) {
        return executed(true, BINDING_FAILED.to_string());
    }
    let Some(budget) = input.budget else {
        return executed(true, NO_BUDGET.to_string());
    };
    let number_of_clusters = placement
        .spec
        .policy
        .as_ref()
        .and_then(|p| p.number_of_clusters)
        .unwrap_or_default();
    let available = input
        .bindings
        .iter()
        .filter(|b| binding::is_available(b))
        .count();
    match budget::check(
        budget,
        placement_type,
        number_of_clusters.into(),
        available,
        input.bindings.len(),
    ) {
        BudgetCheck::Misconfigured(message) => Verdict::NotExecuted { message },
        BudgetCheck::Counted {
            allowed,
            available,
            total,
            detail,
        } => {
            let verdict = if allowed > 0 { "allowed" } else { "blocked" };
            let message = format!(
                "Eviction is {verdict} by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: {available}, totalPlacements: {total}; the disruption budget allows {allowed} more: {detail}"
            );
            if allowed > 0 {
                executed(true, message)
            } else {
                Verdict::NotExecuted { message }
            }
        }
    }
}
