//! The timeline of a forecast: what changes at which level, found by comparing the run's
//! status before and after each simulated pass.

use std::collections::HashMap;

use flotilla_api::updates::gate::Timing;
use flotilla_api::updates::strategy::GateType;
use flotilla_api::updates::update_run::{GateStatus, MemberStatus, UpdateRunStatus, UpdateState};
use jiff::{SignedDuration, Timestamp};

/// One predicted change.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// When it happens.
    pub at: Timestamp,
    /// The stage it happens in (empty for the run itself).
    pub stage: String,
    /// The group, for a group, its members and gates.
    pub group: Option<String>,
    /// What changes.
    pub subject: Subject,
    /// How.
    pub event: Event,
}

/// The level of the run an entry is about.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// The run.
    Run,
    /// The stage [`Entry::stage`].
    Stage,
    /// The group [`Entry::group`].
    Group,
    /// A member.
    Member(String),
    /// A gate of the stage (or of the group, with [`Entry::group`]).
    Gate {
        /// Before or after.
        timing: Timing,
        /// Approval or ScheduledStart.
        gate_type: GateType,
        /// Its display name, if configured.
        display_name: Option<String>,
        /// The `Gate` object's name, once reached.
        name: Option<String>,
    },
    /// The stage's after-stage wait.
    Wait,
}

/// What happens to a subject.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A run, stage or group starts running.
    Started,
    /// A run, stage or group that was held (Pending) runs again.
    Resumed,
    /// A member starts upgrading.
    Upgrading {
        /// What it upgrades to: the Kubernetes version and node images.
        to: Vec<String>,
        /// How long it is expected to take.
        takes: SignedDuration,
        /// Whether the member reported no expected durations (defaults were used).
        assumed: bool,
    },
    /// A member already upgrading when the forecast starts.
    InFlight {
        /// When it is expected to finish.
        until: Timestamp,
    },
    /// A level waits: a member for its window or a release, a group or stage for its
    /// members or gates.
    Pending {
        /// The error code, e.g. `MaintenanceWindowClosed` (empty for a group or stage).
        code: String,
        /// Why, as the status says.
        message: String,
        /// For a member: when it stops waiting for this reason (starts, is skipped, or waits
        /// for another); `None` when it does not within the forecast, and for other levels.
        until: Option<Timestamp>,
    },
    /// A gate is reached.
    GateReached {
        /// An Approval gate: someone must approve it (`flotilla gate approve NAME`).
        needs_approval: bool,
        /// When it completes: an approval as the forecast's assumptions have it, a scheduled
        /// start at its time (`None`: not within the forecast).
        until: Option<Timestamp>,
    },
    /// The after-stage wait starts.
    Waiting {
        /// When it ends.
        until: Timestamp,
    },
    /// The level completed.
    Completed,
    /// The level was skipped, with why.
    Skipped(String),
    /// The level failed, with why.
    Failed(String),
}

/// What an entry needs besides the status: members starting in this pass, with their
/// targets and expected durations, and when gates reached in it complete.
#[derive(Default)]
pub(super) struct PassFacts {
    /// Members whose upgrade was created: (targets, duration, assumed).
    pub(super) starts: HashMap<String, (Vec<String>, SignedDuration, bool)>,
    /// Gates reached: (needs approval, completes at).
    pub(super) gates: HashMap<String, (bool, Option<Timestamp>)>,
}

/// The states last seen at every level, to compare the next pass's status against.
pub(super) struct Marks {
    /// No pass recorded yet.
    fresh: bool,
    run: UpdateState,
    stages: Vec<StageMarks>,
}

struct StageMarks {
    state: UpdateState,
    wait: Option<UpdateState>,
    before: Vec<UpdateState>,
    after: Vec<UpdateState>,
    groups: Vec<GroupMarks>,
}

struct GroupMarks {
    state: UpdateState,
    before: Vec<UpdateState>,
    after: Vec<UpdateState>,
    members: Vec<MemberMark>,
}

/// What was last seen of a member.
struct MemberMark {
    state: UpdateState,
    /// While Pending: why, and the entry that says so (to fill in its end).
    pending: Option<(String, usize)>,
}

/// Where an entry is in the run.
#[derive(Clone, Copy)]
struct Place<'s> {
    stage: &'s str,
    group: Option<&'s str>,
}

impl Marks {
    /// The marks of `status` as it is.
    pub(super) fn of(status: &UpdateRunStatus) -> Marks {
        let gates = |g: &[GateStatus]| g.iter().map(|g| g.progress.state).collect();
        Marks {
            fresh: true,
            run: status.progress.state,
            stages: status
                .stages
                .iter()
                .map(|s| StageMarks {
                    state: s.progress.state,
                    wait: s.after_stage_wait_status.as_ref().map(|w| w.progress.state),
                    before: gates(&s.before_gates),
                    after: gates(&s.after_gates),
                    groups: s
                        .groups
                        .iter()
                        .map(|g| GroupMarks {
                            state: g.progress.state,
                            before: gates(&g.before_gates),
                            after: gates(&g.after_gates),
                            members: g
                                .members
                                .iter()
                                .map(|m| MemberMark {
                                    state: m.progress.state,
                                    pending: None,
                                })
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// Appends to `entries` what changed from the marks to `status` at `at`, and takes the
    /// new states as marks.
    pub(super) fn record(
        &mut self,
        status: &UpdateRunStatus,
        at: Timestamp,
        facts: &PassFacts,
        entries: &mut Vec<Entry>,
    ) {
        let mut out = Out { at, facts, entries };
        let fresh = std::mem::replace(&mut self.fresh, false);
        for (marks, stage) in self.stages.iter_mut().zip(&status.stages) {
            if !fresh && settled(marks.state, stage.progress.state) {
                continue;
            }
            let place = Place {
                stage: &stage.name,
                group: None,
            };
            let state = stage.progress.state;
            out.opening(place, Subject::Stage, &mut marks.state, state);
            out.gates(
                place,
                Timing::Before,
                &mut marks.before,
                &stage.before_gates,
            );
            for (group_marks, group) in marks.groups.iter_mut().zip(&stage.groups) {
                if !fresh && settled(group_marks.state, group.progress.state) {
                    continue;
                }
                let place = Place {
                    stage: &stage.name,
                    group: Some(&group.name),
                };
                let state = group.progress.state;
                out.opening(place, Subject::Group, &mut group_marks.state, state);
                let before = &mut group_marks.before;
                out.gates(place, Timing::Before, before, &group.before_gates);
                for (mark, member) in group_marks.members.iter_mut().zip(&group.members) {
                    out.member(place, mark, member);
                }
                out.gates(
                    place,
                    Timing::After,
                    &mut group_marks.after,
                    &group.after_gates,
                );
                let error = group.progress.error.as_ref();
                out.closing(place, Subject::Group, &mut group_marks.state, state, error);
            }
            out.gates(place, Timing::After, &mut marks.after, &stage.after_gates);
            if let (Some(mark), Some(wait)) = (&mut marks.wait, &stage.after_stage_wait_status) {
                let state = wait.progress.state;
                if state != *mark {
                    let event = match state {
                        UpdateState::Running => Event::Waiting {
                            until: wait.progress.start_time.as_ref().map_or(at, |t| t.0)
                                + SignedDuration::from_secs(i64::from(
                                    wait.wait_duration_in_seconds,
                                )),
                        },
                        _ => final_event(state, wait.progress.error.as_ref()),
                    };
                    out.push(place, Subject::Wait, event);
                    *mark = state;
                }
            }
            let error = stage.progress.error.as_ref();
            out.closing(place, Subject::Stage, &mut marks.state, state, error);
        }
        let place = Place {
            stage: "",
            group: None,
        };
        let error = status.progress.error.as_ref();
        out.closing(
            place,
            Subject::Run,
            &mut self.run,
            status.progress.state,
            error,
        );
    }
}

/// Whether a level was and is in a state in which nothing below it changes any more (after
/// the first pass, which applies the run's skips): a stage not reached yet, or a stage or
/// group completed or skipped (a failed one may still have upgrades in flight).
fn settled(was: UpdateState, is: UpdateState) -> bool {
    was == is
        && matches!(
            is,
            UpdateState::NotStarted | UpdateState::Completed | UpdateState::Skipped
        )
}

/// Whether a level in `state` is running (recorded before its children change).
fn running(state: UpdateState) -> bool {
    matches!(state, UpdateState::Running | UpdateState::Stopping)
}

/// The event of a level reaching `state` (final, Pending or otherwise running).
fn final_event(
    state: UpdateState,
    error: Option<&flotilla_api::updates::update_run::ErrorDetail>,
) -> Event {
    let why = || error.map(|e| e.message.clone()).unwrap_or_default();
    match state {
        UpdateState::Completed => Event::Completed,
        UpdateState::Skipped => Event::Skipped(why()),
        UpdateState::Failed => Event::Failed(why()),
        UpdateState::Pending => Event::Pending {
            code: error.map(|e| e.code.clone()).unwrap_or_default(),
            message: why(),
            until: None,
        },
        _ => Event::Started,
    }
}

/// Where entries of one pass go.
struct Out<'o> {
    at: Timestamp,
    facts: &'o PassFacts,
    entries: &'o mut Vec<Entry>,
}

impl Out<'_> {
    fn push(&mut self, place: Place, subject: Subject, event: Event) {
        self.entries.push(Entry {
            at: self.at,
            stage: place.stage.to_string(),
            group: place.group.map(str::to_string),
            subject,
            event,
        });
    }

    /// A stage or group that starts or resumes running, recorded before its gates and
    /// children change.
    fn opening(
        &mut self,
        place: Place,
        subject: Subject,
        mark: &mut UpdateState,
        state: UpdateState,
    ) {
        if state != *mark && running(state) {
            self.level(place, subject, *mark, state, None);
            *mark = state;
        }
    }

    /// Any other change of a run, stage or group, recorded after its children's.
    fn closing(
        &mut self,
        place: Place,
        subject: Subject,
        mark: &mut UpdateState,
        state: UpdateState,
        error: Option<&flotilla_api::updates::update_run::ErrorDetail>,
    ) {
        if state != *mark {
            self.level(place, subject, *mark, state, error);
            *mark = state;
        }
    }

    /// A run, stage or group changed state from `was`.
    fn level(
        &mut self,
        place: Place,
        subject: Subject,
        was: UpdateState,
        state: UpdateState,
        error: Option<&flotilla_api::updates::update_run::ErrorDetail>,
    ) {
        let event = match state {
            UpdateState::Running if was != UpdateState::NotStarted => Event::Resumed,
            UpdateState::Pending => Event::Pending {
                code: String::new(),
                message: match subject {
                    Subject::Run => "its current stage is held".to_string(),
                    _ => "what is left of it waits (pending members or a gate)".to_string(),
                },
                until: None,
            },
            _ => final_event(state, error),
        };
        self.push(place, subject, event);
    }

    /// A member changed state (or, Pending, its reason); a Pending entry it leaves gets its
    /// end.
    fn member(&mut self, place: Place, mark: &mut MemberMark, member: &MemberStatus) {
        let state = member.progress.state;
        let reason = member.progress.error.as_ref().map(|e| &e.message);
        if state == mark.state
            && (state != UpdateState::Pending
                || reason == mark.pending.as_ref().map(|(why, _)| why))
        {
            return;
        }
        if let Some((_, index)) = mark.pending.take()
            && let Event::Pending { until, .. } = &mut self.entries[index].event
        {
            *until = Some(self.at);
        }
        let event = match (state, self.facts.starts.get(&member.name)) {
            (UpdateState::Running, Some((to, takes, assumed))) => Event::Upgrading {
                to: to.clone(),
                takes: *takes,
                assumed: *assumed,
            },
            _ => final_event(state, member.progress.error.as_ref()),
        };
        mark.state = state;
        if state == UpdateState::Pending {
            mark.pending = Some((reason.cloned().unwrap_or_default(), self.entries.len()));
        }
        self.push(place, Subject::Member(member.name.clone()), event);
    }

    /// Gates that were reached or completed.
    fn gates(
        &mut self,
        place: Place,
        timing: Timing,
        marks: &mut [UpdateState],
        gates: &[GateStatus],
    ) {
        for (mark, gate) in marks.iter_mut().zip(gates) {
            let state = gate.progress.state;
            if state == *mark {
                continue;
            }
            *mark = state;
            let event = match state {
                UpdateState::Pending => {
                    let (needs_approval, until) = gate
                        .gate_id
                        .as_ref()
                        .and_then(|id| self.facts.gates.get(id))
                        .copied()
                        .unwrap_or((false, None));
                    Event::GateReached {
                        needs_approval,
                        until,
                    }
                }
                _ => final_event(state, gate.progress.error.as_ref()),
            };
            let subject = Subject::Gate {
                timing,
                gate_type: gate.gate_type,
                display_name: gate.display_name.clone(),
                name: gate.gate_id.clone(),
            };
            self.push(place, subject, event);
        }
    }
}
