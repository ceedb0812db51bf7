//! The staged update run controllers: one reconcile per `ClusterStagedUpdateRun` (or
//! namespaced `StagedUpdateRun`, the same code over [`UpdateRunFamily`]) initializes it
//! ([`start`]) and then runs passes of [`crate::update_run::execute`] ([`pass`]) until it
//! succeeds or fails. Runs are handled in their working form, `ClusterStagedUpdateRun`. It is woken by its run, by the bindings and policy snapshots of the
//! run's placement, by its approval requests, and at the times a pass asks to look again (the
//! end of a TimedWait, the moment a cluster would become stuck).

mod pass;
mod start;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::placement::ClusterStagedUpdateRun;
use flotilla_api::placement::snapshots::PARENT_PLACEMENT_LABEL;
use flotilla_api::placement::staged_update_run::UpdateRunStatus;
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use kube::core::object::{HasSpec, HasStatus};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client, Resource};

use super::ControllerError;
use super::binding_cache::{BindingCache, Subscription};
use super::family::{ClusterFamily, NamespacedFamily, PlacementFamily, UpdateRunFamily, key_of};
use super::pacing::Pacing;
use crate::placement_key::PlacementKey;
use crate::update_run::execute::{finished, initialized};
use crate::update_run::reason::INITIALIZED;

/// How soon a reconcile that found the binding cache behind its own writes looks again.
const CACHE_BEHIND_RETRY: Duration = Duration::from_millis(100);

/// What every reconcile of family `F` shares.
pub(crate) struct Context<F: UpdateRunFamily> {
    client: Client,
    clock: Arc<dyn Clock>,
    bindings: Arc<BindingCache<F>>,
    deadlines: Deadlines<ObjectRef<F::Run>>,
    pacing: Pacing,
}

/// Runs the staged update run controllers of both scopes until the client's API goes away.
pub(crate) async fn run(
    client: Client,
    clock: Arc<dyn Clock>,
    cluster_bindings: Subscription<ClusterFamily>,
    namespaced_bindings: Subscription<NamespacedFamily>,
) {
    tokio::join!(
        run_family::<ClusterFamily>(client.clone(), clock.clone(), cluster_bindings),
        run_family::<NamespacedFamily>(client, clock, namespaced_bindings),
    );
}

/// Runs the controller of family `F`'s runs, on its share of the family's binding watch.
async fn run_family<F: UpdateRunFamily>(
    client: Client,
    clock: Arc<dyn Clock>,
    bindings: Subscription<F>,
) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let Subscription {
        cache: bindings,
        changes: binding_events,
    } = bindings;
    let queue = Queue::new(F::Run::kind(&()).to_lowercase());
    let controller = queue.controller(
        Api::<F::Run>::all(client.clone()),
        watcher::Config::default(),
    );
    let runs = controller.store();
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        bindings,
        deadlines,
        pacing: Pacing::default(),
    });
    let results = controller
        .watches_stream(
            Queue::watching(binding_events),
            queue.mapped(runs_of::<F, F::Binding>(runs.clone())),
        )
        .watches_stream(
            Queue::touched(
                Api::<F::PolicySnapshot>::all(client.clone()),
                watcher::Config::default(),
            ),
            queue.mapped(runs_of::<F, F::PolicySnapshot>(runs)),
        )
        .watches_stream(
            Queue::touched(Api::<F::Approval>::all(client), watcher::Config::default()),
            queue.mapped(owning_run::<F>),
        )
        .reconcile_on(queue.triggered(due))
        .run(queue.instrument(reconcile::<F>), error_policy::<F>, ctx);
    queue.drive(results).await;
}

/// The run that owns an approval request (its owner reference of the run's kind, in the
/// approval's namespace).
fn owning_run<F: UpdateRunFamily>(approval: F::Approval) -> Vec<ObjectRef<F::Run>> {
    let namespace = approval.meta().namespace.clone();
    approval
        .meta()
        .owner_references
        .iter()
        .flatten()
        .filter(|o| o.kind == F::Run::kind(&()))
        .map(|o| {
            let run = ObjectRef::new(&o.name);
            match &namespace {
                Some(ns) => run.within(ns),
                None => run,
            }
        })
        .collect()
}

/// A mapper from a placement's record (binding, policy snapshot) to the runs of that
/// placement (in the record's namespace, for the namespaced family).
fn runs_of<F: UpdateRunFamily, K: Resource>(
    runs: Store<F::Run>,
) -> impl Fn(K) -> Vec<ObjectRef<F::Run>> + Send + Sync + 'static {
    move |record| {
        let Some(placement) = record
            .meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(PARENT_PLACEMENT_LABEL))
        else {
            return Vec::new();
        };
        let namespace = record.meta().namespace.clone();
        runs.state()
            .iter()
            .filter(|run| {
                run.meta().namespace == namespace && &run.spec().placement_name == placement
            })
            .map(|run| ObjectRef::from_obj(&**run))
            .collect()
    }
}

/// A run in its working form.
fn working<F: UpdateRunFamily>(run: &F::Run) -> ClusterStagedUpdateRun {
    run.clone().into()
}

/// Initializes the run, or runs one pass of it. What decides whether to take a pass at all
/// (finished, paced) is read in place: most wake-ups of a large run are paced, and its working
/// form is a copy of megabytes.
async fn reconcile<F: UpdateRunFamily>(
    run: Arc<F::Run>,
    ctx: Arc<Context<F>>,
) -> Result<Action, ControllerError> {
    let unset = UpdateRunStatus::default();
    let read = run.status().unwrap_or(&unset);
    let failed_to_start = read
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == INITIALIZED && c.status == "False");
    let run_path = key_of(&*run);
    let run_key = run_path.to_string();
    if run.meta().deletion_timestamp.is_some() || finished(read) || failed_to_start {
        ctx.pacing.forget(&run_key);
        return Ok(Action::await_change());
    }
    let key = PlacementKey::of(run_path.namespace(), &run.spec().placement_name);
    if let Some(wait) = ctx.pacing.wait(&run_key) {
        return Ok(Action::requeue(wait));
    }
    let Some(bindings) = ctx.bindings.of(&key) else {
        return Ok(Action::requeue(CACHE_BEHIND_RETRY));
    };
    ctx.pacing.taken(&run_key, bindings.len());
    let run = working::<F>(&run);
    let status = run.status.clone().unwrap_or_default();
    let now = ctx.clock.now();
    if !initialized(&status) {
        return start::initialize::<F>(&ctx, &run, &key, &bindings, now).await;
    }
    pass::pass::<F>(&ctx, &run, status, &key, &bindings, now).await
}

fn error_policy<F: UpdateRunFamily>(
    run: Arc<F::Run>,
    error: &ControllerError,
    _: Arc<Context<F>>,
) -> Action {
    error.retry(&format!("update run {}", key_of(&*run)))
}

/// The kind of family `F`'s placements, for messages.
fn placement_kind<F: PlacementFamily>() -> &'static str {
    F::KIND.prefix()
}
