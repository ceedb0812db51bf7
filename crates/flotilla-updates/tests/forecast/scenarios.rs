//! Forecasts with exact predicted times: stages and waits, windows, gates, releases late or
//! never, and runs already under way.

use flotilla_api::updates::UpdateRun;
use flotilla_api::updates::update_run::{RunAction, UpdateRunStatus, UpdateState};
use flotilla_updates::fleet::run_strategy;
use flotilla_updates::forecast::{
    Assumptions, End, Event, Forecast, RenderOptions, Subject, forecast, render,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use crate::fixtures::{Fleet, NEW_IMAGE, plus, run, t0, two_stages};

/// Every member takes 25 minutes: 10 for the control plane, 3 nodes of 5.
fn fleet_of(members: &[(&str, &str)]) -> Fleet {
    let mut fleet = Fleet::new();
    for (name, group) in members {
        fleet.member(name, group, "eastus", 3, Some((600, 300)));
    }
    fleet
}

fn two_stage_fleet() -> Fleet {
    fleet_of(&[
        ("a1", "a"),
        ("a2", "a"),
        ("b1", "b"),
        ("c1", "c"),
        ("c2", "c"),
        ("d1", "d"),
    ])
}

fn plan(run: &UpdateRun, fleet: &Fleet, assumptions: &Assumptions) -> Forecast {
    forecast(run, None, &fleet.view(), t0(), assumptions).expect("forecast")
}

/// When each member starts upgrading, in order.
fn starts(f: &Forecast) -> Vec<(String, Timestamp)> {
    f.entries
        .iter()
        .filter_map(|e| match (&e.subject, &e.event) {
            (Subject::Member(name), Event::Upgrading { .. }) => Some((name.clone(), e.at)),
            _ => None,
        })
        .collect()
}

fn at(list: &[(&str, i64)]) -> Vec<(String, Timestamp)> {
    list.iter()
        .map(|(m, min)| (m.to_string(), plus(*min)))
        .collect()
}

/// The events of one subject.
fn events_of<'f>(f: &'f Forecast, wanted: &Subject) -> Vec<(Timestamp, &'f Event)> {
    f.entries
        .iter()
        .filter(|e| &e.subject == wanted)
        .map(|e| (e.at, &e.event))
        .collect()
}

#[test]
fn two_stages_with_a_wait_and_an_approval_have_exact_times() {
    let fleet = two_stage_fleet();
    let f = plan(&run(two_stages()), &fleet, &Assumptions::default());
    // Groups of a stage in parallel, members one by one; the wait from +50m to +1h50m; the
    // approval given at once; prod's groups from +1h50m.
    assert_eq!(
        starts(&f),
        at(&[
            ("a1", 0),
            ("b1", 0),
            ("a2", 25),
            ("c1", 110),
            ("d1", 110),
            ("c2", 135)
        ])
    );
    assert_eq!(f.finish(), Some(plus(160)));
    assert!(f.from_scratch);
    assert_eq!(f.status.progress.state, UpdateState::Completed);
    let a2 = events_of(&f, &Subject::Member("a2".into()));
    assert_eq!(
        a2,
        [
            (
                plus(25),
                &Event::Upgrading {
                    to: vec!["Kubernetes 1.31.2".into(), NEW_IMAGE.into()],
                    takes: SignedDuration::from_mins(25),
                    assumed: false,
                }
            ),
            (plus(50), &Event::Completed),
        ]
    );
    assert_eq!(
        events_of(&f, &Subject::Wait),
        [
            (plus(50), &Event::Waiting { until: plus(110) }),
            (plus(110), &Event::Completed)
        ]
    );
    let times: Vec<Timestamp> = f.entries.iter().map(|e| e.at).collect();
    assert!(times.is_sorted(), "the timeline is in time order");
    let text = render(&f, &RenderOptions::default());
    assert!(
        text.contains("Predicted finish: +2h40m (2026-11-21 02:40), Completed"),
        "{text}"
    );
    assert!(
        text.contains("a2  starts upgrading to Kubernetes 1.31.2, AKSUbuntu-2204gen2containerd-202511.02.0 (about 25m)"),
        "{text}"
    );
    assert!(
        text.contains("after-stage wait  runs until +1h50m"),
        "{text}"
    );
}

#[test]
fn closed_windows_start_at_their_next_opening_in_priority_order() {
    let mut fleet = fleet_of(&[("m1", "a"), ("m2", "a"), ("m3", "a"), ("m4", "a")]);
    fleet.daily_window("m1", "06:00", 4); // opens in 6 hours: closed
    fleet.daily_window("m2", "03:00", 4); // opens within 4 hours: soon, still closed
    fleet.daily_window("m4", "22:00", 6); // open now (22:00 to 04:00)
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]});
    let f = plan(&run(strategy), &fleet, &Assumptions::default());
    // Open first, then no window (m3 before m4 by name, but m4's window is open); the
    // closed ones at their openings.
    assert_eq!(
        starts(&f),
        at(&[("m4", 0), ("m3", 25), ("m2", 180), ("m1", 360)])
    );
    assert_eq!(f.finish(), Some(plus(385)));
    let m1 = events_of(&f, &Subject::Member("m1".into()));
    assert_eq!(
        m1[0],
        (
            t0(),
            &Event::Pending {
                code: "MaintenanceWindowClosed".into(),
                message: "maintenance window closed; next opening 2026-11-21T06:00:00Z (daily 06:00 for 4h, UTC+00:00)".into(),
                until: Some(plus(360)),
            }
        ),
        "{m1:?}"
    );
    let text = render(&f, &RenderOptions::default());
    assert!(
        text.contains("m1  pending until +6h (2026-11-21 06:00): maintenance window closed"),
        "{text}"
    );
}

#[test]
fn a_window_that_closes_while_a_member_waits_for_a_slot_holds_it_until_the_next_opening() {
    let mut fleet = fleet_of(&[("m1", "a"), ("m2", "a")]);
    fleet.member("m0", "a", "eastus", 36, Some((600, 300))); // 10m + 36 × 5m = 3h10m
    // m0 and m2 have windows open now until 03:00: m0 goes first (by name), m2 waits for the
    // slot, which frees at 03:10, after m2's window closed: m1 (no window) takes it and m2
    // waits for its window to open again at 23:00.
    fleet.daily_window("m0", "23:00", 4);
    fleet.daily_window("m2", "23:00", 4);
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]});
    let f = plan(&run(strategy), &fleet, &Assumptions::default());
    assert_eq!(starts(&f), at(&[("m0", 0), ("m1", 190), ("m2", 23 * 60)]));
    let m2 = events_of(&f, &Subject::Member("m2".into()));
    assert!(
        matches!(m2[0], (at, Event::Pending { .. }) if at == plus(190)),
        "{m2:?}"
    );
}

#[test]
fn approvals_are_assumed_given_after_the_delay_or_never() {
    let fleet = two_stage_fleet();
    let f = plan(&run(two_stages()), &fleet, &Assumptions::default());
    let gate = Subject::Gate {
        timing: flotilla_api::updates::gate::Timing::Before,
        gate_type: flotilla_api::updates::strategy::GateType::Approval,
        display_name: Some("go to prod".into()),
        name: Some("r.prod.before".into()),
    };
    assert_eq!(
        events_of(&f, &gate),
        [
            (
                plus(110),
                &Event::GateReached {
                    needs_approval: true,
                    until: Some(plus(110))
                }
            ),
            (plus(110), &Event::Completed),
        ]
    );
    let text = render(&f, &RenderOptions::default());
    assert!(
        text.contains("needs approval: `flotilla gate approve r.prod.before`"),
        "{text}"
    );

    let slow = Assumptions {
        approval_delay: Some(SignedDuration::from_hours(2)),
        ..Assumptions::default()
    };
    let f = plan(&run(two_stages()), &fleet, &slow);
    assert_eq!(f.finish(), Some(plus(160 + 120)));

    let never = Assumptions {
        approval_delay: None,
        ..Assumptions::default()
    };
    let f = plan(&run(two_stages()), &fleet, &never);
    let End::Stuck { since, reasons } = &f.end else {
        panic!("{:?}", f.end)
    };
    assert_eq!(*since, plus(110));
    assert!(
        reasons[0].starts_with("nothing more is due to happen"),
        "{reasons:?}"
    );
    assert_eq!(
        reasons[1],
        "gate r.prod.before waits for approval: `flotilla gate approve r.prod.before`"
    );
    assert_eq!(
        f.status.stages[1].groups[0].members[0].progress.state,
        UpdateState::NotStarted
    );
    let text = render(&f, &RenderOptions::default());
    assert!(
        text.contains("STUCK: the run makes no progress after +1h50m"),
        "{text}"
    );
}

#[test]
fn a_release_late_in_a_region_holds_its_members_until_it_arrives_or_past_the_horizon() {
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]});
    for (arrives, stuck) in [
        ("2026-11-23T00:00:00Z", false),
        ("2028-01-01T00:00:00Z", true),
    ] {
        let arrival: Timestamp = arrives.parse().unwrap();
        let mut fleet = Fleet::with_late_releases(&[("westus", arrives)]);
        fleet.member("e1", "a", "eastus", 3, Some((600, 300)));
        fleet.member("w1", "a", "westus", 3, Some((600, 300)));
        let f = plan(&run(strategy.clone()), &fleet, &Assumptions::default());
        // w1 is asked once e1 has freed the group's one slot.
        let w1 = events_of(&f, &Subject::Member("w1".into()));
        assert_eq!(
            w1[0],
            (
                plus(25),
                &Event::Pending {
                    code: "KubernetesVersionNotAvailable".into(),
                    message: "Kubernetes version 1.31.2 is not available in region westus".into(),
                    until: (!stuck).then_some(arrival),
                }
            )
        );
        if !stuck {
            assert_eq!(
                starts(&f),
                [("e1".to_string(), t0()), ("w1".to_string(), arrival)]
            );
            assert_eq!(f.finish(), Some(arrival + SignedDuration::from_mins(25)));
            continue;
        }
        let End::Stuck { since, reasons } = &f.end else {
            panic!("{:?}", f.end)
        };
        assert_eq!(*since, plus(25), "e1 completes, then nothing changes");
        assert!(reasons[0].contains("horizon"), "{reasons:?}");
        assert_eq!(
            reasons[1],
            "member w1 (stage s, group a) is pending: Kubernetes version 1.31.2 is not available in region westus"
        );
    }
}

#[test]
fn a_member_that_never_reports_its_versions_leaves_the_run_stuck() {
    let mut fleet = fleet_of(&[("a1", "a")]);
    fleet.member("a2", "a", "eastus", 3, None).status = None;
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]});
    let f = plan(&run(strategy), &fleet, &Assumptions::default());
    let End::Stuck { reasons, .. } = &f.end else {
        panic!("{:?}", f.end)
    };
    assert!(reasons[0].starts_with("nothing more is due"), "{reasons:?}");
    assert!(
        reasons[1].ends_with(flotilla_updates::target::VERSIONS_UNKNOWN_MESSAGE),
        "{reasons:?}"
    );
    assert_eq!(starts(&f), at(&[("a1", 0)]));
}

#[test]
fn members_without_expected_durations_get_the_defaults_and_are_named() {
    let mut fleet = fleet_of(&[("a1", "a")]);
    fleet.member("a2", "a", "eastus", 3, None);
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]});
    let f = plan(&run(strategy), &fleet, &Assumptions::default());
    // 15 minutes + 3 nodes × 5 after a1's 25.
    assert_eq!(f.finish(), Some(plus(55)));
    assert_eq!(f.defaulted.iter().collect::<Vec<_>>(), ["a2"]);
    let text = render(&f, &RenderOptions::default());
    assert!(text.contains("(about 30m, assumed durations)"), "{text}");
    assert!(
        text.contains("Note: 1 member(s) report no expected durations; assumed 15m for the control plane and 5m a node: a2"),
        "{text}"
    );
}

/// The run of `strategy` over `fleet` as the controller leaves it 10 minutes after its start
/// at `t0 - 10m`: a0 upgraded before, a1 upgrading since.
fn under_way(fleet: &Fleet) -> UpdateRun {
    let mut run = run(json!({"stages": [{"name": "s", "groups": [{"name": "a"}]}]}));
    run.spec.state = Some(RunAction::Run);
    let mut status = UpdateRunStatus::default();
    let started = plus(-10);
    let strategy = run_strategy(&run.spec, &status, None).unwrap();
    fleet
        .view()
        .prepare(&run.spec, &mut status, strategy, started)
        .unwrap();
    status.progress.state = UpdateState::Running;
    status.progress.start_time = Some(Time(started));
    let stage = &mut status.stages[0];
    stage.progress = status.progress.clone();
    stage.groups[0].progress = status.progress.clone();
    let members = &mut stage.groups[0].members;
    members[0].progress.state = UpdateState::Completed;
    members[1].progress = status.progress.clone();
    members[1].operation_id = Some("r".into());
    run.status = Some(status);
    run
}

#[test]
fn a_running_run_continues_from_its_status_with_what_is_left_of_upgrades_in_flight() {
    let mut fleet = fleet_of(&[("a0", "a"), ("a1", "a"), ("a2", "a")]);
    let run = under_way(&fleet);
    let before = run.clone();
    let f = plan(&run, &fleet, &Assumptions::default());
    assert_eq!(run, before, "the forecast changes nothing");
    assert!(!f.from_scratch);
    // a1 reports nothing upgraded yet: all 25 minutes are left.
    assert_eq!(
        events_of(&f, &Subject::Member("a1".into())),
        [
            (t0(), &Event::InFlight { until: plus(25) }),
            (plus(25), &Event::Completed)
        ]
    );
    assert_eq!(starts(&f), at(&[("a2", 25)]));
    assert_eq!(f.finish(), Some(plus(50)));
    // Its control plane is done: only its 3 nodes are left.
    let a1 = fleet
        .members
        .iter_mut()
        .find(|m| m.metadata.name.as_deref() == Some("a1"));
    let versions = a1
        .unwrap()
        .status
        .as_mut()
        .unwrap()
        .versions
        .as_mut()
        .unwrap();
    versions.kubernetes_version = "1.31.2".into();
    let f = plan(&run, &fleet, &Assumptions::default());
    assert_eq!(starts(&f), at(&[("a2", 15)]));
    assert_eq!(f.finish(), Some(plus(40)));
    let text = render(&f, &RenderOptions::default());
    assert!(text.contains("continuing from its status"), "{text}");
    assert!(
        text.contains("a1  is upgrading; expected to finish at +15m"),
        "{text}"
    );
}

#[test]
fn large_groups_are_summarised_unless_printed_in_full() {
    let mut fleet = two_stage_fleet();
    fleet.daily_window("a1", "06:00", 4);
    let f = plan(&run(two_stages()), &fleet, &Assumptions::default());
    let brief = render(
        &f,
        &RenderOptions {
            member_lines: 1,
            ..RenderOptions::default()
        },
    );
    assert!(
        brief.contains("group a (2 members): +0m → +6h25m"),
        "{brief}"
    );
    assert!(
        brief.contains(
            "2 member upgrades start between +0m (2026-11-21 00:00) and +6h (2026-11-21 06:00)"
        ),
        "{brief}"
    );
    assert!(
        brief.contains("1 × pending (MaintenanceWindowClosed), e.g. a1 at +0m"),
        "{brief}"
    );
    let full = render(
        &f,
        &RenderOptions {
            member_lines: 1,
            full: true,
            ..RenderOptions::default()
        },
    );
    assert!(full.contains("a2  starts upgrading"), "{full}");
    assert!(!brief.contains("a2  starts upgrading"), "{brief}");
}

#[test]
fn a_failed_run_forecasts_nothing_unless_its_attempt_is_raised() {
    let fleet = fleet_of(&[("a0", "a"), ("a1", "a"), ("a2", "a")]);
    let mut run = under_way(&fleet);
    let status = run.status.as_mut().unwrap();
    let failed = flotilla_api::updates::update_run::Progress {
        state: UpdateState::Failed,
        start_time: Some(Time(plus(-10))),
        completed_time: Some(Time(plus(-5))),
        error: None,
    };
    status.progress = failed.clone();
    status.stages[0].progress = failed.clone();
    status.stages[0].groups[0].progress = failed.clone();
    status.stages[0].groups[0].members[1].progress = failed;
    let f = plan(&run, &fleet, &Assumptions::default());
    assert_eq!(f.finish(), Some(plus(-5)));
    assert!(f.entries.is_empty());
    // A rerun retries a1, then a2; a0 stays upgraded.
    run.spec.attempt = Some(1);
    let f = plan(&run, &fleet, &Assumptions::default());
    assert_eq!(starts(&f), at(&[("a1", 0), ("a2", 25)]));
    assert_eq!(f.finish(), Some(plus(50)));
}

#[test]
fn a_scheduled_start_holds_its_stage_until_its_time_also_when_reached_before_the_forecast() {
    let fleet = fleet_of(&[("a1", "a"), ("b1", "b")]);
    let gate = json!([{"type": "ScheduledStart", "scheduledStartConfiguration":
        {"startDay": "Saturday", "startTime": "13:00", "utcOffset": "+01:00"}}]);
    let strategy = json!({"stages": [
        {"name": "one", "groups": [{"name": "a"}]},
        {"name": "two", "groups": [{"name": "b"}], "beforeGates": gate},
    ]});
    // Saturday midnight UTC: a1 until 00:25, then the gate until 12:00 UTC.
    let mut run = run(strategy);
    let f = plan(&run, &fleet, &Assumptions::default());
    assert_eq!(starts(&f), at(&[("a1", 0), ("b1", 12 * 60)]));
    let reached = f
        .entries
        .iter()
        .find(|e| matches!(e.event, Event::GateReached { .. }))
        .unwrap();
    assert_eq!(
        (reached.at, &reached.event),
        (
            plus(25),
            &Event::GateReached {
                needs_approval: false,
                until: Some(plus(12 * 60))
            }
        )
    );
    // The run as it stands at 06:00 (a forecast that looks no further), forecast again on
    // Sunday: the gate keeps the time computed when it was reached (Saturday, past), not
    // the next Saturday.
    let short = Assumptions {
        horizon: SignedDuration::from_hours(6),
        ..Assumptions::default()
    };
    let f = plan(&run, &fleet, &short);
    assert!(matches!(f.end, End::Stuck { .. }), "{:?}", f.end);
    run.spec.state = Some(RunAction::Run);
    run.status = Some(f.status);
    let sunday = plus(24 * 60);
    let f = forecast(&run, None, &fleet.view(), sunday, &Assumptions::default()).unwrap();
    assert_eq!(starts(&f), [("b1".to_string(), sunday)]);
}
