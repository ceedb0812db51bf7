//! The rollout's numbers: `N` per placement type, `maxUnavailable` and `maxSurge` as counts
//! or percentages of `N` rounded up, their defaults, and invalid values.

use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::strategy::{RollingUpdateConfig, RolloutStrategy};
use flotilla_placement::rollout::{
    InvalidLimit, Limits, RolloutInput, rollout, unavailable_period,
};
use k8s_openapi::jiff::SignedDuration;

use crate::fixtures::{bound, int, now, pick_n, rolling, run, scheduled, text, unscheduled};

fn limits(target: usize, max_unavailable: usize, max_surge: usize) -> Option<Limits> {
    Some(Limits {
        target,
        max_unavailable,
        max_surge,
    })
}

#[test]
fn target_is_bindings_for_pick_all_names_for_pick_fixed_and_n_for_pick_n() {
    let pick_all = PlacementPolicy::default();
    let pick_fixed = PlacementPolicy {
        placement_type: Some(PlacementType::PickFixed),
        cluster_names: Some(vec!["a".into(), "b".into(), "c".into()]),
        ..Default::default()
    };
    // Two Bound, one Scheduled, one Unscheduled (not targeted).
    let bindings = [bound("a"), bound("b"), scheduled("c"), unscheduled("d")];
    let defaults = rolling(None, None);
    let cases = [
        (&pick_all, limits(3, 1, 1)),
        (&pick_fixed, limits(3, 1, 1)),
        (&pick_n(8), limits(8, 2, 2)),
        (&pick_n(0), limits(0, 0, 0)),
    ];
    for (policy, expected) in cases {
        assert_eq!(
            run(policy, &defaults, &bindings).limits,
            expected,
            "{policy:?}"
        );
    }
}

#[test]
fn counts_stay_and_percentages_of_n_round_up() {
    let cases = [
        (4, None, None, (1, 1)),
        (5, None, None, (2, 2)),
        (10, text("10%"), text("0%"), (1, 0)),
        (10, text("11%"), text("100%"), (2, 10)),
        (3, text("50%"), text("34%"), (2, 2)),
        (3, int(0), int(5), (0, 5)),
        (3, text("2"), int(1), (2, 1)),
        (1, text("1%"), text("1%"), (1, 1)),
    ];
    for (n, max_unavailable, max_surge, (mu, ms)) in cases {
        let strategy = rolling(max_unavailable.clone(), max_surge.clone());
        assert_eq!(
            run(&pick_n(n), &strategy, &[]).limits,
            limits(n as usize, mu, ms),
            "N={n} maxUnavailable={max_unavailable:?} maxSurge={max_surge:?}"
        );
    }
}

#[test]
fn a_strategy_without_rolling_update_uses_the_defaults() {
    let plan = rollout(&RolloutInput {
        policy: &pick_n(7),
        strategy: None,
        bindings: &[],
        now: now(),
    })
    .unwrap();
    assert_eq!(plan.limits, limits(7, 2, 2));
    let bare = RolloutStrategy::default();
    assert_eq!(run(&pick_n(7), &bare, &[]).limits, limits(7, 2, 2));
}

#[test]
fn invalid_limits_are_errors_naming_the_field() {
    let cases = [
        (rolling(text("lots"), None), "maxUnavailable", "lots"),
        (rolling(None, int(-1)), "maxSurge", "-1"),
        (rolling(None, text("x%")), "maxSurge", "x%"),
    ];
    for (strategy, field, value) in cases {
        let err = rollout(&RolloutInput {
            policy: &pick_n(3),
            strategy: Some(&strategy),
            bindings: &[],
            now: now(),
        })
        .unwrap_err();
        assert_eq!(
            err,
            InvalidLimit {
                field,
                value: value.into()
            }
        );
        assert!(err.to_string().contains(field), "{err}");
    }
}

#[test]
fn unavailable_period_defaults_to_a_minute_and_is_never_negative() {
    let config = |seconds| RollingUpdateConfig {
        unavailable_period_seconds: seconds,
        ..Default::default()
    };
    let cases = [
        (None, 60),
        (Some(config(None)), 60),
        (Some(config(Some(5))), 5),
        (Some(config(Some(0))), 0),
        (Some(config(Some(-3))), 0),
    ];
    for (config, seconds) in cases {
        assert_eq!(
            unavailable_period(config.as_ref()),
            SignedDuration::from_secs(seconds),
            "{config:?}"
        );
    }
}
