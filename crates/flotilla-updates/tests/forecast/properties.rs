//! Properties of forecasts over random fleets: every member of the plan ends once, times never
//! go back, concurrency holds, and nothing given to the forecast changes.

use std::collections::BTreeMap;

use flotilla_api::updates::update_run::UpdateState;
use flotilla_updates::forecast::{Assumptions, End, Event, ForecastError, Subject, forecast};
use flotilla_updates::run::init::PlanError;
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;
use serde_json::json;

use crate::fixtures::{Fleet, REGIONS, large, run, t0, two_stages};

/// One generated member: group (4: none), region, nodes, durations, window (hour, hours).
type MemberCase = (usize, usize, u32, Option<(u64, u64)>, Option<(usize, u32)>);

fn member_case() -> impl Strategy<Value = MemberCase> {
    (
        0..5usize,
        0..3usize,
        1..5u32,
        proptest::option::of((60..1200u64, 60..600u64)),
        proptest::option::weighted(0.3, (0..24usize, 4..8u32)),
    )
}

const GROUPS: [&str; 4] = ["a", "b", "c", "d"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_member_ends_once_in_time_order_within_concurrency_and_inputs_stay_as_they_were(
        cases in proptest::collection::vec(member_case(), 1..30),
        concurrency in proptest::sample::select(vec![None, Some("50%"), Some("100%")]),
        wait in proptest::sample::select(vec![0u32, 600, 3600]),
        approval in proptest::option::of(0..180i64),
    ) {
        let mut fleet = Fleet::new();
        for (i, (group, region, nodes, durations, window)) in cases.iter().enumerate() {
            let name = format!("m{i:02}");
            let group = GROUPS.get(*group).copied().unwrap_or("none");
            fleet.member(&name, group, REGIONS[*region], *nodes, *durations);
            if let Some((hour, hours)) = window {
                fleet.daily_window(&name, &format!("{hour:02}:30"), *hours);
            }
        }
        let group = |name: &str| json!({"name": name, "maxConcurrency": concurrency});
        let gates = match approval {
            Some(_) => json!([{"type": "Approval"}]),
            None => json!([]),
        };
        let run = run(json!({"stages": [
            {"name": "one", "groups": [group("a"), group("b")], "afterStageWaitInSeconds": wait},
            {"name": "two", "groups": [group("c"), group("d")], "beforeGates": gates},
        ]}));
        let assumptions = Assumptions {
            approval_delay: Some(SignedDuration::from_mins(approval.unwrap_or(0))),
            ..Assumptions::default()
        };
        let (run_before, fleet_before) = (run.clone(), fleet.clone());
        let planned: BTreeMap<String, &str> = cases
            .iter()
            .enumerate()
            .filter_map(|(i, case)| Some((format!("m{i:02}"), *GROUPS.get(case.0)?)))
            .collect();
        let result = forecast(&run, None, &fleet.view(), t0(), &assumptions);
        prop_assert_eq!(&run, &run_before);
        prop_assert!(fleet.members == fleet_before.members && fleet.windows == fleet_before.windows);
        let f = match result {
            Err(ForecastError::Plan(PlanError::Empty)) => {
                prop_assert!(planned.is_empty());
                return Ok(());
            }
            other => other.expect("a forecast"),
        };
        // Windows open daily and releases are everywhere: every run completes.
        let End::Finished { at, state, .. } = &f.end else {
            panic!("{:?}", f.end)
        };
        prop_assert_eq!(*state, UpdateState::Completed);
        prop_assert_eq!(Some(*at), f.entries.last().map(|e| e.at));

        // Every planned member is in the status once, final, and ends once in the timeline;
        // no other member appears.
        let in_status: Vec<(&str, UpdateState)> = f.status.stages.iter()
            .flat_map(|s| &s.groups)
            .flat_map(|g| &g.members)
            .map(|m| (m.name.as_str(), m.progress.state))
            .collect();
        prop_assert_eq!(in_status.len(), planned.len());
        let mut ends: BTreeMap<&str, usize> = BTreeMap::new();
        let mut upgrades: BTreeMap<&str, usize> = BTreeMap::new();
        for entry in &f.entries {
            if let Subject::Member(name) = &entry.subject {
                prop_assert!(planned.contains_key(name), "{} is not in the plan", name);
                match entry.event {
                    Event::Completed | Event::Skipped(_) | Event::Failed(_) => {
                        *ends.entry(name).or_default() += 1
                    }
                    Event::Upgrading { .. } => *upgrades.entry(name).or_default() += 1,
                    _ => {}
                }
            }
        }
        for (name, state) in &in_status {
            prop_assert!(state.is_final(), "{} ends {:?}", name, state);
            prop_assert_eq!(ends.get(name), Some(&1), "{} ends once", name);
            prop_assert!(upgrades.get(name).copied().unwrap_or(0) <= 1);
        }

        // Per group: times never go back, and no more members upgrade at once than allowed.
        for stage in &f.status.stages {
            for group in &stage.groups {
                let entries: Vec<_> = f.entries.iter()
                    .filter(|e| e.group.as_deref() == Some(group.name.as_str()))
                    .collect();
                prop_assert!(entries.windows(2).all(|w| w[0].at <= w[1].at));
                let mut changes: Vec<(Timestamp, i32)> = Vec::new();
                for e in &entries {
                    match (&e.subject, &e.event) {
                        (Subject::Member(_), Event::Upgrading { .. }) => changes.push((e.at, 1)),
                        (Subject::Member(_), Event::Completed) if upgrades.contains_key(
                            match &e.subject { Subject::Member(n) => n.as_str(), _ => "" }
                        ) => changes.push((e.at, -1)),
                        _ => {}
                    }
                }
                // Completions at an instant free their slots before starts take them.
                changes.sort();
                let mut running = 0;
                for (_, change) in changes {
                    running += change;
                    prop_assert!(running <= group.max_concurrency as i32);
                }
            }
        }
    }
}

#[test]
fn the_benchmark_fleet_completes_with_every_member_upgraded_once() {
    let fleet = large(1_000);
    let f = forecast(
        &run(two_stages()),
        None,
        &fleet.view(),
        t0(),
        &Assumptions::default(),
    )
    .expect("forecast");
    assert!(
        matches!(
            f.end,
            End::Finished {
                state: UpdateState::Completed,
                ..
            }
        ),
        "{:?}",
        f.end
    );
    let mut upgraded: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in &f.entries {
        if let (Subject::Member(name), Event::Upgrading { .. }) = (&entry.subject, &entry.event) {
            *upgraded.entry(name).or_default() += 1;
        }
    }
    assert_eq!(upgraded.len(), 1_000);
    assert!(upgraded.values().all(|n| *n == 1));
    // Kubernetes reaches northeurope two days late: its members wait for it.
    let late: Timestamp = "2026-11-23T00:00:00Z".parse().unwrap();
    assert!(f.entries.iter().any(|e| matches!(&e.event, Event::Pending { code, .. } if code == "KubernetesVersionNotAvailable")));
    assert!(f.finish().unwrap() > late);
}
