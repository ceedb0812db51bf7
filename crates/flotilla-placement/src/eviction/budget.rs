//! KubeFleet's disruption budget arithmetic (`isEvictionAllowed`), with the numbers it used.
//!
//! - `available` counts the placement's bindings with `Available=True` at their generation;
//!   `total` counts all of its bindings, whatever their state.
//! - `N` is `numberOfClusters` for PickN. PickAll has no `N`: there a budget may only set an
//!   integer `minAvailable` (`maxUnavailable`, or a percentage `minAvailable`, blocks every
//!   eviction as misconfigured), so `N` is never needed.
//! - `maxUnavailable`: allowed = ⌈maxUnavailable of N⌉ − (total − available).
//! - `minAvailable`: allowed = available − ⌈minAvailable of N⌉.
//! - Neither field: allowed = 0.
//!
//! The eviction proceeds iff allowed > 0.

use flotilla_api::placement::PlacementDisruptionBudgetSpec;
use flotilla_api::placement::policy::PlacementType;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// KubeFleet's message for a PickAll budget that sets `maxUnavailable` or a percentage.
const MISCONFIGURED: &str = "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll ClusterResourcePlacement";

/// What the budget says about one more disruption.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BudgetCheck {
    /// The budget cannot be evaluated for this placement; nothing may be evicted.
    Misconfigured(String),
    /// The budget's arithmetic.
    Counted {
        /// Further disruptions allowed (never below 0).
        allowed: i64,
        /// Bindings available at their generation.
        available: usize,
        /// All bindings of the placement.
        total: usize,
        /// How `allowed` was computed, in words.
        detail: String,
    },
}

/// Checks `budget` for a placement of `placement_type` with `number_of_clusters` (PickN's `N`)
/// and `total` bindings of which `available` are available.
pub(crate) fn check(
    budget: &PlacementDisruptionBudgetSpec,
    placement_type: PlacementType,
    number_of_clusters: i64,
    available: usize,
    total: usize,
) -> BudgetCheck {
    let pick_all = placement_type == PlacementType::PickAll;
    if pick_all
        && (budget.max_unavailable.is_some()
            || matches!(budget.min_available, Some(IntOrString::String(_))))
    {
        return BudgetCheck::Misconfigured(MISCONFIGURED.to_string());
    }
    let n = if placement_type == PlacementType::PickN {
        number_of_clusters.max(0)
    } else {
        0
    };
    let (available_count, total_count) = (count(available), count(total));
    let (allowed, detail) = match (&budget.max_unavailable, &budget.min_available) {
        (Some(max), _) => {
            let Some((max_unavailable, text)) = scaled(max, n) else {
                return invalid("maxUnavailable", max);
            };
            let unavailable = total_count - available_count;
            (
                max_unavailable - unavailable,
                format!("maxUnavailable {text}, {unavailable} of {total} unavailable"),
            )
        }
        (None, Some(min)) => {
            let Some((min_available, text)) = scaled(min, n) else {
                return invalid("minAvailable", min);
            };
            (
                available_count - min_available,
                format!("{available} available, minAvailable {text}"),
            )
        }
        (None, None) => (
            0,
            "the budget sets neither maxUnavailable nor minAvailable".to_string(),
        ),
    };
    BudgetCheck::Counted {
        allowed: allowed.max(0),
        available,
        total,
        detail,
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An integer as is, or a percentage of `n` rounded up; with the text explaining it
/// (`2`, `25% of 5 clusters = 2`). `None` for a string that is not a percentage.
fn scaled(value: &IntOrString, n: i64) -> Option<(i64, String)> {
    match value {
        IntOrString::Int(i) => Some((i64::from(*i), i.to_string())),
        IntOrString::String(s) => {
            let percent: i64 = s.strip_suffix('%')?.parse::<u32>().ok()?.into();
            let scaled = (percent * n + 99) / 100;
            Some((scaled, format!("{s} of {n} clusters = {scaled}")))
        }
    }
}

/// A value the schema should have rejected: blocks, naming the field.
fn invalid(field: &str, value: &IntOrString) -> BudgetCheck {
    let text = match value {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    };
    BudgetCheck::Misconfigured(format!(
        "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget: {field} {text:?} is neither an integer nor a percentage"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(max: Option<IntOrString>, min: Option<IntOrString>) -> PlacementDisruptionBudgetSpec {
        PlacementDisruptionBudgetSpec {
            max_unavailable: max,
            min_available: min,
        }
    }

    fn int(i: i32) -> Option<IntOrString> {
        Some(IntOrString::Int(i))
    }

    fn text(s: &str) -> Option<IntOrString> {
        Some(IntOrString::String(s.to_string()))
    }

    #[test]
    fn arithmetic_table() {
        use PlacementType::{PickAll, PickN};
        // (budget, type, N, available, total) → (allowed, detail)
        let cases = [
            (
                budget(None, int(2)),
                PickN,
                3,
                2,
                3,
                0,
                "2 available, minAvailable 2",
            ),
            (
                budget(None, int(2)),
                PickN,
                3,
                3,
                3,
                1,
                "3 available, minAvailable 2",
            ),
            (
                budget(None, int(5)),
                PickN,
                3,
                3,
                3,
                0,
                "3 available, minAvailable 5",
            ),
            (
                budget(None, text("50%")),
                PickN,
                5,
                3,
                5,
                0,
                "3 available, minAvailable 50% of 5 clusters = 3",
            ),
            (
                budget(None, text("50%")),
                PickN,
                4,
                3,
                4,
                1,
                "3 available, minAvailable 50% of 4 clusters = 2",
            ),
            (
                budget(int(1), None),
                PickN,
                3,
                3,
                3,
                1,
                "maxUnavailable 1, 0 of 3 unavailable",
            ),
            (
                budget(int(1), None),
                PickN,
                3,
                2,
                3,
                0,
                "maxUnavailable 1, 1 of 3 unavailable",
            ),
            (
                budget(text("25%"), None),
                PickN,
                5,
                5,
                5,
                2,
                "maxUnavailable 25% of 5 clusters = 2, 0 of 5 unavailable",
            ),
            (
                budget(text("0%"), None),
                PickN,
                5,
                5,
                5,
                0,
                "maxUnavailable 0% of 5 clusters = 0, 0 of 5 unavailable",
            ),
            // Bindings beyond N (e.g. Unscheduled ones still being removed) count as
            // unavailable when they are not available.
            (
                budget(int(2), None),
                PickN,
                2,
                2,
                4,
                0,
                "maxUnavailable 2, 2 of 4 unavailable",
            ),
            (
                budget(None, int(2)),
                PickAll,
                0,
                4,
                4,
                2,
                "4 available, minAvailable 2",
            ),
            (
                budget(None, int(0)),
                PickAll,
                0,
                0,
                2,
                0,
                "0 available, minAvailable 0",
            ),
            (
                budget(None, None),
                PickN,
                3,
                3,
                3,
                0,
                "the budget sets neither maxUnavailable nor minAvailable",
            ),
        ];
        for (budget, kind, n, available, total, allowed, detail) in cases {
            assert_eq!(
                check(&budget, kind, n, available, total),
                BudgetCheck::Counted {
                    allowed,
                    available,
                    total,
                    detail: detail.to_string()
                },
                "{budget:?} {kind:?} N={n}"
            );
        }
    }

    #[test]
    fn misconfigured_budgets_block() {
        for budget in [
            budget(int(1), None),
            budget(text("10%"), None),
            budget(None, text("10%")),
        ] {
            assert_eq!(
                check(&budget, PlacementType::PickAll, 0, 3, 3),
                BudgetCheck::Misconfigured(MISCONFIGURED.to_string()),
                "{budget:?}"
            );
        }
        assert_eq!(
            check(&budget(None, text("3")), PlacementType::PickN, 3, 3, 3),
            BudgetCheck::Misconfigured(
                "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget: minAvailable \"3\" is neither an integer nor a percentage"
                    .to_string()
            )
        );
    }
}
