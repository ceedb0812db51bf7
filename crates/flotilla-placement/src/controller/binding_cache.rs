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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flotilla_api::placement::ClusterResourceBinding;
use futures::{Stream, StreamExt};
use kube::runtime::reflector::{self, Store, reflector};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use super::family::PlacementFamily;
use super::naming::PARENT_PLACEMENT_LABEL;
use super::writes::{Written, revision};
use crate::placement_key::PlacementKey;

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
    pub(crate) fn watch(
        client: Client,
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
        let events = reflector(
            writer,
            watcher(Api::<F::Binding>::all(client), watcher::Config::default()).default_backoff(),
        )
        .inspect(move |event| match event {
            Ok(watcher::Event::Apply(b) | watcher::Event::Delete(b)) => tracker.saw(revision(b)),
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
    pub(crate) fn of(&self, placement: &PlacementKey) -> Option<Vec<ClusterResourceBinding>> {
        if !self.ready.load(Ordering::Acquire) {
            return None;
        }
        let written = self.lock().get(placement).copied().unwrap_or_default();
        if self.seen.load(Ordering::Acquire) < written {
            return None;
        }
        Some(
            self.store
                .state()
                .iter()
                .filter(|b| {
                    b.labels().get(PARENT_PLACEMENT_LABEL) == Some(&placement.name)
                        && b.namespace().as_deref() == placement.namespace()
                })
                .map(|b| (**b).clone().into())
                .collect(),
        )
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
