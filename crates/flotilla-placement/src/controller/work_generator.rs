//! The work generator: for every bound `ClusterResourceBinding` or `ResourceBinding`, the
//! `Work` in its member's namespace carrying the binding's resource snapshot (with the
//! cluster's overrides applied), and the Work's status mirrored back into the binding's. One
//! controller per placement family; the Works are watched once and routed to the family of
//! their binding (a Work of a `ResourceBinding` names the binding's namespace in a label).
//!
//! A binding keeps a finalizer until its Works are gone, so deleting a binding (the rollout
//! removing an unscheduled cluster, or the placement being deleted) removes what was placed on
//! the member: the member agent deletes the applied objects before it lets the Work go.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::placement::strategy::ApplyStrategyType;
use flotilla_api::placement::{
    BindingState, ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, Work,
};
use flotilla_apiserver::clock::Clock;
use flotilla_apiserver::finalizer;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{Stream, StreamExt};
use kube::api::ListParams;
use kube::core::object::{HasSpec, HasStatus};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::desired_work::{Desired, ManifestCache, desired_work};
use super::family::{ClusterFamily, NamespacedFamily, PlacementFamily, api_in};
use super::naming::{BINDING_FINALIZER, PARENT_BINDING_LABEL, PARENT_NAMESPACE_LABEL};
use super::{ControllerError, writes};
use crate::status::{BindingWorks, OverrideOutcome, WorkSync, WorkView, binding_status};

/// Label on a Work with the resource snapshot index it carries.
pub const RESOURCE_INDEX_OF_WORK_LABEL: &str = "kubernetes-fleet.io/parent-resource-snapshot-index";

struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    /// Manifests of resource snapshots, read once per index.
    manifests: ManifestCache,
}

/// Runs the work generator of both placement families until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        manifests: ManifestCache::default(),
    });
    let (cluster_tx, cluster_works) = unbounded();
    let (namespaced_tx, namespaced_works) = unbounded();
    tokio::spawn(route_works(client, cluster_tx, namespaced_tx));
    tokio::join!(
        run_family::<ClusterFamily>(ctx.clone(), cluster_works),
        run_family::<NamespacedFamily>(ctx, namespaced_works),
    );
}

/// Watches every Work once and sends each changed Work's binding to its family's controller:
/// a `ResourceBinding` when the Work names the binding's namespace, else a
/// `ClusterResourceBinding`.
async fn route_works(
    client: Client,
    cluster: UnboundedSender<ObjectRef<ClusterResourceBinding>>,
    namespaced: UnboundedSender<ObjectRef<ResourceBinding>>,
) {
    let works = watcher(Api::<Work>::all(client), watcher::Config::default())
        .default_backoff()
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

/// Runs the work generator of family `F`, also reconciling the bindings `works` names.
async fn run_family<F: PlacementFamily>(
    ctx: Arc<Context>,
    works: impl Stream<Item = ObjectRef<F::Binding>> + Send + 'static,
) {
    let bindings: Api<F::Binding> = Api::all(ctx.client.clone());
    Controller::new(bindings, watcher::Config::default())
        .reconcile_on(works)
        .run(reconcile::<F>, error_policy::<F>, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "work generator reconcile");
            }
        })
        .await;
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
    let works = works_api
        .list(&ListParams::default().labels(&work_selector(&*binding)))
        .await?
        .items;
    if binding.meta().deletion_timestamp.is_some() {
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
    let previous = binding.status().cloned().unwrap_or_default();
    let (desired, overridden) =
        match desired_work::<F>(&ctx.client, &ctx.manifests, &*binding, &namespace).await? {
            Desired::Incomplete => return Ok(Action::requeue(Duration::from_secs(1))),
            Desired::OverrideFailed(message) => {
                let status = binding_status(&BindingWorks {
                    generation,
                    report_diff: reports_diff(spec),
                    overrides: OverrideOutcome::Failed(&message),
                    sync: WorkSync::Written(&[]),
                    previous: &previous,
                    now: ctx.clock.now(),
                });
                if status != previous {
                    writes::status(&api, binding.meta(), serde_json::to_value(&status)?).await?;
                }
                return Ok(Action::await_change());
            }
            Desired::Work(work, overridden) => (*work, overridden),
        };
    let current = works
        .iter()
        .find(|w| w.metadata.name == desired.metadata.name);
    match current {
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
    let views: Vec<WorkView> = works
        .iter()
        .filter(|w| w.metadata.name == desired.metadata.name)
        .map(|w| WorkView::of(w, true))
        .collect();
    let status = binding_status(&BindingWorks {
        generation,
        report_diff: reports_diff(spec),
        overrides: if overridden {
            OverrideOutcome::Applied
        } else {
            OverrideOutcome::NoneSpecified
        },
        sync: WorkSync::Written(&views),
        previous: &previous,
        now: ctx.clock.now(),
    });
    if status != previous {
        writes::status(&api, binding.meta(), serde_json::to_value(&status)?).await?;
    }
    Ok(Action::await_change())
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
