//! The update run state machine, a pure function of the run's status and what the controller
//! observed: [`init::plan`] lays the strategy over the fleet's members, and [`advance()`] moves
//! the run one pass forward and says what to create or change.
//!
//! Decisions the reference leaves open, taken here:
//! - **The member set is frozen when the run starts.** While NotStarted, the plan is recomputed
//!   on every pass (so `kubectl get` shows who is in which group); from the start on, members
//!   joining or leaving the fleet do not change the run.
//! - **A member in no group is not part of the run**; a member two groups select fails the
//!   plan naming both groups.
//! - **A Pending member holds no `maxConcurrency` slot**: the group moves to its next member.
//!   Members whose window is closed go Pending as soon as their group runs, whatever the slots,
//!   so their next opening is visible at once.
//! - **Order within a group** is window priority (open now, opens within 4 hours, no window,
//!   closed), then the member's place in the plan (by name).
//! - **Stop** starts nothing new and creates no gates; upgrades in flight finish, and Pending
//!   gates stay Pending (an approval given meanwhile counts once the run resumes). Waits keep
//!   their start time.
//! - **A rerun** (raising `spec.attempt` on a Failed or Stopped run) resets failed and skipped
//!   members, groups and stages to NotStarted; completed members, completed or skipped gates
//!   and completed waits stay. Targets still listed in `spec.skip` are skipped again.
//! - **Failure thresholds**: a group fails once its failures exceed its `maxAllowedFailures`
//!   and starts nothing more; a stage fails once its failures exceed its own threshold; a
//!   failed stage fails the run, which then starts nothing more. A group that failed within its
//!   stage's threshold does not stop its stage.

pub mod advance;
pub mod events;
pub mod init;
pub mod names;
pub mod rollup;
pub mod skip;

use std::collections::HashMap;

use flotilla_api::updates::gate::{GateSpec, GateState};
use flotilla_api::updates::member_upgrade::UpgradePhase;
use flotilla_api::updates::update_run::{RunAction, SkipTarget};
use jiff::Timestamp;

pub use advance::advance;

use crate::window::{OPENS_SOON, Window, WindowPriority};

/// What the run needs to know about a member's maintenance window at this moment.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowFacts {
    /// The member has no window for this kind of upgrade: work may start at any time.
    None,
    /// The window is open now.
    Open,
    /// The window is closed; it next opens at `next` (if ever), described for people.
    Closed {
        /// The next opening.
        next: Option<Timestamp>,
        /// The window in words, e.g. `weekly on Saturday 22:00 for 6h (UTC-08:00)`.
        description: String,
    },
}

impl WindowFacts {
    /// The facts of `window` (`None`: the member has none) at `now`.
    pub fn of(window: Option<&Window>, now: Timestamp) -> WindowFacts {
        match window {
            None => WindowFacts::None,
            Some(window) if window.is_open(now) => WindowFacts::Open,
            Some(window) => WindowFacts::Closed {
                next: window.next_opening(now),
                description: window.to_string(),
            },
        }
    }

    /// The member's priority at `now`.
    pub fn priority(&self, now: Timestamp) -> WindowPriority {
        match self {
            WindowFacts::Open => WindowPriority::OpenNow,
            WindowFacts::None => WindowPriority::NoWindow,
            WindowFacts::Closed {
                next: Some(next), ..
            } if next.duration_since(now) <= OPENS_SOON => WindowPriority::OpensSoon,
            WindowFacts::Closed { .. } => WindowPriority::Closed,
        }
    }
}

/// Whether a member can be upgraded now, and to what: the verdict of the release rules
/// (target version, image availability, eligibility), asked when the member's turn comes.
#[derive(Debug, Clone, PartialEq)]
pub enum Readiness {
    /// Start the upgrade.
    Upgrade(UpgradeOrder),
    /// Nothing to do (system skip), with why.
    AtTarget(String),
    /// The member is skipped, with why (e.g. more than one minor behind, cluster stopped, no
    /// common image for one of its pools).
    Skip(String),
    /// Not yet: the member is Pending with this error until about `until`.
    NotYet {
        /// Error code, e.g. `NodeImageVersionNotAvailable`.
        code: String,
        /// Why, naming region and version.
        message: String,
        /// When to look again, if known.
        until: Option<Timestamp>,
    },
    /// The member fails (e.g. a non-LTS member in a long-term-support run).
    Fail(String),
}

/// What a member's upgrade is to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpgradeOrder {
    /// The control plane's target, for Full and ControlPlaneOnly.
    pub kubernetes_version: Option<String>,
    /// Target image per family (full names).
    pub node_images: Vec<String>,
}

/// What became of a member upgrade the run created.
#[derive(Debug, Clone, PartialEq)]
pub struct UpgradeReport {
    /// Its phase.
    pub phase: UpgradePhase,
    /// The agent's message.
    pub message: Option<String>,
}

/// A gate object as observed.
#[derive(Debug, Clone, PartialEq)]
pub struct GateReport {
    /// Its state.
    pub state: GateState,
    /// For a `ScheduledStart` gate: when it completes by itself.
    pub scheduled_start: Option<Timestamp>,
}

/// Everything one pass reads.
pub struct Observed<'a> {
    /// The current time.
    pub now: Timestamp,
    /// The run's name.
    pub run: &'a str,
    /// The requested state.
    pub action: RunAction,
    /// The requested attempt.
    pub attempt: u32,
    /// Targets to skip.
    pub skip: &'a [SkipTarget],
    /// Window facts per member (absent: no window).
    pub windows: &'a HashMap<String, WindowFacts>,
    /// Member upgrades by (member, upgrade name).
    pub upgrades: &'a HashMap<(String, String), UpgradeReport>,
    /// Gate objects by name.
    pub gates: &'a HashMap<String, GateReport>,
    /// Asked when a member's turn comes.
    pub readiness: &'a dyn Fn(&str) -> Readiness,
    /// When a `ScheduledStart` gate reached now completes.
    pub scheduled_start: &'a dyn Fn(
        &flotilla_api::updates::strategy::ScheduledStartConfiguration,
    ) -> Option<Timestamp>,
}

/// Something the controller must do after a pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Create the member upgrade `name` in the member's namespace.
    CreateUpgrade {
        /// The member.
        member: String,
        /// The MemberUpgrade's name.
        name: String,
        /// What to do.
        order: UpgradeOrder,
    },
    /// Create a gate object.
    CreateGate {
        /// Its name.
        name: String,
        /// Its spec.
        spec: GateSpec,
    },
    /// Set a gate object's state (a scheduled start that came, or a skipped gate).
    SetGateState {
        /// Its name.
        name: String,
        /// The new state.
        state: GateState,
    },
}

/// The result of a pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// When a pass is due again even if nothing is observed to change (a wait ends, a window
    /// opens, a release arrives, a scheduled start comes).
    pub recheck_at: Option<Timestamp>,
}

impl Outcome {
    /// Asks for a pass at `at` (keeping the earliest).
    pub fn recheck(&mut self, at: Timestamp) {
        self.recheck_at = Some(self.recheck_at.map_or(at, |have| have.min(at)));
    }
}
