//! Initializing a run: reading what [`crate::update_run::init`] needs from the hub (the
//! placement, the strategy, the latest policy snapshot, the resource snapshot, the member
//! clusters and the overrides) and writing the run's first status. What may yet appear (the
//! placement, the strategy, a snapshot, the scheduler's decision) leaves the run
//! `Initialized=Unknown` and is looked at again; what cannot work (a placement not under the
//! External strategy, clusters that do not fit the stages) fails it for good.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::conditions::is_true;
use flotilla_api::placement::policy::PlacementType;
use flotilla_api::placement::snapshots::POLICY_INDEX_LABEL;
use flotilla_api::placement::strategy::RolloutStrategyType;
use flotilla_api::placement::{
    BindingState, ClusterResourceBinding, ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot,
    ClusterStagedUpdateRun, ClusterStagedUpdateStrategy,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::ListParams;
use kube::core::object::HasSpec;
use kube::runtime::controller::Action;
use kube::{Api, Client, Resource};
use serde_json::json;

use super::{Context, placement_kind};
use crate::controller::family::{PlacementFamily, UpdateRunFamily, api};
use crate::controller::reconcile::latest_overrides;
use crate::controller::snapshots::{manifests, owned};
use crate::controller::{ControllerError, writes};
use crate::overrides::{ApplicableOverrides, ClusterOverrides, ClusterView};
use crate::placement_key::PlacementKey;
use crate::snapshot::policy::{effective_policy, latest};
use crate::snapshot::resource::latest_index;
use crate::update_run::assignment::ClusterLabels;
use crate::update_run::conditions::Stamp;
use crate::update_run::init::{InitInput, initialize as initial_status};
use crate::update_run::reason::{
    INITIALIZED, UPDATE_RUN_INITIALIZE_FAILED, UPDATE_RUN_INITIALIZING,
};

/// How soon a run waiting for something to appear looks again.
const WAITING_RETRY: Duration = Duration::from_secs(2);

/// Why a run is not initialized yet.
enum NotYet {
    /// Something may yet appear: look again.
    Waiting(String),
    /// It cannot work.
    Failed(String),
}

/// Initializes `run` from the hub, or says why not in its `Initialized` condition.
pub(super) async fn initialize<F: UpdateRunFamily>(
    ctx: &Context<F>,
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
    bindings: &[Arc<ClusterResourceBinding>],
    now: Timestamp,
) -> Result<Action, ControllerError> {
    let api = api::<F::Run>(&ctx.client, key);
    let generation = run.metadata.generation.unwrap_or_default();
    let stamp = Stamp { generation, now };
    let (status, next) = match prepare::<F>(&ctx.client, run, key, bindings, now).await? {
        Ok(status) => {
            tracing::info!(run = %key.name, "update run initialized");
            (status, Action::await_change())
        }
        Err(NotYet::Waiting(message)) => {
            let mut status = run.status.clone().unwrap_or_default();
            stamp.set(
                &mut status.conditions,
                INITIALIZED,
                "Unknown",
                UPDATE_RUN_INITIALIZING,
                message,
            );
            (status, Action::requeue(WAITING_RETRY))
        }
        Err(NotYet::Failed(message)) => {
            let mut status = run.status.clone().unwrap_or_default();
            stamp.set(
                &mut status.conditions,
                INITIALIZED,
                "False",
                UPDATE_RUN_INITIALIZE_FAILED,
                message,
            );
            (status, Action::await_change())
        }
    };
    if Some(&status) != run.status.as_ref() {
        writes::status(&api, &run.metadata, json!(status)).await?;
    }
    Ok(next)
}

/// The run's initial status, or why there is none yet.
async fn prepare<F: UpdateRunFamily>(
    client: &Client,
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
    bindings: &[Arc<ClusterResourceBinding>],
    now: Timestamp,
) -> Result<Result<flotilla_api::placement::UpdateRunStatus, NotYet>, ControllerError> {
    let name = &key.name;
    let kind = placement_kind::<F>();
    let waiting = |message: String| Ok(Err(NotYet::Waiting(message)));
    let failed = |message: String| Ok(Err(NotYet::Failed(message)));
    let Some(placement) = api::<F::Placement>(client, key).get_opt(name).await? else {
        return waiting(format!("{kind} {name} does not exist"));
    };
    if placement.meta().deletion_timestamp.is_some() {
        return failed(format!("{kind} {name} is being deleted"));
    }
    let placement_strategy = placement.spec().strategy.clone();
    let strategy_type = placement_strategy
        .as_ref()
        .and_then(|s| s.type_)
        .unwrap_or_default();
    if strategy_type != RolloutStrategyType::External {
        return failed(format!(
            "{kind} {name} has rollout strategy {strategy_type:?}; a staged update run needs spec.strategy.type External"
        ));
    }
    let strategy_name = &run.spec.staged_rollout_strategy_name;
    let strategy_kind = F::Strategy::kind(&());
    let Some(strategy) = api::<F::Strategy>(client, key)
        .get_opt(strategy_name)
        .await?
    else {
        return waiting(format!("{strategy_kind} {strategy_name} does not exist"));
    };
    let strategy: ClusterStagedUpdateStrategy = strategy.into();
    let Some((policy, policy_index)) = latest_policy::<F>(client, key).await? else {
        return waiting(format!(
            "{kind} {name} has no scheduling policy snapshot yet"
        ));
    };
    let policy_name = policy.metadata.name.clone().unwrap_or_default();
    let scheduled = policy
        .status
        .as_ref()
        .is_some_and(|s| is_true(&s.conditions, "Scheduled"));
    if !scheduled {
        return waiting(format!(
            "scheduling policy snapshot {policy_name} is not scheduled yet"
        ));
    }
    let (targets, leaving) = split(bindings);
    if targets
        .iter()
        .any(|b| b.spec.scheduling_policy_snapshot_name != policy_name)
    {
        return waiting(format!(
            "the bindings of {kind} {name} do not all follow policy snapshot {policy_name} yet"
        ));
    }
    let resource_index = match resource_index::<F>(client, run, key).await? {
        Ok(index) => index,
        Err(not_yet) => return Ok(Err(not_yet)),
    };
    let Some(selected) = manifests::<F>(client, key, resource_index).await? else {
        return waiting(format!(
            "resource snapshot {resource_index} of {name} is not complete yet"
        ));
    };
    let members: BTreeMap<String, MemberCluster> = Api::<MemberCluster>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .map(|m| (m.metadata.name.clone().unwrap_or_default(), m))
        .collect();
    let (cluster_overrides, resource_overrides) = latest_overrides(client).await?;
    let applicable =
        ApplicableOverrides::select(key, &selected, &cluster_overrides, &resource_overrides);
    let overrides = |cluster: &str| -> ClusterOverrides {
        members
            .get(cluster)
            .and_then(|m| applicable.for_cluster(ClusterView::from(m)).ok())
            .unwrap_or_default()
    };
    let no_labels = BTreeMap::new();
    let clusters: Vec<ClusterLabels<'_>> = targets
        .iter()
        .map(|b| ClusterLabels {
            name: &b.spec.target_cluster,
            labels: members
                .get(&b.spec.target_cluster)
                .and_then(|m| m.metadata.labels.as_ref())
                .unwrap_or(&no_labels),
        })
        .collect();
    let policy_spec = effective_policy(&policy);
    let cluster_count = cluster_count(&policy_spec, clusters.len());
    let leaving: Vec<String> = leaving
        .iter()
        .map(|b| b.spec.target_cluster.clone())
        .collect();
    let index_text = resource_index.to_string();
    let status = initial_status(&InitInput {
        kind: &F::Run::kind(&()),
        run: run.metadata.name.as_deref().unwrap_or_default(),
        generation: run.metadata.generation.unwrap_or_default(),
        strategy: &strategy.spec,
        policy_index: &policy_index,
        observed_cluster_count: cluster_count,
        resource_index: &index_text,
        apply_strategy: placement_strategy.and_then(|s| s.apply_strategy),
        clusters: &clusters,
        overrides: &overrides,
        leaving: &leaving,
        now,
    });
    Ok(status.map_err(|e| NotYet::Failed(e.to_string())))
}

/// The latest scheduling policy snapshot of the placement `key` (working form), with its index.
pub(super) async fn latest_policy<F: PlacementFamily>(
    client: &Client,
    key: &PlacementKey,
) -> Result<Option<(ClusterSchedulingPolicySnapshot, String)>, kube::Error> {
    let snapshots: Vec<ClusterSchedulingPolicySnapshot> = owned::<F::PolicySnapshot>(client, key)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(latest(&snapshots).map(|policy| {
        let index = policy
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(POLICY_INDEX_LABEL))
            .cloned()
            .unwrap_or_default();
        (policy.clone(), index)
    }))
}

/// The bindings a run updates (Scheduled or Bound) and those its deletion stage removes
/// (Unscheduled); bindings being deleted are neither.
pub(super) fn split(
    bindings: &[Arc<ClusterResourceBinding>],
) -> (Vec<&ClusterResourceBinding>, Vec<&ClusterResourceBinding>) {
    let live = bindings
        .iter()
        .map(|b| &**b)
        .filter(|b| b.metadata.deletion_timestamp.is_none());
    live.partition(|b| b.spec.state != BindingState::Unscheduled)
}

/// The number of clusters a policy asks for: PickN's `numberOfClusters`, PickFixed's names,
/// or (PickAll) the `scheduled` clusters.
pub(super) fn cluster_count(
    policy: &flotilla_api::placement::policy::PlacementPolicy,
    scheduled: usize,
) -> i64 {
    match policy.placement_type.unwrap_or_default() {
        PlacementType::PickN => policy.number_of_clusters.map_or(0, i64::from),
        PlacementType::PickFixed => policy.cluster_names.as_ref().map_or(0, |n| n.len() as i64),
        PlacementType::PickAll => scheduled as i64,
    }
}

/// The resource snapshot index the run rolls out: `spec.resourceSnapshotIndex`, or the latest.
async fn resource_index<F: PlacementFamily>(
    client: &Client,
    run: &ClusterStagedUpdateRun,
    key: &PlacementKey,
) -> Result<Result<u64, NotYet>, ControllerError> {
    let existing: Vec<ClusterResourceSnapshot> = owned::<F::ResourceSnapshot>(client, key)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    let Some(latest) = latest_index(&existing) else {
        return Ok(Err(NotYet::Waiting(format!(
            "{} {} has no resource snapshot yet",
            placement_kind::<F>(),
            key.name
        ))));
    };
    let Some(wanted) = run.spec.resource_snapshot_index.as_deref() else {
        return Ok(Ok(latest));
    };
    let Ok(wanted) = wanted.parse::<u64>() else {
        return Ok(Err(NotYet::Failed(format!(
            "resourceSnapshotIndex {wanted:?} is not an index"
        ))));
    };
    let exists = existing.iter().any(|s| {
        crate::snapshot::resource::index_of(
            &key.name,
            s.metadata.name.as_deref().unwrap_or_default(),
        ) == Some(wanted)
    });
    Ok(match (exists, wanted > latest) {
        (true, _) => Ok(wanted),
        (false, true) => Err(NotYet::Waiting(format!(
            "resource snapshot index {wanted} of {} does not exist yet (the latest is {latest})",
            key.name
        ))),
        (false, false) => Err(NotYet::Failed(format!(
            "resource snapshot index {wanted} of {} no longer exists (pruned by revisionHistoryLimit; the latest is {latest})",
            key.name
        ))),
    })
}
