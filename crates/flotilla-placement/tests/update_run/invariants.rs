//! Property: whatever the bindings do, no stage ever has more than its `maxConcurrency`
//! clusters in flight, and a run whose bindings all become available finishes.

use flotilla_api::conditions::find;
use flotilla_api::placement::staged_update_run::{UpdateRunState, UpdateRunStatus};
use flotilla_api::placement::staged_update_strategy::UpdateStrategySpec;
use flotilla_placement::update_run::execute::BindingOutcome;
use flotilla_placement::update_run::max_concurrency;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;

use super::fixtures::*;

fn in_flight(status: &UpdateRunStatus, stage: usize) -> usize {
    status.stages_status.as_ref().unwrap()[stage]
        .clusters
        .iter()
        .filter(|c| {
            let conditions = c.conditions.as_deref().unwrap_or_default();
            find(conditions, "Started").is_some() && find(conditions, "Succeeded").is_none()
        })
        .count()
}

fn limit_strategy() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (1i32..6).prop_map(IntOrString::Int),
        (1u32..=100).prop_map(|p| IntOrString::String(format!("{p}%"))),
    ]
}

proptest! {
    #[test]
    fn no_stage_exceeds_its_concurrency(
        sizes in prop::collection::vec(0usize..12, 1..4),
        limits in prop::collection::vec(limit_strategy(), 3),
        // Each step: which bound bindings become available (by position), and the state.
        steps in prop::collection::vec((prop::collection::vec(any::<bool>(), 12), 0u8..10), 1..40),
    ) {
        let mut clusters = Vec::new();
        let mut stages = Vec::new();
        for (s, size) in sizes.iter().enumerate() {
            let env = format!("e{s}");
            for i in 0..*size {
                clusters.push(cluster(&format!("s{s}c{i}"), &[("environment", &env)]));
            }
            stages.push(concurrency(stage(&format!("s{s}"), &env), limits[s].clone()));
        }
        let strategy = UpdateStrategySpec { stages };
        let mut world = World::scheduled(&clusters);
        let mut status = initialized("run", &strategy, &clusters, &[]);
        for (t, (ready, state)) in steps.iter().enumerate() {
            let state = match state { 0 => UpdateRunState::Stop, _ => UpdateRunState::Run };
            world.pass(&mut status, state, at(t as i64));
            for (s, size) in sizes.iter().enumerate() {
                let limit = max_concurrency(Some(&limits[s]), *size);
                prop_assert!(in_flight(&status, s) <= limit, "stage s{s}: {} in flight, limit {limit}", in_flight(&status, s));
            }
            for (i, binding) in world.bindings.values_mut().enumerate() {
                if binding.on_target && ready[i % ready.len()] {
                    binding.outcome = BindingOutcome::Succeeded;
                }
            }
        }
        // Then everything becomes available and the run is let run: it finishes.
        for t in 0..200 {
            world.all_available();
            world.pass(&mut status, UpdateRunState::Run, at(1000 + t));
        }
        let succeeded = find(status.conditions.as_deref().unwrap(), "Succeeded").map(|c| c.status.clone());
        prop_assert_eq!(succeeded.as_deref(), Some("True"));
    }
}
