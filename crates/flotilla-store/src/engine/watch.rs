//! Watchers: the registry keyed by prefix, bounded per-watcher channels, and the stream type.
//!
//! A watcher's prefix ends in `/` (a directory of keys), is a complete key, or is empty (every
//! key). Publishing an event for key `K` therefore only looks up the empty prefix, each
//! `/`-terminated prefix of `K` and `K` itself, so its cost depends on the depth of `K`, never on
//! how many watchers wait on other prefixes.
//!
//! A watcher starts with a replay buffer copied from the event ring under the same lock that
//! publishing takes, and is registered under that lock too, so replay and live events meet
//! without a gap or a duplicate. Live events go through a bounded channel; a full channel closes
//! the watcher with [`StoreError::WatcherTooSlow`] instead of blocking the writer.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::Engine;
use crate::{Event, Revision, StoreError, StoreResult, WatchStream};

/// Whether a watcher on `prefix` sees `key`; must agree with [`Registry::publish`].
pub(super) fn matches(prefix: &str, key: &str) -> bool {
    prefix.is_empty() || key == prefix || (prefix.ends_with('/') && key.starts_with(prefix))
}

/// Live watchers, grouped by prefix.
#[derive(Default)]
pub(super) struct Registry {
    by_prefix: HashMap<String, HashMap<u64, Subscriber>>,
    next_id: u64,
}

/// The registry's end of one watcher.
struct Subscriber {
    sender: mpsc::Sender<Arc<Event>>,
    overflowed: Arc<AtomicBool>,
}

impl Subscriber {
    /// Queues `event`; `false` when the watcher is gone or overflowed and must be dropped.
    fn offer(&self, event: &Arc<Event>) -> bool {
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

impl Registry {
    fn register(&mut self, prefix: &str, subscriber: Subscriber) -> u64 {
        self.next_id += 1;
        self.by_prefix
            .entry(prefix.to_owned())
            .or_default()
            .insert(self.next_id, subscriber);
        self.next_id
    }

    /// Forgets watcher `id` on `prefix` (no-op if it was already dropped).
    pub(super) fn unregister(&mut self, prefix: &str, id: u64) {
        if let Some(subscribers) = self.by_prefix.get_mut(prefix) {
            subscribers.remove(&id);
            if subscribers.is_empty() {
                self.by_prefix.remove(prefix);
            }
        }
    }

    /// Sends `event` to every watcher whose prefix matches its key.
    pub(super) fn publish(&mut self, event: &Arc<Event>) {
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

    /// How many watchers are registered.
    pub(super) fn len(&self) -> usize {
        self.by_prefix.values().map(HashMap::len).sum()
    }
}

/// Registers a watcher on `prefix` that first yields `replay`, then live events with revision
/// above `after` (which may lie in the future).
pub(super) fn subscribe(
    engine: &Arc<Engine>,
    registry: &mut Registry,
    prefix: &str,
    after: Revision,
    replay: VecDeque<Arc<Event>>,
    buffer: usize,
) -> WatchStream {
    let (sender, receiver) = mpsc::channel(buffer);
    let overflowed = Arc::new(AtomicBool::new(false));
    let id = registry.register(
        prefix,
        Subscriber {
            sender,
            overflowed: Arc::clone(&overflowed),
        },
    );
    Box::pin(Watcher {
        after,
        replay,
        live: Some(receiver),
        overflowed,
        registration: Some(Registration {
            engine: Arc::downgrade(engine),
            prefix: prefix.to_owned(),
            id,
        }),
    })
}

/// A watch that fails at once with `error` (e.g. a start revision that was compacted).
pub(super) fn failed(error: StoreError) -> WatchStream {
    Box::pin(futures::stream::iter([Err(error)]))
}

/// The consumer's end of one watcher.
struct Watcher {
    /// Live events at or below this revision are skipped (a watch may start in the future).
    after: Revision,
    /// History events not yet yielded.
    replay: VecDeque<Arc<Event>>,
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
        self.replay.clear();
        self.registration = None;
        Poll::Ready(Some(Err(error)))
    }
}

impl Stream for Watcher {
    type Item = StoreResult<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let Some(live) = this.live.as_mut() else {
            return Poll::Ready(None);
        };
        if this.overflowed.load(Ordering::Acquire) {
            return this.finish(StoreError::WatcherTooSlow);
        }
        if let Some(event) = this.replay.pop_front() {
            return Poll::Ready(Some(Ok(Arc::unwrap_or_clone(event))));
        }
        loop {
            return match live.poll_recv(cx) {
                Poll::Ready(Some(event)) if event.revision() <= this.after => continue,
                Poll::Ready(Some(event)) => Poll::Ready(Some(Ok(Arc::unwrap_or_clone(event)))),
                // The sender is gone: either it overflowed or the store shut down.
                Poll::Ready(None) if this.overflowed.load(Ordering::Acquire) => {
                    this.finish(StoreError::WatcherTooSlow)
                }
                Poll::Ready(None) => this.finish(StoreError::Closed),
                Poll::Pending => Poll::Pending,
            };
        }
    }
}

/// Removes a watcher from its engine's registry when dropped.
struct Registration {
    engine: Weak<Engine>,
    prefix: String,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.upgrade() {
            engine.unregister(&self.prefix, self.id);
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
