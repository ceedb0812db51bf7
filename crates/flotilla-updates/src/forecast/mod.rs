//! Plan before you run: the predicted timeline of an update run — which member upgrades when,
//! what waits for which window, release or gate, when the run finishes — computed without
//! changing anything, by running the run core ([`crate::run::advance()`]) over a copy of the
//! run in simulated time against a [`FleetView`].
//!
//! [`forecast()`] is the entry point; [`render()`] prints its result. A client with a
//! `kube::Client` lists the `MemberCluster`s, `MaintenanceConfiguration`s,
//! `KubernetesVersion`s and `NodeImageVersion`s, builds the view with [`FleetView::new`],
//! fetches the run and, when the run names a strategy its status has not copied yet
//! ([`crate::fleet::strategy_to_fetch`]), that `FleetUpdateStrategy`'s spec.
//!
//! # Assumptions
//!
//! - **The run is started or resumed now** (`state: Run`, the run's `attempt` and `skip` as
//!   they are). A NotStarted run is laid out as the controller would at `now` (strategy,
//!   plan, Consistent images); a Running, Pending or Stopped run continues from its status
//!   (the member set and images it froze at its start). A finished run forecasts nothing new
//!   (it ends when it ended), unless its `attempt` was raised: then the rerun is forecast.
//! - **Upgrades take the provider's expected durations** (`status.versions.expectedDurations`
//!   of each member), counted as the member agent's executor works: the control plane when
//!   the order names a Kubernetes version, then every node of each pool whose image family
//!   gets a newer image ([`predict`]). A member that reports none is given
//!   [`DEFAULT_DURATIONS`] (or [`Assumptions::default_durations`]), and the forecast lists
//!   it in [`Forecast::defaulted`]. **Every upgrade succeeds**: no failure is predicted.
//! - **An upgrade in flight** is given the predicted time of what its member's reported
//!   versions still show to do, from now: the control plane if not yet at target, and each
//!   pool not yet on its target image in full (a pool reports its new image only once every
//!   node runs it).
//! - **Approval gates** are approved [`Assumptions::approval_delay`] after they are reached
//!   (default: at once); the timeline marks each with the command that approves it. With no
//!   delay (`None`) nobody approves, and the forecast ends stuck at the first one.
//!   **ScheduledStart gates** complete at their time; a gate reached before the forecast
//!   keeps the time computed when it was reached.
//! - **The fleet does not change**: no member joins or leaves, windows and the catalog stay
//!   as listed (releases still arrive in regions at their listed `availableAt`), and the
//!   versions members report stay as they are (readiness is asked of the versions reported
//!   now).
//! - **Passes happen when something changes**, as the controller is woken: at every upgrade
//!   completion or approval, and at the times a pass asks to look again (a wait ends, a
//!   window opens, a release arrives, a scheduled start comes). The controller's extra pass
//!   right after its own actions is left out: a pass already counts what its actions do (an
//!   upgrade Running, a gate Pending), so that pass would change nothing; a pass is repeated
//!   at one instant only when the world changed by itself or the pass asked to look again at
//!   once. Window facts are those of each pass's time (kept with the instant they next
//!   change rather than recomputed every pass), so a member whose window closes while it
//!   waits for a slot goes Pending at the next pass, as it would live.
//! - **Bounded**: when nothing is due to happen, or nothing before [`Assumptions::horizon`]
//!   (default one year) after `now`, the forecast ends [`End::Stuck`] naming the pending
//!   members and gates and why.

mod duration;
mod render;
mod simulate;
mod timeline;

use std::collections::BTreeSet;

use flotilla_api::cluster::versions::UpgradeDurations;
use flotilla_api::updates::update_run::{UpdateRunStatus, UpdateState};
use flotilla_api::updates::{UpdateRun, UpdateRunStrategy};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use thiserror::Error;

pub use duration::{DEFAULT_DURATIONS, Predicted, predict};
pub use render::{RenderOptions, render};
pub use timeline::{Entry, Event, Subject};

use crate::fleet::{FleetView, StrategyNotFound, run_strategy};
use crate::run::init::PlanError;
use simulate::Simulation;

/// What the forecast assumes of the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assumptions {
    /// How long after an Approval gate is reached someone approves it; `None`: nobody does.
    pub approval_delay: Option<SignedDuration>,
    /// Step durations of members that report no `expectedDurations`.
    pub default_durations: UpgradeDurations,
    /// How far past `now` the forecast looks for the run to make progress.
    pub horizon: SignedDuration,
}

impl Default for Assumptions {
    /// Approvals at once, [`DEFAULT_DURATIONS`], a horizon of 365 days.
    fn default() -> Self {
        Assumptions {
            approval_delay: Some(SignedDuration::ZERO),
            default_durations: DEFAULT_DURATIONS,
            horizon: SignedDuration::from_hours(365 * 24),
        }
    }
}

/// How a forecast ends.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The run reaches a final state.
    Finished {
        /// When.
        at: Timestamp,
        /// Completed, Skipped (everything skipped) or Failed.
        state: UpdateState,
        /// The run's error, if it failed.
        message: Option<String>,
    },
    /// The run can make no progress.
    Stuck {
        /// Since when nothing has changed.
        since: Timestamp,
        /// Why: first what the forecast gave up on, then every pending gate and member.
        reasons: Vec<String>,
    },
}

/// A predicted timeline of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    /// The run's name.
    pub run: String,
    /// What the run upgrades to, for people: e.g. `Full to 1.31.2, node images Consistent
    /// (AKSUbuntu-2204gen2containerd-202511.02.0)`.
    pub upgrade: String,
    /// When the forecast starts (`now`).
    pub start: Timestamp,
    /// Whether the run had not started: it is planned as if started at [`Forecast::start`].
    pub from_scratch: bool,
    /// What happens, in time order.
    pub entries: Vec<Entry>,
    /// How it ends.
    pub end: End,
    /// The run's status at the end.
    pub status: UpdateRunStatus,
    /// Members that report no expected durations, whose upgrades were given the defaults.
    pub defaulted: BTreeSet<String>,
    /// The assumptions made.
    pub assumptions: Assumptions,
}

impl Forecast {
    /// When the run is predicted to finish (`None`: it is stuck).
    pub fn finish(&self) -> Option<Timestamp> {
        match self.end {
            End::Finished { at, .. } => Some(at),
            End::Stuck { .. } => None,
        }
    }
}

/// Why a run cannot be forecast.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ForecastError {
    /// The run names a strategy the caller did not pass.
    #[error(transparent)]
    Strategy(#[from] StrategyNotFound),
    /// The strategy cannot be laid over the fleet.
    #[error("the strategy cannot be laid over the fleet: {0}")]
    Plan(#[from] PlanError),
}

/// Forecasts `run` from `now` over `fleet`: `strategy` is the `FleetUpdateStrategy` the run
/// names (needed only while the run has not copied it: see
/// [`crate::fleet::strategy_to_fetch`]). The inputs are not changed. See the module docs
/// for the assumptions.
pub fn forecast(
    run: &UpdateRun,
    strategy: Option<&UpdateRunStrategy>,
    fleet: &FleetView,
    now: Timestamp,
    assumptions: &Assumptions,
) -> Result<Forecast, ForecastError> {
    let name = run.name_any();
    let mut status = run.status.clone().unwrap_or_default();
    let from_scratch = status.progress.state == UpdateState::NotStarted;
    if from_scratch {
        let strategy = run_strategy(&run.spec, &status, strategy)?;
        fleet.prepare(&run.spec, &mut status, strategy, now)?;
    }
    let mut simulation = Simulation::new(fleet, &run.spec, &name, assumptions, &status, now);
    let end = simulation.run(&mut status);
    Ok(Forecast {
        upgrade: describe_upgrade(run, &status),
        run: name.clone(),
        start: now,
        from_scratch,
        entries: simulation.entries,
        end,
        status,
        defaulted: simulation.defaulted,
        assumptions: *assumptions,
    })
}

/// `Full to 1.31.2, node images Consistent (AKSUbuntu-2204gen2containerd-202511.02.0)`.
fn describe_upgrade(run: &UpdateRun, status: &UpdateRunStatus) -> String {
    let update = &run.spec.managed_cluster_update;
    let mut text = format!("{:?}", update.upgrade.upgrade_type);
    if let Some(version) = &update.upgrade.kubernetes_version {
        text.push_str(&format!(" to {version}"));
    }
    let selection = update
        .node_image_selection
        .as_ref()
        .map(|s| s.selection_type)
        .unwrap_or_default();
    text.push_str(&format!(", node images {selection:?}"));
    let chosen: Vec<&str> = status
        .node_image_selection
        .iter()
        .flat_map(|s| &s.selected_node_image_versions)
        .map(|v| v.version.as_str())
        .collect();
    if !chosen.is_empty() {
        text.push_str(&format!(" ({})", chosen.join(", ")));
    }
    text
}
