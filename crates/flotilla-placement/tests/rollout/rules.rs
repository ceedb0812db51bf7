//! The rules of a rollout round (reference §3), one test each: current bindings, failed
//! updates, the availability budget (`maxRemove`) and its order, ready bindings being
//! deleted, the surge budget (`maxAdd`), untrackable resources, the External strategy,
//! deletions in flight, and the `RolloutStarted` condition each verdict gives.

use flotilla_placement::rollout::{Action, Readiness};
use flotilla_placement::status::{ConditionType, reason};
use k8s_openapi::jiff::SignedDuration;

use crate::fixtures::{
    Tweak, binds, blocks, bound, current, deletes, int, message, now, pick_n, rolling, run,
    scheduled, unscheduled, updates, waits,
};

fn failed() -> Readiness {
    Readiness::Failed {
        condition: ConditionType::Applied,
    }
}

#[test]
fn bindings_with_the_latest_resources_are_current() {
    let plan = run(&pick_n(2), &rolling(None, None), &[bound("a"), bound("b")]);
    assert_eq!(plan.names(current), ["crp-a", "crp-b"]);
    assert_eq!(plan.recheck_at, None);
}

#[test]
fn failed_stale_bindings_are_updated_whatever_the_budget() {
    // N=4, maxUnavailable 1, two clusters failed: already over budget (maxRemove = 2 - 3).
    let bindings = [
        bound("a").stale().ready(failed()),
        bound("b").stale().ready(failed()),
        bound("c").stale(),
        bound("d").stale(),
    ];
    let plan = run(&pick_n(4), &rolling(int(1), None), &bindings);
    assert_eq!(plan.names(updates), ["crp-a", "crp-b"]);
    assert_eq!(plan.names(blocks), ["crp-c", "crp-d"]);
    assert_eq!(
        message(&plan, "crp-c"),
        "waiting: 2 of 4 clusters unavailable, maxUnavailable 1"
    );
}

#[test]
fn the_availability_budget_goes_to_unscheduled_bindings_first_then_stale_ones_in_name_order() {
    // N=4 (PickN): a, b stale, c current, x leaving, z arriving; all four holders ready.
    let bindings = [
        bound("b").stale(),
        unscheduled("x"),
        bound("a").stale(),
        bound("c"),
        scheduled("z"),
    ];
    let cases = [
        (1, vec!["crp-x"], vec![], vec!["crp-a", "crp-b"]),
        (2, vec!["crp-x"], vec!["crp-a"], vec!["crp-b"]),
        (3, vec!["crp-x"], vec!["crp-a", "crp-b"], vec![]),
    ];
    for (max_unavailable, deleted, updated, blocked) in cases {
        let plan = run(
            &pick_n(4),
            &rolling(int(max_unavailable), int(0)),
            &bindings,
        );
        assert_eq!(
            plan.names(deletes),
            deleted,
            "maxUnavailable {max_unavailable}"
        );
        assert_eq!(
            plan.names(updates),
            updated,
            "maxUnavailable {max_unavailable}"
        );
        let mut held = blocked.clone();
        held.push("crp-z");
        assert_eq!(plan.names(blocks), held, "maxUnavailable {max_unavailable}");
    }
    let plan = run(&pick_n(4), &rolling(int(1), int(0)), &bindings);
    assert_eq!(
        message(&plan, "crp-a"),
        "waiting: maxUnavailable 1 let 1 more cluster(s) become unavailable this round and they went to bindings ahead in line"
    );
    assert_eq!(
        message(&plan, "crp-z"),
        "waiting: 4 clusters hold the resources, at most 4 allowed (4 targeted, maxSurge 0)"
    );
}

#[test]
fn an_unscheduled_binding_left_for_later_waits_without_a_condition() {
    let bindings = [bound("a"), unscheduled("x"), unscheduled("y")];
    let plan = run(&pick_n(1), &rolling(int(0), int(0)), &bindings);
    // ready 3 − (1 − 0) = 2 removals.
    assert_eq!(plan.names(deletes), ["crp-x", "crp-y"]);
    let plan = run(&pick_n(2), &rolling(int(0), int(0)), &bindings[..2]);
    // N=2 with one Bound: ready 2 − 2 = 0 removals.
    assert_eq!(plan.names(waits), ["crp-x"]);
    assert_eq!(
        message(&plan, "crp-x"),
        "waiting: 0 of 2 clusters unavailable, maxUnavailable 0"
    );
    assert_eq!(plan.action("crp-x").unwrap().rollout_started(1), None);
}

#[test]
fn ready_bindings_being_deleted_do_not_count_as_available() {
    // KubeFleet #602: a ready binding being deleted may vanish at any time.
    // N=3, maxUnavailable 1, three stale ready clusters and one more holder.
    let cases = [
        (bound("x"), vec!["crp-a", "crp-b"]),
        (unscheduled("x").deleting(), vec!["crp-a"]),
        (
            unscheduled("x").deleting().ready(Readiness::Pending),
            vec!["crp-a"],
        ),
    ];
    for (extra, updated) in cases {
        let bindings = [
            bound("a").stale(),
            bound("b").stale(),
            bound("c").stale(),
            extra.clone(),
        ];
        let plan = run(&pick_n(3), &rolling(int(1), None), &bindings);
        assert_eq!(plan.names(updates), updated, "{extra:?}");
    }
    let bindings = [
        bound("a").stale().ready(Readiness::Pending),
        bound("b").stale(),
        unscheduled("x").deleting(),
    ];
    let plan = run(&pick_n(2), &rolling(int(1), None), &bindings);
    assert_eq!(
        message(&plan, "crp-b"),
        "waiting: 1 of 2 clusters unavailable (1 more being removed), maxUnavailable 1"
    );
    assert!(
        matches!(plan.action("crp-x"), Some(Action::Wait { message }) if message == "the binding is being deleted")
    );
}

#[test]
fn the_surge_budget_counts_bindings_that_can_become_ready() {
    // N=2, maxSurge 1: a current, x leaving, p and q arriving.
    let cases = [
        (Readiness::Available, vec!["crp-p"]),
        (Readiness::Pending, vec!["crp-p"]),
        (
            Readiness::Untracked {
                ready_at: now() + SignedDuration::from_secs(9),
            },
            vec!["crp-p"],
        ),
        (failed(), vec!["crp-p", "crp-q"]),
        (Readiness::DiffReported, vec!["crp-p", "crp-q"]),
    ];
    for (leaving, bound_now) in cases {
        let bindings = [
            bound("a"),
            unscheduled("x").ready(leaving),
            scheduled("q"),
            scheduled("p"),
        ];
        let plan = run(&pick_n(2), &rolling(int(0), int(1)), &bindings);
        assert_eq!(plan.names(binds), bound_now, "leaving binding {leaving:?}");
    }
    let bindings = [bound("a"), unscheduled("x"), scheduled("q"), scheduled("p")];
    let plan = run(&pick_n(2), &rolling(int(0), int(1)), &bindings);
    assert_eq!(
        message(&plan, "crp-q"),
        "waiting: maxSurge 1 let 1 more cluster(s) receive the resources this round and they went to bindings ahead in line"
    );
}

#[test]
fn with_max_unavailable_zero_a_move_surges_first_and_in_place_updates_wait() {
    let strategy = rolling(int(0), int(1));
    // Round 1: the new cluster is bound, the old one kept.
    let plan = run(
        &pick_n(1),
        &strategy,
        &[unscheduled("old"), scheduled("new")],
    );
    assert_eq!(
        (plan.names(binds), plan.names(waits)),
        (vec!["crp-new"], vec!["crp-old"])
    );
    // Round 2: the new cluster is not ready yet; the old one still waits.
    let arriving = bound("new").ready(Readiness::Pending);
    let plan = run(&pick_n(1), &strategy, &[unscheduled("old"), arriving]);
    assert_eq!(
        (plan.names(current), plan.names(waits)),
        (vec!["crp-new"], vec!["crp-old"])
    );
    // Round 3: the new cluster is ready, so the old one goes.
    let plan = run(&pick_n(1), &strategy, &[unscheduled("old"), bound("new")]);
    assert_eq!(plan.names(deletes), ["crp-old"]);
    // An in-place update never fits a zero budget.
    let plan = run(&pick_n(1), &strategy, &[bound("a").stale()]);
    assert_eq!(
        message(&plan, "crp-a"),
        "waiting: 0 of 1 clusters unavailable, maxUnavailable 0"
    );
}

#[test]
fn untrackable_bindings_are_not_ready_until_their_period_ends_and_set_the_recheck_time() {
    let at = |s| now() + SignedDuration::from_secs(s);
    let bindings = [
        bound("a")
            .stale()
            .ready(Readiness::Untracked { ready_at: at(30) }),
        bound("b").ready(Readiness::Untracked { ready_at: at(10) }),
    ];
    let plan = run(&pick_n(2), &rolling(int(1), None), &bindings);
    assert_eq!(plan.names(blocks), ["crp-a"]);
    assert_eq!(
        message(&plan, "crp-a"),
        "waiting: 2 of 2 clusters unavailable, maxUnavailable 1"
    );
    assert_eq!(plan.recheck_at, Some(at(10)));
}

#[test]
fn the_external_strategy_changes_nothing() {
    let mut strategy = rolling(None, None);
    strategy.type_ = Some(flotilla_api::placement::strategy::RolloutStrategyType::External);
    strategy.rolling_update = None;
    let bindings = [bound("a").stale(), scheduled("b"), unscheduled("c")];
    let plan = run(&pick_n(2), &strategy, &bindings);
    assert_eq!(plan.limits, None);
    assert_eq!(plan.names(waits), ["crp-a", "crp-b", "crp-c"]);
    assert_eq!(
        message(&plan, "crp-b"),
        "the rollout is controlled by an external controller (staged update runs)"
    );
    assert!(
        plan.verdicts
            .iter()
            .all(|v| v.action.rollout_started(1).is_none())
    );
}

#[test]
fn a_cluster_with_a_binding_being_deleted_makes_the_round_wait() {
    let mut shared = scheduled("m1");
    shared.name = "crp-m1-new".into();
    let cases = [
        (
            vec![bound("m1").deleting(), shared.clone(), scheduled("m2")],
            "waiting: binding crp-m1-new shares cluster m1 with binding crp-m1, which is being deleted",
        ),
        (
            vec![bound("m1"), shared, scheduled("m2")],
            "waiting: cluster m1 has two bindings, crp-m1 and crp-m1-new",
        ),
    ];
    for (bindings, expected) in cases {
        let plan = run(&pick_n(2), &rolling(None, None), &bindings);
        assert_eq!(plan.names(waits).len(), 3, "{expected}");
        assert_eq!(message(&plan, "crp-m2"), expected);
        assert_eq!(plan.recheck_at, Some(now() + SignedDuration::from_secs(5)));
    }
}

#[test]
fn bindings_being_deleted_are_left_alone() {
    let bindings = [
        bound("a").stale().deleting(),
        scheduled("b").deleting(),
        bound("c"),
    ];
    let plan = run(&pick_n(3), &rolling(int(3), int(3)), &bindings);
    assert_eq!(plan.names(waits), ["crp-a", "crp-b"]);
    assert_eq!(plan.names(current), ["crp-c"]);
}

#[test]
fn each_verdict_gives_its_rollout_started_condition() {
    let blocked = Action::Blocked {
        message: "waiting: 1 of 3 clusters unavailable, maxUnavailable 1".into(),
    };
    let wait = Action::Wait {
        message: "later".into(),
    };
    let cases = [
        (Action::Bind, Some(("True", reason::ROLLOUT_STARTED))),
        (Action::Update, Some(("True", reason::ROLLOUT_STARTED))),
        (Action::Current, Some(("True", reason::ROLLOUT_STARTED))),
        (
            blocked.clone(),
            Some(("False", reason::ROLLOUT_NOT_STARTED_YET)),
        ),
        (Action::Delete, None),
        (wait, None),
    ];
    for (action, expected) in cases {
        let condition = action.rollout_started(7);
        assert_eq!(
            condition.as_ref().map(|c| (c.status, c.reason)),
            expected,
            "{action:?}"
        );
        if let Some(c) = condition {
            assert_eq!(
                (c.type_, c.observed_generation),
                ("RolloutStarted", Some(7))
            );
        }
    }
    let condition = blocked.rollout_started(7).unwrap();
    assert_eq!(
        condition.message,
        "waiting: 1 of 3 clusters unavailable, maxUnavailable 1"
    );
}
