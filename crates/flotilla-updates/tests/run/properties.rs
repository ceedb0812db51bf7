//! Invariants over random fleets, strategies, windows and upgrade timings.

use std::collections::HashSet;

use flotilla_api::updates::update_run::UpdateState;
use flotilla_updates::run::WindowFacts;
use jiff::SignedDuration;
use proptest::prelude::*;
use serde_json::json;

use crate::harness::{World, members, strategy, t0};

/// A random fleet: (group index, window kind 0 none / 1 open / 2 closed-for-hours) per member.
fn fleet() -> impl Strategy<Value = Vec<(usize, u8, i64)>> {
    prop::collection::vec((0usize..4, 0u8..3, 1i64..48), 1..24)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn concurrency_is_never_exceeded_stages_stay_in_order_and_runs_finish(
        layout in fleet(),
        group_limit in 1u32..4,
        stage_limit in 1u32..6,
        finish_ratio in 1usize..4,
    ) {
        let names: Vec<(String, String)> = layout
            .iter()
            .enumerate()
            .map(|(i, (g, _, _))| (format!("m{i:02}"), format!("g{g}")))
            .collect();
        let refs: Vec<(&str, &str)> = names.iter().map(|(m, g)| (m.as_str(), g.as_str())).collect();
        let fleet = members(&refs);
        let present: HashSet<&str> = refs.iter().map(|(_, g)| *g).collect();
        let stage = |groups: &[&str]| -> serde_json::Value {
            json!(groups.iter().filter(|g| present.contains(*g))
                .map(|g| json!({"name": g, "maxConcurrency": group_limit.min(stage_limit).to_string()}))
                .collect::<Vec<_>>())
        };
        let mut stages = Vec::new();
        for (name, groups) in [("one", ["g0", "g1"]), ("two", ["g2", "g3"])] {
            let groups = stage(&groups);
            if groups.as_array().is_some_and(|g| !g.is_empty()) {
                stages.push(json!({"name": name, "maxConcurrency": stage_limit.to_string(),
                    "groups": groups, "afterStageWaitInSeconds": 600}));
            }
        }
        // Group concurrency must not exceed a group's size: skip layouts that would.
        let sizes_ok = present.iter().all(|g| refs.iter().filter(|(_, x)| x == g).count() as u32 >= group_limit.min(stage_limit));
        prop_assume!(sizes_ok);
        let mut w = World::new(strategy(json!({"stages": stages})), &fleet);
        for (i, (_, window, hours)) in layout.iter().enumerate() {
            let facts = match window {
                0 => WindowFacts::None,
                1 => WindowFacts::Open,
                _ => WindowFacts::Closed { next: Some(t0() + SignedDuration::from_hours(*hours)), description: "w".into() },
            };
            w.windows.insert(format!("m{i:02}"), facts);
        }
        for step in 0..400 {
            w.pass();
            for s in &w.status.stages {
                let mut in_stage = 0;
                for g in &s.groups {
                    let running = g.members.iter().filter(|m| m.progress.state == UpdateState::Running).count() as u32;
                    prop_assert!(running <= g.max_concurrency, "group {} runs {running}", g.name);
                    in_stage += running;
                }
                prop_assert!(in_stage <= s.max_concurrency);
            }
            if let [one, two] = &w.status.stages[..] {
                let two_started = two.groups.iter().flat_map(|g| &g.members).any(|m| m.progress.state != UpdateState::NotStarted);
                prop_assert!(!two_started || one.progress.state.is_final(), "stage two started before stage one ended");
            }
            if w.status.progress.state.is_final() {
                break;
            }
            // Only some passes finish upgrades: upgrades take varying numbers of passes.
            if step % finish_ratio == 0 {
                w.finish_upgrades();
            }
            // Windows open when their time comes.
            let now = w.now;
            for facts in w.windows.values_mut() {
                if let WindowFacts::Closed { next: Some(at), .. } = facts && *at <= now {
                    *facts = WindowFacts::Open;
                }
            }
            if w.last.actions.is_empty() && let Some(at) = w.last.recheck_at && at > w.now {
                w.now = at;
            }
        }
        prop_assert_eq!(w.status.progress.state, UpdateState::Completed);
        let started = w.started();
        let unique: HashSet<&String> = started.iter().collect();
        prop_assert_eq!(unique.len(), started.len(), "no member upgraded twice");
        prop_assert_eq!(started.len(), fleet.len());
    }
}
