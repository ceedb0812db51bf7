//! The placement controllers: one kube-rs controller per family ([`ClusterFamily`]'s
//! `ClusterResourcePlacement`s, [`NamespacedFamily`]'s `ResourcePlacement`s), each running
//! the same reconcile ([`super::reconcile`]), and sharing the member-cluster cache, the hub's
//! kinds and the watchers that requeue placements on cluster and resource changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use flotilla_apiserver::recorder::EventRecorder;
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::binding_cache::{BindingCache, Subscription};
use super::changes::{self, Families, Placements};
use super::discovery::HubKinds;
use super::family::{ClusterFamily, NamespacedFamily, PlacementFamily, object_ref};
use super::naming::PARENT_PLACEMENT_LABEL;
use super::pacing::Pacing;
use super::{ControllerError, reconcile};
use crate::placement_key::PlacementKey;

/// What every reconcile of family `F` shares.
pub(crate) struct Context<F: PlacementFamily> {
    pub client: Client,
    pub clock: Arc<dyn Clock>,
    pub windows: EligibilityWindows,
    pub kinds: Arc<HubKinds>,
    pub clusters: Store<MemberCluster>,
    pub bindings: Arc<BindingCache<F>>,
    pub deadlines: Deadlines<ObjectRef<F::Placement>>,
    /// How often each placement may take a pass.
    pub pacing: Pacing,
    /// Records the placement's events.
    pub recorder: EventRecorder,
}

/// What both families' controllers share.
struct Shared {
    client: Client,
    clock: Arc<dyn Clock>,
    kinds: Arc<HubKinds>,
    clusters: Store<MemberCluster>,
}

/// Runs the placement controllers of both families until the client's API goes away.
pub(crate) async fn run(
    client: Client,
    clock: Arc<dyn Clock>,
    cluster_bindings: Subscription<ClusterFamily>,
    namespaced_bindings: Subscription<NamespacedFamily>,
) {
    let (clusters, cluster_writer) = reflector::store();
    let cluster_events = reflector(
        cluster_writer,
        watcher(
            Api::<MemberCluster>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .applied_objects();
    let shared = Shared {
        client: client.clone(),
        clock: clock.clone(),
        kinds: Arc::new(HubKinds::new(client.clone())),
        clusters,
    };
    let (cluster_placements, cluster_requeue) =
        controller::<ClusterFamily>(&shared, cluster_bindings);
    let (namespaced_placements, namespaced_requeue) =
        controller::<NamespacedFamily>(&shared, namespaced_bindings);
    let families: Families = vec![cluster_requeue, namespaced_requeue];
    tokio::spawn(changes::watch_clusters(
        cluster_events,
        families.clone(),
        clock.clone(),
    ));
    tokio::spawn(changes::watch_resources(client, families, clock));
    tokio::join!(cluster_placements, namespaced_placements);
}

/// The controller of family `F` (to run) and the handle that requeues its placements.
fn controller<F: PlacementFamily>(
    shared: &Shared,
    bindings: Subscription<F>,
) -> (BoxFuture<'static, ()>, Arc<dyn changes::Requeue>) {
    let client = &shared.client;
    let (deadlines, due) = Deadlines::new(shared.clock.clone());
    let (placement_store, placement_writer) = reflector::store();
    let placement_events = reflector(
        placement_writer,
        watcher(
            Api::<F::Placement>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .touched_objects()
    .default_backoff();
    let Subscription {
        cache: bindings,
        changes: binding_events,
    } = bindings;
    let ctx = Arc::new(Context::<F> {
        bindings,
        client: client.clone(),
        clock: shared.clock.clone(),
        windows: EligibilityWindows::default(),
        kinds: shared.kinds.clone(),
        clusters: shared.clusters.clone(),
        deadlines: deadlines.clone(),
        pacing: Pacing::default(),
        recorder: EventRecorder::new(client.clone(), super::MANAGER),
    });
    let requeue = Arc::new(Placements::<F> {
        store: placement_store.clone(),
        due: deadlines,
    });
    let queue = Queue::new(F::Placement::kind(&()).to_lowercase());
    let results = Controller::for_stream(queue.watched(placement_events), placement_store.clone())
        .watches_stream(
            Queue::watching(binding_events),
            queue.mapped(parent_of::<F, _>),
        )
        .watches_stream(
            Queue::touched(
                Api::<F::PolicySnapshot>::all(client.clone()),
                watcher::Config::default(),
            ),
            queue.mapped(parent_of::<F, _>),
        )
        .watches_stream(
            Queue::touched(
                Api::<ClusterResourceOverrideSnapshot>::all(client.clone()),
                watcher::Config::default(),
            ),
            queue.mapped(every_placement(placement_store.clone())),
        )
        .watches_stream(
            Queue::touched(
                Api::<ResourceOverrideSnapshot>::all(client.clone()),
                watcher::Config::default(),
            ),
            queue.mapped(every_placement(placement_store)),
        )
        .reconcile_on(queue.triggered(due))
        .run(
            queue.instrument(reconcile::reconcile::<F>),
            error_policy::<F>,
            ctx,
        );
    let running = queue.drive(results);
    (running.boxed(), requeue)
}

/// The placement a binding or snapshot belongs to: its parent label names it, in the
/// record's own namespace (none for the cluster-scoped family).
fn parent_of<F: PlacementFamily, K: Resource>(record: K) -> Option<ObjectRef<F::Placement>> {
    let labels: &BTreeMap<String, String> = record.meta().labels.as_ref()?;
    let parent = labels.get(PARENT_PLACEMENT_LABEL)?;
    let key = PlacementKey::of(record.meta().namespace.as_deref(), parent);
    Some(object_ref(&key))
}

/// A mapper sending any change to every placement: new override snapshots may apply to any.
fn every_placement<K, T>(
    placements: Store<K>,
) -> impl Fn(T) -> Vec<ObjectRef<K>> + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    move |_| {
        placements
            .state()
            .iter()
            .map(|p| ObjectRef::from_obj(&**p))
            .collect()
    }
}

fn error_policy<F: PlacementFamily>(
    placement: Arc<F::Placement>,
    error: &ControllerError,
    _: Arc<Context<F>>,
) -> Action {
    let key = PlacementKey::of(placement.namespace().as_deref(), &placement.name_any());
    error.retry(&format!("placement {key}"))
}
