//! The work generator: for every bound `ClusterResourceBinding` or `ResourceBinding`, the
//! `Work` in its member's namespace carrying the binding's resource snapshot (with the
//! cluster's overrides applied), and the Work's status mirrored back into the binding's. One
//! controller per placement family; the Works are watched once and routed to the family of
//! their binding (a Work of a `ResourceBinding` names the binding's namespace in a label).
//!
//! A binding keeps a finalizer until its Works are gone, so deleting a binding (the rollout
//! removing an unscheduled cluster, or the placement being deleted) removes what was placed on
//! the member: the member agent deletes the applied objects before it lets the Work go.
//!
//! A binding is reconciled when its spec, finalizers or deletion change, or when one of its
//! Works does; not when only its status does (the generator writes most of that itself, and
//! the rollout's conditions do not concern it). A live binding's Work is read from the cache
//! the Work watch keeps, not listed from the hub on every reconcile: a cache that is behind
//! is caught up by the watch event that follows, which reconciles the binding again. Only a
//! binding being deleted lists its Works from the hub, since its finalizer must not come off
//! while the cache still misses a Work.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::placement::binding::ResourceBindingStatus;
use flotilla_api::placement::strategy::ApplyStrategyType;
use flotilla_api::placement::{
    BindingState, ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, Work,
};
use flotilla_apiserver::clock::Clock;
use flotilla_apiserver::finalizer;
use flotilla_apiserver::metrics::controller::Queue;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{Stream, StreamExt};
use kube::api::ListParams;
use kube::core::object::{HasSpec, HasStatus};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::binding_cache::Subscription;
use super::desired_work::{Desired, ManifestCache, desired_work};
use super::family::{ClusterFamily, NamespacedFamily, PlacementFamily, api_in};
use super::naming::{BINDING_FINALIZER, PARENT_BINDING_LABEL, PARENT_NAMESPACE_LABEL};
use super::written_statuses::WrittenStatuses;
use super::{ControllerError, writes};
use crate::status::{BindingWorks, OverrideOutcome, WorkSync, WorkView, binding_status};

/// Label on a Work with the resource snapshot index it carries.
pub const RESOURCE_INDEX_OF_WORK_LABEL: &str = "kubernetes-fleet.io/parent-resource-snapshot-index";

struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    /// Manifests of resource snapshots, read once per index.
    manifests: ManifestCache,
    /// Every Work of the hub, as the Work watch last saw it.
    works: Store<Work>,
    /// Binding statuses written and not yet seen back through the watch.
    written: WrittenStatuses,
}

/// Runs the work generator of both placement families until the client's API goes away.
pub(crate) async fn run(
    client: Client,
    clock: Arc<dyn Clock>,
    cluster_bindings: Subscription<ClusterFamily>,
    namespaced_bindings: Subscription<NamespacedFamily>,
) {
    let (works, works_writer) = reflector::store();
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        manifests: ManifestCache::default(),
        works,
        written: WrittenStatuses::default(),
    });
    let (cluster_tx, cluster_works) = unbounded();
    let (namespaced_tx, namespaced_works) = unbounded();
    tokio::spawn(route_works(client, works_writer, cluster_tx, namespaced_tx));
    tokio::join!(
        run_family::<ClusterFamily>(ctx.clone(), cluster_works, cluster_bindings),
        run_family::<NamespacedFamily>(ctx, namespaced_works, namespaced_bindings),
    );
}

/// Watches every Work once, keeping the cache `cache` writes, and sends each changed Work's
/// binding to its family's controller: a `ResourceBinding` when the Work names the binding's
/// namespace, else a `ClusterResourceBinding`.
async fn route_works(
    client: Client,
    cache: reflector::store::Writer<Work>,
    cluster: UnboundedSender<ObjectRef<ClusterResourceBinding>>,
    namespaced: UnboundedSender<ObjectRef<ResourceBinding>>,
) {
    let works = watcher(Api::<Work>::all(client), watcher::Config::default())
        .default_backoff()
        .reflect(cache)
        .touched_objects();
    let mut works = std::pin::pin!(works);
    while let Some(work) = works.next().await {
        let Ok(work) = work else { continue };
        let labels = work.labels();
        let Some(binding) = labels.get(PARENT_BINDING_LABEL) else {
            continue;
        };
        // A send fails only once its controller is gone, and then nobody is listening.
        match labels.get(PARENT_NAMESPACE_LABEL) {
            Some(namespace) => {
                let _ = namespaced.unbounded_send(ObjectRef::new(binding).within(namespace));
            }
            None => {
                let _ = cluster.unbounded_send(ObjectRef::new(binding));
            }
        }
    }
}

/// Runs the work generator of family `F` on its share of the family's binding watch, also
/// reconciling the bindings `works` names.
async fn run_family<F: PlacementFamily>(
    ctx: Arc<Context>,
    works: impl Stream<Item = ObjectRef<F::Binding>> + Send + 'static,
    bindings: Subscription<F>,
) {
    let cache = bindings.cache.store();
    let bindings = bindings
        .changes
        .predicate_filter(spec_or_lifecycle, Default::default());
    let queue = Queue::new(format!(
        "work-generator-{}",
        F::Binding::kind(&()).to_lowercase()
    ));
    let results = Controller::for_stream(queue.watched(bindings), cache)
        .reconcile_on(queue.triggered(works))
        .run(queue.instrument(reconcile::<F>), error_policy::<F>, ctx);
    queue.drive(results).await;
}

/// What of a binding wakes the generator: its spec (generation), finalizers and deletion.
fn spec_or_lifecycle(binding: &impl Resource) -> Option<u64> {
    let meta = binding.meta();
    let mut hasher = DefaultHasher::new();
    (
        meta.generation,
        &meta.finalizers,
        meta.deletion_timestamp.is_some(),
    )
        .hash(&mut hasher);
    Some(hasher.finish())
}

fn error_policy<F: PlacementFamily>(
    binding: Arc<F::Binding>,
    error: &ControllerError,
    _: Arc<Context>,
) -> Action {
    error.retry(&format!(
        "work generation for binding {}",
        binding.name_any()
    ))
}

async fn reconcile<F: PlacementFamily>(
    binding: Arc<F::Binding>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    // The binding's API: in its own namespace, for a `ResourceBinding`.
    let api = api_in::<F::Binding>(&ctx.client, binding.meta().namespace.as_deref());
    let spec = binding.spec();
    let namespace = format!("{MEMBER_NAMESPACE_PREFIX}{}", spec.target_cluster);
    let works_api: Api<Work> = Api::namespaced(ctx.client.clone(), &namespace);
    if binding.meta().deletion_timestamp.is_some() {
        ctx.written.forget(binding.meta());
        let works = works_api
            .list(&ListParams::default().labels(&work_selector(&*binding)))
            .await?
            .items;
        if works.is_empty() {
            finalizer::remove(&api, &*binding, BINDING_FINALIZER).await?;
        }
        for work in works
            .iter()
            .filter(|w| w.metadata.deletion_timestamp.is_none())
        {
            writes::delete(&works_api, &work.name_any()).await?;
        }
        return Ok(Action::await_change());
    }
    if !finalizer::has(&*binding, BINDING_FINALIZER) {
        finalizer::add(&api, &*binding, BINDING_FINALIZER).await?;
        return Ok(Action::await_change());
    }
    if spec.state != BindingState::Bound {
        return Ok(Action::await_change());
    }
    let generation = binding.meta().generation.unwrap_or_default();
    let (desired, overridden) =
        match desired_work::<F>(&ctx.client, &ctx.manifests, &*binding, &namespace).await? {
            Desired::Incomplete => return Ok(Action::requeue(Duration::from_secs(1))),
            Desired::OverrideFailed(message) => {
                write_status::<F>(&api, &binding, &ctx.written, |previous| {
                    binding_status(&BindingWorks {
                        generation,
                        report_diff: reports_diff(spec),
                        overrides: OverrideOutcome::Failed(&message),
                        sync: WorkSync::Written(&[]),
                        previous,
                        now: ctx.clock.now(),
                    })
                })
                .await?;
                return Ok(Action::await_change());
            }
            Desired::Work(work, overridden) => (*work, overridden),
        };
    let current = ctx.works.get(
        &ObjectRef::new(desired.metadata.name.as_deref().unwrap_or_default()).within(&namespace),
    );
    match current.as_deref() {
        Some(work) if work.spec == desired.spec && work.labels() == desired.labels() => {}
        Some(work) => {
            let patch = serde_json::json!({
                "metadata": {"labels": desired.labels()},
                "spec": desired.spec,
            });
            // The Work's update comes back through the watch, with the status to roll up.
            return writes::merge(&works_api, &work.name_any(), patch)
                .await
                .map(|_| Action::await_change())
                .map_err(Into::into);
        }
        None => {
            return writes::create(&works_api, &desired)
                .await
                .map(|_| Action::await_change())
                .map_err(Into::into);
        }
    }
    let views: Vec<WorkView> = current.iter().map(|w| WorkView::of(w, true)).collect();
    write_status::<F>(&api, &binding, &ctx.written, |previous| {
        binding_status(&BindingWorks {
            generation,
            report_diff: reports_diff(spec),
            overrides: if overridden {
                OverrideOutcome::Applied
            } else {
                OverrideOutcome::NoneSpecified
            },
            sync: WorkSync::Written(&views),
            previous,
            now: ctx.clock.now(),
        })
    })
    .await?;
    Ok(Action::await_change())
}

/// Writes the status `status_from` computes from the binding's status before, if that
/// changes it, over the newer of the cached binding and the status the generator last wrote
/// ([`WrittenStatuses`]). If another writer got there first (the rollout sets its conditions
/// on the same status), the binding is read afresh and the write made once more over it:
/// under load the watch can be seconds behind, and retrying from the cache until it catches
/// up was most of a large rollout's binding writes, all refused. A binding whose spec changed
/// meanwhile is left to the reconcile that change brings.
async fn write_status<F: PlacementFamily>(
    api: &Api<F::Binding>,
    binding: &F::Binding,
    written: &WrittenStatuses,
    status_from: impl Fn(&ResourceBindingStatus) -> ResourceBindingStatus,
) -> Result<(), ControllerError> {
    let (meta, previous) = written.latest(binding.meta(), binding.status());
    let status = status_from(&previous);
    if status == previous {
        return Ok(());
    }
    match writes::status(api, &meta, serde_json::to_value(&status)?).await {
        Ok(revision) => {
            written.remember(&meta, revision.unwrap_or_default(), status);
            return Ok(());
        }
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let fresh = api.get(&binding.name_any()).await?;
    if fresh.meta().generation != binding.meta().generation {
        return Ok(());
    }
    let unset = ResourceBindingStatus::default();
    let previous = fresh.status().unwrap_or(&unset);
    let status = status_from(previous);
    if status != *previous {
        let revision = writes::status(api, fresh.meta(), serde_json::to_value(&status)?).await?;
        written.remember(fresh.meta(), revision.unwrap_or_default(), status);
    }
    Ok(())
}

/// The label selector of the binding's Works: its name, and for a `ResourceBinding` its
/// namespace (bindings of two namespaces may share a name).
fn work_selector(binding: &impl Resource) -> String {
    let name = binding.meta().name.as_deref().unwrap_or_default();
    match binding.meta().namespace.as_deref() {
        Some(namespace) => {
            format!("{PARENT_BINDING_LABEL}={name},{PARENT_NAMESPACE_LABEL}={namespace}")
        }
        None => format!("{PARENT_BINDING_LABEL}={name},!{PARENT_NAMESPACE_LABEL}"),
    }
}

/// Whether the binding only reports differences.
fn reports_diff(spec: &ResourceBindingSpec) -> bool {
    spec.apply_strategy.as_ref().and_then(|s| s.type_) == Some(ApplyStrategyType::ReportDiff)
}
