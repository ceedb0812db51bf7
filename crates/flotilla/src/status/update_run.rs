//! The drawing of a `ClusterStagedUpdateRun` for `flotilla status updaterun`: a pure function
//! of the run, its `ClusterApprovalRequest`s and the time, so every state is table-tested.
//!
//! A header names the run, its placement, resource snapshot and desired state, and its overall
//! condition; then every stage (the deletion stage last) has one line: a progress bar of its
//! updated clusters and a state word (no colour needed), with the clusters in flight, the time
//! a `TimedWait` has left, or the failure. A pending approval is followed by the commands that
//! give it.
//!
//! A `TimedWait` counts from the stage's `Progressing=False` transition: that is when the run
//! marks the stage Waiting, its clusters all updated, and KubeFleet counts `waitTime` from
//! there. Until the run has marked it, the whole `waitTime` is shown as left.

use std::fmt::Write as _;

use flotilla_api::conditions::{find, is_true};
use flotilla_api::placement::approval_request::APPROVED_CONDITION;
use flotilla_api::placement::staged_update_run::{
    ClusterUpdatingStatus, StageTaskStatus, StageUpdatingStatus,
};
use flotilla_api::placement::staged_update_strategy::{StageConfig, StageTaskType};
use flotilla_api::placement::{ClusterApprovalRequest, ClusterStagedUpdateRun};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::ResourceExt;

use crate::approve::{DEFAULT_MESSAGE, DEFAULT_REASON};

/// Run and stage condition: the run or stage is under way.
const PROGRESSING: &str = "Progressing";
/// Run, stage and cluster condition: finished, `True` when well and `False` when failed.
const SUCCEEDED: &str = "Succeeded";
/// Run condition: the stages were computed (`False` means the run failed to start).
const INITIALIZED: &str = "Initialized";
/// Cluster condition: the cluster's update began.
const STARTED: &str = "Started";
/// Approval task condition: the run accepted the approval.
const APPROVAL_REQUEST_APPROVED: &str = "ApprovalRequestApproved";
/// TimedWait task condition: the wait is over.
const WAIT_TIME_ELAPSED: &str = "WaitTimeElapsed";
/// Reason of the run's `Progressing=False` once it stopped.
const STOPPED_REASON: &str = "UpdateRunStopped";
/// Width of a stage's progress bar.
const BAR_WIDTH: usize = 10;

/// Where a run stands overall, from its conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overall {
    /// Not started yet: being initialized, or initialized and waiting for `state: Run`.
    Initializing,
    /// Running (or waiting on a stage's tasks, or stopping).
    Progressing,
    /// Every stage succeeded.
    Succeeded,
    /// Failed to initialize or to update; final.
    Failed,
    /// Stopped by `state: Stop`; `state: Run` resumes it.
    Stopped,
}

/// The run's overall state, with the message of the condition that says so.
pub fn overall(run: &ClusterStagedUpdateRun) -> (Overall, &str) {
    let conditions = run_conditions(run);
    if let Some(c) = find(conditions, INITIALIZED).filter(|c| c.status == "False") {
        return (Overall::Failed, &c.message);
    }
    if let Some(c) = find(conditions, SUCCEEDED) {
        let state = if c.status == "True" {
            Overall::Succeeded
        } else {
            Overall::Failed
        };
        return (state, &c.message);
    }
    if let Some(c) = find(conditions, PROGRESSING) {
        let state = if c.reason == STOPPED_REASON {
            Overall::Stopped
        } else {
            Overall::Progressing
        };
        return (state, &c.message);
    }
    let initialized = find(conditions, INITIALIZED).map_or("", |c| &c.message);
    (Overall::Initializing, initialized)
}

/// The whole drawing of `run` at `now`, `requests` being the approval requests labelled for
/// it.
pub fn draw(
    run: &ClusterStagedUpdateRun,
    requests: &[ClusterApprovalRequest],
    now: Timestamp,
) -> String {
    let mut out = String::new();
    let status = run.status.as_ref();
    let snapshot_index = status
        .and_then(|s| s.resource_snapshot_index_used.as_deref())
        .or(run.spec.resource_snapshot_index.as_deref())
        .unwrap_or("latest");
    let state = run.spec.state.unwrap_or_default();
    let _ = writeln!(
        out,
        "Update run {}: placement {}, resource snapshot {snapshot_index}, state {state:?}",
        run.name_any(),
        run.spec.placement_name,
    );
    let (overall, message) = overall(run);
    let _ = if message.is_empty() {
        writeln!(out, "{overall:?}")
    } else {
        writeln!(out, "{overall:?}: {message}")
    };
    let stages: Vec<&StageUpdatingStatus> = status
        .and_then(|s| s.stages_status.as_deref())
        .unwrap_or_default()
        .iter()
        .chain(status.and_then(|s| s.deletion_stage_status.as_ref()))
        .collect();
    if stages.is_empty() {
        let _ = writeln!(out, "\nNo stages yet: the run is not initialized.");
        return out;
    }
    let configs = status
        .and_then(|s| s.staged_update_strategy_snapshot.as_ref())
        .map_or(&[][..], |s| &s.stages[..]);
    let width = stages.iter().map(|s| s.stage_name.len()).max().unwrap_or(0);
    out.push('\n');
    for stage in stages {
        let config = configs.iter().find(|c| c.name == stage.stage_name);
        let view = stage_view(stage, config, requests, now);
        let done = succeeded(&stage.clusters).count();
        let _ = writeln!(
            out,
            "  {:width$}  {} {done}/{} clusters  {}",
            stage.stage_name,
            bar(done, stage.clusters.len()),
            stage.clusters.len(),
            view.line
        );
        if let Some(request) = view.approval {
            let _ = writeln!(
                out,
                "      approve: flotilla approve {}",
                request.name_any()
            );
            let _ = writeln!(out, "      or:      {}", kubectl_approval(request));
        }
    }
    out
}

/// `[#####-----]`: the share of `done` in `total` clusters, rounded down.
fn bar(done: usize, total: usize) -> String {
    let filled = (done * BAR_WIDTH).checked_div(total).unwrap_or(0);
    format!("[{}{}]", "#".repeat(filled), "-".repeat(BAR_WIDTH - filled))
}

/// What one stage line says after its bar, and the approval it waits for, if any.
struct StageView<'a> {
    line: String,
    approval: Option<&'a ClusterApprovalRequest>,
}

impl StageView<'_> {
    fn text(line: impl Into<String>) -> Self {
        Self {
            line: line.into(),
            approval: None,
        }
    }
}

/// The state word of a stage and its details: Succeeded / Failed (why) / Waiting for approval
/// (before it starts or after its clusters) / Updating (the clusters in flight) / Waiting (a
/// TimedWait's time left) / Pending.
fn stage_view<'a>(
    stage: &StageUpdatingStatus,
    config: Option<&StageConfig>,
    requests: &'a [ClusterApprovalRequest],
    now: Timestamp,
) -> StageView<'a> {
    let conditions = stage.conditions.as_deref().unwrap_or_default();
    match find(conditions, SUCCEEDED) {
        Some(c) if c.status == "True" => return StageView::text("Succeeded"),
        Some(c) => return StageView::text(format!("Failed: {}", c.message)),
        None => {}
    }
    if let Some((cluster, c)) = stage.clusters.iter().find_map(|cluster| {
        find(cluster_conditions(cluster), SUCCEEDED)
            .filter(|c| c.status == "False")
            .map(|c| (cluster, c))
    }) {
        return StageView::text(format!("Failed: {}: {}", cluster.cluster_name, c.message));
    }
    let started = stage
        .clusters
        .iter()
        .any(|c| is_true(cluster_conditions(c), STARTED));
    if !started
        && let Some(request) = pending_approval(stage.before_stage_task_status.as_deref(), requests)
    {
        return StageView {
            line: "Waiting for approval (before the stage)".into(),
            approval: Some(request),
        };
    }
    let in_flight: Vec<&str> = stage
        .clusters
        .iter()
        .filter(|c| {
            let conditions = cluster_conditions(c);
            is_true(conditions, STARTED) && !is_true(conditions, SUCCEEDED)
        })
        .map(|c| c.cluster_name.as_str())
        .collect();
    let all_done = succeeded(&stage.clusters).count() == stage.clusters.len();
    if !in_flight.is_empty() || (started && !all_done) {
        return StageView::text(updating(&in_flight));
    }
    let waiting = find(conditions, PROGRESSING).filter(|c| c.status == "False");
    if !all_done || (stage.clusters.is_empty() && waiting.is_none()) {
        return StageView::text("Pending");
    }
    let after = stage.after_stage_task_status.as_deref();
    let wait_left = config
        .and_then(|c| timed_wait(c, after))
        .map(|wait| {
            let since = waiting.map_or(now, |c| c.last_transition_time.0);
            wait - now.duration_since(since)
        })
        .filter(|left| left.is_positive());
    let wait_note = wait_left.map(|left| format!("TimedWait: {} left", remaining(left)));
    if let Some(request) = pending_approval(after, requests) {
        let line = match wait_note {
            Some(note) => format!("Waiting for approval (after the stage); {note}"),
            None => "Waiting for approval (after the stage)".into(),
        };
        return StageView {
            line,
            approval: Some(request),
        };
    }
    match wait_note {
        Some(note) => StageView::text(format!("Waiting, {note}")),
        None => StageView::text(updating(&in_flight)),
    }
}

/// `Updating`, with the clusters in flight.
fn updating(in_flight: &[&str]) -> String {
    if in_flight.is_empty() {
        "Updating".into()
    } else {
        format!("Updating, in flight: {}", in_flight.join(", "))
    }
}

/// The stage's `TimedWait` duration, unless its task says the wait has elapsed.
fn timed_wait(config: &StageConfig, tasks: Option<&[StageTaskStatus]>) -> Option<SignedDuration> {
    let elapsed = tasks.unwrap_or_default().iter().any(|t| {
        t.type_ == StageTaskType::TimedWait
            && is_true(
                t.conditions.as_deref().unwrap_or_default(),
                WAIT_TIME_ELAPSED,
            )
    });
    if elapsed {
        return None;
    }
    config
        .after_stage_tasks
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|t| t.type_ == StageTaskType::TimedWait)
        .find_map(|t| t.wait_time.as_deref()?.parse().ok())
}

/// The approval request one of `tasks` waits for: named by an Approval task the run has not
/// seen approved, existing, and not approved by a user yet.
fn pending_approval<'a>(
    tasks: Option<&[StageTaskStatus]>,
    requests: &'a [ClusterApprovalRequest],
) -> Option<&'a ClusterApprovalRequest> {
    tasks
        .unwrap_or_default()
        .iter()
        .filter(|t| {
            t.type_ == StageTaskType::Approval
                && !is_true(
                    t.conditions.as_deref().unwrap_or_default(),
                    APPROVAL_REQUEST_APPROVED,
                )
        })
        .filter_map(|t| t.approval_request_name.as_deref())
        .find_map(|name| {
            requests.iter().find(|r| {
                r.name_any() == name
                    && !is_true(
                        r.status
                            .as_ref()
                            .and_then(|s| s.conditions.as_deref())
                            .unwrap_or_default(),
                        APPROVED_CONDITION,
                    )
            })
        })
}

/// The seed's `kubectl patch` approving `request`, with `flotilla approve`'s reason and
/// message.
fn kubectl_approval(request: &ClusterApprovalRequest) -> String {
    format!(
        r#"kubectl patch clusterapprovalrequests {} --type=merge -p '{{"status":{{"conditions":[{{"type":"{APPROVED_CONDITION}","status":"True","reason":"{DEFAULT_REASON}","message":"{DEFAULT_MESSAGE}","lastTransitionTime":"'$(date --utc +%Y-%m-%dT%H:%M:%SZ)'","observedGeneration":{}}}]}}}}' --subresource=status"#,
        request.name_any(),
        request.metadata.generation.unwrap_or(1),
    )
}

/// A time left, to the minute above (`37m`, `1h 5m`), in seconds under a minute.
fn remaining(left: SignedDuration) -> String {
    let seconds = left.as_secs();
    if seconds < 60 {
        return format!("{seconds}s");
    }
    let minutes = (seconds + 59) / 60;
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h {m}m"),
    }
}

/// The clusters whose update succeeded.
fn succeeded(clusters: &[ClusterUpdatingStatus]) -> impl Iterator<Item = &ClusterUpdatingStatus> {
    clusters
        .iter()
        .filter(|c| is_true(cluster_conditions(c), SUCCEEDED))
}

fn cluster_conditions(cluster: &ClusterUpdatingStatus) -> &[Condition] {
    cluster.conditions.as_deref().unwrap_or_default()
}

fn run_conditions(run: &ClusterStagedUpdateRun) -> &[Condition] {
    run.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
