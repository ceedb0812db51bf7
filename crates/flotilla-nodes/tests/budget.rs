//! Disruption budgets: the examples of AKS node auto-provisioning's disruption guide (seed 003)
//! at chosen UTC instants, the arithmetic's edge cases, and properties over random budgets.
//!
//! 2024-01-01 is a Monday, so 2024-01-05/06/07/08 are Friday, Saturday, Sunday, Monday.

use flotilla_api::nodes::{AllowedDisruptions, Budget, DisruptionReason};
use flotilla_nodes::budget::{
    Basis, BudgetError, Limit, PoolCounts, allowed_disruptions, budget_active, budget_limit,
};
use jiff::Timestamp;
use proptest::prelude::*;

use DisruptionReason::{Drifted, Empty, Underutilized};

fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A budget without a schedule: always active.
fn always(nodes: &str) -> Budget {
    Budget {
        nodes: nodes.to_string(),
        ..Budget::default()
    }
}

/// A budget active for `duration` after each time `schedule` fires.
fn scheduled(nodes: &str, schedule: &str, duration: &str) -> Budget {
    Budget {
        schedule: Some(schedule.to_string()),
        duration: Some(duration.to_string()),
        ..always(nodes)
    }
}

/// `budget` limited to `reasons`.
fn only(reasons: &[DisruptionReason], budget: Budget) -> Budget {
    Budget {
        reasons: Some(reasons.to_vec()),
        ..budget
    }
}

fn counts(nodes: u64, disrupting: u64) -> PoolCounts {
    PoolCounts { nodes, disrupting }
}

/// The figure every reason gets; panics if the reasons differ.
fn same_for_all(budgets: &[Budget], pool: PoolCounts, now: &str) -> Limit {
    let result = allowed_disruptions(Some(budgets), pool, at(now));
    let figure = result.allowed(Underutilized);
    for reason in DisruptionReason::ALL {
        assert_eq!(result.allowed(reason), figure, "{reason:?} at {now}");
    }
    figure
}

/// The message of `reason`'s status entry.
fn message(budgets: Option<&[Budget]>, pool: PoolCounts, now: &str, reason: &str) -> String {
    allowed_disruptions(budgets, pool, at(now))
        .to_status()
        .into_iter()
        .find(|entry| entry.reason == reason)
        .and_then(|entry| entry.message)
        .unwrap_or_else(|| panic!("no message for {reason}"))
}

#[test]
fn business_hours_block_weekdays_from_nine_to_five() {
    let business_hours = scheduled("0", "0 9 * * 1-5", "8h");
    for (now, active) in [
        ("2024-01-08T08:59:00Z", false),
        ("2024-01-08T08:59:59.999Z", false),
        ("2024-01-08T09:00:00Z", true),
        ("2024-01-08T12:00:00Z", true),
        ("2024-01-08T16:59:59Z", true),
        ("2024-01-08T17:00:00Z", false),
        ("2024-01-05T16:00:00Z", true),
        ("2024-01-05T17:00:00Z", false),
        ("2024-01-06T09:00:00Z", false),
        ("2024-01-06T12:00:00Z", false),
        ("2024-01-07T10:00:00Z", false),
    ] {
        assert_eq!(budget_active(&business_hours, at(now)), Ok(active), "{now}");
    }
    // The seed's first example: 10% of the pool outside business hours, none inside.
    let budgets = [always("10%"), business_hours];
    let pool = counts(12, 0);
    for (now, allowed) in [
        ("2024-01-08T08:59:00Z", 2),
        ("2024-01-08T09:00:00Z", 0),
        ("2024-01-08T16:59:00Z", 0),
        ("2024-01-08T17:00:00Z", 2),
        ("2024-01-06T10:00:00Z", 2),
    ] {
        assert_eq!(
            same_for_all(&budgets, pool, now),
            Limit::Nodes(allowed),
            "{now}"
        );
    }
    assert_eq!(
        message(Some(&budgets), pool, "2024-01-08T10:00:00Z", "Drifted"),
        r#"budget 1 ("0", schedule "0 9 * * 1-5" for 8h) is active: 0 of 12 nodes"#
    );
    assert_eq!(
        message(Some(&budgets), pool, "2024-01-06T10:00:00Z", "Empty"),
        r#"budget 0 ("10%"): 2 of 12 nodes"#
    );
}

#[test]
fn weekend_only_is_blocked_always_because_the_smallest_active_budget_wins() {
    let weekend = scheduled("50%", "0 0 * * 6", "48h");
    // On its own, the weekend budget opens Saturday 00:00 until Monday 00:00 and allows half
    // the pool; outside the window it does not limit at all.
    for (now, limit) in [
        ("2024-01-05T23:59:00Z", Limit::Unlimited),
        ("2024-01-06T00:00:00Z", Limit::Nodes(5)),
        ("2024-01-07T23:59:59Z", Limit::Nodes(5)),
        ("2024-01-08T00:00:00Z", Limit::Unlimited),
        ("2024-01-10T12:00:00Z", Limit::Unlimited),
    ] {
        assert_eq!(budget_limit(&weekend, 10, at(now)), Ok(limit), "{now}");
    }
    // The guide pairs it with an unscheduled "0" to "block all other times", but budgets only
    // restrict: the "0" is active at all times and is the minimum, so this pool never
    // disrupts, weekends included (Karpenter's arithmetic). A weekend-only pool needs
    // blocking windows instead, such as "0" from Monday 00:00 for 120h.
    let budgets = [weekend, always("0")];
    for now in [
        "2024-01-06T12:00:00Z",
        "2024-01-07T12:00:00Z",
        "2024-01-10T12:00:00Z",
    ] {
        assert_eq!(
            same_for_all(&budgets, counts(10, 0), now),
            Limit::Nodes(0),
            "{now}"
        );
    }
    assert_eq!(
        message(
            Some(&budgets),
            counts(10, 0),
            "2024-01-06T12:00:00Z",
            "Empty"
        ),
        r#"budget 1 ("0"): 0 of 10 nodes"#
    );
    let weekday_block = [scheduled("0", "0 0 * * 1", "120h")];
    for (now, limit) in [
        ("2024-01-05T23:59:00Z", Limit::Nodes(0)),
        ("2024-01-06T00:00:00Z", Limit::Unlimited),
        ("2024-01-07T23:59:00Z", Limit::Unlimited),
        ("2024-01-08T00:00:00Z", Limit::Nodes(0)),
    ] {
        assert_eq!(
            same_for_all(&weekday_block, counts(10, 0), now),
            limit,
            "{now}"
        );
    }
}

#[test]
fn gradual_rollout_is_unlimited_outside_its_windows() {
    let budgets = [
        scheduled("1", "0 2 * * *", "2h"),
        scheduled("3", "0 4 * * *", "4h"),
    ];
    for (now, limit) in [
        ("2024-01-08T01:59:00Z", Limit::Unlimited),
        ("2024-01-08T02:00:00Z", Limit::Nodes(1)),
        ("2024-01-08T03:59:00Z", Limit::Nodes(1)),
        ("2024-01-08T04:00:00Z", Limit::Nodes(3)),
        ("2024-01-08T07:59:00Z", Limit::Nodes(3)),
        ("2024-01-08T08:00:00Z", Limit::Unlimited),
        ("2024-01-08T23:00:00Z", Limit::Unlimited),
    ] {
        assert_eq!(same_for_all(&budgets, counts(20, 0), now), limit, "{now}");
    }
    let result = allowed_disruptions(Some(&budgets), counts(20, 2), at("2024-01-08T12:00:00Z"));
    assert_eq!(
        result.to_status()[2],
        AllowedDisruptions {
            reason: "Drifted".to_string(),
            allowed: 18,
            message: Some("no active budget limits Drifted, 2 already disrupting".to_string()),
        }
    );
}

#[test]
fn three_budgets_cap_at_a_fifth_at_five_and_at_none_after_midnight() {
    let budgets = [always("20%"), always("5"), scheduled("0", "@daily", "10m")];
    for (nodes, allowed, by) in [(3, 1, 0), (10, 2, 0), (25, 5, 0), (40, 5, 1)] {
        let pool = counts(nodes, 0);
        assert_eq!(
            same_for_all(&budgets, pool, "2024-01-08T12:00:00Z"),
            Limit::Nodes(allowed),
            "{nodes} nodes"
        );
        let result = allowed_disruptions(Some(&budgets), pool, at("2024-01-08T12:00:00Z"));
        assert!(
            matches!(&result.reasons[0].basis, Basis::Budget { index: Some(i), .. } if *i == by),
            "{nodes} nodes: {:?}",
            result.reasons[0].basis
        );
        for now in ["2024-01-08T00:00:00Z", "2024-01-08T00:09:59Z"] {
            assert_eq!(
                same_for_all(&budgets, pool, now),
                Limit::Nodes(0),
                "{nodes} nodes at {now}"
            );
        }
        assert_eq!(
            same_for_all(&budgets, pool, "2024-01-08T00:10:00Z"),
            Limit::Nodes(allowed),
            "{nodes} nodes at 00:10"
        );
    }
    assert_eq!(
        message(
            Some(&budgets),
            counts(40, 0),
            "2024-01-08T00:05:00Z",
            "Underutilized"
        ),
        r#"budget 2 ("0", schedule "@daily" for 10m) is active: 0 of 40 nodes"#
    );
    assert_eq!(
        message(
            Some(&budgets),
            counts(3, 0),
            "2024-01-08T12:00:00Z",
            "Underutilized"
        ),
        r#"budget 0 ("20%"): 1 of 3 nodes"#
    );
}

#[test]
fn percentages_round_up() {
    let now = at("2024-01-08T12:00:00Z");
    for (nodes, pool, limit) in [
        ("10%", 1, 1),
        ("10%", 0, 0),
        ("10%", 10, 1),
        ("10%", 11, 2),
        ("100%", 7, 7),
        ("0%", 7, 0),
        ("33%", 3, 1),
        ("7", 3, 7),
    ] {
        assert_eq!(
            budget_limit(&always(nodes), pool, now),
            Ok(Limit::Nodes(limit)),
            "{nodes} of {pool}"
        );
    }
}

#[test]
fn absent_budgets_mean_ten_percent_and_an_empty_list_means_none() {
    let now = at("2024-01-08T12:00:00Z");
    let default = allowed_disruptions(None, counts(30, 0), now);
    assert_eq!(default.allowed(Drifted), Limit::Nodes(3));
    assert_eq!(
        message(None, counts(30, 1), "2024-01-08T12:00:00Z", "Empty"),
        r#"the default budget ("10%"): 3 of 30 nodes, 1 already disrupting"#
    );
    let none = allowed_disruptions(Some(&[]), counts(30, 4), now);
    assert_eq!(none.allowed(Drifted), Limit::Unlimited);
    assert_eq!(none.summary(), "Underutilized=26 Empty=26 Drifted=26");
}

#[test]
fn disrupting_nodes_use_up_the_allowance_and_never_go_below_zero() {
    let budgets = [always("10%")];
    for (disrupting, allowed) in [(0, 2), (1, 1), (2, 0), (5, 0)] {
        assert_eq!(
            same_for_all(&budgets, counts(20, disrupting), "2024-01-08T12:00:00Z"),
            Limit::Nodes(allowed),
            "{disrupting} disrupting"
        );
    }
}

#[test]
fn the_status_never_shows_more_than_the_pool_s_nodes() {
    // A budget of 10 on a pool of 2 nodes, one of them disrupting: 1 more may go.
    let result = allowed_disruptions(
        Some(&[always("10")]),
        counts(2, 1),
        at("2024-01-08T12:00:00Z"),
    );
    assert_eq!(result.summary(), "Underutilized=1 Empty=1 Drifted=1");
    assert_eq!(
        message(
            Some(&[always("10")]),
            counts(2, 0),
            "2024-01-08T12:00:00Z",
            "Empty"
        ),
        "budget 0 (\"10\"): 2 of 2 nodes"
    );
}

#[test]
fn budgets_cover_the_reasons_they_name_or_every_reason() {
    let budgets = [
        only(&[Drifted], always("0")),
        only(&[], always("3")),
        only(&[Empty, Drifted], always("1")),
        always("10%"),
    ];
    let result = allowed_disruptions(Some(&budgets), counts(50, 0), at("2024-01-08T12:00:00Z"));
    assert_eq!(result.summary(), "Underutilized=3 Empty=1 Drifted=0");
    let status = result.to_status();
    let messages: Vec<_> = status.iter().map(|e| e.message.as_deref()).collect();
    assert_eq!(
        messages,
        [
            Some(r#"budget 1 ("3"): 3 of 50 nodes"#),
            Some(r#"budget 2 ("1"): 1 of 50 nodes"#),
            Some(r#"budget 0 ("0"): 0 of 50 nodes"#),
        ]
    );
    let drift_only = [only(&[Drifted], always("0"))];
    let result = allowed_disruptions(Some(&drift_only), counts(5, 0), at("2024-01-08T12:00:00Z"));
    assert_eq!(result.allowed(Underutilized), Limit::Unlimited);
    assert_eq!(result.summary(), "Underutilized=5 Empty=5 Drifted=0");
}

#[test]
fn a_malformed_budget_closes_every_reason_of_the_pool() {
    let budgets = [
        always("10%"),
        only(&[Drifted], scheduled("0", "0 25 * * *", "1h")),
    ];
    let result = allowed_disruptions(Some(&budgets), counts(40, 0), at("2024-01-08T12:00:00Z"));
    assert_eq!(result.summary(), "Underutilized=0 Empty=0 Drifted=0");
    for entry in result.to_status() {
        assert_eq!(
            entry.message.as_deref(),
            Some(
                r#"budget 1 is invalid, so no node of this pool may be disrupted for any reason: schedule "0 25 * * *": hour "25": 25 is above the maximum 23"#
            ),
            "{}",
            entry.reason
        );
    }
}

#[test]
fn invalid_budgets_say_what_is_wrong() {
    let now = at("2024-01-08T12:00:00Z");
    let lone_schedule = Budget {
        schedule: Some("@daily".to_string()),
        ..always("0")
    };
    let lone_duration = Budget {
        duration: Some("1h".to_string()),
        ..always("0")
    };
    for (budget, message) in [
        (
            lone_schedule,
            r#"schedule "@daily" has no duration: set how long the budget stays active each time the schedule fires"#,
        ),
        (
            lone_duration,
            r#"duration "1h" has no schedule: set when the budget becomes active"#,
        ),
        (
            scheduled("0", "@daily", "1d"),
            r#"duration "1d" is not a duration such as 8h, 30m or 10h5m"#,
        ),
        (
            scheduled("0", "TZ=Asia/Tokyo 0 9 * * 1-5", "8h"),
            r#"schedule "TZ=Asia/Tokyo 0 9 * * 1-5": time zone prefix TZ=Asia/Tokyo is not allowed: schedules are evaluated in UTC"#,
        ),
        (
            always("150%"),
            r#"nodes "150%" is neither a count ("5") nor a percentage from 0% to 100% ("20%")"#,
        ),
        (
            always("-1"),
            r#"nodes "-1" is neither a count ("5") nor a percentage from 0% to 100% ("20%")"#,
        ),
        (
            always(""),
            r#"nodes "" is neither a count ("5") nor a percentage from 0% to 100% ("20%")"#,
        ),
        // Checked even while the window is closed (Monday 12:00 is outside @daily's 10m).
        (
            scheduled("ten", "@daily", "10m"),
            r#"nodes "ten" is neither a count ("5") nor a percentage from 0% to 100% ("20%")"#,
        ),
    ] {
        assert_eq!(
            budget_limit(&budget, 10, now).map_err(|e: BudgetError| e.to_string()),
            Err(message.to_string())
        );
    }
}

#[test]
fn overlapping_windows_join_up() {
    let hourly_for_90m = scheduled("0", "@hourly", "90m");
    let hourly_for_30m = scheduled("0", "@hourly", "30m");
    for (now, long, short) in [
        ("2024-01-08T12:00:00Z", true, true),
        ("2024-01-08T12:29:59Z", true, true),
        ("2024-01-08T12:30:00Z", true, false),
        ("2024-01-08T12:59:59Z", true, false),
    ] {
        assert_eq!(budget_active(&hourly_for_90m, at(now)), Ok(long), "{now}");
        assert_eq!(budget_active(&hourly_for_30m, at(now)), Ok(short), "{now}");
    }
    let long_weekend = scheduled("0", "0 0 * * 6", "10h5m");
    assert_eq!(
        budget_active(&long_weekend, at("2024-01-06T10:04:59Z")),
        Ok(true)
    );
    assert_eq!(
        budget_active(&long_weekend, at("2024-01-06T10:05:00Z")),
        Ok(false)
    );
}

/// A valid budget: a count or a percentage, always active or on one of a few schedules,
/// for every reason or some.
fn valid_budget() -> impl Strategy<Value = Budget> {
    let nodes = prop_oneof![
        (0..30u64).prop_map(|count| count.to_string()),
        (0..=100u64).prop_map(|percent| format!("{percent}%")),
    ];
    let window = prop_oneof![
        Just(None),
        (
            prop::sample::select(vec![
                "0 9 * * 1-5",
                "@daily",
                "@hourly",
                "0 0 * * 6",
                "*/15 * * * *",
                "0 2 * * *",
                "0 0 1 * *",
            ]),
            prop::sample::select(vec!["10m", "1h", "8h", "48h", "2h30m"]),
        )
            .prop_map(Some),
    ];
    let reasons = prop::option::of(prop::sample::subsequence(
        DisruptionReason::ALL.to_vec(),
        0..=3,
    ));
    (nodes, window, reasons).prop_map(|(nodes, window, reasons)| Budget {
        reasons,
        nodes,
        schedule: window.map(|(schedule, _)| schedule.to_string()),
        duration: window.map(|(_, duration)| duration.to_string()),
    })
}

/// A valid or, now and then, malformed budget.
fn any_budget() -> impl Strategy<Value = Budget> {
    prop_oneof![
        6 => valid_budget(),
        1 => prop::sample::select(vec![
            always("x%"),
            scheduled("1", "0 0 * * 7", "1h"),
            scheduled("1", "@daily", "forever"),
            Budget { schedule: Some("@daily".to_string()), ..always("1") },
        ]),
    ]
}

/// Any instant from 2001 to 2090.
fn instant() -> impl Strategy<Value = Timestamp> {
    (978_307_200i64..3_786_912_000).prop_map(|second| Timestamp::from_second(second).unwrap())
}

proptest! {
    #[test]
    fn no_reason_exceeds_an_active_budget_covering_it(
        budgets in prop::collection::vec(valid_budget(), 0..6),
        nodes in 0..200u64,
        disrupting in 0..20u64,
        now in instant(),
    ) {
        let result = allowed_disruptions(Some(&budgets), counts(nodes, disrupting), now);
        for entry in &result.reasons {
            for budget in &budgets {
                let covers = budget.reasons.as_ref().is_none_or(|r| r.is_empty() || r.contains(&entry.reason));
                let limit = budget_limit(budget, nodes, now).expect("valid budget");
                if covers {
                    prop_assert!(entry.allowed <= limit.less(disrupting), "{:?} {:?} {:?}", entry, budget, limit);
                }
            }
            if let Basis::Budget { limit, .. } = entry.basis {
                prop_assert_eq!(entry.allowed, Limit::Nodes(limit).less(disrupting));
            }
        }
    }

    #[test]
    fn adding_a_budget_never_raises_an_allowance(
        budgets in prop::collection::vec(any_budget(), 0..5),
        extra in any_budget(),
        position in 0..5usize,
        nodes in 0..200u64,
        disrupting in 0..20u64,
        now in instant(),
    ) {
        let pool = counts(nodes, disrupting);
        let before = allowed_disruptions(Some(&budgets), pool, now);
        let mut more = budgets.clone();
        more.insert(position.min(budgets.len()), extra);
        let after = allowed_disruptions(Some(&more), pool, now);
        for reason in DisruptionReason::ALL {
            prop_assert!(after.allowed(reason) <= before.allowed(reason), "{:?}: {:?} then {:?}", reason, before, after);
        }
    }

    #[test]
    fn any_invalid_budget_gives_zero_for_every_reason(
        budgets in prop::collection::vec(any_budget(), 1..5),
        nodes in 0..200u64,
        now in instant(),
    ) {
        let invalid = budgets.iter().position(|b| budget_limit(b, nodes, now).is_err());
        let result = allowed_disruptions(Some(&budgets), counts(nodes, 0), now);
        for entry in &result.reasons {
            match invalid {
                Some(index) => {
                    prop_assert_eq!(entry.allowed, Limit::Nodes(0));
                    let closed_by = match entry.basis {
                        Basis::Invalid { index, .. } => Some(index),
                        _ => None,
                    };
                    prop_assert_eq!(closed_by, Some(index));
                }
                None => {
                    let closed = matches!(entry.basis, Basis::Invalid { .. });
                    prop_assert!(!closed);
                }
            }
        }
    }
}
