//! One pass of a staged update run (KubeFleet's update run execution), over the run's status,
//! which is the whole state of the run:
//!
//! - stages run in order; a stage starts once its before-stage approval (if any) is given;
//! - inside a stage, clusters start in their sorted order, at most `maxConcurrency` in
//!   flight: a started cluster's binding is moved to the run's resources, and the cluster
//!   succeeds when the binding is Available or DiffReported for that generation;
//! - once every cluster of a stage succeeded the stage waits (`StageUpdatingWaiting`) for its
//!   after-stage tasks: a TimedWait counts from that moment, an Approval needs its request
//!   approved; then the stage succeeds and the next one starts in the same pass;
//! - after the last stage, the deletion stage deletes the bindings of clusters no longer
//!   scheduled, and the run succeeds once they are gone;
//! - a failed binding, a cluster unscheduled or taken over by someone else while it updates
//!   fails the run; a cluster updating for longer than [`STUCK_AFTER`] makes it `Stuck` (it
//!   goes on waiting);
//! - under `Stop` nothing new starts (no cluster, stage, request or deletion); the clusters in
//!   flight finish, and then the run reports `UpdateRunStopped`; `Run` resumes it.
//!
//! One departure from KubeFleet: a binding whose `Available` condition is False (resources
//! applied but not available yet, e.g. a Deployment still rolling out) keeps the cluster in
//! flight rather than failing the run; if it stays so, the run reports `Stuck` naming it.

use std::collections::BTreeMap;

use flotilla_api::placement::BindingState;
use flotilla_api::placement::staged_update_run::{
    ClusterUpdatingStatus, StageTaskStatus, StageUpdatingStatus, UpdateRunState, UpdateRunStatus,
};
use flotilla_api::placement::staged_update_strategy::{StageConfig, StageTaskType};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::conditions::{Stamp, get, has};
use super::reason::*;
use super::{TaskPosition, max_concurrency, wait_time};

/// How long one cluster may update before the run reports `Stuck` (KubeFleet's 5 minutes).
pub const STUCK_AFTER: SignedDuration = SignedDuration::from_mins(5);

/// What a binding says about its cluster's update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindingOutcome {
    /// Nothing decided for the binding's generation yet.
    Pending,
    /// Available or DiffReported for its generation.
    Succeeded,
    /// Overriding, writing the Work, applying or reporting failed: why.
    Failed(String),
}

/// What the run needs to know about one cluster's binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterBinding {
    /// `spec.state`.
    pub state: BindingState,
    /// Whether the binding is being deleted.
    pub deleting: bool,
    /// Whether the binding is Bound to the run's resource snapshot, override snapshots and
    /// apply strategy.
    pub on_target: bool,
    /// Its outcome for its current generation.
    pub outcome: BindingOutcome,
}

/// An approval request as the run sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApprovalState {
    /// `Approved` is True for the request's generation.
    pub approved: bool,
    /// `ApprovalAccepted` is True.
    pub accepted: bool,
}

/// Everything a pass looks at besides the run's status.
#[derive(Clone, Copy, Debug)]
pub struct RunContext<'a> {
    /// The run's `metadata.generation`.
    pub generation: i64,
    /// The run's namespace (a namespaced `StagedUpdateRun`), for the commands it suggests.
    pub namespace: Option<&'a str>,
    /// `spec.state`.
    pub state: UpdateRunState,
    /// The placement's bindings by cluster name.
    pub bindings: &'a BTreeMap<String, ClusterBinding>,
    /// The run's approval requests by name.
    pub approvals: &'a BTreeMap<String, ApprovalState>,
    /// The time of the pass.
    pub now: Timestamp,
}

/// A write the pass asks for; the controller makes them before it writes the status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunAction {
    /// Bind the cluster's binding to the run's resources (snapshot, overrides, apply strategy).
    Bind {
        /// The cluster.
        cluster: String,
    },
    /// Delete the cluster's binding (deletion stage).
    Delete {
        /// The cluster.
        cluster: String,
    },
    /// Create the approval request (or re-create it, if someone deleted it).
    RequestApproval {
        /// Its name.
        name: String,
        /// The stage it gates.
        stage: String,
        /// Before or after the stage.
        position: TaskPosition,
    },
    /// Set `ApprovalAccepted` on an approved request.
    AcceptApproval {
        /// Its name.
        name: String,
    },
}

/// The outcome of a pass besides the status it updated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Writes to make, in order.
    pub actions: Vec<RunAction>,
    /// When to look again even if nothing changes: the end of a TimedWait, or when a
    /// cluster in flight would become stuck.
    pub recheck_at: Option<Timestamp>,
}

impl Progress {
    fn recheck(&mut self, at: Timestamp) {
        self.recheck_at = Some(self.recheck_at.map_or(at, |t| t.min(at)));
    }
}

/// Where a pass stopped, which becomes the run's `Progressing` (and `Succeeded`) condition.
enum Halt {
    NotStarted,
    Updating {
        stage: String,
        in_flight: usize,
        done: usize,
        total: usize,
    },
    Stuck {
        stage: String,
        cluster: String,
        since: Timestamp,
    },
    Waiting(String),
    Stopping(usize),
    Stopped,
    Failed(String),
    Succeeded,
}

/// Whether the run has finished, successfully or not.
pub fn finished(status: &UpdateRunStatus) -> bool {
    get(&status.conditions, SUCCEEDED).is_some()
}

/// Whether the run was initialized.
pub fn initialized(status: &UpdateRunStatus) -> bool {
    has(&status.conditions, INITIALIZED, "True")
}

/// Runs one pass of an initialized, unfinished run: updates `status` and returns the writes
/// it needs. Does nothing for a run not initialized or finished.
pub fn advance(status: &mut UpdateRunStatus, cx: &RunContext<'_>) -> Progress {
    let mut progress = Progress::default();
    if !initialized(status) || finished(status) {
        return progress;
    }
    let halt = run_stages(status, cx, &mut progress);
    report(status, halt, stamp(cx));
    progress
}

/// Fails an unfinished run for `message` (e.g. its placement changed under it): the stage in
/// progress, if any, and the run.
pub fn fail(status: &mut UpdateRunStatus, message: &str, generation: i64, now: Timestamp) {
    if finished(status) {
        return;
    }
    let stamp = Stamp { generation, now };
    let current = status
        .stages_status
        .iter_mut()
        .flatten()
        .chain(status.deletion_stage_status.iter_mut())
        .find(|s| s.start_time.is_some() && !has(&s.conditions, SUCCEEDED, "True"));
    if let Some(stage) = current {
        fail_stage(stage, message, stamp);
    }
    report(status, Halt::Failed(message.to_string()), stamp);
}

fn stamp(cx: &RunContext<'_>) -> Stamp {
    Stamp {
        generation: cx.generation,
        now: cx.now,
    }
}

fn run_stages(status: &mut UpdateRunStatus, cx: &RunContext<'_>, out: &mut Progress) -> Halt {
    if cx.state == UpdateRunState::Initialize {
        return Halt::NotStarted;
    }
    let UpdateRunStatus {
        staged_update_strategy_snapshot,
        stages_status,
        deletion_stage_status,
        ..
    } = status;
    let configs = staged_update_strategy_snapshot
        .as_ref()
        .map_or(&[][..], |s| &s.stages[..]);
    for (stage, config) in stages_status.iter_mut().flatten().zip(configs) {
        if has(&stage.conditions, SUCCEEDED, "True") {
            continue;
        }
        if let Some(halt) = stage_step(stage, config, cx, out) {
            return halt;
        }
    }
    match deletion_stage_status {
        Some(stage) => deletion_step(stage, cx, out),
        None => Halt::Succeeded,
    }
}

/// Advances one unfinished stage; `None` when it finished in this pass.
fn stage_step(
    stage: &mut StageUpdatingStatus,
    config: &StageConfig,
    cx: &RunContext<'_>,
    out: &mut Progress,
) -> Option<Halt> {
    let stamp = stamp(cx);
    let stopping = cx.state == UpdateRunState::Stop;
    if stage.start_time.is_none() {
        for task in stage.before_stage_task_status.iter_mut().flatten() {
            if let Some(halt) = approval(task, &stage.stage_name, TaskPosition::Before, cx, out) {
                return Some(halt);
            }
        }
        if stopping {
            return Some(Halt::Stopped);
        }
        stage.start_time = Some(Time(cx.now));
        stamp.set(
            &mut stage.conditions,
            PROGRESSING,
            "True",
            STAGE_UPDATING_STARTED,
            "Clusters in the stage started updating",
        );
    }
    if let Some(halt) = update_clusters(stage, config, cx, out) {
        return Some(halt);
    }
    if stopping {
        return Some(Halt::Stopped);
    }
    after_stage(stage, config, cx, out)
}

/// Checks the stage's clusters in flight and starts more; `None` once all succeeded.
fn update_clusters(
    stage: &mut StageUpdatingStatus,
    config: &StageConfig,
    cx: &RunContext<'_>,
    out: &mut Progress,
) -> Option<Halt> {
    let stamp = stamp(cx);
    let limit = max_concurrency(config.max_concurrency.as_ref(), stage.clusters.len());
    let mut in_flight: Vec<(usize, Timestamp)> = Vec::new();
    for (i, cluster) in stage.clusters.iter_mut().enumerate() {
        if succeeded(cluster) {
            continue;
        }
        let Some(started) = started_at(cluster) else {
            continue;
        };
        match check(cluster, cx) {
            Check::Succeeded => succeed_cluster(cluster, stamp),
            Check::Pending => in_flight.push((i, started)),
            Check::Failed(message) => return Some(fail_in_stage(stage, i, message, stamp)),
        }
    }
    if cx.state == UpdateRunState::Run {
        for i in 0..stage.clusters.len() {
            if in_flight.len() >= limit {
                break;
            }
            let cluster = &mut stage.clusters[i];
            if started_at(cluster).is_some() {
                continue;
            }
            match start(cluster, cx, out) {
                Check::Succeeded => succeed_cluster(cluster, stamp),
                Check::Pending => in_flight.push((i, cx.now)),
                Check::Failed(message) => return Some(fail_in_stage(stage, i, message, stamp)),
            }
        }
    }
    let total = stage.clusters.len();
    let done = stage.clusters.iter().filter(|c| succeeded(c)).count();
    if done == total {
        return None;
    }
    if cx.state == UpdateRunState::Stop {
        return Some(match in_flight.len() {
            0 => Halt::Stopped,
            n => Halt::Stopping(n),
        });
    }
    let oldest = in_flight.iter().min_by_key(|(_, since)| *since).copied();
    if let Some((i, since)) = oldest {
        let stuck_at = since.saturating_add(STUCK_AFTER).unwrap_or(Timestamp::MAX);
        if cx.now >= stuck_at {
            return Some(Halt::Stuck {
                stage: stage.stage_name.clone(),
                cluster: stage.clusters[i].cluster_name.clone(),
                since,
            });
        }
        out.recheck(stuck_at);
    }
    Some(Halt::Updating {
        stage: stage.stage_name.clone(),
        in_flight: in_flight.len(),
        done,
        total,
    })
}

/// The after-stage tasks of a stage whose clusters all succeeded; `None` once they are done
/// and the stage succeeded.
fn after_stage(
    stage: &mut StageUpdatingStatus,
    config: &StageConfig,
    cx: &RunContext<'_>,
    out: &mut Progress,
) -> Option<Halt> {
    let stamp = stamp(cx);
    let has_tasks = stage
        .after_stage_task_status
        .as_ref()
        .is_some_and(|t| !t.is_empty());
    if has_tasks {
        stamp.set(
            &mut stage.conditions,
            PROGRESSING,
            "False",
            STAGE_UPDATING_WAITING,
            "All clusters in the stage are updated, waiting for after-stage tasks to complete",
        );
    }
    let since = get(&stage.conditions, PROGRESSING).map_or(cx.now, |c| c.last_transition_time.0);
    let configs = config.after_stage_tasks.as_deref().unwrap_or_default();
    let mut waiting = Vec::new();
    for task in stage.after_stage_task_status.iter_mut().flatten() {
        let halt = match task.type_ {
            StageTaskType::Approval => {
                approval(task, &stage.stage_name, TaskPosition::After, cx, out)
            }
            StageTaskType::TimedWait => {
                let wait = configs
                    .iter()
                    .find(|t| t.type_ == StageTaskType::TimedWait)
                    .and_then(|t| t.wait_time.as_deref())
                    .and_then(wait_time::parse)
                    .unwrap_or_default();
                timed_wait(task, &stage.stage_name, since, wait, cx, out)
            }
        };
        waiting.extend(halt);
    }
    if let Some(first) = waiting.into_iter().next() {
        return Some(first);
    }
    stage.end_time = Some(Time(cx.now));
    stamp.set(
        &mut stage.conditions,
        PROGRESSING,
        "False",
        STAGE_UPDATING_SUCCEEDED,
        "All clusters in the stage are updated and after-stage tasks are completed",
    );
    stamp.set(
        &mut stage.conditions,
        SUCCEEDED,
        "True",
        STAGE_UPDATING_SUCCEEDED,
        "Stage update completed successfully",
    );
    None
}

fn timed_wait(
    task: &mut StageTaskStatus,
    stage: &str,
    since: Timestamp,
    wait: SignedDuration,
    cx: &RunContext<'_>,
    out: &mut Progress,
) -> Option<Halt> {
    if has(&task.conditions, WAIT_TIME_ELAPSED, "True") {
        return None;
    }
    let end = since.saturating_add(wait).unwrap_or(Timestamp::MAX);
    if cx.now < end {
        out.recheck(end);
        return Some(Halt::Waiting(format!(
            "Stage {stage} is waiting {} after its clusters were updated, until {end}",
            wait_time::format(wait)
        )));
    }
    stamp(cx).set(
        &mut task.conditions,
        WAIT_TIME_ELAPSED,
        "True",
        AFTER_STAGE_WAIT_ELAPSED,
        "Wait time elapsed",
    );
    None
}

/// An Approval task: its request created, and accepted once approved; `None` once approved.
fn approval(
    task: &mut StageTaskStatus,
    stage: &str,
    position: TaskPosition,
    cx: &RunContext<'_>,
    out: &mut Progress,
) -> Option<Halt> {
    if has(&task.conditions, APPROVAL_REQUEST_APPROVED, "True") {
        return None;
    }
    let stamp = stamp(cx);
    let name = task.approval_request_name.clone().unwrap_or_default();
    let (created, approved) = match position {
        TaskPosition::Before => (
            BEFORE_STAGE_APPROVAL_CREATED,
            BEFORE_STAGE_APPROVAL_APPROVED,
        ),
        TaskPosition::After => (AFTER_STAGE_APPROVAL_CREATED, AFTER_STAGE_APPROVAL_APPROVED),
    };
    match cx.approvals.get(&name) {
        Some(request) if request.approved => {
            if !request.accepted {
                out.actions
                    .push(RunAction::AcceptApproval { name: name.clone() });
            }
            stamp.set(
                &mut task.conditions,
                APPROVAL_REQUEST_APPROVED,
                "True",
                approved,
                format!("approval request {name} is approved"),
            );
            return None;
        }
        Some(_) => {}
        None if cx.state == UpdateRunState::Stop => return Some(Halt::Stopped),
        None => out.actions.push(RunAction::RequestApproval {
            name: name.clone(),
            stage: stage.to_string(),
            position,
        }),
    }
    stamp.set(
        &mut task.conditions,
        APPROVAL_REQUEST_CREATED,
        "True",
        created,
        format!("approval request {name} is created"),
    );
    Some(Halt::Waiting(format!(
        "Stage {stage} waits for approval {} it: approve approval request {name} (flotilla approve {name}{})",
        match position {
            TaskPosition::Before => "before starting",
            TaskPosition::After => "after updating",
        },
        cx.namespace.map(|n| format!(" -n {n}")).unwrap_or_default()
    )))
}

/// The deletion stage: deletes the bindings of clusters no longer scheduled.
fn deletion_step(stage: &mut StageUpdatingStatus, cx: &RunContext<'_>, out: &mut Progress) -> Halt {
    let stamp = stamp(cx);
    if has(&stage.conditions, SUCCEEDED, "True") {
        return Halt::Succeeded;
    }
    if stage.start_time.is_none() {
        if cx.state == UpdateRunState::Stop {
            return Halt::Stopped;
        }
        stage.start_time = Some(Time(cx.now));
        stamp.set(
            &mut stage.conditions,
            PROGRESSING,
            "True",
            STAGE_UPDATING_STARTED,
            "Deleting the resources of clusters no longer scheduled",
        );
    }
    let mut remaining = 0;
    for i in 0..stage.clusters.len() {
        let cluster = &mut stage.clusters[i];
        if succeeded(cluster) {
            continue;
        }
        let name = cluster.cluster_name.clone();
        let Some(binding) = cx.bindings.get(&name) else {
            mark_started(cluster, stamp);
            succeed_cluster(cluster, stamp);
            continue;
        };
        if binding.state != BindingState::Unscheduled && !binding.deleting {
            let message = format!(
                "cluster {name} was scheduled again while the run was to remove its resources; start a new run"
            );
            return fail_in_stage(stage, i, message, stamp);
        }
        mark_started(cluster, stamp);
        if !binding.deleting {
            out.actions.push(RunAction::Delete { cluster: name });
        }
        remaining += 1;
    }
    let total = stage.clusters.len();
    if remaining > 0 {
        return Halt::Updating {
            stage: stage.stage_name.clone(),
            in_flight: remaining,
            done: total - remaining,
            total,
        };
    }
    stage.end_time = Some(Time(cx.now));
    stamp.set(
        &mut stage.conditions,
        PROGRESSING,
        "False",
        STAGE_UPDATING_SUCCEEDED,
        "The resources of every cluster no longer scheduled are deleted",
    );
    stamp.set(
        &mut stage.conditions,
        SUCCEEDED,
        "True",
        STAGE_UPDATING_SUCCEEDED,
        "Stage update completed successfully",
    );
    Halt::Succeeded
}

/// What a cluster's binding says about the cluster's update.
enum Check {
    Pending,
    Succeeded,
    Failed(String),
}

/// The state of a started cluster.
fn check(cluster: &ClusterUpdatingStatus, cx: &RunContext<'_>) -> Check {
    let name = &cluster.cluster_name;
    let binding = match present(name, cx) {
        Ok(binding) => binding,
        Err(message) => return Check::Failed(message),
    };
    if !binding.on_target {
        return Check::Failed(format!(
            "the binding of cluster {name} no longer carries this run's resources: another update run or a user changed it"
        ));
    }
    match &binding.outcome {
        BindingOutcome::Pending => Check::Pending,
        BindingOutcome::Succeeded => Check::Succeeded,
        BindingOutcome::Failed(why) => {
            Check::Failed(format!("cluster {name} failed to update: {why}"))
        }
    }
}

/// Starts a cluster: binds it to the run's resources unless it already is.
fn start(cluster: &mut ClusterUpdatingStatus, cx: &RunContext<'_>, out: &mut Progress) -> Check {
    let name = cluster.cluster_name.clone();
    let binding = match present(&name, cx) {
        Ok(binding) => binding,
        Err(message) => return Check::Failed(message),
    };
    mark_started(cluster, stamp(cx));
    if binding.on_target {
        return check(cluster, cx);
    }
    out.actions.push(RunAction::Bind { cluster: name });
    Check::Pending
}

/// The cluster's binding, if it is still scheduled.
fn present<'c>(name: &str, cx: &RunContext<'c>) -> Result<&'c ClusterBinding, String> {
    match cx.bindings.get(name) {
        None => Err(format!(
            "cluster {name} has no binding any more: it is no longer scheduled for the placement"
        )),
        Some(b) if b.deleting || b.state == BindingState::Unscheduled => Err(format!(
            "cluster {name} was unscheduled while the run was updating the placement"
        )),
        Some(b) => Ok(b),
    }
}

fn started_at(cluster: &ClusterUpdatingStatus) -> Option<Timestamp> {
    get(&cluster.conditions, STARTED)
        .filter(|c| c.status == "True")
        .map(|c| c.last_transition_time.0)
}

fn succeeded(cluster: &ClusterUpdatingStatus) -> bool {
    has(&cluster.conditions, SUCCEEDED, "True")
}

fn mark_started(cluster: &mut ClusterUpdatingStatus, stamp: Stamp) {
    if started_at(cluster).is_none() {
        stamp.set(
            &mut cluster.conditions,
            STARTED,
            "True",
            CLUSTER_UPDATING_STARTED,
            "Cluster update started",
        );
    }
}

fn succeed_cluster(cluster: &mut ClusterUpdatingStatus, stamp: Stamp) {
    stamp.set(
        &mut cluster.conditions,
        SUCCEEDED,
        "True",
        CLUSTER_UPDATING_SUCCEEDED,
        "Cluster update completed successfully",
    );
}

/// Fails cluster `i` of `stage`, and the stage, for `message`.
fn fail_in_stage(stage: &mut StageUpdatingStatus, i: usize, message: String, stamp: Stamp) -> Halt {
    let cluster = &mut stage.clusters[i];
    stamp.set(
        &mut cluster.conditions,
        SUCCEEDED,
        "False",
        CLUSTER_UPDATING_FAILED,
        message.clone(),
    );
    let message = format!("stage {}: {message}", stage.stage_name);
    fail_stage(stage, &message, stamp);
    Halt::Failed(message)
}

fn fail_stage(stage: &mut StageUpdatingStatus, message: &str, stamp: Stamp) {
    stage.end_time = Some(Time(stamp.now));
    stamp.set(
        &mut stage.conditions,
        PROGRESSING,
        "False",
        STAGE_UPDATING_FAILED,
        message,
    );
    stamp.set(
        &mut stage.conditions,
        SUCCEEDED,
        "False",
        STAGE_UPDATING_FAILED,
        message,
    );
}

/// Writes where the pass stopped as the run's conditions.
fn report(status: &mut UpdateRunStatus, halt: Halt, stamp: Stamp) {
    let conditions = &mut status.conditions;
    let (state, reason, message) = match halt {
        Halt::NotStarted => (
            "False",
            UPDATE_RUN_NOT_STARTED,
            "The update run is initialized and waits to be started: set spec.state to Run"
                .to_string(),
        ),
        Halt::Updating {
            stage,
            in_flight,
            done,
            total,
        } => (
            "True",
            UPDATE_RUN_PROGRESSING,
            format!(
                "The update run is making progress: stage {stage} has {done} of {total} clusters updated and {in_flight} updating"
            ),
        ),
        Halt::Stuck {
            stage,
            cluster,
            since,
        } => (
            "False",
            UPDATE_RUN_STUCK,
            format!(
                "The update run is stuck: cluster {cluster} in stage {stage} has been updating since {since}, more than {}, and its binding is not available yet",
                wait_time::format(STUCK_AFTER)
            ),
        ),
        Halt::Waiting(message) => ("False", UPDATE_RUN_WAITING, message),
        Halt::Stopping(n) => (
            "True",
            UPDATE_RUN_STOPPING,
            format!("The update run is stopping: {n} cluster(s) in flight are finishing"),
        ),
        Halt::Stopped => (
            "False",
            UPDATE_RUN_STOPPED,
            "The update run is stopped: set spec.state to Run to resume it".to_string(),
        ),
        Halt::Failed(message) => {
            stamp.set(
                conditions,
                SUCCEEDED,
                "False",
                UPDATE_RUN_FAILED,
                message.clone(),
            );
            ("False", UPDATE_RUN_FAILED, message)
        }
        Halt::Succeeded => {
            stamp.set(
                conditions,
                SUCCEEDED,
                "True",
                UPDATE_RUN_SUCCEEDED,
                "The update run completed successfully",
            );
            (
                "False",
                UPDATE_RUN_SUCCEEDED,
                "The update run completed successfully".to_string(),
            )
        }
    };
    stamp.set(conditions, PROGRESSING, state, reason, message);
}
