//! One pass of an initialized run: fail it if its placement changed under it, else read the
//! bindings and approval requests, let [`crate::update_run::execute::advance`] decide, make
//! the writes it asks for (bindings first, recorded in the binding cache), then write the
//! run's status.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::conditions::{NewCondition, find};
use flotilla_api::placement::approval_request::{
    APPROVAL_ACCEPTED_CONDITION, APPROVED_CONDITION, IS_LATEST_UPDATE_RUN_APPROVAL_LABEL,
    TARGET_UPDATE_RUN_LABEL, TARGET_UPDATING_STAGE_LABEL, TASK_TYPE_LABEL,
};
use flotilla_api::placement::staged_update_run::UpdateRunStatus;
use flotilla_api::placement::{
    ApprovalRequestSpec, ClusterApprovalRequest, ClusterResourceBinding, ClusterStagedUpdateRun,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;

use super::start::{cluster_count, latest_policy, split};
use super::{Context, placement_kind};
use crate::controller::ControllerError;
use crate::controller::family::{
    Object, UpdateRunFamily, api, key_of, object_ref, owner_reference,
};
use crate::controller::rolling::{bind, write_condition};
use crate::controller::writes::{self, Written};
use crate::overrides::ClusterOverrides;
use crate::placement_key::PlacementKey;
use crate::rollout::unavailable_period;
use crate::snapshot::policy::effective_policy;
use crate::snapshot::resource::first_chunk_name;
use crate::status::{ConditionType, reason};
use crate::update_run::TaskPosition;
use crate::update_run::binding::{RunTarget, view};
use crate::update_run::conditions::Stamp;
use crate::update_run::drift::{Observed, changed};
use crate::update_run::execute::{ApprovalState, Progress, RunAction, RunContext, advance, fail};
use crate::update_run::reason::{APPROVAL_ACCEPTED, PROGRESSING, UPDATE_RUN_STATUS_TOO_LARGE};

/// Runs one pass of `run`, whose status is `status`.
pub(super) async fn pass<F: UpdateRunFamily>(
    ctx: &Context<F>,
    run: &ClusterStagedUpdateRun,
    mut status: UpdateRunStatus,
    key: &PlacementKey,
    bindings: &[Arc<ClusterResourceBinding>],
    now: Timestamp,
) -> Result<Action, ControllerError> {
    let generation = run.metadata.generation.unwrap_or_default();
    let runs = api::<F::Run>(&ctx.client, key);
    if let Some(why) = drift::<F>(ctx, key, &status, bindings).await? {
        tracing::warn!(run = %run.name_any(), %why, "update run failed");
        fail(&mut status, &why, generation, now);
        write_status(&runs, run, &status, now).await?;
        return Ok(Action::await_change());
    }
    let index = status
        .resource_snapshot_index_used
        .clone()
        .unwrap_or_default();
    let snapshot = first_chunk_name(&key.name, index.parse().unwrap_or_default());
    let recorded = recorded_overrides(&status);
    let apply_strategy = status.applied_strategy.clone();
    let target = RunTarget {
        snapshot: &snapshot,
        apply_strategy: apply_strategy.as_ref(),
    };
    let period = unavailable_period(None);
    let views = bindings
        .iter()
        .map(|b| {
            let overrides = recorded
                .get(b.spec.target_cluster.as_str())
                .cloned()
                .unwrap_or_default();
            let seen = view(
                b,
                target,
                &overrides.cluster_resource_overrides,
                &overrides.resource_overrides,
                now,
                period,
            );
            (b.spec.target_cluster.clone(), seen)
        })
        .collect();
    let requests = approval_requests::<F>(ctx, run, key).await?;
    let approvals = requests
        .iter()
        .map(|(name, request)| (name.clone(), approval_state(request)))
        .collect();
    let progress = advance(
        &mut status,
        &RunContext {
            generation,
            namespace: key.namespace(),
            state: run.spec.state.unwrap_or_default(),
            bindings: &views,
            approvals: &approvals,
            now,
        },
    );
    carry_out(
        ctx, run, key, bindings, &requests, &recorded, &snapshot, &status, &progress, now,
    )
    .await?;
    if Some(&status) != run.status.as_ref() {
        write_status(&runs, run, &status, now).await?;
    }
    if let Some(at) = progress.recheck_at {
        ctx.deadlines
            .schedule(at, object_ref::<F::Run>(&key_of(run)));
    }
    Ok(Action::await_change())
}

/// Where a condition of an object at `generation` is written at `now`.
fn stamp(generation: Option<i64>, now: Timestamp) -> Stamp {
    Stamp {
        generation: generation.unwrap_or_default(),
        now,
    }
}

/// Writes the run's status: only what changed since the status read (hundreds of bytes per
/// cluster: the whole status of 10,000 clusters exceeds Kubernetes' 3 MiB request limit,
/// while a pass changes a few clusters of it). Should even the changes exceed the limit, the
/// run says so in its `Progressing` condition alone, rather than retrying in silence.
async fn write_status<K: Object>(
    runs: &Api<K>,
    run: &ClusterStagedUpdateRun,
    status: &UpdateRunStatus,
    now: Timestamp,
) -> Result<(), ControllerError> {
    let read = run.status.as_ref().map(|s| json!(s));
    match writes::status_changes(runs, &run.metadata, read.as_ref(), &json!(status)).await {
        Err(kube::Error::Api(e)) if e.code == 413 => {
            let clusters: usize = status
                .stages_status
                .iter()
                .flatten()
                .map(|s| s.clusters.len())
                .sum();
            let mut conditions = run.status.as_ref().and_then(|s| s.conditions.clone());
            let message = format!(
                "the run's status for {clusters} clusters is larger than the hub accepts in one write ({}); the run cannot record its progress: split the placement into smaller ones",
                e.message
            );
            stamp(run.metadata.generation, now).set(
                &mut conditions,
                PROGRESSING,
                "False",
                UPDATE_RUN_STATUS_TOO_LARGE,
                message,
            );
            tracing::warn!(run = %run.name_any(), clusters, "update run status too large to write");
            writes::status(runs, &run.metadata, json!({"conditions": conditions})).await?;
            Ok(())
        }
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// Why the run can no longer go on, if its placement changed under it.
async fn drift<F: UpdateRunFamily>(
    ctx: &Context<F>,
    key: &PlacementKey,
    status: &UpdateRunStatus,
    bindings: &[Arc<ClusterResourceBinding>],
) -> Result<Option<String>, ControllerError> {
    let Some((policy, policy_index)) = latest_policy::<F>(&ctx.client, key).await? else {
        return Ok(Some(format!(
            "{} {} has no scheduling policy snapshot any more",
            placement_kind::<F>(),
            key.name
        )));
    };
    let (targets, _) = split(bindings);
    let scheduled: Vec<&str> = targets
        .iter()
        .map(|b| b.spec.target_cluster.as_str())
        .collect();
    let observed = Observed {
        policy_index: &policy_index,
        cluster_count: cluster_count(&effective_policy(&policy), scheduled.len()),
        scheduled: &scheduled,
    };
    Ok(changed(status, &observed))
}

/// The override snapshots the run recorded for each cluster.
fn recorded_overrides(status: &UpdateRunStatus) -> BTreeMap<String, ClusterOverrides> {
    status
        .stages_status
        .iter()
        .flatten()
        .flat_map(|s| &s.clusters)
        .map(|c| {
            let overrides = ClusterOverrides {
                cluster_resource_overrides: c
                    .cluster_resource_override_snapshots
                    .clone()
                    .unwrap_or_default(),
                resource_overrides: c.resource_override_snapshots.clone().unwrap_or_default(),
            };
            (c.cluster_name.clone(), overrides)
        })
        .collect()
}

/// The run's approval requests by name.
async fn approval_requests<F: UpdateRunFamily>(
    ctx: &Context<F>,
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
) -> Result<BTreeMap<String, ClusterApprovalRequest>, kube::Error> {
    let params =
        ListParams::default().labels(&format!("{TARGET_UPDATE_RUN_LABEL}={}", run.name_any()));
    Ok(api::<F::Approval>(&ctx.client, key)
        .list(&params)
        .await?
        .items
        .into_iter()
        .map(|r| {
            let request: ClusterApprovalRequest = r.into();
            (request.name_any(), request)
        })
        .collect())
}

/// Whether a request is approved (for its current generation) and the approval accepted.
fn approval_state(request: &ClusterApprovalRequest) -> ApprovalState {
    let conditions = request
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let generation = request.metadata.generation;
    let approved = find(conditions, APPROVED_CONDITION).is_some_and(|c| {
        c.status == "True"
            && (c.observed_generation.is_none() || c.observed_generation == generation)
    });
    let accepted =
        find(conditions, APPROVAL_ACCEPTED_CONDITION).is_some_and(|c| c.status == "True");
    ApprovalState { approved, accepted }
}

/// Makes the writes a pass asked for: binding writes in parallel (recorded in the binding
/// cache), then approval requests.
#[allow(clippy::too_many_arguments)]
async fn carry_out<F: UpdateRunFamily>(
    ctx: &Context<F>,
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
    bindings: &[Arc<ClusterResourceBinding>],
    requests: &BTreeMap<String, ClusterApprovalRequest>,
    recorded: &BTreeMap<String, ClusterOverrides>,
    snapshot: &str,
    status: &UpdateRunStatus,
    progress: &Progress,
    now: Timestamp,
) -> Result<(), ControllerError> {
    let binding_api = api::<F::Binding>(&ctx.client, key);
    let by_cluster: BTreeMap<&str, &ClusterResourceBinding> = bindings
        .iter()
        .map(|b| (b.spec.target_cluster.as_str(), &**b))
        .collect();
    let run_name = run.name_any();
    let index = status
        .resource_snapshot_index_used
        .as_deref()
        .unwrap_or_default();
    let started = format!("Started by update run {run_name} with resource snapshot index {index}");
    let mut binding_writes: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = Vec::new();
    let mut request_writes: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = Vec::new();
    for action in &progress.actions {
        match action {
            RunAction::Bind { cluster } => {
                let Some(binding) = by_cluster.get(cluster.as_str()) else {
                    continue;
                };
                let overrides = recorded.get(cluster).cloned().unwrap_or_default();
                let api = &binding_api;
                let started = started.as_str();
                binding_writes.push(
                    async move {
                        let bound = bind::<F>(
                            api,
                            &binding.name_any(),
                            snapshot,
                            &overrides,
                            status.applied_strategy.as_ref(),
                        )
                        .await?;
                        let condition = NewCondition {
                            type_: ConditionType::RolloutStarted.as_str(),
                            status: "True",
                            reason: reason::ROLLOUT_STARTED,
                            message: started.to_string(),
                            observed_generation: bound.metadata.generation,
                        };
                        let written = write_condition(api, &bound, condition, now).await?;
                        Ok(written.or(Some(writes::revision(&bound))))
                    }
                    .boxed(),
                );
            }
            RunAction::Delete { cluster } => {
                let Some(binding) = by_cluster.get(cluster.as_str()) else {
                    continue;
                };
                let name = binding.name_any();
                let api = &binding_api;
                binding_writes.push(async move { writes::delete(api, &name).await }.boxed());
            }
            RunAction::RequestApproval {
                name,
                stage,
                position,
            } => {
                let request =
                    F::Approval::from(approval_request::<F>(run, key, name, stage, *position));
                let api = api::<F::Approval>(&ctx.client, key);
                request_writes.push(async move { writes::create(&api, &request).await }.boxed());
            }
            RunAction::AcceptApproval { name } => {
                let Some(request) = requests.get(name) else {
                    continue;
                };
                request_writes.push(accept::<F>(ctx, key, request, now).boxed());
            }
        }
    }
    ctx.bindings
        .record(key, writes::all(binding_writes).await)?;
    for result in writes::all(request_writes).await {
        result?;
    }
    Ok(())
}

/// The approval request for `run`'s task at `position` of `stage`.
fn approval_request<F: UpdateRunFamily>(
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
    name: &str,
    stage: &str,
    position: TaskPosition,
) -> ClusterApprovalRequest {
    let run_name = run.name_any();
    let labels = BTreeMap::from([
        (TARGET_UPDATE_RUN_LABEL.to_string(), run_name.clone()),
        (TARGET_UPDATING_STAGE_LABEL.to_string(), stage.to_string()),
        (TASK_TYPE_LABEL.to_string(), position.label().to_string()),
        (
            IS_LATEST_UPDATE_RUN_APPROVAL_LABEL.to_string(),
            "true".to_string(),
        ),
    ]);
    ClusterApprovalRequest {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: key.namespace().map(str::to_string),
            labels: Some(labels),
            owner_references: Some(vec![owner_reference(&F::Run::from(run.clone()))]),
            ..ObjectMeta::default()
        },
        spec: ApprovalRequestSpec {
            parent_stage_rollout: run_name,
            target_stage: stage.to_string(),
        },
        status: None,
    }
}

/// Sets `ApprovalAccepted` on an approved request, keeping its other conditions.
async fn accept<F: UpdateRunFamily>(
    ctx: &Context<F>,
    key: &PlacementKey,
    request: &ClusterApprovalRequest,
    now: Timestamp,
) -> Result<Written, kube::Error> {
    let mut conditions = request.status.as_ref().and_then(|s| s.conditions.clone());
    stamp(request.metadata.generation, now).set(
        &mut conditions,
        APPROVAL_ACCEPTED_CONDITION,
        "True",
        APPROVAL_ACCEPTED,
        "The approval request has been approved and cannot be reverted",
    );
    let api = api::<F::Approval>(&ctx.client, key);
    writes::status(&api, &request.metadata, json!({"conditions": conditions})).await
}
