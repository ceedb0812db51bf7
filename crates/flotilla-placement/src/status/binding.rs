//! A binding's status from its Works (the work generator's `setBindingStatus`): the
//! `Overridden`, `WorkSynchronized`, `Applied`, `Available` (or, under ReportDiff,
//! `DiffReported`) conditions, in that order, each set only while the ones before it are True,
//! and the failed, drifted and diffed resources.
//!
//! - `Applied` is True when every Work reports Applied True for its generation; False with
//!   `ApplyInProgress` while one has not reported for its generation yet, with
//!   `NotAllWorkHaveBeenApplied` when one failed.
//! - `Available` is True with `AllWorkAreAvailable`, or `NotAllWorkAreAvailabilityTrackable`
//!   when some Work's resources cannot be tracked; False with `NotAllWorkAreAvailable`.
//! - `DiffReported` is True with `AllWorkHaveDiffReported`; False with `DiffReportInProgress`
//!   or `NotAllWorkHaveDiffReported`.
//! - A placement that selected nothing has no Works: Applied True, Available True with
//!   `NoResourcesSelected`.
//! - Resources are listed only once every Work has finished the step that reports them, so
//!   stale results do not leak: failed (and diffed) resources when applying failed, failed
//!   resources when availability failed, drifted resources once applying finished, diffed
//!   resources under ReportDiff once reporting succeeded; at most 100 of each.
//!
//! Departures from KubeFleet: a Work that has not reported for its generation always gives
//! `ApplyInProgress` / `DiffReportInProgress` (KubeFleet uses them only in the round that
//! rewrote the Work, then `NotAllWorkHaveBeenApplied`); Works that do not carry the binding's
//! latest resources yet give WorkSynchronized False with `WorkNotSynchronizedYet`; Works being
//! deleted are ignored throughout; lists over 100 keep the first 100 in Work order.

use flotilla_api::conditions::NewCondition;
use flotilla_api::placement::binding::ResourceBindingStatus;
use flotilla_api::placement::status::EnvelopeIdentifier;
use flotilla_api::placement::work::{Work, WorkStatus};
use k8s_openapi::jiff::Timestamp;

use super::assemble::{assemble, foreign};
use super::manifests;
use super::work_summary::{Summary, collect, detail, summarize};
use super::{ConditionType, reason};

/// How applying the override rules to the binding's resources went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverrideOutcome<'a> {
    /// No override snapshot applies to the binding's cluster.
    NoneSpecified,
    /// Override snapshots apply and were applied.
    Applied,
    /// Applying them failed with this error.
    Failed(&'a str),
}

/// How writing the binding's Works went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorkSync<'a> {
    /// Writing them failed with this error.
    Failed(&'a str),
    /// The Works of the binding as they are now (none when the placement selected nothing).
    Written(&'a [WorkView<'a>]),
}

/// What the roll-up needs of one Work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkView<'a> {
    /// The Work's name.
    pub name: &'a str,
    /// `metadata.generation`: the member's conditions count only for it.
    pub generation: i64,
    /// Whether the Work carries what the binding's current spec asks for.
    pub up_to_date: bool,
    /// Whether the Work has a deletion timestamp.
    pub deleting: bool,
    /// What the member reported.
    pub status: &'a WorkStatus,
    /// The envelope the Work's manifests came in, if any.
    pub envelope: Option<&'a EnvelopeIdentifier>,
}

/// The status of a Work the member has not reported on.
static NO_STATUS: WorkStatus = WorkStatus {
    conditions: Vec::new(),
    manifest_conditions: Vec::new(),
};

impl<'a> WorkView<'a> {
    /// The view of `work`, `up_to_date` as for the field of that name, not from an envelope.
    pub fn of(work: &'a Work, up_to_date: bool) -> WorkView<'a> {
        WorkView {
            name: work.metadata.name.as_deref().unwrap_or_default(),
            generation: work.metadata.generation.unwrap_or_default(),
            up_to_date,
            deleting: work.metadata.deletion_timestamp.is_some(),
            status: work.status.as_ref().unwrap_or(&NO_STATUS),
            envelope: None,
        }
    }
}

/// Everything the binding's status is computed from.
#[derive(Clone, Copy, Debug)]
pub struct BindingWorks<'a> {
    /// The binding's `metadata.generation`.
    pub generation: i64,
    /// Whether the binding's apply strategy is ReportDiff.
    pub report_diff: bool,
    /// How overriding went.
    pub overrides: OverrideOutcome<'a>,
    /// How writing the Works went.
    pub sync: WorkSync<'a>,
    /// The binding's current status: its `RolloutStarted` (the rollout's) is kept, and
    /// unchanged conditions keep their transition time.
    pub previous: &'a ResourceBindingStatus,
    /// The time of the roll-up.
    pub now: Timestamp,
}

/// The binding's new status.
pub fn binding_status(input: &BindingWorks<'_>) -> ResourceBindingStatus {
    let mut rollup = Rollup {
        generation: input.generation,
        conditions: Vec::new(),
        status: ResourceBindingStatus::default(),
    };
    rollup.run(input);
    let owned: Vec<String> = ConditionType::RESOURCE_TYPES[1..]
        .iter()
        .map(|t| t.as_str().to_string())
        .collect();
    let mut conditions = foreign(&input.previous.conditions, &owned);
    conditions.extend(assemble(
        &input.previous.conditions,
        rollup.conditions,
        input.now,
    ));
    ResourceBindingStatus {
        conditions,
        ..rollup.status
    }
}

/// The conditions and lists being built.
struct Rollup<'a> {
    generation: i64,
    conditions: Vec<NewCondition<'a>>,
    status: ResourceBindingStatus,
}

impl<'a> Rollup<'a> {
    /// Adds a condition of the chain.
    fn set(&mut self, type_: ConditionType, ok: bool, reason: &'a str, message: String) {
        self.conditions.push(NewCondition {
            type_: type_.as_str(),
            status: if ok { "True" } else { "False" },
            reason,
            message,
            observed_generation: Some(self.generation),
        });
    }

    /// Walks the chain, stopping at the first condition that is not True.
    fn run(&mut self, input: &BindingWorks<'a>) {
        match input.overrides {
            OverrideOutcome::Failed(error) => {
                let message =
                    format!("Failed to apply the override rules on the resources: {error}");
                return self.set(
                    ConditionType::Overridden,
                    false,
                    reason::OVERRIDDEN_FAILED,
                    message,
                );
            }
            OverrideOutcome::NoneSpecified => self.set(
                ConditionType::Overridden,
                true,
                reason::NO_OVERRIDE_SPECIFIED,
                "No override rules are configured for the selected resources".into(),
            ),
            OverrideOutcome::Applied => self.set(
                ConditionType::Overridden,
                true,
                reason::OVERRIDDEN_SUCCEEDED,
                "Successfully applied the override rules on the resources".into(),
            ),
        }
        let works: Vec<&WorkView<'a>> = match input.sync {
            WorkSync::Failed(error) => {
                let message = format!("Failed to synchronize the work to the latest: {error}");
                return self.set(
                    ConditionType::WorkSynchronized,
                    false,
                    reason::SYNC_WORK_FAILED,
                    message,
                );
            }
            WorkSync::Written(works) => works.iter().filter(|w| !w.deleting).collect(),
        };
        if let Some(stale) = works.iter().find(|w| !w.up_to_date) {
            let message = format!(
                "Work {} does not carry the binding's latest resources yet",
                stale.name
            );
            return self.set(
                ConditionType::WorkSynchronized,
                false,
                reason::WORK_NOT_SYNCHRONIZED_YET,
                message,
            );
        }
        self.set(
            ConditionType::WorkSynchronized,
            true,
            reason::ALL_WORK_SYNCED,
            "All of the works are synchronized to the latest".into(),
        );
        if input.report_diff {
            self.diff_reported(&works, input.now);
        } else {
            self.applied(&works, input.now);
        }
    }

    /// `DiffReported` and the diffed resources.
    fn diff_reported(&mut self, works: &[&WorkView<'a>], now: Timestamp) {
        match summarize(works, ConditionType::DiffReported) {
            Summary::Incomplete(w) => self.set(
                ConditionType::DiffReported,
                false,
                reason::DIFF_REPORT_IN_PROGRESS,
                format!(
                    "Work {} has not reported differences for its generation {} yet",
                    w.name, w.generation
                ),
            ),
            Summary::Failed(w) => self.set(
                ConditionType::DiffReported,
                false,
                reason::NOT_ALL_WORK_HAVE_DIFF_REPORTED,
                format!(
                    "Work {} has failed to report diff: {}",
                    w.name,
                    detail(w, ConditionType::DiffReported)
                ),
            ),
            Summary::Done(_) => {
                self.set(
                    ConditionType::DiffReported,
                    true,
                    reason::ALL_WORK_HAVE_DIFF_REPORTED,
                    "All corresponding work objects have reported diff".into(),
                );
                self.status.diffed_placements = collect(works, |w| manifests::diffed(w, now));
            }
        }
    }

    /// `Applied`, then `Available`, and the failed, drifted and diffed resources.
    fn applied(&mut self, works: &[&WorkView<'a>], now: Timestamp) {
        let drifted = |works: &[&WorkView<'_>]| collect(works, |w| manifests::drifted(w, now));
        match summarize(works, ConditionType::Applied) {
            Summary::Incomplete(w) => {
                return self.set(
                    ConditionType::Applied,
                    false,
                    reason::APPLY_IN_PROGRESS,
                    format!(
                        "Work {} has not been applied for its generation {} yet",
                        w.name, w.generation
                    ),
                );
            }
            Summary::Failed(w) => {
                self.set(
                    ConditionType::Applied,
                    false,
                    reason::NOT_ALL_WORK_HAVE_BEEN_APPLIED,
                    format!(
                        "Work {} has failed to apply: {}",
                        w.name,
                        detail(w, ConditionType::Applied)
                    ),
                );
                self.status.failed_placements = collect(works, manifests::failed);
                self.status.diffed_placements = collect(works, |w| manifests::diffed(w, now));
                self.status.drifted_placements = drifted(works);
                return;
            }
            Summary::Done(_) => {
                let message = if works.is_empty() {
                    "No resources are selected, so there is nothing to apply"
                } else {
                    "All corresponding work objects are applied"
                };
                self.set(
                    ConditionType::Applied,
                    true,
                    reason::ALL_WORK_HAVE_BEEN_APPLIED,
                    message.into(),
                );
            }
        }
        self.status.drifted_placements = drifted(works);
        match summarize(works, ConditionType::Available) {
            Summary::Incomplete(w) => self.set(
                ConditionType::Available,
                false,
                reason::NOT_ALL_WORK_ARE_AVAILABLE,
                format!(
                    "Work {} has not yet completed the availability check",
                    w.name
                ),
            ),
            Summary::Failed(w) => {
                self.set(
                    ConditionType::Available,
                    false,
                    reason::NOT_ALL_WORK_ARE_AVAILABLE,
                    format!(
                        "Work {} is not yet available: {}",
                        w.name,
                        detail(w, ConditionType::Available)
                    ),
                );
                self.status.failed_placements = collect(works, manifests::failed);
            }
            Summary::Done(Some(w)) => self.set(
                ConditionType::Available,
                true,
                reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE,
                format!(
                    "The availability of work object {} is not trackable",
                    w.name
                ),
            ),
            Summary::Done(None) if works.is_empty() => self.set(
                ConditionType::Available,
                true,
                reason::NO_RESOURCES_SELECTED,
                "No resources selected.".into(),
            ),
            Summary::Done(None) => self.set(
                ConditionType::Available,
                true,
                reason::ALL_WORK_ARE_AVAILABLE,
                "All corresponding work objects are available".into(),
            ),
        }
    }
}
