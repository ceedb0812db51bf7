//! The in-memory backend: the MVCC engine alone, for tests and simulated member clusters.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::engine::{DEFAULT_WATCH_BUFFER, Engine, WriteOp};
use crate::{KeyValue, ListRequest, ListResult, Revision, Storage, StoreResult, WatchStream};

/// A [`Storage`] kept entirely in memory: writes apply immediately and nothing survives the
/// process. Same semantics as [`crate::SqliteStore`], so tests and simulated members behave like
/// the durable hub.
pub struct MemoryStore {
    engine: Arc<Engine>,
}

impl MemoryStore {
    /// An empty store whose watchers buffer up to 100,000 live events each.
    pub fn new() -> Self {
        Self::with_watch_buffer(DEFAULT_WATCH_BUFFER)
    }

    /// An empty store whose watchers buffer up to `capacity` live events each (at least 1)
    /// before they are closed with [`crate::StoreError::WatcherTooSlow`].
    pub fn with_watch_buffer(capacity: usize) -> Self {
        MemoryStore {
            engine: Arc::new(Engine::new(capacity)),
        }
    }

    /// How many watch streams are currently registered (for metrics and leak checks).
    pub fn watcher_count(&self) -> usize {
        self.engine.watcher_count()
    }

    fn write(&self, op: WriteOp) -> BoxFuture<'_, StoreResult<KeyValue>> {
        Box::pin(async move { self.engine.write(&op) })
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl Storage for MemoryStore {
    fn get(&self, key: &str) -> BoxFuture<'_, StoreResult<Option<KeyValue>>> {
        let key = key.to_owned();
        Box::pin(async move { Ok(self.engine.get(&key)) })
    }

    fn list(&self, request: ListRequest) -> BoxFuture<'_, StoreResult<ListResult>> {
        Box::pin(async move { self.engine.list(&request) })
    }

    fn create(&self, key: &str, value: Bytes) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.write(WriteOp::Create {
            key: key.to_owned(),
            value,
        })
    }

    fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.write(WriteOp::Update {
            key: key.to_owned(),
            value,
            expected,
        })
    }

    fn delete(&self, key: &str, expected: Revision) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.write(WriteOp::Delete {
            key: key.to_owned(),
            expected,
        })
    }

    fn watch(&self, prefix: &str, after: Revision) -> WatchStream {
        self.engine.watch(prefix, after)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async move { self.engine.compact(revision) })
    }

    fn current_revision(&self) -> Revision {
        self.engine.current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.engine.compacted_revision()
    }
}
