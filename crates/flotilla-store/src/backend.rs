//! What distinguishes one backend from another: how a write becomes durable and how
//! compaction reaches disk. Reads and watches are served by the shared in-memory [`Engine`]
//! for every backend, so `Storage` is implemented once, here, for all of them.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::engine::{Engine, WriteOp};
use crate::{KeyValue, ListRequest, ListResult, Revision, Storage, StoreResult, WatchStream};

/// A storage backend: the shared engine plus its own write and compaction paths. Crate-private:
/// callers only ever see [`Storage`].
pub(crate) trait Backend: Send + Sync + 'static {
    /// The in-memory state every read and watch is served from.
    fn engine(&self) -> &Arc<Engine>;
    /// Performs one write, resolving once it is acknowledged (durable, for durable backends).
    fn write(&self, op: WriteOp) -> BoxFuture<'_, StoreResult<KeyValue>>;
    /// Forgets history at and below `revision`.
    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>>;
}

impl<B: Backend> Storage for B {
    fn get(&self, key: &str) -> BoxFuture<'_, StoreResult<Option<KeyValue>>> {
        let key = key.to_owned();
        Box::pin(async move { Ok(self.engine().get(&key)) })
    }

    fn list(&self, request: ListRequest) -> BoxFuture<'_, StoreResult<ListResult>> {
        Box::pin(async move { self.engine().list(&request) })
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
        self.engine().watch(prefix, after)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        Backend::compact(self, revision)
    }

    fn current_revision(&self) -> Revision {
        self.engine().current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.engine().compacted_revision()
    }
}
