//! One pass of a run: observe what the member upgrades and gates did, apply skips and reruns,
//! start what may start, and roll the states up. See the module docs of [`super`] for the
//! decisions taken where the reference is silent.

use flotilla_api::updates::gate::{GateSpec, GateState, GateTarget, Timing};
use flotilla_api::updates::member_upgrade::UpgradePhase;
use flotilla_api::updates::strategy::{GateConfiguration, UpdateRunStrategy};
use flotilla_api::updates::update_run::{
    ErrorDetail, GateStatus, GroupStatus, MemberStatus, Progress, RunAction, StageStatus,
    UpdateRunStatus, UpdateState,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::names::{gate_name, upgrade_name};
use super::{Action, Observed, Outcome, Readiness, WindowFacts, rollup, skip};

/// Error code of a member whose upgrade failed.
pub const UPGRADE_FAILED: &str = "UpgradeFailed";
/// Error code of a member waiting for its maintenance window.
pub const WINDOW_CLOSED: &str = "MaintenanceWindowClosed";
/// Error code of a member the release rules skip.
pub const NOT_ELIGIBLE: &str = "NotEligible";
/// Error code of a member already at the target.
pub const AT_TARGET: &str = "AlreadyAtTarget";
/// Error code of a segment past its failure threshold.
pub const TOO_MANY_FAILURES: &str = "TooManyFailures";

/// What a pass needs besides the status it changes.
struct Pass<'a, 'o> {
    obs: &'a Observed<'o>,
    strategy: UpdateRunStrategy,
    /// New work (members, gates, waits) may start.
    may_start: bool,
    stop: bool,
    out: Outcome,
}

/// Moves the run one pass forward: the status is updated in place and the outcome says what
/// the controller must create or change, and when to look again.
pub fn advance(status: &mut UpdateRunStatus, obs: &Observed) -> Outcome {
    let now = obs.now;
    if obs.attempt > status.observed_attempt {
        if matches!(
            status.progress.state,
            UpdateState::Failed | UpdateState::Stopped
        ) {
            skip::rerun(status);
        }
        status.observed_attempt = obs.attempt;
    }
    let mut pass = Pass {
        obs,
        strategy: status.strategy.clone().unwrap_or_default(),
        may_start: false,
        stop: obs.action == RunAction::Stop,
        out: Outcome::default(),
    };
    // Until the start the plan is laid out afresh on every pass: skips show, nothing runs and
    // nothing is stamped, so the status comes out the same until something changes.
    let not_started =
        obs.action == RunAction::NotStarted && status.progress.state == UpdateState::NotStarted;
    for name in skip::apply(status, obs.skip, (!not_started).then_some(now)) {
        pass.out.actions.push(Action::SetGateState {
            name,
            state: GateState::Skipped,
        });
    }
    let already_failed = status
        .stages
        .iter()
        .any(|s| s.progress.state == UpdateState::Failed);
    pass.may_start = obs.action == RunAction::Run && !already_failed;
    let mut stages_state = Vec::with_capacity(status.stages.len());
    let mut failed = None;
    let mut reached = true;
    for stage in &mut status.stages {
        if reached && !not_started {
            // A completed or skipped stage has no upgrade in flight left to observe.
            if !matches!(
                stage.progress.state,
                UpdateState::Completed | UpdateState::Skipped
            ) {
                observe_members(stage, obs);
            }
            let state = pass.stage(stage);
            if state == UpdateState::Failed {
                failed = Some(stage.progress.error.clone());
            }
            reached = state.is_final() && state != UpdateState::Failed;
        }
        stages_state.push(stage.progress.state);
    }
    let (mut in_flight, mut total, mut done) = (false, 0, 0);
    for member in status
        .stages
        .iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.members)
    {
        in_flight |= member.progress.state == UpdateState::Running;
        total += 1;
        done += usize::from(member.progress.state.is_final());
    }
    status.failure_count = status.stages.iter().map(|s| s.failure_count).sum();
    status.progress_summary = Some(format!("{done}/{total}"));
    let state = if not_started {
        UpdateState::NotStarted
    } else {
        rollup::run(
            rollup::children(stages_state),
            failed.is_some(),
            pass.stop,
            in_flight,
        )
    };
    stamp(&mut status.progress, state, now);
    status.progress.error = match failed {
        Some(Some(error)) => Some(error),
        _ => None,
    };
    pass.out
}

/// Sets a level's state and its start and completion times.
fn stamp(progress: &mut Progress, state: UpdateState, now: Timestamp) {
    progress.state = state;
    if !matches!(state, UpdateState::NotStarted | UpdateState::Skipped)
        && progress.start_time.is_none()
    {
        progress.start_time = Some(Time(now));
    }
    if state.is_final() {
        progress.completed_time.get_or_insert(Time(now));
    } else {
        progress.completed_time = None;
    }
}

/// Running members whose upgrade finished become Completed or Failed.
fn observe_members(stage: &mut StageStatus, obs: &Observed) {
    for member in stage.groups.iter_mut().flat_map(|g| &mut g.members) {
        if member.progress.state != UpdateState::Running {
            continue;
        }
        let Some(report) = member
            .operation_id
            .as_ref()
            .and_then(|id| obs.upgrades.get(&(member.name.clone(), id.clone())))
        else {
            continue;
        };
        member.message = report.message.clone();
        match report.phase {
            UpgradePhase::Succeeded => stamp(&mut member.progress, UpdateState::Completed, obs.now),
            UpgradePhase::Failed => {
                stamp(&mut member.progress, UpdateState::Failed, obs.now);
                member.progress.error = Some(ErrorDetail {
                    code: UPGRADE_FAILED.to_string(),
                    message: report
                        .message
                        .clone()
                        .unwrap_or_else(|| "the upgrade failed".to_string()),
                });
            }
            UpgradePhase::Pending | UpgradePhase::Running => {}
        }
    }
}

/// Where gates stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gates {
    /// Every gate is Completed or Skipped.
    Passed,
    /// Some gate waits for a person or a time.
    Pending,
    /// Some gate is not reached yet (the run is stopped).
    NotReached,
}

impl Pass<'_, '_> {
    /// Drives a stage: before-gates, groups, then after-gates and the wait.
    fn stage(&mut self, stage: &mut StageStatus) -> UpdateState {
        let now = self.obs.now;
        if stage.progress.state.is_final() {
            return stage.progress.state;
        }
        let config = self
            .strategy
            .stages
            .iter()
            .find(|s| s.name == stage.name)
            .cloned();
        let before = config.as_ref().map_or(&[][..], |c| &c.before_gates[..]);
        match self.gates(
            &mut stage.before_gates,
            before,
            &stage.name,
            None,
            Timing::Before,
        ) {
            Gates::Passed => {}
            held => {
                let state = if held == Gates::Pending {
                    UpdateState::Pending
                } else {
                    UpdateState::NotStarted
                };
                stamp(&mut stage.progress, state, now);
                return state;
            }
        }
        let mut stage_running = running(stage.groups.iter().flat_map(|g| &g.members));
        for group in &mut stage.groups {
            let group_config = config
                .as_ref()
                .and_then(|c| c.groups.iter().find(|g| g.name == group.name));
            let (before, after) = group_config.map_or((&[][..], &[][..]), |g| {
                (&g.before_gates[..], &g.after_gates[..])
            });
            let limit = stage.max_concurrency;
            self.group(&stage.name, group, before, after, &mut stage_running, limit);
        }
        stage.failure_count = stage.groups.iter().map(|g| g.failure_count).sum();
        if rollup::over_threshold(stage.failure_count, stage.max_allowed_failures) {
            stamp(&mut stage.progress, UpdateState::Failed, now);
            stage.progress.error = Some(failure_summary(
                &format!("stage {}", stage.name),
                stage.failure_count,
                stage.max_allowed_failures,
                stage.groups.iter().flat_map(|g| &g.members),
            ));
            return UpdateState::Failed;
        }
        let base = rollup::children(stage.groups.iter().map(|g| g.progress.state));
        let state = if base.is_final() {
            let after = config.as_ref().map_or(&[][..], |c| &c.after_gates[..]);
            let gates = self.gates(
                &mut stage.after_gates,
                after,
                &stage.name,
                None,
                Timing::After,
            );
            let waited = self.wait(stage);
            match (gates, waited) {
                (Gates::Passed, true) => base,
                (Gates::Pending, _) => UpdateState::Pending,
                _ => UpdateState::Running,
            }
        } else {
            base
        };
        let state = self.stopped(state, stage.groups.iter().flat_map(|g| &g.members));
        stamp(&mut stage.progress, state, now);
        stage.progress.error = None;
        state
    }

    /// Under Stop, an unfinished segment is Stopping while its upgrades run, then Stopped.
    fn stopped<'m>(
        &self,
        state: UpdateState,
        members: impl Iterator<Item = &'m MemberStatus>,
    ) -> UpdateState {
        if !self.stop || state.is_final() || state == UpdateState::NotStarted {
            return state;
        }
        match running(members) {
            0 => UpdateState::Stopped,
            _ => UpdateState::Stopping,
        }
    }

    /// Runs the after-stage wait; true once it is over (or there is none).
    fn wait(&mut self, stage: &mut StageStatus) -> bool {
        let now = self.obs.now;
        let Some(wait) = &mut stage.after_stage_wait_status else {
            return true;
        };
        match wait.progress.state {
            state if state.is_final() => true,
            UpdateState::NotStarted if !self.may_start => false,
            _ => {
                let started = wait.progress.start_time.get_or_insert(Time(now)).0;
                let ends =
                    started + SignedDuration::from_secs(i64::from(wait.wait_duration_in_seconds));
                if now >= ends {
                    stamp(&mut wait.progress, UpdateState::Completed, now);
                    true
                } else {
                    stamp(&mut wait.progress, UpdateState::Running, now);
                    self.out.recheck(ends);
                    false
                }
            }
        }
    }

    /// Reaches, creates and observes a list of gates.
    fn gates(
        &mut self,
        gates: &mut [GateStatus],
        configs: &[GateConfiguration],
        stage: &str,
        group: Option<&str>,
        timing: Timing,
    ) -> Gates {
        let now = self.obs.now;
        let mut result = Gates::Passed;
        let count = gates.len();
        for (index, gate) in gates.iter_mut().enumerate() {
            match gate.progress.state {
                state if state.is_final() => continue,
                UpdateState::NotStarted if !self.may_start => {
                    result = Gates::NotReached;
                    continue;
                }
                UpdateState::NotStarted => {
                    let name = gate_name(self.obs.run, stage, group, timing, index, count);
                    let config = configs.get(index);
                    let scheduled = config
                        .and_then(|c| c.scheduled_start_configuration.as_ref())
                        .and_then(|c| (self.obs.scheduled_start)(c));
                    self.out.actions.push(Action::CreateGate {
                        name: name.clone(),
                        spec: GateSpec {
                            gate_type: gate.gate_type,
                            display_name: gate.display_name.clone(),
                            target: GateTarget {
                                update_run: self.obs.run.to_string(),
                                stage: stage.to_string(),
                                group: group.map(str::to_string),
                                timing,
                            },
                            scheduled_start_time: scheduled.map(Time),
                        },
                    });
                    gate.gate_id = Some(name);
                    stamp(&mut gate.progress, UpdateState::Pending, now);
                    if let Some(at) = scheduled {
                        self.out.recheck(at);
                    }
                    result = Gates::Pending;
                }
                _ => {
                    let report = gate.gate_id.as_ref().and_then(|id| self.obs.gates.get(id));
                    let due = report
                        .and_then(|r| r.scheduled_start)
                        .filter(|at| *at <= now);
                    match (report.map(|r| r.state), due) {
                        (Some(GateState::Completed), _) => {
                            stamp(&mut gate.progress, UpdateState::Completed, now)
                        }
                        (Some(GateState::Skipped), _) => {
                            stamp(&mut gate.progress, UpdateState::Skipped, now)
                        }
                        (Some(GateState::Pending), Some(_)) => {
                            stamp(&mut gate.progress, UpdateState::Completed, now);
                            self.out.actions.push(Action::SetGateState {
                                name: gate.gate_id.clone().unwrap_or_default(),
                                state: GateState::Completed,
                            });
                        }
                        _ => {
                            if let Some(at) = report.and_then(|r| r.scheduled_start) {
                                self.out.recheck(at);
                            }
                            result = Gates::Pending;
                        }
                    }
                }
            }
        }
        result
    }

    /// Drives a group: before-gates, its members (window priority, concurrency, readiness),
    /// its failure threshold and after-gates.
    fn group(
        &mut self,
        stage: &str,
        group: &mut GroupStatus,
        before: &[GateConfiguration],
        after: &[GateConfiguration],
        stage_running: &mut u32,
        stage_limit: u32,
    ) {
        let now = self.obs.now;
        if group.progress.state.is_final() {
            return;
        }
        let name = group.name.clone();
        match self.gates(
            &mut group.before_gates,
            before,
            stage,
            Some(&name),
            Timing::Before,
        ) {
            Gates::Passed => {}
            Gates::Pending => return stamp(&mut group.progress, UpdateState::Pending, now),
            Gates::NotReached => return stamp(&mut group.progress, UpdateState::NotStarted, now),
        }
        let failed_before =
            rollup::over_threshold(failures(&group.members), group.max_allowed_failures);
        self.members(group, failed_before, stage_running, stage_limit);
        group.failure_count = failures(&group.members);
        if rollup::over_threshold(group.failure_count, group.max_allowed_failures) {
            let state = if running(&group.members) > 0 {
                UpdateState::Running
            } else {
                UpdateState::Failed
            };
            stamp(&mut group.progress, state, now);
            group.progress.error = Some(failure_summary(
                &format!("group {}", group.name),
                group.failure_count,
                group.max_allowed_failures,
                &group.members,
            ));
            return;
        }
        let base = rollup::children(group.members.iter().map(|m| m.progress.state));
        let state = if base.is_final() {
            match self.gates(
                &mut group.after_gates,
                after,
                stage,
                Some(&name),
                Timing::After,
            ) {
                Gates::Passed => base,
                Gates::Pending => UpdateState::Pending,
                Gates::NotReached => UpdateState::Running,
            }
        } else {
            base
        };
        let state = self.stopped(state, group.members.iter());
        stamp(&mut group.progress, state, now);
        group.progress.error = None;
    }

    /// Tries the group's waiting members in window priority order: closed windows go Pending,
    /// the others start while slots are free and the release rules let them. The order is a
    /// stable bucket sort by [`crate::window::WindowPriority`] (place in the plan within a priority), linear
    /// in the group's size: every pass looks at each waiting member's facts once.
    fn members(
        &mut self,
        group: &mut GroupStatus,
        failed: bool,
        stage_running: &mut u32,
        stage_limit: u32,
    ) {
        let obs = self.obs;
        let now = obs.now;
        let mut running_here = running(&group.members);
        // One bucket per priority, in the priority's order.
        let mut by_priority: [Vec<(usize, &WindowFacts)>; 4] = Default::default();
        for (i, member) in group.members.iter().enumerate() {
            if matches!(
                member.progress.state,
                UpdateState::NotStarted | UpdateState::Pending
            ) {
                let facts = obs.windows.get(&member.name).unwrap_or(&WindowFacts::None);
                by_priority[facts.priority(now) as usize].push((i, facts));
            }
        }
        for (i, facts) in by_priority.into_iter().flatten() {
            let member = &mut group.members[i];
            if let WindowFacts::Closed { next, description } = facts {
                let when = next.map_or_else(|| "never".to_string(), |t| t.to_string());
                pending(
                    member,
                    WINDOW_CLOSED,
                    format!("maintenance window closed; next opening {when} ({description})"),
                    now,
                );
                if let Some(next) = next {
                    self.out.recheck(*next);
                }
                continue;
            }
            if !self.may_start
                || failed
                || running_here >= group.max_concurrency
                || *stage_running >= stage_limit
            {
                continue;
            }
            match (obs.readiness)(&member.name) {
                Readiness::Upgrade(order) => {
                    let name = upgrade_name(obs.run, obs.attempt);
                    self.out.actions.push(Action::CreateUpgrade {
                        member: member.name.clone(),
                        name: name.clone(),
                        order,
                    });
                    member.operation_id = Some(name);
                    member.message = Some("upgrade requested".to_string());
                    member.progress.error = None;
                    stamp(&mut member.progress, UpdateState::Running, now);
                    running_here += 1;
                    *stage_running += 1;
                }
                Readiness::AtTarget(message) => {
                    finish(member, UpdateState::Skipped, AT_TARGET, message, now)
                }
                Readiness::Skip(message) => {
                    finish(member, UpdateState::Skipped, NOT_ELIGIBLE, message, now)
                }
                Readiness::Fail(message) => {
                    finish(member, UpdateState::Failed, UPGRADE_FAILED, message, now)
                }
                Readiness::NotYet {
                    code,
                    message,
                    until,
                } => {
                    pending(member, &code, message, now);
                    if let Some(until) = until {
                        self.out.recheck(until);
                    }
                }
            }
        }
    }
}

/// Marks a member Pending with why; its start time stays unset until its upgrade starts.
fn pending(member: &mut MemberStatus, code: &str, message: String, now: Timestamp) {
    let started = member.progress.start_time.take();
    stamp(&mut member.progress, UpdateState::Pending, now);
    member.progress.start_time = started;
    member.message = Some(message.clone());
    member.progress.error = Some(ErrorDetail {
        code: code.to_string(),
        message,
    });
}

/// Ends a member without an upgrade.
fn finish(
    member: &mut MemberStatus,
    state: UpdateState,
    code: &str,
    message: String,
    now: Timestamp,
) {
    stamp(&mut member.progress, state, now);
    member.message = Some(message.clone());
    member.progress.error = Some(ErrorDetail {
        code: code.to_string(),
        message,
    });
}

/// Members upgrading now.
fn running<'m>(members: impl IntoIterator<Item = &'m MemberStatus>) -> u32 {
    members
        .into_iter()
        .filter(|m| m.progress.state == UpdateState::Running)
        .count() as u32
}

/// Members that failed.
fn failures(members: &[MemberStatus]) -> u32 {
    members
        .iter()
        .filter(|m| m.progress.state == UpdateState::Failed)
        .count() as u32
}

/// `stage canary: 2 members failed (1 allowed): a: <message>; b: <message>`.
fn failure_summary<'m>(
    segment: &str,
    count: u32,
    allowed: u32,
    members: impl IntoIterator<Item = &'m MemberStatus>,
) -> ErrorDetail {
    let details: Vec<String> = members
        .into_iter()
        .filter(|m| m.progress.state == UpdateState::Failed)
        .map(|m| {
            let why = m
                .progress
                .error
                .as_ref()
                .map_or("failed", |e| e.message.as_str());
            format!("{}: {why}", m.name)
        })
        .collect();
    let noun = if count == 1 { "member" } else { "members" };
    ErrorDetail {
        code: TOO_MANY_FAILURES.to_string(),
        message: format!(
            "{segment}: {count} {noun} failed ({allowed} allowed): {}",
            details.join("; ")
        ),
    }
}
