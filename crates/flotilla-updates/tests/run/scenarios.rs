//! Scenarios of the reference, pass by pass.

use flotilla_api::updates::gate::GateState;
use flotilla_api::updates::update_run::{RunAction, SkipTarget, SkipTargetType, UpdateState};
use flotilla_updates::run::{Readiness, WindowFacts};
use jiff::SignedDuration;
use serde_json::json;

use crate::harness::{World, members, strategy, t0, two_stage_strategy};

fn fleet() -> Vec<flotilla_updates::run::init::PlanMember> {
    members(&[
        ("a1", "a"),
        ("a2", "a"),
        ("b1", "b"),
        ("c1", "c"),
        ("c2", "c"),
        ("d1", "d"),
    ])
}

#[test]
fn two_stages_run_in_order_with_groups_in_parallel_and_a_wait_between() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.pass();
    // Groups of a stage in parallel, members of a group one by one.
    assert_eq!(w.started(), ["a1", "b1"]);
    assert_eq!(w.state("a2"), UpdateState::NotStarted);
    assert_eq!(w.stage_state("test"), UpdateState::Running);
    assert_eq!(w.stage_state("prod"), UpdateState::NotStarted);
    assert_eq!(w.status.progress.state, UpdateState::Running);
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.started(), ["a1", "b1", "a2"]);
    assert_eq!(w.group_state("b"), UpdateState::Completed);
    w.finish_upgrades();
    w.pass();
    // The stage's groups are done: the wait runs, the next stage has not started.
    let wait = w.status.stages[0].after_stage_wait_status.clone().unwrap();
    assert_eq!(wait.progress.state, UpdateState::Running);
    assert_eq!(w.stage_state("test"), UpdateState::Running);
    assert_eq!(
        w.last.recheck_at,
        Some(t0() + SignedDuration::from_hours(1))
    );
    assert_eq!(w.started().len(), 3);
    w.advance_time(SignedDuration::from_mins(59));
    w.pass();
    assert_eq!(w.started().len(), 3, "the wait is not over");
    w.advance_time(SignedDuration::from_mins(1));
    w.pass();
    assert_eq!(w.stage_state("test"), UpdateState::Completed);
    assert_eq!(w.started(), ["a1", "b1", "a2", "c1", "d1"]);
    w.run_to_end(20);
    assert_eq!(w.status.progress.state, UpdateState::Completed);
    assert_eq!(w.status.progress_summary.as_deref(), Some("6/6"));
    assert!(w.status.progress.completed_time.is_some());
}

#[test]
fn a_closed_window_makes_a_member_pending_and_the_group_moves_on() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    let opens = t0() + SignedDuration::from_hours(30);
    w.windows.insert(
        "a1".into(),
        WindowFacts::Closed {
            next: Some(opens),
            description: "weekly on Saturday".into(),
        },
    );
    w.pass();
    assert_eq!(
        w.started(),
        ["a2", "b1"],
        "a2 goes first: a1's window is closed"
    );
    let a1 = w.member("a1");
    assert_eq!(a1.progress.state, UpdateState::Pending);
    assert_eq!(
        a1.progress.start_time, None,
        "a Pending member has not started"
    );
    let error = a1.progress.error.as_ref().unwrap();
    assert_eq!(error.code, "MaintenanceWindowClosed");
    assert_eq!(
        error.message,
        "maintenance window closed; next opening 2026-11-22T06:00:00Z (weekly on Saturday)"
    );
    w.finish_upgrades();
    w.pass();
    // Only the Pending member is left: the group is Pending and holds the stage.
    assert_eq!(w.group_state("a"), UpdateState::Pending);
    assert_eq!(w.group_state("b"), UpdateState::Completed);
    assert_eq!(w.stage_state("test"), UpdateState::Pending);
    assert_eq!(w.status.progress.state, UpdateState::Pending);
    assert_eq!(w.last.recheck_at, Some(opens));
    w.now = opens;
    w.windows.insert("a1".into(), WindowFacts::Open);
    w.pass();
    assert_eq!(w.state("a1"), UpdateState::Running);
    assert_eq!(w.group_state("a"), UpdateState::Running);
}

#[test]
fn members_are_tried_by_window_priority() {
    let fleet = members(&[("m1", "a"), ("m2", "a"), ("m3", "a"), ("m4", "a")]);
    let mut w = World::new(
        strategy(json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]})),
        &fleet,
    );
    let soon = t0() + SignedDuration::from_hours(3);
    w.windows.insert(
        "m1".into(),
        WindowFacts::Closed {
            next: Some(t0() + SignedDuration::from_hours(9)),
            description: "d".into(),
        },
    );
    w.windows.insert(
        "m2".into(),
        WindowFacts::Closed {
            next: Some(soon),
            description: "d".into(),
        },
    );
    w.windows.insert("m4".into(), WindowFacts::Open);
    w.pass();
    assert_eq!(w.started(), ["m4"], "the open window goes first");
    assert_eq!(w.state("m1"), UpdateState::Pending);
    assert_eq!(w.state("m2"), UpdateState::Pending);
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.started(), ["m4", "m3"], "then the member with no window");
    w.finish_upgrades();
    w.now = soon;
    w.windows.insert("m2".into(), WindowFacts::Open);
    w.pass();
    assert_eq!(w.started(), ["m4", "m3", "m2"]);
}

#[test]
fn a_failure_fails_member_group_stage_and_run_and_nothing_more_starts() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.failing.insert("a1".into());
    w.pass();
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.state("a1"), UpdateState::Failed);
    assert_eq!(
        w.member("a1").progress.error.as_ref().unwrap().message,
        "a1: node drain timed out"
    );
    assert_eq!(w.group_state("a"), UpdateState::Failed);
    assert_eq!(w.stage_state("test"), UpdateState::Failed);
    assert_eq!(w.status.progress.state, UpdateState::Failed);
    let error = w.status.progress.error.clone().unwrap();
    assert_eq!(error.code, "TooManyFailures");
    assert_eq!(
        error.message,
        "stage test: 1 member failed (0 allowed): a1: a1: node drain timed out"
    );
    assert_eq!(w.status.failure_count, 1);
    w.finish_upgrades();
    w.pass();
    w.pass();
    assert_eq!(w.started(), ["a1", "b1"], "a2 never starts");
    assert_eq!(w.stage_state("prod"), UpdateState::NotStarted);
}

#[test]
fn failures_within_the_thresholds_let_the_run_complete() {
    let s = strategy(json!({"stages": [{"name": "s", "maxAllowedFailures": "1",
        "groups": [{"name": "a", "maxAllowedFailures": "50%"}]}]}));
    let mut w = World::new(s, &members(&[("m1", "a"), ("m2", "a")]));
    w.failing.insert("m1".into());
    w.run_to_end(20);
    assert_eq!(w.state("m1"), UpdateState::Failed);
    assert_eq!(w.state("m2"), UpdateState::Completed);
    assert_eq!(w.group_state("a"), UpdateState::Completed);
    assert_eq!(w.status.progress.state, UpdateState::Completed);
    assert_eq!(w.status.failure_count, 1);
}

#[test]
fn a_rerun_retries_only_what_failed() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.failing.insert("a1".into());
    w.pass();
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.status.progress.state, UpdateState::Failed);
    w.failing.clear();
    w.attempt = 1;
    w.pass();
    assert_eq!(w.state("a1"), UpdateState::Running);
    assert_eq!(w.member("a1").operation_id.as_deref(), Some("run-retry1"));
    assert_eq!(
        w.state("b1"),
        UpdateState::Completed,
        "completed members stay"
    );
    w.run_to_end(30);
    assert_eq!(w.status.progress.state, UpdateState::Completed);
    let b1_upgrades = w.started().iter().filter(|m| *m == "b1").count();
    assert_eq!(b1_upgrades, 1, "b1 was not upgraded twice");
}

#[test]
fn stop_lets_upgrades_in_flight_finish_and_run_resumes() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.pass();
    w.action = RunAction::Stop;
    w.pass();
    assert_eq!(w.status.progress.state, UpdateState::Stopping);
    assert_eq!(
        w.state("a1"),
        UpdateState::Running,
        "in flight: not aborted"
    );
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.state("a1"), UpdateState::Completed);
    assert_eq!(w.status.progress.state, UpdateState::Stopped);
    assert_eq!(w.group_state("a"), UpdateState::Stopped);
    assert_eq!(
        w.started(),
        ["a1", "b1"],
        "nothing new starts while stopped"
    );
    w.action = RunAction::Run;
    w.pass();
    assert_eq!(w.started(), ["a1", "b1", "a2"]);
    assert_eq!(w.status.progress.state, UpdateState::Running);
}

#[test]
fn skips_at_every_level() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.skip = vec![
        SkipTarget {
            target_type: SkipTargetType::Member,
            name: "a1".into(),
        },
        SkipTarget {
            target_type: SkipTargetType::Group,
            name: "b".into(),
        },
        SkipTarget {
            target_type: SkipTargetType::AfterStageWait,
            name: "test".into(),
        },
        SkipTarget {
            target_type: SkipTargetType::Stage,
            name: "prod".into(),
        },
    ];
    w.pass();
    assert_eq!(w.state("a1"), UpdateState::Skipped);
    assert_eq!(
        w.member("a1").progress.error.as_ref().unwrap().code,
        "SkippedByUser"
    );
    assert_eq!(w.group_state("b"), UpdateState::Skipped);
    assert_eq!(w.started(), ["a2"]);
    w.finish_upgrades();
    w.pass();
    // No wait: the test stage completes, and the skipped prod stage needs nothing.
    assert_eq!(w.stage_state("test"), UpdateState::Completed);
    assert_eq!(w.stage_state("prod"), UpdateState::Skipped);
    assert_eq!(w.status.progress.state, UpdateState::Completed);
}

#[test]
fn a_running_after_stage_wait_can_be_skipped() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.pass();
    w.finish_upgrades();
    w.pass();
    w.finish_upgrades();
    w.pass();
    let wait = |w: &World| {
        w.status.stages[0]
            .after_stage_wait_status
            .as_ref()
            .unwrap()
            .progress
            .state
    };
    assert_eq!(wait(&w), UpdateState::Running, "the hour's wait runs");
    w.advance_time(SignedDuration::from_mins(5));
    w.skip = vec![SkipTarget {
        target_type: SkipTargetType::AfterStageWait,
        name: "test".into(),
    }];
    w.pass();
    assert_eq!(wait(&w), UpdateState::Skipped);
    assert_eq!(w.stage_state("test"), UpdateState::Completed);
    assert_eq!(
        w.started(),
        ["a1", "b1", "a2", "c1", "d1"],
        "prod starts at once"
    );
}

#[test]
fn skips_before_the_start_show_and_change_nothing_else_until_it() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.action = RunAction::NotStarted;
    w.skip = vec![
        SkipTarget {
            target_type: SkipTargetType::Member,
            name: "a1".into(),
        },
        SkipTarget {
            target_type: SkipTargetType::AfterStageWait,
            name: "test".into(),
        },
    ];
    w.pass();
    let first = w.status.clone();
    assert_eq!(w.state("a1"), UpdateState::Skipped);
    assert_eq!(w.member("a1").progress.completed_time, None);
    assert_eq!(w.stage_state("test"), UpdateState::NotStarted);
    assert_eq!(w.group_state("a"), UpdateState::NotStarted);
    assert_eq!(w.status.progress.state, UpdateState::NotStarted);
    w.advance_time(SignedDuration::from_mins(1));
    w.pass();
    assert_eq!(w.status, first, "a later pass writes nothing new");
    assert!(w.started().is_empty());
    w.action = RunAction::Run;
    w.pass();
    assert_eq!(w.started(), ["a2", "b1"], "a1 stays skipped");
}

#[test]
fn members_already_at_target_are_skipped_and_a_fully_skipped_run_is_skipped() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    for m in ["a1", "a2", "b1", "c1", "c2", "d1"] {
        w.ready
            .insert(m.into(), Readiness::AtTarget("already at 1.31.2".into()));
    }
    w.run_to_end(10);
    assert_eq!(w.state("a1"), UpdateState::Skipped);
    assert_eq!(w.member("a1").message.as_deref(), Some("already at 1.31.2"));
    assert_eq!(w.status.progress.state, UpdateState::Skipped);
    assert!(w.started().is_empty());
}

#[test]
fn a_release_not_yet_in_a_region_makes_the_member_pending() {
    let s = strategy(json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]}));
    let mut w = World::new(s, &members(&[("m1", "a"), ("m2", "a")]));
    let until = t0() + SignedDuration::from_hours(48);
    w.ready.insert(
        "m1".into(),
        Readiness::NotYet {
            code: "NodeImageVersionNotAvailable".into(),
            message: "node image AKSUbuntu-2204gen2containerd-202511.02.0 is not available in region westus".into(),
            until: Some(until),
        },
    );
    w.pass();
    assert_eq!(w.state("m1"), UpdateState::Pending);
    assert_eq!(w.started(), ["m2"], "the group moves on");
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.last.recheck_at, Some(until));
    assert_eq!(w.group_state("a"), UpdateState::Pending);
    w.ready.clear();
    w.now = until;
    w.run_to_end(10);
    assert_eq!(w.status.progress.state, UpdateState::Completed);
}

#[test]
fn gates_hold_until_approved_or_their_time_comes() {
    let s = strategy(json!({"stages": [
        {"name": "s", "beforeGates": [{"type": "Approval", "displayName": "go?"}],
         "groups": [{"name": "a", "beforeGates": [{"type": "ScheduledStart",
             "scheduledStartConfiguration": {"startDay": "Monday", "startTime": "09:00"}}]}],
         "afterGates": [{"type": "Approval"}]}]}));
    let mut w = World::new(s, &members(&[("m1", "a")]));
    w.pass();
    assert_eq!(w.stage_state("s"), UpdateState::Pending);
    assert_eq!(w.status.progress.state, UpdateState::Pending);
    assert_eq!(w.gates["run.s.before"].state, GateState::Pending);
    assert_eq!(
        w.status.stages[0].before_gates[0].gate_id.as_deref(),
        Some("run.s.before")
    );
    w.pass();
    assert!(w.started().is_empty());
    w.approve("run.s.before");
    w.pass();
    assert_eq!(
        w.group_state("a"),
        UpdateState::Pending,
        "the scheduled start holds the group"
    );
    let at = w.gates["run.s.a.before"].scheduled_start.unwrap();
    assert_eq!(w.last.recheck_at, Some(at));
    w.now = at;
    w.pass();
    assert_eq!(w.gates["run.s.a.before"].state, GateState::Completed);
    assert_eq!(w.started(), ["m1"]);
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.stage_state("s"), UpdateState::Pending, "after-gate");
    w.approve("run.s.after");
    w.pass();
    assert_eq!(w.status.progress.state, UpdateState::Completed);
}

#[test]
fn a_run_not_started_stays_not_started() {
    let mut w = World::new(two_stage_strategy(), &fleet());
    w.action = RunAction::NotStarted;
    w.pass();
    assert_eq!(w.status.progress.state, UpdateState::NotStarted);
    assert!(w.log.is_empty());
}

#[test]
fn stage_concurrency_caps_the_groups_together() {
    let s = strategy(json!({"stages": [{"name": "s", "maxConcurrency": "2",
        "groups": [{"name": "a", "maxConcurrency": "2"}, {"name": "b", "maxConcurrency": "2"}]}]}));
    let mut w = World::new(
        s,
        &members(&[("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]),
    );
    w.pass();
    assert_eq!(w.started(), ["a1", "a2"]);
    w.finish_upgrades();
    w.pass();
    assert_eq!(w.started(), ["a1", "a2", "b1", "b2"]);
}
