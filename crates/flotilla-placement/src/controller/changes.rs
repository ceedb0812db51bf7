//! What sends placements back to their controller besides their own objects: member-cluster
//! changes that may let a placement pick a cluster (IgnoredDuringExecution, see
//! [`crate::scheduler::requeue`]), and changes to hub objects a placement may select.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::conditions::find;
use flotilla_api::placement::PlacementSpec;
use flotilla_apiserver::clock::{Clock, Deadlines};
use futures::{Stream, StreamExt};
use k8s_openapi::jiff::Timestamp;
use kube::core::object::{HasSpec, HasStatus};
use kube::core::{ApiResource, GroupVersionKind, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::discovery::HubKinds;
use super::family::PlacementFamily;
use crate::scheduler::requeue::ClusterChange;
use crate::selection::KindInfo;
use crate::status::ConditionType;

/// How often the hub's kinds are read again to watch new ones.
const REDISCOVER: Duration = Duration::from_secs(15);

/// The placements of one family, as the change watchers requeue them.
pub(crate) trait Requeue: Send + Sync {
    /// Requeues, at `now`, the placements a member-cluster change may let pick a cluster.
    fn cluster_changed(&self, change: &ClusterChange, now: Timestamp);

    /// Requeues, at `now`, the placements that may select the object `name` of `kind` (in
    /// `namespace`).
    fn object_changed(&self, kind: &KindInfo, namespace: Option<&str>, name: &str, now: Timestamp);
}

/// The placements of family `F` (the controller's store) and its queue of due reconciles.
pub(crate) struct Placements<F: PlacementFamily> {
    /// The placements, as the controller's reflector has them.
    pub store: Store<F::Placement>,
    /// When to reconcile which.
    pub due: Deadlines<ObjectRef<F::Placement>>,
}

impl<F: PlacementFamily> Requeue for Placements<F> {
    fn cluster_changed(&self, change: &ClusterChange, now: Timestamp) {
        let scheduled = F::KIND.condition_type(ConditionType::Scheduled);
        for placement in self.store.state() {
            let generation = placement.meta().generation;
            let fully_scheduled = placement
                .status()
                .and_then(|s| s.conditions.as_deref())
                .and_then(|c| find(c, &scheduled))
                .is_some_and(|c| c.status == "True" && c.observed_generation == generation);
            if change.requeues(placement.spec().placement_type(), fully_scheduled) {
                self.due.schedule(now, ObjectRef::from_obj(&*placement));
            }
        }
    }

    fn object_changed(&self, kind: &KindInfo, namespace: Option<&str>, name: &str, now: Timestamp) {
        for placement in self.store.state() {
            let home = placement.meta().namespace.as_deref();
            if may_select(placement.spec(), home, kind, namespace, name) {
                self.due.schedule(now, ObjectRef::from_obj(&*placement));
            }
        }
    }
}

/// Every family's placements.
pub(crate) type Families = Vec<Arc<dyn Requeue>>;

/// Requeues placements when member clusters change in a way that may let them pick a cluster.
pub(crate) async fn watch_clusters(
    events: impl Stream<Item = Result<MemberCluster, watcher::Error>>,
    families: Families,
    clock: Arc<dyn Clock>,
) {
    let windows = EligibilityWindows::default();
    let mut seen: HashMap<String, MemberCluster> = HashMap::new();
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        let Ok(cluster) = event else { continue };
        let name = cluster.name_any();
        let Some(old) = seen.insert(name, cluster.clone()) else {
            continue;
        };
        let now = clock.now();
        let gone = cluster.metadata.deletion_timestamp.is_some();
        let change = ClusterChange::between(&old, (!gone).then_some(&cluster), now, &windows);
        if change == ClusterChange::Irrelevant {
            continue;
        }
        for family in &families {
            family.cluster_changed(&change, now);
        }
    }
}

/// Watches every placeable kind the hub serves (new kinds are picked up every
/// [`REDISCOVER`]) and requeues the placements whose selectors may pick a changed object.
pub(crate) async fn watch_resources(client: Client, families: Families, clock: Arc<dyn Clock>) {
    let kinds = HubKinds::new(client.clone());
    let families = Arc::new(families);
    let mut watched: HashSet<KindInfo> = HashSet::new();
    loop {
        if let Ok(served) = kinds.get(true).await {
            for kind in served.iter().filter(|k| k.is_placeable()) {
                if watched.insert(kind.clone()) {
                    tokio::spawn(watch_kind(
                        client.clone(),
                        kind.clone(),
                        families.clone(),
                        clock.clone(),
                    ));
                }
            }
        }
        tokio::time::sleep(REDISCOVER).await;
    }
}

/// Watches the metadata of one kind's objects; every change after the initial list requeues
/// the placements that may select the object.
async fn watch_kind(
    client: Client,
    kind: KindInfo,
    families: Arc<Families>,
    clock: Arc<dyn Clock>,
) {
    let gvk = GroupVersionKind::gvk(&kind.group, &kind.version, &kind.kind);
    let api: Api<PartialObjectMeta<kube::api::DynamicObject>> = Api::all_with(
        client,
        &ApiResource::from_gvk_with_plural(&gvk, &kind.plural),
    );
    let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
    let mut listed = false;
    while let Some(event) = events.next().await {
        let object = match event {
            Ok(watcher::Event::InitDone) => {
                listed = true;
                continue;
            }
            Ok(watcher::Event::Apply(o) | watcher::Event::Delete(o)) if listed => o,
            _ => continue,
        };
        let namespace = object.namespace();
        let now = clock.now();
        for family in families.iter() {
            family.object_changed(&kind, namespace.as_deref(), &object.name_any(), now);
        }
    }
}

/// Whether a placement with `spec` (a ResourcePlacement when it lives in namespace `home`)
/// may pick an object of `kind` named `name` (in `namespace`): a term of its kind, or for a
/// ClusterResourcePlacement and a namespaced object a namespace term that may pick its
/// namespace; a ResourcePlacement picks only objects of its own namespace. Generous on
/// purpose: a placement requeued for nothing makes no new snapshot.
fn may_select(
    spec: &PlacementSpec,
    home: Option<&str>,
    kind: &KindInfo,
    namespace: Option<&str>,
    name: &str,
) -> bool {
    if home.is_some() && namespace != home {
        return false;
    }
    spec.resource_selectors.iter().any(|term| {
        let same_kind = term.group == kind.group && term.kind == kind.kind;
        let names_match = term.name.as_deref().is_none_or(|n| n == name);
        let namespace_term = term.group.is_empty() && term.kind == "Namespace";
        (same_kind && names_match)
            || (namespace_term
                && namespace.is_some_and(|ns| term.name.as_deref().is_none_or(|n| n == ns)))
    })
}
