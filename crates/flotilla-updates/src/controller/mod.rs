//! The update run controller: one reconcile per `UpdateRun` plans it over the fleet, runs a
//! pass of [`crate::run::advance()`] over what it observes (member upgrades, gates, windows,
//! the catalog, member versions), carries out the pass's actions and records the status it
//! reached, which a writer stores behind the passes ([`statuses`]). It is woken by its run,
//! its member upgrades and gates, any change to members, windows or the catalog, and at the
//! times a pass asks to look again (a wait ends, a window opens, a
//! release reaches a region, a scheduled start comes). Beside it, the auto-upgrade profile
//! controller ([`profiles`]) generates runs when a profile's channel gets a new release, and
//! the window status controller (`windows`) keeps each `MaintenanceConfiguration`'s status
//! (open now, current and next occurrence, `Valid`) current.

mod observe;
mod profiles;
mod reconcile;
mod statuses;
mod windows;

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::versions::ClusterVersions;
use flotilla_api::updates::member_upgrade::UPGRADE_RUN_LABEL;
use flotilla_api::updates::{
    FleetUpdateStrategy, Gate, KubernetesVersion, MaintenanceConfiguration, MemberUpgrade,
    NodeImageVersion, UpdateRun,
};
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use flotilla_apiserver::recorder::EventRecorder;
use futures::Stream;
use futures::future::BoxFuture;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{PredicateConfig, WatchStreamExt, predicates, reflector, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// Field manager of the controller's writes.
pub(crate) const MANAGER: &str = "flotilla-updates";

/// What went wrong in a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The hub refused or failed a request.
    #[error(transparent)]
    Api(#[from] kube::Error),
}

/// What every reconcile shares: the client, the clock, and caches of what passes read.
pub(crate) struct Context {
    pub(crate) client: Client,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) deadlines: Deadlines<ObjectRef<UpdateRun>>,
    pub(crate) members: Store<MemberCluster>,
    pub(crate) windows: Store<MaintenanceConfiguration>,
    pub(crate) kubernetes: Store<KubernetesVersion>,
    pub(crate) images: Store<NodeImageVersion>,
    pub(crate) upgrades: Store<MemberUpgrade>,
    pub(crate) gates: Store<Gate>,
    /// The statuses passes reached, being stored.
    pub(crate) statuses: Arc<statuses::Statuses>,
    /// Records the runs' events.
    pub(crate) recorder: EventRecorder,
}

/// Whether every cache has loaded its first full list (false: a cache's writer is gone, the
/// controller is shutting down). Decisions over a partly loaded cache would be wrong, not just
/// late: a run would freeze half the fleet as its members at its start, a profile would take
/// the rest of the catalog for a new release.
async fn caches_ready(
    waits: Vec<BoxFuture<'_, Result<(), reflector::store::WriterDropped>>>,
) -> bool {
    futures::future::join_all(waits)
        .await
        .into_iter()
        .all(|ready| ready.is_ok())
}

/// A cached watch of every MemberCluster whose stream only passes the changes update
/// decisions read — labels (update group, region, long-term support), deletion, and the
/// reported versions and power state — and not heartbeats or resource usage, which change
/// every minute on every member and would make each a pass over every active run.
fn cached_members(
    client: &Client,
) -> (
    Store<MemberCluster>,
    impl Stream<Item = Result<MemberCluster, watcher::Error>> + Send + use<>,
) {
    let (store, events) = cached::<MemberCluster>(client);
    let relevant = events.predicate_filter(update_relevant, PredicateConfig::default());
    (store, relevant)
}

/// A hash of what update decisions read of a member.
fn update_relevant(member: &MemberCluster) -> Option<u64> {
    let mut hasher = std::hash::DefaultHasher::new();
    member.labels().hash(&mut hasher);
    member
        .metadata
        .deletion_timestamp
        .is_some()
        .hash(&mut hasher);
    if let Some(versions) = member.status.as_ref().and_then(|s| s.versions.as_ref()) {
        let observed = ClusterVersions {
            observation_time: None,
            ..versions.clone()
        };
        serde_json::to_string(&observed).ok()?.hash(&mut hasher);
    }
    Some(hasher.finish())
}

/// A cached watch of every object of kind `K`: the store, and the stream of changes that
/// keeps it current (to be driven by the controller).
fn cached<K>(
    client: &Client,
) -> (
    Store<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + use<K>,
)
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store();
    let events = reflector(
        writer,
        watcher(Api::<K>::all(client.clone()), watcher::Config::default()),
    )
    .applied_objects()
    .default_backoff();
    (store, events)
}

/// Runs the update run, auto-upgrade profile and maintenance window status controllers until
/// the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    futures::join!(
        runs(client.clone(), clock.clone()),
        profiles::run(client.clone(), clock.clone()),
        windows::run(client, clock)
    );
}

/// Runs the update run controller.
async fn runs(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let (members, member_events) = cached_members(&client);
    let (windows, window_events) = cached::<MaintenanceConfiguration>(&client);
    // Runs read a window's spec; its status (kept by the window controller) changes as windows
    // open and close, when runs look again anyway.
    let window_events =
        window_events.predicate_filter(predicates::generation, PredicateConfig::default());
    let (kubernetes, kubernetes_events) = cached::<KubernetesVersion>(&client);
    let (images, image_events) = cached::<NodeImageVersion>(&client);
    let (upgrades, upgrade_events) = cached::<MemberUpgrade>(&client);
    let (gates, gate_events) = cached::<Gate>(&client);
    let queue = Queue::new("updaterun");
    let controller = queue.controller(
        Api::<UpdateRun>::all(client.clone()),
        watcher::Config::default(),
    );
    let runs = controller.store();
    let ctx = Arc::new(Context {
        client: client.clone(),
        clock,
        deadlines,
        members,
        windows,
        kubernetes,
        images,
        upgrades,
        gates,
        statuses: Arc::default(),
        recorder: EventRecorder::new(client.clone(), MANAGER),
    });
    let results = controller
        .watches_stream(
            Queue::watching(upgrade_events),
            queue.mapped(|upgrade: MemberUpgrade| {
                let run = upgrade.labels().get(UPGRADE_RUN_LABEL).cloned();
                run.map(|name| ObjectRef::new(&name))
            }),
        )
        .watches_stream(
            Queue::watching(gate_events),
            queue.mapped(|gate: Gate| Some(ObjectRef::new(&gate.spec.target.update_run))),
        )
        .watches_stream(
            Queue::watching(member_events),
            queue.mapped(active_runs(runs.clone())),
        )
        .watches_stream(
            Queue::watching(window_events),
            queue.mapped(active_runs(runs.clone())),
        )
        .watches_stream(
            Queue::watching(kubernetes_events),
            queue.mapped(active_runs(runs.clone())),
        )
        .watches_stream(
            Queue::watching(image_events),
            queue.mapped(active_runs(runs.clone())),
        )
        .watches_stream(
            Queue::touched(
                Api::<FleetUpdateStrategy>::all(client),
                watcher::Config::default(),
            ),
            queue.mapped(active_runs(runs)),
        )
        .reconcile_on(queue.triggered(due))
        .run(queue.instrument(reconcile::reconcile), error_policy, ctx);
    queue.drive(results).await;
}

/// A mapper from any change of the fleet (members, windows, catalog, strategies) to every run
/// that has not finished.
fn active_runs<K>(
    runs: Store<UpdateRun>,
) -> impl Fn(K) -> Vec<ObjectRef<UpdateRun>> + Send + Sync + 'static {
    move |_| {
        runs.state()
            .iter()
            .filter(|run| {
                !run.status
                    .as_ref()
                    .is_some_and(|s| s.progress.state.is_final())
            })
            .map(|run| ObjectRef::from_obj(&**run))
            .collect()
    }
}

/// Retries a failed reconcile of `object`: soon after a write conflict (someone else wrote
/// first; the next pass reads the new version), after a second otherwise.
fn error_policy<K: Resource<DynamicType = ()>, C>(
    object: Arc<K>,
    error: &ControllerError,
    _: Arc<C>,
) -> Action {
    let conflict = matches!(error, ControllerError::Api(kube::Error::Api(s)) if s.code == 409);
    if conflict {
        return Action::requeue(Duration::from_millis(50));
    }
    tracing::warn!(kind = %K::kind(&()), name = %object.meta().name.clone().unwrap_or_default(), %error, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(1))
}
