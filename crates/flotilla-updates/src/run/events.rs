//! The events an update run's progress is worth, recorded on the run as a pass moves it on:
//! the run starting, stopping, completing or failing; each stage starting and finishing (or
//! failing); each gate starting to wait; each member whose upgrade failed. Computed from the
//! status before and after a pass, so each transition is recorded once.

use flotilla_api::updates::update_run::{GateStatus, GroupStatus, StageStatus};
use flotilla_api::updates::{UpdateRunStatus, UpdateState};

/// One event to record on the run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEvent {
    /// A Warning (else Normal).
    pub warning: bool,
    /// The reason, in PascalCase.
    pub reason: &'static str,
    /// What happened, for people.
    pub note: String,
}

fn normal(reason: &'static str, note: String) -> RunEvent {
    RunEvent {
        warning: false,
        reason,
        note,
    }
}

fn warning(reason: &'static str, note: String) -> RunEvent {
    RunEvent {
        warning: true,
        reason,
        note,
    }
}

/// Whether `state` was reached in this pass.
fn reached(before: Option<UpdateState>, after: UpdateState, state: UpdateState) -> bool {
    after == state && before != Some(state)
}

fn gates_waiting(
    before: Option<&[GateStatus]>,
    after: &[GateStatus],
    place: &str,
    events: &mut Vec<RunEvent>,
) {
    for (i, gate) in after.iter().enumerate() {
        let old = before.and_then(|b| b.get(i)).map(|g| g.progress.state);
        if reached(old, gate.progress.state, UpdateState::Pending) {
            let name = gate.display_name.as_deref().unwrap_or("a gate");
            let id = gate.gate_id.as_deref().unwrap_or_default();
            events.push(normal(
                "GateWaiting",
                format!(
                    "{place}: {name} ({:?} gate {id}) is waiting",
                    gate.gate_type
                ),
            ));
        }
    }
}

fn group(
    before: Option<&GroupStatus>,
    after: &GroupStatus,
    stage: &str,
    events: &mut Vec<RunEvent>,
) {
    let place = format!("stage {stage}, group {}", after.name);
    gates_waiting(
        before.map(|g| g.before_gates.as_slice()),
        &after.before_gates,
        &place,
        events,
    );
    for member in &after.members {
        let old = before
            .and_then(|g| g.members.iter().find(|m| m.name == member.name))
            .map(|m| m.progress.state);
        if reached(old, member.progress.state, UpdateState::Failed) {
            let why = member
                .progress
                .error
                .as_ref()
                .map(|e| e.message.clone())
                .or_else(|| member.message.clone())
                .unwrap_or_default();
            events.push(warning(
                "MemberUpgradeFailed",
                format!("{place}: member {} failed: {why}", member.name),
            ));
        }
    }
    gates_waiting(
        before.map(|g| g.after_gates.as_slice()),
        &after.after_gates,
        &place,
        events,
    );
}

fn stage(before: Option<&StageStatus>, after: &StageStatus, events: &mut Vec<RunEvent>) {
    let old = before.map(|s| s.progress.state);
    let name = &after.name;
    let place = format!("stage {name}");
    gates_waiting(
        before.map(|s| s.before_gates.as_slice()),
        &after.before_gates,
        &place,
        events,
    );
    if reached(old, after.progress.state, UpdateState::Running) {
        events.push(normal("StageStarted", format!("stage {name} started")));
    }
    for g in &after.groups {
        let old = before.and_then(|s| s.groups.iter().find(|o| o.name == g.name));
        group(old, g, name, events);
    }
    gates_waiting(
        before.map(|s| s.after_gates.as_slice()),
        &after.after_gates,
        &place,
        events,
    );
    if reached(old, after.progress.state, UpdateState::Completed) {
        events.push(normal("StageCompleted", format!("stage {name} completed")));
    }
    if reached(old, after.progress.state, UpdateState::Failed) {
        events.push(warning(
            "StageFailed",
            format!(
                "stage {name} failed after {} member failure(s)",
                after.failure_count
            ),
        ));
    }
}

/// The events the pass from `before` to `after` is worth, in the order they happened.
pub fn transitions(before: &UpdateRunStatus, after: &UpdateRunStatus) -> Vec<RunEvent> {
    let mut events = Vec::new();
    let (old, new) = (before.progress.state, after.progress.state);
    if reached(Some(old), new, UpdateState::Running) {
        events.push(normal("UpdateRunStarted", "the update run started".into()));
    }
    for s in &after.stages {
        let previous = before.stages.iter().find(|o| o.name == s.name);
        stage(previous, s, &mut events);
    }
    let why = || {
        after
            .progress
            .error
            .as_ref()
            .map(|e| format!("{}: {}", e.code, e.message))
            .unwrap_or_default()
    };
    match new {
        _ if new == old => {}
        UpdateState::Completed => {
            events.push(normal("UpdateRunCompleted", "every stage completed".into()))
        }
        UpdateState::Failed => events.push(warning("UpdateRunFailed", why())),
        UpdateState::Stopping => events.push(normal(
            "UpdateRunStopping",
            "stopping: members in flight finish, nothing new starts".into(),
        )),
        UpdateState::Stopped => {
            events.push(normal("UpdateRunStopped", "the update run stopped".into()))
        }
        _ => {}
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::updates::update_run::{MemberStatus, Progress};

    fn progress(state: UpdateState) -> Progress {
        Progress {
            state,
            ..Progress::default()
        }
    }

    fn run(state: UpdateState, stages: Vec<StageStatus>) -> UpdateRunStatus {
        UpdateRunStatus {
            progress: progress(state),
            stages,
            ..UpdateRunStatus::default()
        }
    }

    fn stage_of(
        name: &str,
        state: UpdateState,
        members: &[(&str, UpdateState)],
        gate: Option<UpdateState>,
    ) -> StageStatus {
        StageStatus {
            name: name.into(),
            progress: progress(state),
            groups: vec![GroupStatus {
                name: "g".into(),
                members: members
                    .iter()
                    .map(|(n, s)| MemberStatus {
                        name: n.to_string(),
                        progress: progress(*s),
                        message: Some("node drain timed out".into()),
                        ..MemberStatus::default()
                    })
                    .collect(),
                ..GroupStatus::default()
            }],
            after_gates: gate
                .map(|s| GateStatus {
                    display_name: Some("approve prod".into()),
                    progress: progress(s),
                    ..GateStatus::default()
                })
                .into_iter()
                .collect(),
            ..StageStatus::default()
        }
    }

    fn reasons(events: &[RunEvent]) -> Vec<&str> {
        events.iter().map(|e| e.reason).collect()
    }

    use UpdateState::*;

    #[test]
    fn a_run_records_its_stages_gates_and_failures_once_each() {
        let start = run(
            NotStarted,
            vec![stage_of("canary", NotStarted, &[("a", NotStarted)], None)],
        );
        let running = run(
            Running,
            vec![stage_of("canary", Running, &[("a", Running)], None)],
        );
        assert_eq!(
            reasons(&transitions(&start, &running)),
            ["UpdateRunStarted", "StageStarted"]
        );
        assert!(transitions(&running, &running).is_empty());
        let waiting = run(
            Running,
            vec![stage_of(
                "canary",
                Running,
                &[("a", Completed)],
                Some(Pending),
            )],
        );
        let events = transitions(&running, &waiting);
        assert_eq!(reasons(&events), ["GateWaiting"]);
        assert!(events[0].note.contains("approve prod"), "{events:?}");
        let done = run(
            Completed,
            vec![stage_of(
                "canary",
                Completed,
                &[("a", Completed)],
                Some(Completed),
            )],
        );
        assert_eq!(
            reasons(&transitions(&waiting, &done)),
            ["StageCompleted", "UpdateRunCompleted"]
        );
    }

    #[test]
    fn member_failures_and_stops_are_recorded() {
        let running = run(
            Running,
            vec![stage_of(
                "prod",
                Running,
                &[("a", Running), ("b", Running)],
                None,
            )],
        );
        let failed = run(
            Running,
            vec![stage_of(
                "prod",
                Running,
                &[("a", Failed), ("b", Running)],
                None,
            )],
        );
        let events = transitions(&running, &failed);
        assert_eq!(reasons(&events), ["MemberUpgradeFailed"]);
        assert!(events[0].warning);
        assert!(
            events[0]
                .note
                .contains("member a failed: node drain timed out"),
            "{events:?}"
        );
        let stopped = run(Stopped, failed.stages.clone());
        assert_eq!(
            reasons(&transitions(&failed, &stopped)),
            ["UpdateRunStopped"]
        );
    }
}
