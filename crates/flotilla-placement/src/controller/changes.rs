//! What sends placements back to their controller besides their own objects: member-cluster
//! changes that may let a placement pick a cluster (IgnoredDuringExecution, see
//! [`crate::scheduler::requeue`]), and changes to hub objects a placement may select.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::conditions::find;
use flotilla_api::placement::ClusterResourcePlacement;
use flotilla_apiserver::clock::{Clock, Deadlines};
use futures::{Stream, StreamExt};
use kube::core::{ApiResource, GroupVersionKind, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use super::discovery::HubKinds;
use crate::scheduler::requeue::ClusterChange;
use crate::selection::KindInfo;

/// How often the hub's kinds are read again to watch new ones.
const REDISCOVER: Duration = Duration::from_secs(15);

type Placements = Store<ClusterResourcePlacement>;
type Due = Deadlines<ObjectRef<ClusterResourcePlacement>>;

/// Requeues placements when member clusters change in a way that may let them pick a cluster.
pub(crate) async fn watch_clusters(
    events: impl Stream<Item = Result<MemberCluster, watcher::Error>>,
    placements: Placements,
    due: Due,
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
        for placement in placements.state() {
            let generation = placement.metadata.generation;
            let fully_scheduled = placement
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_deref())
                .and_then(|c| find(c, "ClusterResourcePlacementScheduled"))
                .is_some_and(|c| c.status == "True" && c.observed_generation == generation);
            if change.requeues(placement.spec.placement_type(), fully_scheduled) {
                due.schedule(now, ObjectRef::from_obj(&*placement));
            }
        }
    }
}

/// Watches every placeable kind the hub serves (new kinds are picked up every
/// [`REDISCOVER`]) and requeues the placements whose selectors may pick a changed object.
pub(crate) async fn watch_resources(
    client: Client,
    placements: Placements,
    due: Due,
    clock: Arc<dyn Clock>,
) {
    let kinds = HubKinds::new(client.clone());
    let mut watched: HashSet<KindInfo> = HashSet::new();
    loop {
        if let Ok(served) = kinds.get(true).await {
            for kind in served.iter().filter(|k| k.is_placeable()) {
                if watched.insert(kind.clone()) {
                    tokio::spawn(watch_kind(
                        client.clone(),
                        kind.clone(),
                        placements.clone(),
                        due.clone(),
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
    placements: Placements,
    due: Due,
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
        for placement in placements.state() {
            if may_select(&placement, &kind, namespace.as_deref(), &object.name_any()) {
                due.schedule(clock.now(), ObjectRef::from_obj(&*placement));
            }
        }
    }
}

/// Whether `placement`'s selectors may pick an object of `kind` named `name` (in `namespace`):
/// a term of its kind, or for a namespaced object a namespace term that may pick its
/// namespace. Generous on purpose: a placement requeued for nothing makes no new snapshot.
fn may_select(
    placement: &ClusterResourcePlacement,
    kind: &KindInfo,
    namespace: Option<&str>,
    name: &str,
) -> bool {
    placement.spec.resource_selectors.iter().any(|term| {
        let same_kind = term.group == kind.group && term.kind == kind.kind;
        let names_match = term.name.as_deref().is_none_or(|n| n == name);
        let namespace_term = term.group.is_empty() && term.kind == "Namespace";
        (same_kind && names_match)
            || (namespace_term
                && namespace.is_some_and(|ns| term.name.as_deref().is_none_or(|n| n == ns)))
    })
}
