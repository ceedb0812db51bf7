//! The simulated world a forecast runs the run core in: member upgrades that succeed after
//! their predicted duration, gates approved as assumed or completing at their scheduled
//! start, window facts kept current as simulated time moves, and the loop of passes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use flotilla_api::updates::UpdateRunSpec;
use flotilla_api::updates::gate::{GateState, Timing};
use flotilla_api::updates::member_upgrade::UpgradePhase;
use flotilla_api::updates::strategy::{GateConfiguration, GateType, UpdateRunStrategy};
use flotilla_api::updates::update_run::{RunAction, UpdateRunStatus, UpdateState, UpgradeType};
use jiff::{SignedDuration, Timestamp};

use super::duration::predict;
use super::timeline::{Entry, Event, Marks, PassFacts, Subject};
use super::{Assumptions, End};
use crate::fleet::FleetView;
use crate::run::{
    Action, GateReport, Observed, Outcome, Readiness, UpgradeOrder, UpgradeReport, WindowFacts,
    advance,
};
use crate::window::{Window, next_scheduled_start};

/// The most passes one forecast runs, a backstop behind the horizon.
const MAX_PASSES: usize = 1_000_000;
/// The most passes at one instant after the first, a backstop against a pass that keeps
/// asking to look again at once.
const MAX_PASSES_AT_ONCE: usize = 16;

/// Something the world does by itself at a time.
enum Happening {
    /// A member upgrade, by (member, upgrade name), succeeds.
    UpgradeDone((String, String)),
    /// Someone approves a gate.
    Approve(String),
}

/// The world around one run, in simulated time.
pub(super) struct Simulation<'v, 'a> {
    fleet: &'v FleetView<'a>,
    spec: &'v UpdateRunSpec,
    name: &'v str,
    upgrade: UpgradeType,
    assumptions: &'v Assumptions,
    start: Timestamp,
    now: Timestamp,
    upgrades: HashMap<(String, String), UpgradeReport>,
    gates: HashMap<String, GateReport>,
    happenings: BTreeMap<(Timestamp, u64), Happening>,
    sequence: u64,
    /// Window facts of members not yet final, kept as the controller would compute them now.
    windows: HashMap<String, WindowFacts>,
    /// When each member's window facts next change.
    window_changes: BTreeSet<(Timestamp, String)>,
    /// Members whose durations were assumed.
    pub(super) defaulted: BTreeSet<String>,
    /// The timeline so far.
    pub(super) entries: Vec<Entry>,
}

/// The facts of a window at `now` and when they next change: an open window at the end of
/// its occurrence, a closed one at its next opening.
fn facts_until(window: &Window, now: Timestamp) -> (WindowFacts, Option<Timestamp>) {
    let facts = WindowFacts::of(Some(window), now);
    let until = match &facts {
        WindowFacts::Open => window.occurrence_at(now).map(|(_, end)| end),
        WindowFacts::Closed { next, .. } => *next,
        WindowFacts::None => None,
    };
    (facts, until)
}

/// The targets of an upgrade order, for people.
fn targets(order: &UpgradeOrder) -> Vec<String> {
    order
        .kubernetes_version
        .iter()
        .map(|v| format!("Kubernetes {v}"))
        .chain(order.node_images.iter().cloned())
        .collect()
}

/// The configured gates of one timing of a stage (or of a group of it).
fn gate_configs<'s>(
    strategy: Option<&'s UpdateRunStrategy>,
    stage: &str,
    group: Option<&str>,
    timing: Timing,
) -> &'s [GateConfiguration] {
    let Some(stage) = strategy.and_then(|s| s.stages.iter().find(|s| s.name == stage)) else {
        return &[];
    };
    let (before, after) = match group {
        None => (&stage.before_gates, &stage.after_gates),
        Some(group) => match stage.groups.iter().find(|g| g.name == group) {
            Some(g) => (&g.before_gates, &g.after_gates),
            None => return &[],
        },
    };
    match timing {
        Timing::Before => before,
        Timing::After => after,
    }
}

impl<'v, 'a> Simulation<'v, 'a> {
    /// The world of a run with `status` at `now`: window facts of its waiting members,
    /// upgrades in flight finishing after what is left of them, gates already reached
    /// completing as assumed or scheduled.
    pub(super) fn new(
        fleet: &'v FleetView<'a>,
        spec: &'v UpdateRunSpec,
        name: &'v str,
        assumptions: &'v Assumptions,
        status: &UpdateRunStatus,
        now: Timestamp,
    ) -> Self {
        let mut sim = Simulation {
            fleet,
            spec,
            name,
            upgrade: spec.managed_cluster_update.upgrade.upgrade_type,
            assumptions,
            start: now,
            now,
            upgrades: HashMap::new(),
            gates: HashMap::new(),
            happenings: BTreeMap::new(),
            sequence: 0,
            windows: HashMap::new(),
            window_changes: BTreeSet::new(),
            defaulted: BTreeSet::new(),
            entries: Vec::new(),
        };
        let target = fleet.target(spec, status, now);
        let strategy = status.strategy.as_ref();
        for stage in &status.stages {
            for timing in [Timing::Before, Timing::After] {
                let gates = match timing {
                    Timing::Before => &stage.before_gates,
                    Timing::After => &stage.after_gates,
                };
                let configs = gate_configs(strategy, &stage.name, None, timing);
                for (gate, config) in gates.iter().zip(configs) {
                    sim.reached_gate(gate, config, (&stage.name, None), timing);
                }
            }
            for group in &stage.groups {
                for timing in [Timing::Before, Timing::After] {
                    let gates = match timing {
                        Timing::Before => &group.before_gates,
                        Timing::After => &group.after_gates,
                    };
                    let configs = gate_configs(strategy, &stage.name, Some(&group.name), timing);
                    for (gate, config) in gates.iter().zip(configs) {
                        sim.reached_gate(gate, config, (&stage.name, Some(&group.name)), timing);
                    }
                }
                for member in &group.members {
                    let state = member.progress.state;
                    if !state.is_final()
                        && let Some(window) = fleet.window(&member.name, sim.upgrade)
                    {
                        sim.track_window(&member.name, window);
                    }
                    let (UpdateState::Running, Some(operation)) = (state, &member.operation_id)
                    else {
                        continue;
                    };
                    let left = match fleet.readiness(&target, &member.name, now) {
                        Readiness::Upgrade(order) => predict(
                            &order,
                            fleet.versions(&member.name),
                            assumptions.default_durations,
                        ),
                        _ => super::Predicted {
                            duration: SignedDuration::ZERO,
                            assumed: false,
                        },
                    };
                    if left.assumed {
                        sim.defaulted.insert(member.name.clone());
                    }
                    let key = (member.name.clone(), operation.clone());
                    sim.upgrades.insert(
                        key.clone(),
                        UpgradeReport {
                            phase: UpgradePhase::Running,
                            message: None,
                        },
                    );
                    let until = now + left.duration;
                    sim.schedule(until, Happening::UpgradeDone(key));
                    sim.entries.push(Entry {
                        at: now,
                        stage: stage.name.clone(),
                        group: Some(group.name.clone()),
                        subject: Subject::Member(member.name.clone()),
                        event: Event::InFlight { until },
                    });
                }
            }
        }
        sim
    }

    /// A gate the run reached before the forecast: Pending in the world, approved as assumed
    /// (from now) or completing at its scheduled start (computed from when it was reached,
    /// as the controller did).
    fn reached_gate(
        &mut self,
        gate: &flotilla_api::updates::update_run::GateStatus,
        config: &GateConfiguration,
        (stage, group): (&str, Option<&str>),
        timing: Timing,
    ) {
        let (UpdateState::Pending, Some(id)) = (gate.progress.state, &gate.gate_id) else {
            return;
        };
        let reached = gate.progress.start_time.as_ref().map_or(self.now, |t| t.0);
        let scheduled = config
            .scheduled_start_configuration
            .as_ref()
            .and_then(|c| next_scheduled_start(c, reached).ok());
        let until = self.gate_reached(id, gate.gate_type, scheduled);
        self.entries.push(Entry {
            at: self.now,
            stage: stage.to_string(),
            group: group.map(str::to_string),
            subject: Subject::Gate {
                timing,
                gate_type: gate.gate_type,
                display_name: gate.display_name.clone(),
                name: Some(id.clone()),
            },
            event: Event::GateReached {
                needs_approval: gate.gate_type == GateType::Approval,
                until,
            },
        });
    }

    /// A gate object is Pending from now: an Approval is approved after the assumed delay,
    /// a scheduled start completes at its time. Returns when it completes.
    fn gate_reached(
        &mut self,
        name: &str,
        gate_type: GateType,
        scheduled: Option<Timestamp>,
    ) -> Option<Timestamp> {
        self.gates.insert(
            name.to_string(),
            GateReport {
                state: GateState::Pending,
                scheduled_start: scheduled,
            },
        );
        if gate_type != GateType::Approval {
            return scheduled;
        }
        let at = self.now + self.assumptions.approval_delay?;
        self.schedule(at, Happening::Approve(name.to_string()));
        Some(at)
    }

    /// Keeps `member`'s window facts current from now on.
    fn track_window(&mut self, member: &str, window: &Window) {
        let (facts, until) = facts_until(window, self.now);
        self.windows.insert(member.to_string(), facts);
        if let Some(until) = until {
            self.window_changes.insert((until, member.to_string()));
        }
    }

    fn schedule(&mut self, at: Timestamp, happening: Happening) {
        self.sequence += 1;
        self.happenings.insert((at, self.sequence), happening);
    }

    /// Recomputes the window facts that changed by now.
    fn refresh_windows(&mut self) {
        while let Some(first) = self.window_changes.first()
            && first.0 <= self.now
        {
            let (_, member) = self.window_changes.pop_first().expect("not empty");
            if !self.windows.contains_key(&member) {
                continue;
            }
            if let Some(window) = self.fleet.window(&member, self.upgrade) {
                self.track_window(&member, window);
            }
        }
    }

    /// One pass of the run core at the current time.
    fn pass(&mut self, status: &mut UpdateRunStatus) -> Outcome {
        self.refresh_windows();
        let (fleet, now) = (self.fleet, self.now);
        let target = fleet.target(self.spec, status, now);
        let ready = |member: &str| fleet.readiness(&target, member, now);
        let scheduled = |config: &_| next_scheduled_start(config, now).ok();
        let obs = Observed {
            now,
            run: self.name,
            action: RunAction::Run,
            attempt: self.spec.attempt.unwrap_or(0),
            skip: &self.spec.skip,
            windows: &self.windows,
            upgrades: &self.upgrades,
            gates: &self.gates,
            readiness: &ready,
            scheduled_start: &scheduled,
        };
        advance(status, &obs)
    }

    /// Carries out a pass's actions in the world; says what entries need to know of them.
    fn apply(&mut self, actions: Vec<Action>) -> PassFacts {
        let mut facts = PassFacts::default();
        for action in actions {
            match action {
                Action::CreateUpgrade {
                    member,
                    name,
                    order,
                } => {
                    let predicted = predict(
                        &order,
                        self.fleet.versions(&member),
                        self.assumptions.default_durations,
                    );
                    if predicted.assumed {
                        self.defaulted.insert(member.clone());
                    }
                    let key = (member.clone(), name);
                    self.upgrades.insert(
                        key.clone(),
                        UpgradeReport {
                            phase: UpgradePhase::Running,
                            message: None,
                        },
                    );
                    self.schedule(self.now + predicted.duration, Happening::UpgradeDone(key));
                    facts.starts.insert(
                        member,
                        (targets(&order), predicted.duration, predicted.assumed),
                    );
                }
                Action::CreateGate { name, spec } => {
                    let scheduled = spec.scheduled_start_time.map(|t| t.0);
                    let until = self.gate_reached(&name, spec.gate_type, scheduled);
                    let approval = spec.gate_type == GateType::Approval;
                    facts.gates.insert(name, (approval, until));
                }
                Action::SetGateState { name, state } => {
                    if let Some(gate) = self.gates.get_mut(&name) {
                        gate.state = state;
                    }
                }
            }
        }
        facts
    }

    /// Carries out what is due by now; true if anything was.
    fn happen(&mut self) -> bool {
        let mut any = false;
        while let Some(entry) = self.happenings.first_entry()
            && entry.key().0 <= self.now
        {
            any = true;
            match entry.remove() {
                Happening::UpgradeDone(key) => {
                    if let Some(report) = self.upgrades.get_mut(&key) {
                        report.phase = UpgradePhase::Succeeded;
                    }
                }
                Happening::Approve(gate) => {
                    if let Some(report) = self.gates.get_mut(&gate) {
                        report.state = GateState::Completed;
                    }
                }
            }
        }
        any
    }

    /// Runs passes until the run is final or can make no progress within the horizon.
    pub(super) fn run(&mut self, status: &mut UpdateRunStatus) -> End {
        let rerun = self.spec.attempt.unwrap_or(0) > status.observed_attempt;
        if status.progress.state.is_final() && !rerun {
            return End::Finished {
                at: status
                    .progress
                    .completed_time
                    .as_ref()
                    .map_or(self.now, |t| t.0),
                state: status.progress.state,
                message: status.progress.error.as_ref().map(|e| e.message.clone()),
            };
        }
        let mut marks = Marks::of(status);
        let horizon = self.start + self.assumptions.horizon;
        let mut at_once = 0;
        for _ in 0..MAX_PASSES {
            let outcome = self.pass(status);
            let facts = self.apply(outcome.actions);
            let recorded = self.entries.len();
            marks.record(status, self.now, &facts, &mut self.entries);
            for entry in &self.entries[recorded..] {
                if let (
                    Subject::Member(name),
                    Event::Completed | Event::Skipped(_) | Event::Failed(_),
                ) = (&entry.subject, &entry.event)
                {
                    self.windows.remove(name);
                }
            }
            if status.progress.state.is_final() {
                return End::Finished {
                    at: self.now,
                    state: status.progress.state,
                    message: status.progress.error.as_ref().map(|e| e.message.clone()),
                };
            }
            // A pass already counts what its own actions do (an upgrade Running, a gate
            // Pending or set), so another pass at this instant is needed only when the world
            // changed by itself (an upgrade finished, a gate approved) or the pass asked for
            // one (a scheduled start due now).
            let again = self.happen() || outcome.recheck_at.is_some_and(|at| at <= self.now);
            if again && at_once < MAX_PASSES_AT_ONCE {
                at_once += 1;
                continue;
            }
            at_once = 0;
            let next = [
                self.happenings.first_key_value().map(|(k, _)| k.0),
                outcome.recheck_at.filter(|at| *at > self.now),
            ]
            .into_iter()
            .flatten()
            .min();
            match next {
                Some(at) if at <= horizon => {
                    self.now = at;
                    self.happen();
                }
                Some(_) => return self.stuck(status, Some(horizon)),
                None => return self.stuck(status, None),
            }
        }
        self.stuck(status, None)
    }

    /// Why the run makes no progress: its waiting members and gates.
    fn stuck(&self, status: &UpdateRunStatus, horizon: Option<Timestamp>) -> End {
        let mut reasons = vec![match horizon {
            Some(at) => format!(
                "nothing lets the run go on before the forecast's horizon ({at}, {} ahead)",
                self.assumptions.horizon
            ),
            None => "nothing more is due to happen: no window opens, no release arrives and no gate completes".to_string(),
        }];
        for stage in &status.stages {
            let stage_gates = stage.before_gates.iter().chain(&stage.after_gates);
            let gates = stage_gates.chain(
                stage
                    .groups
                    .iter()
                    .flat_map(|g| g.before_gates.iter().chain(&g.after_gates)),
            );
            for gate in gates.filter(|g| g.progress.state == UpdateState::Pending) {
                let name = gate.gate_id.clone().unwrap_or_default();
                reasons.push(match gate.gate_type {
                    GateType::Approval => {
                        format!("gate {name} waits for approval: `flotilla gate approve {name}`")
                    }
                    GateType::ScheduledStart => {
                        format!("gate {name} waits for its scheduled start")
                    }
                });
            }
            for group in &stage.groups {
                for member in &group.members {
                    if member.progress.state == UpdateState::Pending {
                        let why = member.progress.error.as_ref().map_or("", |e| &e.message);
                        reasons.push(format!(
                            "member {} (stage {}, group {}) is pending: {why}",
                            member.name, stage.name, group.name
                        ));
                    }
                }
            }
        }
        End::Stuck {
            since: self.entries.last().map_or(self.start, |e| e.at),
            reasons,
        }
    }
}
