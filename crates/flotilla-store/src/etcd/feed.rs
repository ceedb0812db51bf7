//! The feed: one etcd watch per store on its whole namespace, fanned out to the store's
//! watchers in memory.
//!
//! The feed publishes every namespace event, in revision order, to the watchers registered at
//! that moment and into a bounded ring of recent events, under the hub's lock. Its *position*
//! is the revision up to which it has published everything; the ring holds every event in
//! `(floor, position]`. A watch registered under the same lock therefore gets its history
//! without a gap or a duplicate: from the ring when it starts at or after `floor`, else from
//! etcd (see [`super::history`]). History reaches up to the store's own last write when the
//! feed has not published that far yet, since those events were past when the watch began;
//! only later events follow through its bounded channel. Because all watchers are fed by one
//! loop, a watcher that falls behind is closed at a well-defined point, exactly as with the
//! embedded backends.
//!
//! The feed also keeps the store's current revision fresh: every response header counts,
//! including etcd's progress notifications and the answers to a progress request sent every
//! [`PROGRESS_INTERVAL`], so an idle store learns of writes elsewhere in etcd. If the
//! connection breaks, the feed resumes from its position on any member. Should etcd have
//! compacted revisions the feed had not received yet (it lagged, or was disconnected, while a
//! store compacted), the feed resumes after the compaction point and the watchers that wanted
//! events at or below it are closed with [`crate::StoreError::WatcherTooSlow`] (so their
//! consumers re-list); the others never needed the lost events.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;
use tokio::time::MissedTickBehavior;

use super::Shared;
use super::client::Watch;
use super::history;
use super::retry::Backoff;
use super::wire::{WatchCreateRequest, WatchResponse};
use crate::watchers::{self, History, Registry};
use crate::{Event, Revision, StoreError, WatchStream};

/// How often the feed asks etcd for its current revision.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(2);

/// History events a watcher's history task may read ahead of its consumer.
const HISTORY_AHEAD: usize = 256;

/// The watchers, the event ring and the feed's position, behind the store's lock.
pub(super) struct Hub {
    registry: Registry,
    /// Recent events in revision order: every namespace event in `(floor, position]`.
    ring: VecDeque<Arc<Event>>,
    /// Most events the ring keeps.
    capacity: usize,
    floor: Revision,
    position: Revision,
    /// Announces every new position (for [`Shared::await_feed`]).
    published: watch::Sender<Revision>,
    closed: bool,
}

impl Hub {
    /// A hub whose feed starts after `position` (nothing before it is in the ring).
    pub(super) fn new(position: Revision, capacity: usize) -> Self {
        Hub {
            registry: Registry::default(),
            ring: VecDeque::new(),
            capacity,
            floor: position,
            position,
            published: watch::Sender::new(position),
            closed: false,
        }
    }

    /// How many watchers are registered.
    pub(super) fn watcher_count(&self) -> usize {
        self.registry.len()
    }

    /// Ends every watcher with [`StoreError::Closed`]; no watcher registers afterwards.
    pub(super) fn close(&mut self) {
        self.closed = true;
        self.registry = Registry::default();
        self.ring.clear();
    }

    /// The feed's position: every event at or below it has been published.
    fn position(&self) -> Revision {
        self.position
    }

    /// Publishes the next event of the namespace.
    fn publish(&mut self, event: Event) {
        let event = Arc::new(event);
        self.registry.publish(&event);
        self.advance(event.revision());
        self.ring.push_back(event);
        while self.ring.len() > self.capacity {
            if let Some(oldest) = self.ring.pop_front() {
                self.floor = oldest.revision();
            }
        }
    }

    /// Records that no namespace event up to `revision` remains unpublished.
    fn advance(&mut self, revision: Revision) {
        if revision > self.position {
            self.position = revision;
            self.published.send_replace(revision);
        }
    }

    /// Continues after etcd compacted events the feed had not received: events up to
    /// `compacted` may be lost, so watchers that want any of them are dropped as too slow and
    /// the ring starts over.
    fn skip_to(&mut self, compacted: Revision) {
        self.registry.drop_needing(compacted);
        self.ring.clear();
        self.floor = compacted;
        self.advance(compacted);
    }

    /// The ring's events after `after` that a watch on `prefix` sees.
    fn replay(&self, prefix: &str, after: Revision) -> VecDeque<Arc<Event>> {
        let start = self.ring.partition_point(|event| event.revision() <= after);
        self.ring
            .range(start..)
            .filter(|event| watchers::matches(prefix, &event.kv.key))
            .cloned()
            .collect()
    }
}

/// Registers a watch on `prefix` from `after` (see [`crate::Storage::watch`]).
pub(super) fn watch(shared: &Arc<Shared>, prefix: &str, after: Revision) -> WatchStream {
    let compacted = shared.compacted_revision();
    if after < compacted {
        return watchers::failed(StoreError::Compacted {
            requested: after,
            compacted,
        });
    }
    let mut hub = shared.hub();
    if hub.closed {
        return watchers::failed(StoreError::Closed);
    }
    // Events up to this store's own last write exist even while the feed has not published
    // them yet. They are history as much as the ring's: they must not arrive through the
    // bounded live channel, or a watcher registered just after a burst of writes would
    // overflow on events that were already past when it started.
    let known = hub.position.max(shared.last_write());
    let (history, task) = if after >= known {
        (History::Replay(VecDeque::new()), None)
    } else if after >= hub.floor && known == hub.position {
        (History::Replay(hub.replay(prefix, after)), None)
    } else {
        let (sender, receiver) = mpsc::channel(HISTORY_AHEAD);
        let task = shared.runtime.spawn(history::read(
            Arc::clone(shared),
            prefix.to_owned(),
            after,
            known,
            sender,
        ));
        (History::Feed(receiver), Some(task.abort_handle()))
    };
    let live_after = after.max(known);
    let subscription = hub
        .registry
        .subscribe(prefix, live_after, shared.watch_buffer);
    let registration = Registration {
        shared: Arc::downgrade(shared),
        prefix: prefix.to_owned(),
        id: subscription.id,
        task,
    };
    watchers::stream(subscription, history, Box::new(registration))
}

/// Unregisters a watcher and stops its history task when its stream is dropped.
struct Registration {
    shared: Weak<Shared>,
    prefix: String,
    id: u64,
    task: Option<AbortHandle>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        if let Some(shared) = self.shared.upgrade() {
            shared.hub().registry.unregister(&self.prefix, self.id);
        }
    }
}

/// Why one etcd watch of the feed ended.
enum Ending {
    /// The connection or the watch failed; resume from the position.
    Failed(String),
    /// etcd compacted the revision the feed needed, at this etcd revision.
    Compacted(i64),
}

/// Runs the feed until the store is closed.
pub(super) async fn run(shared: Arc<Shared>) {
    let mut closed = shared.closed.subscribe();
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
    loop {
        let ending = tokio::select! {
            _ = closed.wait_for(|closed| *closed) => return,
            ending = follow(&shared, &mut backoff) => ending,
        };
        match ending {
            Ending::Failed(error) => {
                tracing::warn!("{}: namespace watch interrupted: {error}", shared.label);
            }
            Ending::Compacted(compacted) => {
                tracing::warn!(
                    "{}: namespace watch fell behind compaction at {compacted}; closing the \
                     watches that needed compacted events",
                    shared.label
                );
                let compacted = shared.ns.store_revision(compacted);
                shared.compacted_at(compacted);
                shared.hub().skip_to(compacted);
            }
        }
        tokio::select! {
            _ = closed.wait_for(|closed| *closed) => return,
            () = tokio::time::sleep(backoff.next()) => {}
        }
    }
}

/// Follows one etcd watch of the namespace from the feed's position until it ends.
async fn follow(shared: &Shared, backoff: &mut Backoff) -> Ending {
    let (key, end) = shared.ns.watch_range("");
    let from = shared.ns.etcd_revision(shared.hub().position() + 1);
    let mut watch = match shared.open_watch(key, end, from, true).await {
        Ok(watch) => watch,
        Err(error) => return Ending::Failed(error),
    };
    let mut progress = tokio::time::interval(PROGRESS_INTERVAL);
    progress.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = progress.tick() => {
                if let Err(error) = watch.request_progress().await {
                    return Ending::Failed(error);
                }
            }
            response = watch.next() => match response {
                Some(Ok(response)) => {
                    backoff.reset();
                    if let Some(ending) = apply(shared, &response) {
                        return ending;
                    }
                }
                Some(Err(error)) => return Ending::Failed(error.to_string()),
                None => return Ending::Failed("etcd closed the watch".to_owned()),
            },
        }
    }
}

/// Publishes one response of the namespace watch; `Some` if the watch ended.
fn apply(shared: &Shared, response: &WatchResponse) -> Option<Ending> {
    // Every header (creation, progress, events) carries etcd's current revision. Only events
    // move the position: etcd 3.4 may answer a progress request before it has sent every
    // event up to the revision it reports.
    shared.observe(response.header.as_ref());
    if response.canceled {
        return Some(if response.compact_revision > 0 {
            Ending::Compacted(response.compact_revision)
        } else {
            Ending::Failed(format!(
                "etcd canceled the watch: {}",
                response.cancel_reason
            ))
        });
    }
    // Nothing more to do for answers without events.
    let last = response.events.last().and_then(|event| event.kv.as_ref())?;
    let mut events = Vec::with_capacity(response.events.len());
    for event in &response.events {
        match shared.ns.event(event) {
            Ok(event) => events.push(event),
            Err(error) => tracing::warn!("{}: skipping a watch event: {error}", shared.label),
        }
    }
    let mut hub = shared.hub();
    for event in events {
        hub.publish(event);
    }
    // Skipped events count too.
    hub.advance(shared.ns.store_revision(last.mod_revision));
    None
}

impl Shared {
    /// Waits, at most the store's timeout, until the feed has published every event up to
    /// `revision`.
    pub(super) async fn await_feed(&self, revision: Revision) {
        let mut published = self.hub().published.subscribe();
        let caught_up = published.wait_for(|position| *position >= revision);
        let _ = tokio::time::timeout(self.timeout, caught_up).await;
    }

    /// Opens an etcd watch of `[key, end)` (one key if `end` is empty) from etcd revision
    /// `from`, with previous values, and progress notifications if `progress`.
    pub(super) async fn open_watch(
        &self,
        key: Vec<u8>,
        end: Vec<u8>,
        from: i64,
        progress: bool,
    ) -> Result<Watch, String> {
        let request = WatchCreateRequest {
            key,
            range_end: end,
            start_revision: from,
            progress_notify: progress,
            prev_kv: true,
        };
        match tokio::time::timeout(self.timeout, self.client.watch(request)).await {
            Ok(Ok(watch)) => Ok(watch),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {:?}", self.timeout)),
        }
    }
}
