//! The distributed backend: [`Storage`] on an etcd cluster (3.4 or later), for several hub
//! API-server replicas sharing one etcd.
//!
//! Every read and write is an etcd request, so no replica serves state another replica's write
//! has superseded: gets and lists are linearizable ranges (a list at a revision is a range at
//! that revision), creates are transactions comparing `create_revision == 0`, updates and
//! deletes transactions comparing `mod_revision`. Reads are retried while etcd is unavailable;
//! writes only when etcd certainly did not apply them (connection refused, member without a
//! leader), otherwise an unknown outcome is reported as [`crate::StoreError::Backend`].
//!
//! Keys live under [`EtcdOptions::prefix`], so stores with different prefixes share one etcd
//! without seeing each other. Each prefix (namespace) has a marker key, the prefix followed by
//! the byte `0xFF` (which no UTF-8 key contains, so no read or watch of the store covers it),
//! created on first use. Store revisions are etcd revisions minus the marker's creation
//! revision: a fresh namespace starts at revision 0 like the embedded backends, and every
//! replica of the namespace agrees on the mapping. Do not delete the marker.
//!
//! Each store follows its namespace with one etcd watch and fans the events out to its watchers
//! in memory, keeping the most recent ones ([`EtcdOptions::event_cache`]) to replay to watches
//! that start in the recent past; older watches read their history from etcd first. The same
//! watch keeps [`Storage::current_revision`] fresh. [`testing`] starts throwaway etcd servers
//! and clusters for tests and benchmarks.
//!
//! etcd is spoken to through Flotilla's own small gRPC [`client`], whose messages are written
//! by hand, so that building needs nothing but the Rust toolchain (no `protoc`).

pub mod client;
mod feed;
mod history;
mod keys;
mod kv;
mod retry;
pub mod testing;
mod wire;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::engine::DEFAULT_WATCH_BUFFER;
use crate::{
    KeyValue, ListRequest, ListResult, Revision, Storage, StoreError, StoreResult, WatchStream,
};
use client::{Client, ConnectOptions};
use feed::Hub;
use keys::Namespace;
use retry::{Failure, Idempotence};
use wire::{Compare, CompareResult, Request, Response, TargetUnion, TxnRequest};

/// The marker key's value, for whoever finds it with `etcdctl`.
const MARKER_VALUE: &str =
    "flotilla-store namespace: store revision = etcd revision - create_revision of this key";

/// How to connect an [`EtcdStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// Client URLs of the etcd members, e.g. `http://10.0.0.1:2379`. Give every member: requests
    /// are balanced over them and go to the others while one is down.
    pub endpoints: Vec<String>,
    /// Prefix of every key in etcd (may be empty). Stores with different prefixes share one etcd
    /// without seeing each other, provided no prefix is a prefix of another (end them with a
    /// separator such as `/`). Replicas of one hub use the same prefix.
    pub prefix: String,
    /// Live events each watcher may have pending before it is closed with
    /// [`StoreError::WatcherTooSlow`] (default 100,000).
    pub watch_buffer: usize,
    /// Most recent events kept in memory so that watches starting in the recent past replay them
    /// without an etcd watch of their own (default 10,000; 0 sends every such watch to etcd).
    pub event_cache: usize,
    /// How long one operation may take, retries included, before it fails with
    /// [`StoreError::Backend`] (default 10 s).
    pub timeout: Duration,
}

impl EtcdOptions {
    /// Default options for the cluster at `endpoints`.
    pub fn new<E: Into<String>>(endpoints: impl IntoIterator<Item = E>) -> Self {
        EtcdOptions {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}

impl Default for EtcdOptions {
    /// Defaults for a local etcd at `http://127.0.0.1:2379`, with no prefix.
    fn default() -> Self {
        EtcdOptions {
            endpoints: vec!["http://127.0.0.1:2379".to_owned()],
            prefix: String::new(),
            watch_buffer: DEFAULT_WATCH_BUFFER,
            event_cache: 10_000,
            timeout: Duration::from_secs(10),
        }
    }
}

/// A [`Storage`] on an etcd cluster (3.4 or later), shareable by several processes.
///
/// Reads and writes are etcd requests; watches, [`Storage::current_revision`] and
/// [`Storage::compacted_revision`] follow the namespace through one background etcd watch, so
/// they also reflect writes made by other stores on the same namespace, within the watch's
/// latency. Writes to etcd outside the namespace also advance revisions (etcd has one revision
/// counter); an idle store learns of those within a few seconds. Compactions made by other
/// stores are learned at connection, and later when a read or watch runs into them.
///
/// Operations fail with [`StoreError::Backend`] once etcd has been unreachable for
/// [`EtcdOptions::timeout`]. Watch streams outlive connection failures: they resume where they
/// were on any member, and besides overflowing their buffer they end with
/// [`StoreError::WatcherTooSlow`] only if etcd compacted events they still needed meanwhile.
/// Must be connected inside a Tokio runtime, which runs the background work. Dropping the
/// store stops it; open watch streams then end with [`StoreError::Closed`].
pub struct EtcdStore {
    shared: Arc<Shared>,
}

/// State shared by the store, its background tasks and its watch streams.
struct Shared {
    client: Client,
    ns: Namespace,
    /// Names the cluster in error messages.
    label: String,
    timeout: Duration,
    watch_buffer: usize,
    /// Highest etcd revision seen in any response.
    current: AtomicI64,
    /// Highest compaction revision known (store revision).
    compacted: AtomicI64,
    /// Revision of this store's latest write (store revision).
    last_write: AtomicI64,
    /// Watchers, the event cache and the feed's position.
    hub: Mutex<Hub>,
    /// Set once the store is dropped; background tasks stop.
    closed: watch::Sender<bool>,
    /// Where background tasks run.
    runtime: Handle,
}

impl EtcdStore {
    /// Connects to etcd and opens the namespace under `options.prefix` (recording its origin
    /// on first use). Fails with [`StoreError::Backend`] if etcd cannot be reached within
    /// `options.timeout`, or outside a Tokio runtime (which runs the background work).
    pub async fn connect(options: EtcdOptions) -> StoreResult<EtcdStore> {
        if options.endpoints.is_empty() {
            return Err(StoreError::Backend("no etcd endpoints given".to_owned()));
        }
        let runtime = Handle::try_current().map_err(|_| {
            StoreError::Backend("the etcd store must be connected inside a Tokio runtime".into())
        })?;
        let label = format!("etcd at {}", options.endpoints.join(","));
        let connect = ConnectOptions {
            require_leader: true,
            connect_timeout: Some(options.timeout.min(Duration::from_secs(5))),
            keep_alive: Some((Duration::from_secs(10), Duration::from_secs(10))),
        };
        let client = Client::connect(&options.endpoints, &connect)
            .await
            .map_err(|error| StoreError::Backend(format!("{label}: {error}")))?;
        let (origin, current) = open_namespace(&client, &options, &label).await?;
        let (closed, _) = watch::channel(false);
        let ns = Namespace::new(&options.prefix, origin);
        let shared = Arc::new(Shared {
            client,
            hub: Mutex::new(Hub::new(ns.store_revision(current), options.event_cache)),
            ns,
            label,
            timeout: options.timeout,
            watch_buffer: options.watch_buffer.max(1),
            current: AtomicI64::new(current),
            compacted: AtomicI64::new(0),
            last_write: AtomicI64::new(0),
            closed,
            runtime,
        });
        shared.learn_compaction(origin).await?;
        shared.runtime.spawn(feed::run(Arc::clone(&shared)));
        Ok(EtcdStore { shared })
    }

    /// How many watch streams are currently registered (for metrics and leak checks).
    pub fn watcher_count(&self) -> usize {
        self.shared.hub().watcher_count()
    }
}

/// Creates the namespace's marker unless it exists; returns the origin and etcd's revision.
async fn open_namespace(
    client: &Client,
    options: &EtcdOptions,
    label: &str,
) -> StoreResult<(i64, i64)> {
    let marker = Namespace::marker(&options.prefix);
    let txn = TxnRequest {
        compare: vec![Compare::new(
            marker.clone(),
            CompareResult::Equal,
            TargetUnion::CreateRevision(0),
        )],
        success: vec![Request::put(marker.clone(), MARKER_VALUE.into(), false).into()],
        failure: vec![Request::get(marker).into()],
    };
    // Idempotent: a repeated attempt finds the marker the first one created.
    let what = format!("opening namespace {:?}", options.prefix);
    let response = retry::call(options.timeout, Idempotence::Idempotent, &what, || {
        client.txn(txn.clone())
    })
    .await
    .map_err(|failure| Shared::failure(label, failure))?;
    let current = header_revision(response.header.as_ref());
    if response.succeeded {
        return Ok((current, current));
    }
    let origin = response.responses.iter().find_map(|op| match &op.response {
        Some(Response::Range(range)) => range.kvs.first().map(|kv| kv.create_revision),
        _ => None,
    });
    match origin {
        Some(origin) => Ok((origin, current)),
        None => Err(StoreError::Backend(format!(
            "{label}: {what}: the marker key vanished"
        ))),
    }
}

impl Shared {
    /// The hub, even if a panicking thread poisoned its lock (its state stays consistent).
    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records an etcd revision seen in a response header.
    fn observe(&self, header: Option<&wire::ResponseHeader>) {
        if let Some(header) = header {
            self.current.fetch_max(header.revision, Ordering::AcqRel);
        }
    }

    /// The store's current revision.
    fn current_revision(&self) -> Revision {
        self.ns
            .store_revision(self.current.load(Ordering::Acquire))
            .max(0)
    }

    /// The store's compaction revision.
    fn compacted_revision(&self) -> Revision {
        self.compacted.load(Ordering::Acquire)
    }

    /// Records a write of this store at store revision `revision`.
    fn wrote(&self, revision: Revision) {
        self.last_write.fetch_max(revision, Ordering::AcqRel);
    }

    /// The store revision of this store's latest acknowledged write.
    fn last_write(&self) -> Revision {
        self.last_write.load(Ordering::Acquire)
    }

    /// Records a compaction at store revision `revision`.
    fn compacted_at(&self, revision: Revision) {
        self.compacted.fetch_max(revision, Ordering::AcqRel);
    }

    /// A failure as a [`StoreError::Backend`] naming the cluster (revision failures included:
    /// callers that expect them map them first).
    fn failure(label: &str, failure: Failure) -> StoreError {
        let message = match failure {
            Failure::Compacted => "the revision has been compacted".to_owned(),
            Failure::FutureRevision => "the revision is a future revision".to_owned(),
            Failure::Other(message) => message,
        };
        StoreError::Backend(format!("{label}: {message}"))
    }

    /// Stops background work and ends every watch with [`StoreError::Closed`].
    fn close(&self) {
        self.closed.send_replace(true);
        self.hub().close();
    }
}

impl Drop for EtcdStore {
    fn drop(&mut self) {
        self.shared.close();
    }
}

impl Storage for EtcdStore {
    fn get(&self, key: &str) -> BoxFuture<'_, StoreResult<Option<KeyValue>>> {
        let key = key.to_owned();
        Box::pin(async move { self.shared.get(&key).await })
    }

    fn list(&self, request: ListRequest) -> BoxFuture<'_, StoreResult<ListResult>> {
        Box::pin(async move { self.shared.list(&request).await })
    }

    fn create(&self, key: &str, value: Bytes) -> BoxFuture<'_, StoreResult<KeyValue>> {
        let key = key.to_owned();
        Box::pin(async move { self.shared.create(&key, value).await })
    }

    fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'_, StoreResult<KeyValue>> {
        let key = key.to_owned();
        Box::pin(async move { self.shared.update(&key, value, expected).await })
    }

    fn delete(&self, key: &str, expected: Revision) -> BoxFuture<'_, StoreResult<KeyValue>> {
        let key = key.to_owned();
        Box::pin(async move { self.shared.delete(&key, expected).await })
    }

    fn watch(&self, prefix: &str, after: Revision) -> WatchStream {
        feed::watch(&self.shared, prefix, after)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async move { self.shared.compact(revision).await })
    }

    fn current_revision(&self) -> Revision {
        self.shared.current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.shared.compacted_revision()
    }
}

/// The revision in a response header (0 if etcd sent none).
fn header_revision(header: Option<&wire::ResponseHeader>) -> i64 {
    header.map_or(0, |header| header.revision)
}
