//! One reconcile of a placement of either family: its policy and resource snapshots, the
//! scheduler's bindings, a rollout round and its status, brought up to date; or, when it is
//! being deleted, its bindings removed first.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::placement::snapshots::IS_LATEST_SNAPSHOT_LABEL;
use flotilla_api::placement::{
    ClusterResourceOverrideSnapshot, ClusterSchedulingPolicySnapshot, ResourceOverrideSnapshot,
};
use flotilla_apiserver::finalizer;
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, Resource};

use super::family::{Parent, PlacementFamily, api, owner_reference};
use super::naming::PLACEMENT_FINALIZER;
use super::placement::Context;
use super::scheduling::{self, Cycle};
use super::writes::Written;
use super::{ControllerError, placement_status, rolling, snapshots, writes};
use crate::overrides::{ApplicableOverrides, ClusterOverrides, ClusterView};
use crate::snapshot::Owner;
use crate::snapshot::policy::effective_policy;

/// How soon a reconcile that found the binding cache behind the controller's own writes
/// looks again (the watch event it waits for normally triggers it sooner).
const CACHE_BEHIND_RETRY: Duration = Duration::from_millis(100);

/// Brings one placement's snapshots, bindings, rollout and status up to date.
pub(crate) async fn reconcile<F: PlacementFamily>(
    placement: Arc<F::Placement>,
    ctx: Arc<Context<F>>,
) -> Result<Action, ControllerError> {
    let parent = Parent::of(&*placement);
    let placements = api::<F::Placement>(&ctx.client, &parent.key);
    let paced = parent.key.to_string();
    if parent.meta.deletion_timestamp.is_some() {
        ctx.pacing.forget(&paced);
        return delete(&placements, &*placement, &parent, &ctx).await;
    }
    if !finalizer::has(&*placement, PLACEMENT_FINALIZER) {
        finalizer::add(&placements, &*placement, PLACEMENT_FINALIZER).await?;
        return Ok(Action::await_change());
    }
    let owner = Owner {
        name: parent.key.name.clone(),
        generation: parent.generation(),
        reference: owner_reference(&*placement),
    };
    if let Some(wait) = ctx.pacing.wait(&paced) {
        return Ok(Action::requeue(wait));
    }
    let Some(bindings) = ctx.bindings.of(&parent.key) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    ctx.pacing.taken(&paced, bindings.len());
    let policy_snapshot = snapshots::sync_policy::<F>(&ctx.client, &parent, &owner).await?;
    let resources =
        snapshots::sync_resources::<F>(&ctx.client, &ctx.kinds, &parent, &owner).await?;
    let clusters = ctx.clusters.state();
    let now = ctx.clock.now();
    let policy = effective_policy(&policy_snapshot);
    let cluster_overrides = latest_overrides(&ctx.client).await?;
    let applicable = ApplicableOverrides::select(
        &parent.key,
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
                tracing::warn!(placement = %parent.key, %cluster, error = %e, "override rules unusable");
                ClusterOverrides::default()
            })
    };
    let target = rolling::Target {
        snapshot: &resources.name,
        overrides: &overrides_for,
        parent: &parent,
        policy: &policy,
    };
    let (decision, changed) = scheduling::run(
        &ctx.client,
        &ctx.bindings,
        &clusters,
        Cycle {
            parent: &parent,
            owner: &owner.reference,
            snapshot: &policy_snapshot,
            bindings: &bindings,
            now,
            windows: ctx.windows,
        },
        &target,
    )
    .await?;
    if decision.requeue || changed {
        // The binding writes come back through the watch; the next reconcile continues.
        return Ok(Action::await_change());
    }
    let (changed, recheck_at) =
        rolling::run(&ctx.client, &ctx.bindings, &target, &bindings, now).await?;
    if let Some(at) = recheck_at {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*placement));
    }
    if changed {
        return Ok(Action::await_change());
    }
    // The scheduler's status write may be newer than the snapshot read above.
    let policy_snapshot: ClusterSchedulingPolicySnapshot =
        api::<F::PolicySnapshot>(&ctx.client, &parent.key)
            .get(policy_snapshot.metadata.name.as_deref().unwrap_or_default())
            .await?
            .into();
    placement_status::write::<F>(
        &ctx.client,
        &placement_status::StatusInput {
            parent: &parent,
            resources: &resources,
            snapshots: &resources.snapshots,
            policy_snapshot: &policy_snapshot,
            bindings: &bindings,
            now,
        },
        &ctx.recorder,
    )
    .await?;
    Ok(Action::await_change())
}

/// The latest ClusterResourceOverride and ResourceOverride snapshots.
pub(crate) async fn latest_overrides(
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
/// members to remove the placed resources), then its snapshots, then the finalizer (so a new
/// placement of the same name never finds its predecessor's). Snapshots and bindings are
/// also owned by the placement, for the garbage collector.
async fn delete<F: PlacementFamily>(
    placements: &Api<F::Placement>,
    placement: &F::Placement,
    parent: &Parent<'_>,
    ctx: &Context<F>,
) -> Result<Action, ControllerError> {
    let key = &parent.key;
    let Some(bindings) = ctx.bindings.of(key) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    if bindings.is_empty() {
        snapshots::delete_all::<F>(&ctx.client, key).await?;
        tracing::info!(placement = %key, "placement deleted; its members are clean");
        finalizer::remove(placements, placement, PLACEMENT_FINALIZER).await?;
        ctx.bindings.forget(key);
        return Ok(Action::await_change());
    }
    let binding_api = api::<F::Binding>(&ctx.client, key);
    let pending: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = bindings
        .iter()
        .filter(|b| b.metadata.deletion_timestamp.is_none())
        .map(|b| writes::delete(&binding_api, b.meta().name.as_deref().unwrap_or_default()).boxed())
        .collect();
    ctx.bindings.record(key, writes::all(pending).await)?;
    Ok(Action::await_change())
}
