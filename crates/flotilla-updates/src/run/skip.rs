//! User skips (`spec.skip`) and reruns (`spec.attempt`): what they do to the levels of a run.

use flotilla_api::updates::update_run::{
    ErrorDetail, GateStatus, GroupStatus, Progress, SkipTarget, SkipTargetType, StageStatus,
    UpdateRunStatus, UpdateState,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Error code of a level a user skipped.
pub const SKIPPED_BY_USER: &str = "SkippedByUser";

/// Marks `progress` Skipped by the user unless it is final or running (an upgrade in flight
/// is never aborted). `now` is `None` before the run starts: a skip then has no time (the
/// plan is laid out again on every pass until the start, and must come out the same).
fn skip(progress: &mut Progress, what: &str, now: Option<Timestamp>) -> bool {
    if progress.state == UpdateState::Running {
        return false;
    }
    end_wait(progress, what, now)
}

/// Marks `progress` Skipped by the user unless it is final: for a wait, which (unlike an
/// upgrade) may be cut short while it runs.
fn end_wait(progress: &mut Progress, what: &str, now: Option<Timestamp>) -> bool {
    if progress.state.is_final() {
        return false;
    }
    progress.state = UpdateState::Skipped;
    progress.completed_time = now.map(Time);
    progress.error = Some(ErrorDetail {
        code: SKIPPED_BY_USER.to_string(),
        message: format!("{what} skipped by the user"),
    });
    true
}

/// Skips the gates that are not yet final; returns the names of gate objects to mark Skipped.
fn skip_gates(gates: &mut [GateStatus], now: Option<Timestamp>, skipped: &mut Vec<String>) {
    for gate in gates {
        if gate.progress.state.is_final() {
            continue;
        }
        let was_reached = gate.gate_id.clone();
        if skip(&mut gate.progress, "gate", now)
            && let Some(id) = was_reached
        {
            skipped.push(id);
        }
    }
}

/// Skips a group: its members not yet upgrading and its gates.
fn skip_group(group: &mut GroupStatus, now: Option<Timestamp>, skipped: &mut Vec<String>) {
    for member in &mut group.members {
        skip(
            &mut member.progress,
            &format!("member {}", member.name),
            now,
        );
    }
    skip_gates(&mut group.before_gates, now, skipped);
    skip_gates(&mut group.after_gates, now, skipped);
}

/// Skips a stage: its groups, gates and wait.
fn skip_stage(stage: &mut StageStatus, now: Option<Timestamp>, skipped: &mut Vec<String>) {
    for group in &mut stage.groups {
        skip_group(group, now, skipped);
    }
    skip_gates(&mut stage.before_gates, now, skipped);
    skip_gates(&mut stage.after_gates, now, skipped);
    if let Some(wait) = &mut stage.after_stage_wait_status {
        end_wait(&mut wait.progress, "after-stage wait", now);
    }
}

/// Applies every skip target at `now` (`None`: the run has not started, and skips carry no
/// time); returns the gate objects to mark Skipped. Targets naming nothing in the run are
/// ignored (they may name a member that left before the start).
pub fn apply(
    status: &mut UpdateRunStatus,
    targets: &[SkipTarget],
    now: Option<Timestamp>,
) -> Vec<String> {
    let mut skipped = Vec::new();
    for target in targets {
        for stage in &mut status.stages {
            match target.target_type {
                SkipTargetType::Stage if stage.name == target.name => {
                    skip_stage(stage, now, &mut skipped)
                }
                SkipTargetType::AfterStageWait if stage.name == target.name => {
                    if let Some(wait) = &mut stage.after_stage_wait_status {
                        end_wait(&mut wait.progress, "after-stage wait", now);
                    }
                }
                SkipTargetType::Group => {
                    for group in stage.groups.iter_mut().filter(|g| g.name == target.name) {
                        skip_group(group, now, &mut skipped);
                    }
                }
                SkipTargetType::Member => {
                    for member in stage
                        .groups
                        .iter_mut()
                        .flat_map(|g| &mut g.members)
                        .filter(|m| m.name == target.name)
                    {
                        skip(
                            &mut member.progress,
                            &format!("member {}", member.name),
                            now,
                        );
                    }
                }
                _ => {}
            }
        }
    }
    skipped
}

/// Resets a level that failed or was skipped to NotStarted; true when it did.
fn reset(progress: &mut Progress) -> bool {
    if matches!(progress.state, UpdateState::Failed | UpdateState::Skipped) {
        *progress = Progress::default();
        return true;
    }
    false
}

/// A rerun: failed and skipped members, groups and stages start again; completed members,
/// final gates and completed waits stay. Failure counts restart from zero.
pub fn rerun(status: &mut UpdateRunStatus) {
    for stage in &mut status.stages {
        for group in &mut stage.groups {
            let mut again = false;
            for member in &mut group.members {
                if reset(&mut member.progress) {
                    member.operation_id = None;
                    member.message = None;
                    again = true;
                }
            }
            if again || group.progress.state == UpdateState::Failed {
                group.progress = Progress::default();
            }
            group.failure_count = 0;
        }
        let again = stage
            .groups
            .iter()
            .any(|g| g.progress.state == UpdateState::NotStarted);
        if again
            || matches!(
                stage.progress.state,
                UpdateState::Failed | UpdateState::Skipped
            )
        {
            stage.progress = Progress::default();
        }
        if let Some(wait) = &mut stage.after_stage_wait_status
            && wait.progress.state == UpdateState::Skipped
            && stage.progress.state == UpdateState::NotStarted
        {
            wait.progress = Progress::default();
        }
        stage.failure_count = 0;
    }
    status.failure_count = 0;
    status.progress = Progress::default();
}
