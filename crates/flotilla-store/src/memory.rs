//! The in-memory backend: the MVCC engine alone, for tests and simulated member clusters.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::backend::Backend;
use crate::engine::{DEFAULT_WATCH_BUFFER, Engine, WriteOp};
use crate::{KeyValue, Revision, StoreResult};

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
}

impl Backend for MemoryStore {
    fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn write(&self, op: WriteOp) -> BoxFuture<'_, StoreResult<KeyValue>> {
        Box::pin(async move { self.engine.write(&op) })
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async move { self.engine.compact(revision) })
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}
