//! Test fixtures: a store of either backend, plus small helpers shared by the suites.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{
    Event, KeyValue, ListRequest, MemoryStore, Revision, SqliteOptions, SqliteStore, Storage,
    StoreResult, WatchStream,
};
use futures::{FutureExt, StreamExt};
use tempfile::TempDir;

/// A store under test, with what the backend needs kept alive.
pub struct Fixture {
    /// The store, as the API server sees it.
    pub store: Arc<dyn Storage>,
    watchers: Box<dyn Fn() -> usize + Send + Sync>,
    /// The SQLite directory, deleted after the store is dropped (fields drop in order).
    _dir: Option<TempDir>,
}

impl Fixture {
    /// A memory store whose watchers buffer `buffer` live events.
    pub fn memory(buffer: usize) -> Self {
        let store = Arc::new(MemoryStore::with_watch_buffer(buffer));
        let weak = Arc::downgrade(&store);
        Fixture {
            store,
            watchers: Box::new(move || weak.upgrade().map_or(0, |store| store.watcher_count())),
            _dir: None,
        }
    }

    /// A SQLite store in a fresh temporary directory whose watchers buffer `buffer` live events.
    pub fn sqlite(buffer: usize) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(
            SqliteStore::open(SqliteOptions {
                watch_buffer: buffer,
                ..SqliteOptions::new(dir.path().join("store.db"))
            })
            .expect("open sqlite store"),
        );
        let weak = Arc::downgrade(&store);
        Fixture {
            store,
            watchers: Box::new(move || weak.upgrade().map_or(0, |store| store.watcher_count())),
            _dir: Some(dir),
        }
    }

    /// How many watchers the backend has registered.
    pub fn watcher_count(&self) -> usize {
        (self.watchers)()
    }
}

/// Bytes of a string.
pub fn bytes(value: &str) -> Bytes {
    Bytes::copy_from_slice(value.as_bytes())
}

/// A whole (unpaged) list at `revision`.
pub fn list_all(prefix: &str, revision: Option<Revision>) -> ListRequest {
    ListRequest {
        prefix: prefix.to_owned(),
        revision,
        ..ListRequest::default()
    }
}

/// The next item of a watch, failing the test after 10 s.
pub async fn next(stream: &mut WatchStream) -> Option<StoreResult<Event>> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("watch stalled")
}

/// Exactly `count` events from a watch, failing on errors or stalls.
pub async fn take_events(stream: &mut WatchStream, count: usize) -> Vec<Event> {
    let mut events = Vec::with_capacity(count);
    while events.len() < count {
        match next(stream).await {
            Some(Ok(event)) => events.push(event),
            other => panic!(
                "expected event {} of {count}, got {other:?}",
                events.len() + 1
            ),
        }
    }
    events
}

/// Asserts that a watch has nothing more to deliver right now.
pub fn assert_idle(stream: &mut WatchStream) {
    if let Some(item) = stream.next().now_or_never() {
        panic!("watch delivered an unexpected item: {item:?}");
    }
}

/// Shorthand for a [`KeyValue`].
pub fn kv(key: &str, value: &str, create_revision: Revision, mod_revision: Revision) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: bytes(value),
        create_revision,
        mod_revision,
    }
}
