//! The hub's bindings of one placement family (`ClusterResourceBinding`s or
//! `ResourceBinding`s) as the placement controller last saw them through its watch, so that a
//! reconcile reads a placement's bindings from memory instead of listing (and decoding) all of
//! them from the hub each time: at 1,000 members that list was half of the hub's work during a
//! rollout.
//!
//! A cache lags behind the writes it has not yet seen, and a rollout decided on bindings older
//! than its own last writes could exceed maxUnavailable or a PickN could bind a cluster twice.
//! So the cache remembers, per placement, the highest resourceVersion the controller wrote to
//! its bindings, and how far its watch has got; [`BindingCache::of`] answers only once the
//! watch has caught up with those writes. The hub's resourceVersions are revisions of one
//! global counter, and the watch delivers the bindings' events in revision order, so "the
//! watch has reached revision R" means every binding write up to R is in the cache. Each family
//! has its own cache over its own watch: a placement's writes go to bindings of its family
//! only.
//!
//! The placement controller, the staged update run controller and the work generator share
//! one watch and one cache per family ([`BindingCache::watch_shared`]): every binding event
//! used to be decoded and stored three times over, and a large rollout writes every binding
//! five times. Sharing also makes each controller wait for the others' binding writes, which
//! is only more careful.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flotilla_api::placement::ClusterResourceBinding;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use futures::{Stream, StreamExt};
use kube::runtime::reflector::{self, Store, reflector};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use super::family::PlacementFamily;
use super::naming::PARENT_PLACEMENT_LABEL;
use super::writes::{Written, revision};
use crate::placement_key::PlacementKey;

/// One controller's share of a family's binding watch ([`BindingCache::watch_shared`]).
pub(crate) struct Subscription<F: PlacementFamily> {
    /// The cache every subscriber shares.
    pub cache: Arc<BindingCache<F>>,
    /// The changed bindings, for this subscriber.
    pub changes: UnboundedReceiver<Result<F::Binding, watcher::Error>>,
}

/// The bindings seen through the watch, and how far the watch has got.
pub(crate) struct BindingCache<F: PlacementFamily> {
    store: Store<F::Binding>,
    /// The highest resourceVersion applied to `store`.
    seen: AtomicU64,
    /// Whether the first full list has been applied.
    ready: AtomicBool,
    /// Per placement, the highest resourceVersion this controller wrote to its bindings.
    written: Mutex<HashMap<PlacementKey, u64>>,
}

impl<F: PlacementFamily> BindingCache<F> {
    /// Starts watching every binding of the family; returns the cache and the stream of
    /// changed bindings (the placement controller's trigger). The cache is up to date with an
    /// event by the time the stream yields it, so a reconcile the event triggers sees it.
    fn watch(
        client: Client,
    ) -> (
        Arc<Self>,
        impl Stream<Item = Result<F::Binding, watcher::Error>> + Send + 'static,
    ) {
        Self::reflect(
            watcher(Api::<F::Binding>::all(client), watcher::Config::default()).default_backoff(),
        )
    }

    /// Starts one watch of every binding of the family for `N` controllers: the cache they
    /// share, and each controller's own stream of the changed bindings (as
    /// [`BindingCache::watch`] yields them, copied to each). A failed watch is retried by the
    /// watch itself; its errors are logged here, not passed on.
    pub(crate) fn watch_shared<const N: usize>(client: Client) -> [Subscription<F>; N] {
        let (cache, changes) = Self::watch(client);
        let mut senders = Vec::with_capacity(N);
        let subscriptions = std::array::from_fn(|_| {
            let (sender, changes) = unbounded();
            senders.push(sender);
            Subscription {
                cache: cache.clone(),
                changes,
            }
        });
        tokio::spawn(async move {
            let mut changes = std::pin::pin!(changes);
            while let Some(change) = changes.next().await {
                match change {
                    Ok(binding) => {
                        let mut listening = false;
                        for sender in &senders {
                            listening |= sender.unbounded_send(Ok(binding.clone())).is_ok();
                        }
                        if !listening {
                            return;
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "binding watch"),
                }
            }
        });
        subscriptions
    }

    /// The bindings as the shared watch has them, by name: the store a controller of
    /// bindings looks its objects up in.
    pub(crate) fn store(&self) -> Store<F::Binding> {
        self.store.clone()
    }

    /// A cache over the watch `events`, and the stream of changed bindings they yield.
    fn reflect(
        events: impl Stream<Item = Result<watcher::Event<F::Binding>, watcher::Error>> + Send + 'static,
    ) -> (
        Arc<Self>,
        impl Stream<Item = Result<F::Binding, watcher::Error>> + Send + 'static,
    ) {
        let (store, writer) = reflector::store();
        let cache = Arc::new(Self {
            store,
            seen: AtomicU64::new(0),
            ready: AtomicBool::new(false),
            written: Mutex::new(HashMap::new()),
        });
        let tracker = cache.clone();
        let mut listed = 0;
        let events = reflector(writer, events)
            .inspect(move |event| match event {
                Ok(watcher::Event::Apply(b) | watcher::Event::Delete(b)) => {
                    tracker.saw(revision(b))
                }
                Ok(watcher::Event::Init) => listed = 0,
                Ok(watcher::Event::InitApply(b)) => listed = listed.max(revision(b)),
                Ok(watcher::Event::InitDone) => {
                    tracker.saw(listed);
                    tracker.ready.store(true, Ordering::Release);
                }
                Err(_) => {}
            })
            .touched_objects();
        (cache, events)
    }

    /// The bindings of `placement` in their working form, or `None` while the cache is behind
    /// the controller's own writes to them (or has not listed them yet): the caller tries
    /// again shortly.
    pub(crate) fn of(&self, placement: &PlacementKey) -> Option<Vec<Arc<ClusterResourceBinding>>> {
        if !self.ready.load(Ordering::Acquire) {
            return None;
        }
        let written = self.lock().get(placement).copied().unwrap_or_default();
        if self.seen.load(Ordering::Acquire) < written {
            return None;
        }
        Some(
            self.of_placement(placement)
                .map(F::working_binding)
                .collect(),
        )
    }

    /// The cached bindings of `placement`, as the store has them.
    fn of_placement(&self, placement: &PlacementKey) -> impl Iterator<Item = Arc<F::Binding>> {
        let placement = placement.clone();
        self.store.state().into_iter().filter(move |b| {
            b.labels().get(PARENT_PLACEMENT_LABEL) == Some(&placement.name)
                && b.namespace().as_deref() == placement.namespace()
        })
    }

    /// Records the writes to `placement`'s bindings that succeeded (their resourceVersions);
    /// returns the first that failed.
    pub(crate) fn record(
        &self,
        placement: &PlacementKey,
        results: Vec<Result<Written, kube::Error>>,
    ) -> Result<(), kube::Error> {
        let mut highest = None;
        let mut failure = None;
        for result in results {
            match result {
                Ok(revision) => highest = highest.max(revision),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        if let Some(highest) = highest {
            let mut written = self.lock();
            let entry = written.entry(placement.clone()).or_default();
            *entry = (*entry).max(highest);
        }
        failure.map_or(Ok(()), Err)
    }

    /// Forgets a deleted placement's writes.
    pub(crate) fn forget(&self, placement: &PlacementKey) {
        self.lock().remove(placement);
    }

    fn saw(&self, revision: u64) {
        self.seen.fetch_max(revision, Ordering::AcqRel);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PlacementKey, u64>> {
        self.written
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::placement::ClusterResourceBinding;
    use futures::channel::mpsc;
    use futures::{SinkExt, StreamExt};
    use kube::runtime::watcher::Event;

    use super::*;
    use crate::controller::family::ClusterFamily;

    fn binding(name: &str, placement: &str, revision: u64) -> ClusterResourceBinding {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {
                "name": name,
                "labels": {PARENT_PLACEMENT_LABEL: placement},
                "resourceVersion": revision.to_string(),
            },
            "spec": {
                "state": "Scheduled",
                "resourceSnapshotName": "",
                "schedulingPolicySnapshotName": format!("{placement}-0"),
                "targetCluster": "member-1",
                "clusterDecision": {"clusterName": "member-1", "selected": true, "reason": "picked"},
            },
        }))
        .expect("a valid binding")
    }

    fn names(bindings: Option<Vec<Arc<ClusterResourceBinding>>>) -> Option<Vec<String>> {
        bindings.map(|bs| {
            let mut names: Vec<String> = bs.iter().map(|b| b.name_any()).collect();
            names.sort();
            names
        })
    }

    /// The cache answers nothing before its first full list, and then only once its watch has
    /// passed the highest revision the controller wrote to that placement's bindings.
    #[tokio::test]
    async fn answers_only_once_the_watch_has_passed_its_own_writes() {
        let (mut tx, rx) = mpsc::unbounded();
        let (cache, events) = BindingCache::<ClusterFamily>::reflect(rx.map(Ok));
        let mut events = Box::pin(events);
        let app = PlacementKey::of(None, "app");
        let other = PlacementKey::of(None, "other");
        // touched_objects yields only objects, so the stream is polled once per object sent;
        // Init and InitDone are taken in on the way to the next object.
        tx.send(Event::Init).await.unwrap();
        tx.send(Event::InitApply(binding("app-a", "app", 5)))
            .await
            .unwrap();
        events.next().await;
        assert_eq!(
            cache.of(&app),
            None,
            "not ready before the first list is complete"
        );
        tx.send(Event::InitDone).await.unwrap();
        tx.send(Event::Apply(binding("other-a", "other", 6)))
            .await
            .unwrap();
        events.next().await;
        assert_eq!(names(cache.of(&app)), Some(vec!["app-a".to_string()]));

        // The controller wrote app-b (revision 8) and app-a (revision 9).
        cache
            .record(&app, vec![Ok(Some(8)), Ok(None), Ok(Some(9))])
            .unwrap();
        assert_eq!(cache.of(&app), None, "behind the controller's writes");
        assert!(
            cache.of(&other).is_some(),
            "another placement is not held up"
        );
        tx.send(Event::Apply(binding("app-b", "app", 8)))
            .await
            .unwrap();
        events.next().await;
        assert_eq!(cache.of(&app), None, "revision 9 not seen yet");
        tx.send(Event::Apply(binding("app-a", "app", 9)))
            .await
            .unwrap();
        events.next().await;
        assert_eq!(
            names(cache.of(&app)),
            Some(vec!["app-a".to_string(), "app-b".to_string()])
        );
        assert_eq!(cache.of(&other).map(|b| b.len()), Some(1));
        assert_eq!(
            cache
                .of(&PlacementKey::of(Some("ns"), "app"))
                .map(|b| b.len()),
            Some(0),
            "a namespaced placement of the same name has none of them"
        );
    }

    /// A failed write among successful ones is returned, and the successful ones are still
    /// waited for.
    #[tokio::test]
    async fn a_failed_write_does_not_hide_the_successful_ones() {
        let (_tx, rx) = mpsc::unbounded::<Event<ClusterResourceBinding>>();
        let (cache, _events) = BindingCache::<ClusterFamily>::reflect(rx.map(Ok));
        cache.ready.store(true, Ordering::Release);
        let app = PlacementKey::of(None, "app");
        let conflict = kube::Error::Api(
            kube::core::Status::failure("conflict", "Conflict")
                .with_code(409)
                .boxed(),
        );
        let result = cache.record(&app, vec![Ok(Some(3)), Err(conflict), Ok(Some(7))]);
        assert!(result.is_err());
        cache.saw(6);
        assert_eq!(cache.of(&app), None);
        cache.saw(7);
        assert_eq!(cache.of(&app), Some(vec![]));
    }
}
