//! The work generator: for every bound `ClusterResourceBinding` or `ResourceBinding`, the
//! `Work` in its member's namespace carrying the binding's resource snapshot (with the
//! cluster's overrides applied), and the Work's status mirrored back into the binding's. One
//! controller per placement family; the Works are watched once and routed to the family of
//! their binding (a Work of a `ResourceBinding` names the binding's namespace in a label).
//!
//! A binding keeps a finalizer until its Works are gone, so deleting a binding (the rollout
//! removing an unscheduled cluster, or the placement being deleted) removes what was placed on
//! the member: the member agent deletes the applied objects before it lets the Work go.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::placement::strategy::ApplyStrategyType;
use flotilla_api::placement::work::{WorkSpec, WorkloadTemplate};
use flotilla_api::placement::{
    BindingState, ClusterResourceBinding, ClusterResourceOverrideSnapshot, ResourceBinding,
    ResourceBindingSpec, ResourceOverrideSnapshot, Work,
};
use flotilla_apiserver::clock::Clock;
use flotilla_apiserver::finalizer;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{Stream, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::ListParams;
use kube::core::object::{HasSpec, HasStatus};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::Value;

use super::family::{ClusterFamily, NamespacedFamily, PlacementFamily, api_in, owner_reference};
use super::naming::{
    BINDING_FINALIZER, PARENT_BINDING_LABEL, PARENT_NAMESPACE_LABEL, PARENT_PLACEMENT_LABEL,
    work_name,
};
use super::{ControllerError, snapshots, writes};
use crate::overrides::{ApplicableOverrides, ClusterView, Rendered, render};
use crate::placement_key::PlacementKey;
use crate::snapshot::resource::index_of;
use crate::status::{BindingWorks, OverrideOutcome, WorkSync, WorkView, binding_status};

/// Label on a Work with the resource snapshot index it carries.
pub const RESOURCE_INDEX_OF_WORK_LABEL: &str = "kubernetes-fleet.io/parent-resource-snapshot-index";

/// Manifests of resource snapshots by placement uid and index.
type ManifestCache = HashMap<(String, u64), Arc<Vec<Value>>>;

struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    /// Resource snapshots are immutable: their manifests are read once per index.
    manifests: Mutex<ManifestCache>,
}

/// Runs the work generator of both placement families until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        manifests: Mutex::new(HashMap::new()),
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
    let (desired, overridden) = match desired_work::<F>(&ctx, &*binding, &namespace).await? {
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

/// What the binding's Work should be.
enum Desired {
    /// The resource snapshot is not complete yet.
    Incomplete,
    /// The cluster's overrides cannot be applied; why.
    OverrideFailed(String),
    /// The Work, and whether overrides apply to the cluster.
    Work(Box<Work>, bool),
}

/// Whether the binding only reports differences.
fn reports_diff(spec: &ResourceBindingSpec) -> bool {
    spec.apply_strategy.as_ref().and_then(|s| s.type_) == Some(ApplyStrategyType::ReportDiff)
}

/// The Work the binding should have: its resource snapshot's manifests as its cluster
/// receives them, overrides applied.
async fn desired_work<F: PlacementFamily>(
    ctx: &Context,
    binding: &F::Binding,
    namespace: &str,
) -> Result<Desired, ControllerError> {
    let spec = binding.spec();
    let placement = PlacementKey::of(
        binding.meta().namespace.as_deref(),
        binding
            .labels()
            .get(PARENT_PLACEMENT_LABEL)
            .map(String::as_str)
            .unwrap_or_default(),
    );
    // The placement's uid tells a recreated placement's snapshots from its predecessor's.
    let placement_uid = binding
        .owner_references()
        .first()
        .map(|o| o.uid.clone())
        .unwrap_or_default();
    let Some(index) = index_of(&placement.name, &spec.resource_snapshot_name) else {
        return Ok(Desired::Incomplete);
    };
    let Some(manifests) = manifests::<F>(ctx, &placement_uid, &placement, index).await? else {
        return Ok(Desired::Incomplete);
    };
    let overridden = !spec.cluster_resource_override_snapshots.is_empty()
        || !spec.resource_override_snapshots.is_empty();
    let manifests = if overridden {
        match overridden_manifests(ctx, spec, &placement, &manifests).await? {
            Ok(manifests) => manifests,
            Err(message) => return Ok(Desired::OverrideFailed(message)),
        }
    } else {
        manifests.to_vec()
    };
    let mut labels = BTreeMap::from([
        (PARENT_PLACEMENT_LABEL.to_string(), placement.name.clone()),
        (PARENT_BINDING_LABEL.to_string(), binding.name_any()),
        (RESOURCE_INDEX_OF_WORK_LABEL.to_string(), index.to_string()),
    ]);
    if let Some(namespace) = placement.namespace() {
        labels.insert(PARENT_NAMESPACE_LABEL.to_string(), namespace.to_string());
    }
    let work = Work {
        metadata: ObjectMeta {
            name: Some(work_name(&placement)),
            namespace: Some(namespace.to_string()),
            labels: Some(labels),
            owner_references: work_owner::<F>(binding),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate { manifests },
            apply_strategy: spec.apply_strategy.clone(),
            report_back_strategy: None,
        },
        status: None,
    };
    Ok(Desired::Work(Box::new(work), overridden))
}

/// The owner of a binding's Work: a `ClusterResourceBinding` (so the hub's garbage
/// collector backs the binding's finalizer up), and nothing for a `ResourceBinding`, whose
/// namespace is not the Work's (Kubernetes forbids owners in another namespace; KubeFleet
/// leaves such Works to the binding's finalizer alone).
fn work_owner<F: PlacementFamily>(binding: &F::Binding) -> Option<Vec<OwnerReference>> {
    binding
        .meta()
        .namespace
        .is_none()
        .then(|| vec![owner_reference(binding)])
}

/// The manifests with the binding's override snapshots applied for its cluster (a `Delete`
/// rule leaves a manifest out), or why they cannot be.
async fn overridden_manifests(
    ctx: &Context,
    spec: &ResourceBindingSpec,
    placement: &PlacementKey,
    manifests: &[Value],
) -> Result<Result<Vec<Value>, String>, ControllerError> {
    let mut cluster_snapshots = Vec::new();
    let cluster_api: Api<ClusterResourceOverrideSnapshot> = Api::all(ctx.client.clone());
    for name in &spec.cluster_resource_override_snapshots {
        match cluster_api.get_opt(name).await? {
            Some(snapshot) => cluster_snapshots.push(snapshot),
            None => {
                return Ok(Err(format!(
                    "ClusterResourceOverrideSnapshot {name} is gone"
                )));
            }
        }
    }
    let mut namespaced_snapshots = Vec::new();
    for reference in &spec.resource_override_snapshots {
        let api: Api<ResourceOverrideSnapshot> =
            Api::namespaced(ctx.client.clone(), &reference.namespace);
        match api.get_opt(&reference.name).await? {
            Some(snapshot) => namespaced_snapshots.push(snapshot),
            None => {
                return Ok(Err(format!(
                    "ResourceOverrideSnapshot {}/{} is gone",
                    reference.namespace, reference.name
                )));
            }
        }
    }
    let Some(cluster) = Api::<MemberCluster>::all(ctx.client.clone())
        .get_opt(&spec.target_cluster)
        .await?
    else {
        return Ok(Err(format!(
            "member cluster {} is gone",
            spec.target_cluster
        )));
    };
    let applicable = ApplicableOverrides::select(
        placement,
        manifests,
        &cluster_snapshots,
        &namespaced_snapshots,
    );
    let mut out = Vec::with_capacity(manifests.len());
    for manifest in manifests {
        match render(manifest, ClusterView::from(&cluster), &applicable) {
            Ok(Rendered::Manifest(rendered)) => out.push(rendered),
            Ok(Rendered::Deleted(_)) => {}
            Err(e) => return Ok(Err(e.to_string())),
        }
    }
    Ok(Ok(out))
}

/// The manifests of resource snapshot `index` of `placement` (whose uid is `placement_uid`),
/// from the cache or the hub.
async fn manifests<F: PlacementFamily>(
    ctx: &Context,
    placement_uid: &str,
    placement: &PlacementKey,
    index: u64,
) -> Result<Option<Arc<Vec<Value>>>, kube::Error> {
    let key = (placement_uid.to_string(), index);
    if let Some(found) = ctx.manifests.lock().expect("cache lock").get(&key) {
        return Ok(Some(found.clone()));
    }
    let Some(read) = snapshots::manifests::<F>(&ctx.client, placement, index).await? else {
        return Ok(None);
    };
    let read = Arc::new(read);
    ctx.manifests
        .lock()
        .expect("cache lock")
        .insert(key, read.clone());
    Ok(Some(read))
}
