//! A run's initial status (KubeFleet's run initialization): the strategy copied in, every
//! scheduled cluster in exactly one stage in update order with the override snapshots it gets,
//! each task's status (with its approval request's name), and the deletion stage listing the
//! clusters no longer scheduled.

use flotilla_api::placement::staged_update_run::{
    ClusterUpdatingStatus, DELETE_STAGE_NAME, StageTaskStatus, StageUpdatingStatus, UpdateRunStatus,
};
use flotilla_api::placement::staged_update_strategy::{
    StageTask, StageTaskType, UpdateStrategySpec,
};
use flotilla_api::placement::strategy::ApplyStrategy;
use k8s_openapi::jiff::Timestamp;

use super::assignment::{AssignError, ClusterLabels, assign};
use super::conditions::Stamp;
use super::reason::{INITIALIZED, UPDATE_RUN_INITIALIZED};
use super::{TaskPosition, approval_request_name, wait_time};
use crate::overrides::ClusterOverrides;

/// What a run is initialized from.
pub struct InitInput<'a> {
    /// The run's kind, for the messages (`ClusterStagedUpdateRun`).
    pub kind: &'a str,
    /// The run's name.
    pub run: &'a str,
    /// The run's generation.
    pub generation: i64,
    /// The strategy it follows.
    pub strategy: &'a UpdateStrategySpec,
    /// The index of the placement's latest policy snapshot.
    pub policy_index: &'a str,
    /// The number of clusters that snapshot's policy asks for, or schedules (PickAll).
    pub observed_cluster_count: i64,
    /// The index of the resource snapshot to roll out.
    pub resource_index: &'a str,
    /// The placement's apply strategy.
    pub apply_strategy: Option<ApplyStrategy>,
    /// The clusters scheduled for the placement.
    pub clusters: &'a [ClusterLabels<'a>],
    /// The override snapshots each cluster gets.
    pub overrides: &'a dyn Fn(&str) -> ClusterOverrides,
    /// Clusters whose bindings are no longer scheduled (the deletion stage's).
    pub leaving: &'a [String],
    /// Now.
    pub now: Timestamp,
}

/// The initialized status, or why the clusters do not fit the strategy's stages.
pub fn initialize(input: &InitInput<'_>) -> Result<UpdateRunStatus, AssignError> {
    let strategy = canonical(input.strategy)?;
    let assigned = assign(&strategy.stages, input.clusters)?;
    let stages = strategy
        .stages
        .iter()
        .zip(assigned)
        .map(|(stage, clusters)| StageUpdatingStatus {
            stage_name: stage.name.clone(),
            clusters: clusters
                .into_iter()
                .map(|name| cluster_status(name, input.overrides))
                .collect(),
            after_stage_task_status: tasks(
                input.run,
                &stage.name,
                TaskPosition::After,
                &stage.after_stage_tasks,
            ),
            before_stage_task_status: tasks(
                input.run,
                &stage.name,
                TaskPosition::Before,
                &stage.before_stage_tasks,
            ),
            ..Default::default()
        })
        .collect();
    let mut status = UpdateRunStatus {
        policy_snapshot_index_used: Some(input.policy_index.to_string()),
        policy_observed_cluster_count: Some(input.observed_cluster_count),
        resource_snapshot_index_used: Some(input.resource_index.to_string()),
        applied_strategy: input.apply_strategy.clone(),
        staged_update_strategy_snapshot: Some(strategy),
        stages_status: Some(stages),
        deletion_stage_status: Some(StageUpdatingStatus {
            stage_name: DELETE_STAGE_NAME.to_string(),
            clusters: input
                .leaving
                .iter()
                .map(|name| ClusterUpdatingStatus {
                    cluster_name: name.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        conditions: None,
    };
    Stamp {
        generation: input.generation,
        now: input.now,
    }
    .set(
        &mut status.conditions,
        INITIALIZED,
        "True",
        UPDATE_RUN_INITIALIZED,
        format!("{} initialized successfully", input.kind),
    );
    Ok(status)
}

/// The strategy with every wait time in Go's canonical form (`1h` → `1h0m0s`).
fn canonical(strategy: &UpdateStrategySpec) -> Result<UpdateStrategySpec, AssignError> {
    let mut strategy = strategy.clone();
    for stage in &mut strategy.stages {
        for task in stage.after_stage_tasks.iter_mut().flatten() {
            let Some(text) = &task.wait_time else {
                continue;
            };
            let parsed = wait_time::parse(text).ok_or_else(|| AssignError::InvalidWaitTime {
                stage: stage.name.clone(),
                value: text.clone(),
            })?;
            task.wait_time = Some(wait_time::format(parsed));
        }
    }
    Ok(strategy)
}

fn cluster_status(
    name: String,
    overrides: &dyn Fn(&str) -> ClusterOverrides,
) -> ClusterUpdatingStatus {
    let applicable = overrides(&name);
    ClusterUpdatingStatus {
        resource_override_snapshots: Some(applicable.resource_overrides).filter(|o| !o.is_empty()),
        cluster_resource_override_snapshots: Some(applicable.cluster_resource_overrides)
            .filter(|o| !o.is_empty()),
        cluster_name: name,
        conditions: None,
    }
}

fn tasks(
    run: &str,
    stage: &str,
    position: TaskPosition,
    tasks: &Option<Vec<StageTask>>,
) -> Option<Vec<StageTaskStatus>> {
    let tasks = tasks.as_ref().filter(|t| !t.is_empty())?;
    Some(
        tasks
            .iter()
            .map(|task| StageTaskStatus {
                type_: task.type_,
                approval_request_name: (task.type_ == StageTaskType::Approval)
                    .then(|| approval_request_name(run, stage, position)),
                conditions: None,
            })
            .collect(),
    )
}
