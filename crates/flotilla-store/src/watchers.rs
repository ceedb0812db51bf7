//! Watchers, shared by every backend: the registry keyed by prefix, bounded per-watcher
//! channels, and the stream type.
//!
//! A watcher's prefix ends in `/` (a directory of keys), is a complete key, or is empty (every
//! key). Publishing an event for key `K` therefore only looks up the empty prefix, each
//! `/`-terminated prefix of `K` and `K` itself, so its cost depends on the depth of `K`, never on
//! how many watchers wait on other prefixes.
//!
//! A watcher is registered under the same lock its backend publishes under, and starts with the
//! history that lock guarantees is complete up to the moment of registration: either a replay
//! buffer copied from an in-memory event ring, or a channel fed by a task that reads the history
//! from elsewhere (etcd) and says when it is done. Live events go through a bounded channel; a
//! full channel closes the watcher with [`StoreError::WatcherTooSlow`] instead of blocking the
//! writer. History never counts against that bound.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::{Event, Revision, StoreError, StoreResult, WatchStream};

/// Whether a watcher on `prefix` sees `key`; must agree with [`Registry::publish`].
pub(crate) fn matches(prefix: &str, key: &str) -> bool {
    prefix.is_empty() || key == prefix || (prefix.ends_with('/') && key.starts_with(prefix))
}

/// Live watchers, grouped by prefix.
#[derive(Default)]
pub(crate) struct Registry {
    by_prefix: HashMap<String, HashMap<u64, Subscriber>>,
    next_id: u64,
}

/// The registry's end of one watcher.
struct Subscriber {
    sender: mpsc::Sender<Arc<Event>>,
    overflowed: Arc<AtomicBool>,
    /// The watcher wants live events above this revision; those at or below it are its
    /// history (or before its start) and never take room in its channel.
    after: Revision,
}

impl Subscriber {
    /// Queues `event` unless the watcher does not want it; `false` when the watcher is gone or
    /// overflowed and must be dropped.
    fn offer(&self, event: &Arc<Event>) -> bool {
        if event.revision() <= self.after {
            return true;
        }
        match self.sender.try_send(Arc::clone(event)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.overflowed.store(true, Ordering::Release);
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }
}

/// A watcher just registered: its id (to unregister it) and the consumer's end of its channel.
pub(crate) struct Subscription {
    /// The id [`Registry::unregister`] takes.
    pub(crate) id: u64,
    receiver: mpsc::Receiver<Arc<Event>>,
    overflowed: Arc<AtomicBool>,
}

impl Registry {
    /// Registers a watcher on `prefix` for live events above `after` (which may lie in the
    /// future) whose channel holds up to `buffer` events.
    pub(crate) fn subscribe(
        &mut self,
        prefix: &str,
        after: Revision,
        buffer: usize,
    ) -> Subscription {
        let (sender, receiver) = mpsc::channel(buffer.max(1));
        let overflowed = Arc::new(AtomicBool::new(false));
        self.next_id += 1;
        self.by_prefix.entry(prefix.to_owned()).or_default().insert(
            self.next_id,
            Subscriber {
                sender,
                overflowed: Arc::clone(&overflowed),
                after,
            },
        );
        Subscription {
            id: self.next_id,
            receiver,
            overflowed,
        }
    }

    /// Forgets watcher `id` on `prefix` (no-op if it was already dropped).
    pub(crate) fn unregister(&mut self, prefix: &str, id: u64) {
        if let Some(subscribers) = self.by_prefix.get_mut(prefix) {
            subscribers.remove(&id);
            if subscribers.is_empty() {
                self.by_prefix.remove(prefix);
            }
        }
    }

    /// Sends `event` to every watcher whose prefix matches its key.
    pub(crate) fn publish(&mut self, event: &Arc<Event>) {
        if self.by_prefix.is_empty() {
            return;
        }
        let key = event.kv.key.as_str();
        self.deliver("", event);
        for (slash, _) in key.match_indices('/') {
            self.deliver(&key[..=slash], event);
        }
        if !key.is_empty() && !key.ends_with('/') {
            self.deliver(key, event);
        }
    }

    fn deliver(&mut self, prefix: &str, event: &Arc<Event>) {
        let Some(subscribers) = self.by_prefix.get_mut(prefix) else {
            return;
        };
        subscribers.retain(|_, subscriber| subscriber.offer(event));
        if subscribers.is_empty() {
            self.by_prefix.remove(prefix);
        }
    }

    /// Drops every watcher that wants events at or below `lost` as if it had fallen behind:
    /// their streams end with [`StoreError::WatcherTooSlow`] (for when events up to `lost`
    /// can no longer be delivered).
    pub(crate) fn drop_needing(&mut self, lost: Revision) {
        for subscribers in self.by_prefix.values_mut() {
            subscribers.retain(|_, subscriber| {
                let keep = subscriber.after >= lost;
                if !keep {
                    subscriber.overflowed.store(true, Ordering::Release);
                }
                keep
            });
        }
        self.by_prefix
            .retain(|_, subscribers| !subscribers.is_empty());
    }

    /// How many watchers are registered.
    pub(crate) fn len(&self) -> usize {
        self.by_prefix.values().map(HashMap::len).sum()
    }
}

/// What a history task sends a watcher, in order: events, then `Done` or `Failed`.
#[derive(Debug)]
pub(crate) enum HistoryItem {
    /// One past event.
    Event(Arc<Event>),
    /// Every past event has been sent; live events follow.
    Done,
    /// The history cannot be read (e.g. it was compacted); the watch ends with this error.
    Failed(StoreError),
}

/// Where a watcher's past events come from.
pub(crate) enum History {
    /// Events copied from an in-memory ring at registration.
    Replay(VecDeque<Arc<Event>>),
    /// Events read by a task, ending with [`HistoryItem::Done`].
    Feed(mpsc::Receiver<HistoryItem>),
}

/// Anything whose drop unregisters a watcher (and stops its history task, if any).
pub(crate) type Registration = Box<dyn Send>;

/// The stream of a watcher registered with `subscription`: first `history`, then its live
/// events. Dropping the stream, or its end, drops `registration`.
pub(crate) fn stream(
    subscription: Subscription,
    history: History,
    registration: Registration,
) -> WatchStream {
    let (replay, feed) = match history {
        History::Replay(replay) => (replay, None),
        History::Feed(feed) => (VecDeque::new(), Some(feed)),
    };
    Box::pin(Watcher {
        replay,
        feed,
        early: None,
        live: Some(subscription.receiver),
        overflowed: subscription.overflowed,
        registration: Some(registration),
    })
}

/// A watch that fails at once with `error` (e.g. a start revision that was compacted).
pub(crate) fn failed(error: StoreError) -> WatchStream {
    Box::pin(futures::stream::iter([Err(error)]))
}

/// The consumer's end of one watcher.
struct Watcher {
    /// Replayed history events not yet yielded.
    replay: VecDeque<Arc<Event>>,
    /// History still being read by a task; `None` once it said `Done` (or if there is none).
    feed: Option<mpsc::Receiver<HistoryItem>>,
    /// A live event taken while the feed was still running, yielded once it is done.
    early: Option<Arc<Event>>,
    /// Live events; `None` once the stream has ended.
    live: Option<mpsc::Receiver<Arc<Event>>>,
    /// Set by the publisher when the live channel overflowed.
    overflowed: Arc<AtomicBool>,
    /// Unregisters the watcher when the stream ends or is dropped.
    registration: Option<Registration>,
}

impl Watcher {
    /// Ends the stream with `error`, releasing its registration and buffers.
    fn finish(&mut self, error: StoreError) -> Poll<Option<StoreResult<Event>>> {
        self.live = None;
        self.feed = None;
        self.early = None;
        self.replay.clear();
        self.registration = None;
        Poll::Ready(Some(Err(error)))
    }

    /// Why the live channel closed: the publisher dropped it on overflow or on shutdown.
    fn closed_reason(&self) -> StoreError {
        if self.overflowed.load(Ordering::Acquire) {
            StoreError::WatcherTooSlow
        } else {
            StoreError::Closed
        }
    }

    /// The next live event, `Ready(None)` once the channel is closed.
    fn poll_live(&mut self, cx: &mut Context<'_>) -> Poll<Option<Arc<Event>>> {
        match self.live.as_mut() {
            Some(live) => live.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}

impl Stream for Watcher {
    type Item = StoreResult<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.live.is_none() {
            return Poll::Ready(None);
        }
        if this.overflowed.load(Ordering::Acquire) {
            return this.finish(StoreError::WatcherTooSlow);
        }
        if let Some(feed) = this.feed.as_mut() {
            match feed.poll_recv(cx) {
                Poll::Ready(Some(HistoryItem::Event(event))) => {
                    return Poll::Ready(Some(Ok(Arc::unwrap_or_clone(event))));
                }
                Poll::Ready(Some(HistoryItem::Done)) => this.feed = None,
                Poll::Ready(Some(HistoryItem::Failed(error))) => return this.finish(error),
                // The task stopped without finishing: the store shut down.
                Poll::Ready(None) => return this.finish(StoreError::Closed),
                Poll::Pending => {
                    // Notice a closed live channel even while history is pending; an early live
                    // event waits (the feed reaches its revision soon, which ends the history).
                    if this.early.is_none() {
                        match this.poll_live(cx) {
                            Poll::Ready(Some(event)) => this.early = Some(event),
                            Poll::Ready(None) => return this.finish(this.closed_reason()),
                            Poll::Pending => {}
                        }
                    }
                    return Poll::Pending;
                }
            }
        }
        if let Some(event) = this.replay.pop_front().or_else(|| this.early.take()) {
            return Poll::Ready(Some(Ok(Arc::unwrap_or_clone(event))));
        }
        match this.poll_live(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(Ok(Arc::unwrap_or_clone(event)))),
            Poll::Ready(None) => this.finish(this.closed_reason()),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn prefix_matching_follows_directory_and_full_key_rules() {
        let cases = [
            ("", "/registry/apps/deployments/a/web", true),
            ("/registry/apps/", "/registry/apps/deployments/a/web", true),
            (
                "/registry/apps/deployments/a/",
                "/registry/apps/deployments/a/web",
                true,
            ),
            (
                "/registry/apps/deployments/a/",
                "/registry/apps/deployments/ab/web",
                false,
            ),
            (
                "/registry/apps/deployments/a/web",
                "/registry/apps/deployments/a/web",
                true,
            ),
            (
                "/registry/apps/deployments/a/web",
                "/registry/apps/deployments/a/web2",
                false,
            ),
            (
                "/registry/apps/deployments/a",
                "/registry/apps/deployments/a/web",
                false,
            ),
        ];
        for (prefix, key, expected) in cases {
            assert_eq!(matches(prefix, key), expected, "{prefix} vs {key}");
        }
    }
}
