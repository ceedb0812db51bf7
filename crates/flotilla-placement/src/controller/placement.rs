//! The `ClusterResourcePlacement` controller: one reconcile brings a placement's snapshots,
//! bindings, rollout and status up to date.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::snapshots::IS_LATEST_SNAPSHOT_LABEL;
use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourceOverrideSnapshot, ClusterResourcePlacement,
    ClusterSchedulingPolicySnapshot, ResourceOverrideSnapshot,
};
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::finalizer;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ListParams;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::binding_cache::BindingCache;
use super::discovery::HubKinds;
use super::naming::{PARENT_PLACEMENT_LABEL, PLACEMENT_FINALIZER};
use super::scheduling::{self, Cycle};
use super::snapshots;
use super::writes::Written;
use super::{ControllerError, changes, placement_status, rolling, writes};
use crate::overrides::{ApplicableOverrides, ClusterOverrides, ClusterView};
use crate::snapshot::Owner;
use crate::snapshot::policy::effective_policy;

/// How soon a reconcile that found the binding cache behind the controller's own writes
/// looks again (the watch event it waits for normally triggers it sooner).
const CACHE_BEHIND_RETRY: Duration = Duration::from_millis(100);

/// What every reconcile shares.
pub(crate) struct Context {
    pub client: Client,
    pub clock: Arc<dyn Clock>,
    pub windows: EligibilityWindows,
    pub kinds: HubKinds,
    pub clusters: Store<MemberCluster>,
    pub bindings: Arc<BindingCache>,
    pub deadlines: Deadlines<ObjectRef<ClusterResourcePlacement>>,
}

/// Runs the placement controller until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let placements: Api<ClusterResourcePlacement> = Api::all(client.clone());
    let (clusters, cluster_writer) = reflector::store();
    let cluster_events = reflector(
        cluster_writer,
        watcher(
            Api::<MemberCluster>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .applied_objects();
    let (placement_store, placement_writer) = reflector::store();
    let placement_events = reflector(
        placement_writer,
        watcher(placements.clone(), watcher::Config::default()),
    )
    .touched_objects()
    .default_backoff();
    let (bindings, binding_events) = BindingCache::watch(client.clone());
    let ctx = Arc::new(Context {
        bindings,
        client: client.clone(),
        clock: clock.clone(),
        windows: EligibilityWindows::default(),
        kinds: HubKinds::new(client.clone()),
        clusters,
        deadlines: deadlines.clone(),
    });
    tokio::spawn(changes::watch_clusters(
        cluster_events,
        placement_store.clone(),
        deadlines.clone(),
        clock.clone(),
    ));
    tokio::spawn(changes::watch_resources(
        client.clone(),
        placement_store.clone(),
        deadlines,
        clock,
    ));
    let by_parent = |labels: &std::collections::BTreeMap<String, String>| {
        labels
            .get(PARENT_PLACEMENT_LABEL)
            .map(|parent| ObjectRef::new(parent))
    };
    Controller::for_stream(placement_events, placement_store.clone())
        .watches_stream(binding_events, move |b| by_parent(b.labels()))
        .watches(
            Api::<ClusterSchedulingPolicySnapshot>::all(client.clone()),
            watcher::Config::default(),
            move |s| by_parent(s.labels()),
        )
        .watches(
            Api::<ClusterResourceOverrideSnapshot>::all(client.clone()),
            watcher::Config::default(),
            every_placement(placement_store.clone()),
        )
        .watches(
            Api::<ResourceOverrideSnapshot>::all(client.clone()),
            watcher::Config::default(),
            every_placement(placement_store.clone()),
        )
        .reconcile_on(due)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "placement reconcile");
            }
        })
        .await;
}

/// A mapper sending any change to every placement: new override snapshots may apply to any.
fn every_placement<T>(
    placements: Store<ClusterResourcePlacement>,
) -> impl Fn(T) -> Vec<ObjectRef<ClusterResourcePlacement>> + Send + Sync + 'static {
    move |_| {
        placements
            .state()
            .iter()
            .map(|p| ObjectRef::from_obj(&**p))
            .collect()
    }
}

fn error_policy(
    crp: Arc<ClusterResourcePlacement>,
    error: &ControllerError,
    _: Arc<Context>,
) -> Action {
    error.retry(&format!("placement {}", crp.name_any()))
}

async fn reconcile(
    crp: Arc<ClusterResourcePlacement>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    let api: Api<ClusterResourcePlacement> = Api::all(ctx.client.clone());
    let name = crp.name_any();
    if crp.metadata.deletion_timestamp.is_some() {
        return delete(&api, &crp, &ctx).await;
    }
    if !finalizer::has(&*crp, PLACEMENT_FINALIZER) {
        finalizer::add(&api, &crp, PLACEMENT_FINALIZER).await?;
        return Ok(Action::await_change());
    }
    let owner = Owner {
        name: name.clone(),
        generation: crp.metadata.generation.unwrap_or_default(),
        reference: owner_reference(&crp),
    };
    let Some(bindings) = ctx.bindings.of(&name) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    let policy_snapshot = snapshots::sync_policy(&ctx.client, &crp, &owner).await?;
    let resources = snapshots::sync_resources(&ctx.client, &ctx.kinds, &crp, &owner).await?;
    let clusters: Vec<MemberCluster> = ctx.clusters.state().iter().map(|c| (**c).clone()).collect();
    let now = ctx.clock.now();
    let (decision, changed) = scheduling::run(
        &ctx.client,
        &ctx.bindings,
        &clusters,
        Cycle {
            crp: &crp,
            owner: &owner.reference,
            snapshot: &policy_snapshot,
            bindings: &bindings,
            now,
            windows: ctx.windows,
        },
    )
    .await?;
    if decision.requeue || changed {
        // The binding writes come back through the watch; the next reconcile continues.
        return Ok(Action::await_change());
    }
    let policy = effective_policy(&policy_snapshot);
    let cluster_overrides = latest_overrides(&ctx.client).await?;
    let applicable = ApplicableOverrides::select(
        &name,
        &resources.selection.manifests,
        &cluster_overrides.0,
        &cluster_overrides.1,
    );
    let overrides_for = |cluster: &str| -> ClusterOverrides {
        let Some(member) = ctx.clusters.get(&ObjectRef::new(cluster)) else {
            return ClusterOverrides::default();
        };
        applicable
            .for_cluster(ClusterView::from(&*member))
            .unwrap_or_else(|e| {
                tracing::warn!(placement = %name, %cluster, error = %e, "override rules unusable");
                ClusterOverrides::default()
            })
    };
    let target = rolling::Target {
        snapshot: &resources.name,
        overrides: &overrides_for,
        crp: &crp,
        policy: &policy,
    };
    let (changed, recheck_at) =
        rolling::run(&ctx.client, &ctx.bindings, &target, &bindings, now).await?;
    if let Some(at) = recheck_at {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*crp));
    }
    if changed {
        return Ok(Action::await_change());
    }
    // The scheduler's status write may be newer than the snapshot read above.
    let policy_snapshot = Api::<ClusterSchedulingPolicySnapshot>::all(ctx.client.clone())
        .get(&policy_snapshot.name_any())
        .await?;
    placement_status::write(
        &ctx.client,
        &placement_status::StatusInput {
            crp: &crp,
            resources: &resources,
            snapshots: &resources.snapshots,
            policy_snapshot: &policy_snapshot,
            bindings: &bindings,
            now,
        },
    )
    .await?;
    Ok(Action::await_change())
}

/// The latest ClusterResourceOverride and ResourceOverride snapshots.
async fn latest_overrides(
    client: &Client,
) -> Result<
    (
        Vec<ClusterResourceOverrideSnapshot>,
        Vec<ResourceOverrideSnapshot>,
    ),
    kube::Error,
> {
    let latest = ListParams::default().labels(&format!("{IS_LATEST_SNAPSHOT_LABEL}=true"));
    let cluster = Api::<ClusterResourceOverrideSnapshot>::all(client.clone())
        .list(&latest)
        .await?
        .items;
    let namespaced = Api::<ResourceOverrideSnapshot>::all(client.clone())
        .list(&latest)
        .await?
        .items;
    Ok((cluster, namespaced))
}

/// Deleting a placement: its bindings go first (each waits for its Works, and so for the
/// members to remove the placed resources), then the finalizer. Snapshots and bindings are
/// owned by the placement, so the hub's garbage collector removes what is left.
async fn delete(
    api: &Api<ClusterResourcePlacement>,
    crp: &ClusterResourcePlacement,
    ctx: &Context,
) -> Result<Action, ControllerError> {
    let name = crp.name_any();
    let Some(bindings) = ctx.bindings.of(&name) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    if bindings.is_empty() {
        tracing::info!(placement = %name, "placement deleted; its members are clean");
        finalizer::remove(api, crp, PLACEMENT_FINALIZER).await?;
        ctx.bindings.forget(&name);
        return Ok(Action::await_change());
    }
    let binding_api: Api<ClusterResourceBinding> = Api::all(ctx.client.clone());
    let pending: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = bindings
        .iter()
        .filter(|b| b.metadata.deletion_timestamp.is_none())
        .map(|b| writes::delete(&binding_api, b.meta().name.as_deref().unwrap_or_default()).boxed())
        .collect();
    ctx.bindings.record(&name, writes::all(pending).await)?;
    Ok(Action::await_change())
}

/// The owner reference snapshots and bindings of `crp` carry.
fn owner_reference(crp: &ClusterResourcePlacement) -> OwnerReference {
    OwnerReference {
        api_version: ClusterResourcePlacement::api_version(&()).into_owned(),
        kind: ClusterResourcePlacement::kind(&()).into_owned(),
        name: crp.name_any(),
        uid: crp.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
