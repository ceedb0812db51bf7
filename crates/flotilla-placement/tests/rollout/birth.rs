//! `bound_at_creation`: which bindings the scheduler is about to create a round would bind at
//! once (so they are created Bound), one case per rule that limits it.

use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_api::placement::strategy::{RolloutStrategy, RolloutStrategyType};
use flotilla_placement::rollout::{
    InvalidLimit, Readiness, RolloutBinding, RolloutInput, bound_at_creation,
};
use flotilla_placement::status::ConditionType;

use crate::fixtures::{Tweak, bound, int, now, pick_n, rolling, scheduled, text};

fn born(
    policy: &PlacementPolicy,
    strategy: &RolloutStrategy,
    existing: &[RolloutBinding],
    arriving: &[RolloutBinding],
) -> Result<Vec<String>, InvalidLimit> {
    bound_at_creation(
        &RolloutInput {
            policy,
            strategy: Some(strategy),
            bindings: existing,
            now: now(),
        },
        arriving,
    )
}

#[test]
fn a_new_placement_binds_every_cluster_at_creation() {
    // PickAll over four new clusters: N = 4, nothing holds the resources yet.
    let arriving = [
        scheduled("d"),
        scheduled("a"),
        scheduled("c"),
        scheduled("b"),
    ];
    let names = born(
        &PlacementPolicy::default(),
        &rolling(None, None),
        &[],
        &arriving,
    );
    assert_eq!(
        names.unwrap(),
        ["crp-a", "crp-b", "crp-c", "crp-d"],
        "every new binding is bound, in name order"
    );
}

#[test]
fn the_surge_budget_limits_births_in_name_order() {
    // PickN 3 with maxSurge 0: a and b hold the resources (one stale, so nothing is
    // deleted), room for one more; x and y arrive.
    let existing = [bound("a"), bound("b").stale()];
    let arriving = [scheduled("y"), scheduled("x")];
    let names = born(&pick_n(3), &rolling(int(0), int(0)), &existing, &arriving);
    assert_eq!(names.unwrap(), ["crp-x"]);
}

#[test]
fn no_room_means_no_birth_bound() {
    // PickN 2, maxSurge 0, both held clusters may still become ready: no room.
    let existing = [bound("a"), bound("b").ready(Readiness::Pending)];
    let names = born(
        &pick_n(2),
        &rolling(None, int(0)),
        &existing,
        &[scheduled("c")],
    );
    assert_eq!(names.unwrap(), Vec::<String>::new());
}

#[test]
fn failed_holders_leave_room_for_new_clusters() {
    // PickN 2, maxSurge 0: b failed, so it cannot become ready and c takes its room.
    let failed = Readiness::Failed {
        condition: ConditionType::Applied,
    };
    let existing = [bound("a"), bound("b").ready(failed)];
    let names = born(
        &pick_n(2),
        &rolling(None, int(0)),
        &existing,
        &[scheduled("c")],
    );
    assert_eq!(names.unwrap(), ["crp-c"]);
}

#[test]
fn under_the_external_strategy_nothing_is_born_bound() {
    let mut strategy = rolling(None, None);
    strategy.type_ = Some(RolloutStrategyType::External);
    let names = born(
        &PlacementPolicy::default(),
        &strategy,
        &[],
        &[scheduled("a")],
    );
    assert_eq!(names.unwrap(), Vec::<String>::new());
}

#[test]
fn an_invalid_limit_is_reported() {
    let names = born(
        &PlacementPolicy::default(),
        &rolling(None, text("lots")),
        &[],
        &[scheduled("a")],
    );
    assert!(names.is_err());
}
