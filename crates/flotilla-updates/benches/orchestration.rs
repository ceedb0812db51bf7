//! Cluster update orchestration at fleet scale, on the fleets of the forecast tests
//! (`tests/forecast/fixtures.rs`): groups a–d in two stages (an hour's wait and an approval
//! between them), one member in five with a daily four-hour window, Consistent images over
//! three regions, Kubernetes reaching one region two days late, every group one member at a
//! time (the O(n²) case of the run core).
//!
//! - `forecast/N`: the whole planner, [`forecast`] of a run not yet started over N members.
//!   Target: ≤ 2 s at 10,000 members.
//! - `advance/N`: the run core alone, a full run driven through [`advance`] with every
//!   upgrade done by the next pass and no windows; criterion's throughput is member state
//!   transitions (two a member: Running, Completed), so time per element is the core's
//!   overhead per transition.
//!
//! Measured with mimalloc, the global allocator of the `flotilla` binary that runs the
//! planner.

use std::collections::HashMap;

use criterion::{BenchmarkId, Criterion, Throughput, black_box};
use flotilla_api::updates::UpdateRun;
use flotilla_api::updates::member_upgrade::UpgradePhase;
use flotilla_api::updates::update_run::{RunAction, UpdateRunStatus};
use flotilla_updates::fleet::run_strategy;
use flotilla_updates::forecast::{Assumptions, forecast};
use flotilla_updates::run::{Action, Observed, Readiness, UpgradeReport, advance};
use jiff::SignedDuration;

#[allow(dead_code)]
#[path = "../tests/forecast/fixtures.rs"]
mod fixtures;

use fixtures::{Fleet, large, run, t0, two_stages};

/// The allocator of the `flotilla` binary, which runs the planner.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 2] = [1_000, 10_000];

fn planner(c: &mut Criterion) {
    let mut group = c.benchmark_group("forecast");
    group.sample_size(10);
    let run = run(two_stages());
    for size in SIZES {
        let fleet = large(size);
        let view = fleet.view();
        let assumptions = Assumptions::default();
        let f = forecast(&run, None, &view, t0(), &assumptions).expect("forecast");
        assert!(f.finish().is_some(), "{:?}", f.end);
        group.bench_function(BenchmarkId::from_parameter(size), |b| {
            b.iter(|| forecast(black_box(&run), None, &view, t0(), &assumptions))
        });
    }
    group.finish();
}

/// The run's status as planned over `fleet`, started.
fn planned(run: &UpdateRun, fleet: &Fleet) -> UpdateRunStatus {
    let mut status = UpdateRunStatus::default();
    let strategy = run_strategy(&run.spec, &status, None).expect("inline strategy");
    fleet
        .view()
        .prepare(&run.spec, &mut status, strategy, t0())
        .expect("plan");
    status
}

/// Drives `status` to its end: every upgrade succeeds by the next pass, gates are approved
/// as soon as they are created, time moves a minute a pass. Returns the member state
/// transitions (two per upgraded member).
fn drive(mut status: UpdateRunStatus) -> u64 {
    let mut upgrades = HashMap::new();
    let mut gates = HashMap::new();
    let windows = HashMap::new();
    let ready = |_: &str| {
        Readiness::Upgrade(flotilla_updates::run::UpgradeOrder {
            kubernetes_version: Some("1.31.2".into()),
            node_images: Vec::new(),
        })
    };
    let scheduled = |_: &_| None;
    let mut now = t0();
    let mut transitions = 0;
    while !status.progress.state.is_final() {
        let obs = Observed {
            now,
            run: "r",
            action: RunAction::Run,
            attempt: 0,
            skip: &[],
            windows: &windows,
            upgrades: &upgrades,
            gates: &gates,
            readiness: &ready,
            scheduled_start: &scheduled,
        };
        let outcome = advance(&mut status, &obs);
        for action in outcome.actions {
            match action {
                Action::CreateUpgrade { member, name, .. } => {
                    transitions += 2;
                    let report = UpgradeReport {
                        phase: UpgradePhase::Succeeded,
                        message: None,
                    };
                    upgrades.insert((member, name), report);
                }
                Action::CreateGate { name, .. } => {
                    let report = flotilla_updates::run::GateReport {
                        state: flotilla_api::updates::gate::GateState::Completed,
                        scheduled_start: None,
                    };
                    gates.insert(name, report);
                }
                Action::SetGateState { .. } => {}
            }
        }
        now = match outcome.recheck_at {
            Some(at) if at > now => at,
            _ => now + SignedDuration::from_mins(1),
        };
    }
    transitions
}

fn core(c: &mut Criterion) {
    let mut group = c.benchmark_group("advance");
    group.sample_size(10);
    let run = run(two_stages());
    for size in SIZES {
        let status = planned(&run, &large(size));
        let transitions = drive(status.clone());
        assert_eq!(transitions, 2 * size as u64);
        group.throughput(Throughput::Elements(transitions));
        group.bench_function(BenchmarkId::from_parameter(size), |b| {
            b.iter(|| drive(black_box(status.clone())))
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    planner(&mut criterion);
    core(&mut criterion);
    criterion.final_summary();
}
