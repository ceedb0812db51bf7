//! Revisioned key-value storage with etcd semantics (kine-style).
//!
//! Every write gets the next value of one global revision counter, which the API server exposes
//! as `resourceVersion`. Reads can be made at any retained revision, writes are compare-and-swap
//! on a key's latest modification revision, and watches replay history from a revision and then
//! follow live writes. Backends: [`MemoryStore`] (tests, simulated member clusters),
//! [`SqliteStore`] (the durable embedded default) and [`EtcdStore`] (several hub replicas
//! sharing one etcd cluster).

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::Stream;
use futures::future::BoxFuture;

mod backend;
mod engine;
pub mod etcd;
mod memory;
mod sqlite;
mod watchers;

pub use etcd::{EtcdOptions, EtcdStore};
pub use memory::MemoryStore;
pub use sqlite::{SqliteOptions, SqliteStore};

/// A store revision: the global write counter. Revision 0 means "before any write".
pub type Revision = i64;

/// One version of one key, as etcd's `mvccpb.KeyValue`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The full key, e.g. `/registry/apps/deployments/default/web`.
    pub key: String,
    /// The stored bytes (the API server stores JSON).
    pub value: Bytes,
    /// Revision at which this key was last created (survives updates, reset by delete+create).
    pub create_revision: Revision,
    /// Revision of the write that produced this version (the object's resourceVersion).
    pub mod_revision: Revision,
}

/// What a watch event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or updated.
    Put,
    /// The key was deleted.
    Delete,
}

/// One change, delivered by [`Storage::watch`] in revision order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// For a put, the new version. For a delete, the last value of the key with
    /// `mod_revision` set to the deletion's revision (so consumers can emit a DELETED object).
    pub kv: KeyValue,
    /// The version this event replaced, if any (always present for updates and deletes).
    pub prev: Option<KeyValue>,
}

impl Event {
    /// The revision at which this event happened.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}

/// Parameters of [`Storage::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListRequest {
    /// Keys starting with this prefix are listed, in byte order.
    pub prefix: String,
    /// Read at this revision; `None` reads at the current revision.
    pub revision: Option<Revision>,
    /// Resume after this key (exclusive): the continuation point of a paged list.
    pub start_after: Option<String>,
    /// At most this many items; 0 means no limit.
    pub limit: usize,
}

/// The answer of [`Storage::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListResult {
    /// Live keys at `revision`, in key order.
    pub items: Vec<KeyValue>,
    /// The revision the list was read at (the list's resourceVersion).
    pub revision: Revision,
    /// How many more live keys matched after the last item (0 when the list is complete).
    pub remaining: usize,
}

/// Errors of the storage layer. The API server maps them to Kubernetes `Status` reasons.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    /// Create of a key that already exists.
    #[error("key {key} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// Update or delete of a key that does not exist.
    #[error("key {key} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// Compare-and-swap failed: the key's latest revision is not the expected one.
    #[error("key {key} was modified: expected revision {expected}, found {actual}")]
    Conflict {
        /// The key.
        key: String,
        /// The revision the caller expected.
        expected: Revision,
        /// The key's latest modification revision.
        actual: Revision,
    },
    /// A read or watch at a revision older than the compaction point.
    #[error("required revision {requested} has been compacted (compacted at {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The store's compaction revision.
        compacted: Revision,
    },
    /// A read at a revision newer than the current one.
    #[error("required revision {requested} is a future revision (current {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The current revision.
        current: Revision,
    },
    /// A watcher fell too far behind and was dropped; it must re-list.
    #[error("watcher fell behind and was closed")]
    WatcherTooSlow,
    /// The store is shut down.
    #[error("store is closed")]
    Closed,
    /// An I/O or database failure; the write was not acknowledged.
    #[error("storage backend failure: {0}")]
    Backend(String),
}

/// Result type of storage operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// A stream of watch events. The first item is `Err(Compacted)` when the start revision is no
/// longer retained; `Err(WatcherTooSlow)` ends a stream whose consumer fell behind.
pub type WatchStream = Pin<Box<dyn Stream<Item = StoreResult<Event>> + Send>>;

/// The narrow storage contract the API server is written against (etcd/kine semantics).
pub trait Storage: Send + Sync + 'static {
    /// The latest version of `key`, or `None`.
    fn get(&self, key: &str) -> BoxFuture<'_, StoreResult<Option<KeyValue>>>;

    /// Live keys under a prefix at a revision, paged by `start_after` + `limit`.
    fn list(&self, request: ListRequest) -> BoxFuture<'_, StoreResult<ListResult>>;

    /// Creates `key` if absent; fails with `AlreadyExists` otherwise.
    fn create(&self, key: &str, value: Bytes) -> BoxFuture<'_, StoreResult<KeyValue>>;

    /// Replaces `key` if its latest `mod_revision` equals `expected`; else `Conflict`/`NotFound`.
    fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'_, StoreResult<KeyValue>>;

    /// Deletes `key` if its latest `mod_revision` equals `expected`; returns the deleted value
    /// with `mod_revision` set to the deletion revision.
    fn delete(&self, key: &str, expected: Revision) -> BoxFuture<'_, StoreResult<KeyValue>>;

    /// Events for keys under `prefix` with revision greater than `after`, in order: first the
    /// retained history, then live writes. `prefix` must end in `/` or be a complete key.
    fn watch(&self, prefix: &str, after: Revision) -> WatchStream;

    /// Forgets history at and below `revision` (reads and watches there become `Compacted`).
    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>>;

    /// The revision of the latest write.
    fn current_revision(&self) -> Revision;

    /// The compaction revision (0 if never compacted).
    fn compacted_revision(&self) -> Revision;
}

/// A shared handle to any storage backend.
pub type SharedStorage = Arc<dyn Storage>;
