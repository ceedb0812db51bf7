//! The staged update run controller: one reconcile per `ClusterStagedUpdateRun` initializes
//! it ([`start`]) and then runs passes of [`crate::update_run::execute`] ([`pass`]) until it
//! succeeds or fails. It is woken by its run, by the bindings and policy snapshots of the
//! run's placement, by its approval requests, and at the times a pass asks to look again (the
//! end of a TimedWait, the moment a cluster would become stuck).

mod pass;
mod start;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::placement::snapshots::PARENT_PLACEMENT_LABEL;
use flotilla_api::placement::{
    ClusterApprovalRequest, ClusterResourceBinding, ClusterSchedulingPolicySnapshot,
    ClusterStagedUpdateRun,
};
use flotilla_apiserver::clock::{Clock, Deadlines};
use futures::StreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};

use super::ControllerError;
use super::binding_cache::BindingCache;
use super::family::ClusterFamily;
use crate::placement_key::PlacementKey;
use crate::update_run::execute::{finished, initialized};
use crate::update_run::reason::INITIALIZED;

/// How soon a reconcile that found the binding cache behind its own writes looks again.
const CACHE_BEHIND_RETRY: Duration = Duration::from_millis(100);

/// What every reconcile shares.
pub(crate) struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    bindings: Arc<BindingCache<ClusterFamily>>,
    deadlines: Deadlines<ObjectRef<ClusterStagedUpdateRun>>,
}

/// Runs the staged update run controller until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let (bindings, binding_events) = BindingCache::<ClusterFamily>::watch(client.clone());
    let controller = Controller::new(
        Api::<ClusterStagedUpdateRun>::all(client.clone()),
        watcher::Config::default(),
    );
    let runs = controller.store();
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        bindings,
        deadlines,
    });
    controller
        .watches_stream(
            binding_events,
            runs_of::<ClusterResourceBinding>(runs.clone()),
        )
        .watches(
            Api::<ClusterSchedulingPolicySnapshot>::all(client.clone()),
            watcher::Config::default(),
            runs_of::<ClusterSchedulingPolicySnapshot>(runs),
        )
        .owns(
            Api::<ClusterApprovalRequest>::all(client),
            watcher::Config::default(),
        )
        .reconcile_on(due)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "update run reconcile");
            }
        })
        .await;
}

/// A mapper from a placement's record (binding, policy snapshot) to the runs of that
/// placement.
fn runs_of<K: Resource>(
    runs: Store<ClusterStagedUpdateRun>,
) -> impl Fn(K) -> Vec<ObjectRef<ClusterStagedUpdateRun>> + Send + Sync + 'static {
    move |record| {
        let Some(placement) = record
            .meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(PARENT_PLACEMENT_LABEL))
        else {
            return Vec::new();
        };
        runs.state()
            .iter()
            .filter(|run| &run.spec.placement_name == placement)
            .map(|run| ObjectRef::from_obj(&**run))
            .collect()
    }
}

/// Initializes the run, or runs one pass of it.
async fn reconcile(
    run: Arc<ClusterStagedUpdateRun>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    let status = run.status.clone().unwrap_or_default();
    let failed_to_start = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == INITIALIZED && c.status == "False");
    if run.metadata.deletion_timestamp.is_some() || finished(&status) || failed_to_start {
        return Ok(Action::await_change());
    }
    let key = PlacementKey::cluster(&run.spec.placement_name);
    let Some(bindings) = ctx.bindings.of(&key) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    let now = ctx.clock.now();
    if !initialized(&status) {
        return start::initialize(&ctx, &run, &key, &bindings, now).await;
    }
    pass::pass(&ctx, &run, status, &key, &bindings, now).await
}

fn error_policy(
    run: Arc<ClusterStagedUpdateRun>,
    error: &ControllerError,
    _: Arc<Context>,
) -> Action {
    error.retry(&format!("update run {}", run.name_any()))
}
