//! Test fixtures: a store of any backend, plus small helpers shared by the suites.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::etcd::testing::{self, LocalEtcd};
use flotilla_store::{
    EtcdOptions, EtcdStore, Event, KeyValue, ListRequest, ListResult, MemoryStore, Revision,
    SqliteOptions, SqliteStore, Storage, StoreResult, WatchStream,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use tempfile::TempDir;
use tokio::runtime::Runtime;

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

    /// An etcd store on the binary's shared etcd, in a namespace of its own, whose watchers
    /// buffer `buffer` live events. The store holds the etcd turn while it lives (see
    /// [`EtcdTurn`]).
    pub fn etcd(buffer: usize) -> Self {
        Self::etcd_with(EtcdOptions {
            watch_buffer: buffer,
            ..shared_etcd_options()
        })
    }

    /// An etcd store on the binary's shared etcd with `options` (see [`Fixture::etcd`]).
    pub fn etcd_with(options: EtcdOptions) -> Self {
        let turn = EtcdTurn::take();
        let store = connect_etcd(options).expect("connect to etcd");
        let store = Arc::new(OnTurn { store, _turn: turn });
        let weak = Arc::downgrade(&store);
        Fixture {
            store,
            watchers: Box::new(move || weak.upgrade().map_or(0, |held| held.store.watcher_count())),
            _dir: None,
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

/// The runtime etcd stores of fixtures are connected on (their clients and background tasks
/// run there), so that synchronous fixture constructors work inside any test runtime, even a
/// current-thread one without I/O.
pub fn etcd_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("etcd runtime")
    })
}

/// Runs `future` to completion on [`etcd_runtime`], from a thread outside any runtime.
pub fn on_etcd_runtime<T: Send>(future: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| etcd_runtime().block_on(future))
            .join()
            .expect("etcd runtime thread")
    })
}

/// Connects an etcd store on [`etcd_runtime`].
pub fn connect_etcd(options: EtcdOptions) -> StoreResult<EtcdStore> {
    on_etcd_runtime(EtcdStore::connect(options))
}

/// The etcd this test binary shares: started on first use (installing etcd if needed), killed
/// when the binary exits.
pub fn shared_etcd() -> &'static LocalEtcd {
    static ETCD: OnceLock<LocalEtcd> = OnceLock::new();
    ETCD.get_or_init(|| {
        let binary = testing::locate_or_install().expect("etcd");
        on_etcd_runtime(LocalEtcd::start(&binary)).expect("start etcd")
    })
}

/// Options for a store on the shared etcd in a fresh namespace.
pub fn shared_etcd_options() -> EtcdOptions {
    static NAMESPACES: AtomicUsize = AtomicUsize::new(0);
    EtcdOptions {
        prefix: format!("/test-{}/", NAMESPACES.fetch_add(1, Ordering::Relaxed)),
        ..EtcdOptions::new([shared_etcd().endpoint()])
    }
}

/// An etcd store holding the etcd turn until it is dropped (cases keep only the store).
pub struct OnTurn {
    /// The store (dropped first).
    pub store: EtcdStore,
    _turn: EtcdTurn,
}

impl Storage for OnTurn {
    fn get(&self, key: &str) -> BoxFuture<'_, StoreResult<Option<KeyValue>>> {
        self.store.get(key)
    }

    fn list(&self, request: ListRequest) -> BoxFuture<'_, StoreResult<ListResult>> {
        self.store.list(request)
    }

    fn create(&self, key: &str, value: Bytes) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.store.create(key, value)
    }

    fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.store.update(key, value, expected)
    }

    fn delete(&self, key: &str, expected: Revision) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.store.delete(key, expected)
    }

    fn watch(&self, prefix: &str, after: Revision) -> WatchStream {
        self.store.watch(prefix, after)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        self.store.compact(revision)
    }

    fn current_revision(&self) -> Revision {
        self.store.current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.store.compacted_revision()
    }
}

/// Exclusive use of the shared etcd. Its revision counter is global and the cases assert exact
/// revisions, so stores on it are used one test at a time.
pub struct EtcdTurn(());

static ETCD_BUSY: Mutex<bool> = Mutex::new(false);
static ETCD_FREED: Condvar = Condvar::new();

impl EtcdTurn {
    /// Waits for the turn.
    pub fn take() -> Self {
        let mut busy = ETCD_BUSY.lock().unwrap_or_else(PoisonError::into_inner);
        while *busy {
            busy = ETCD_FREED
                .wait(busy)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *busy = true;
        EtcdTurn(())
    }
}

impl Drop for EtcdTurn {
    fn drop(&mut self) {
        *ETCD_BUSY.lock().unwrap_or_else(PoisonError::into_inner) = false;
        ETCD_FREED.notify_one();
    }
}
