//! The durable embedded backend: a kine-style revision log in SQLite, mirrored in memory.
//!
//! Reads and watches are served by the in-memory engine, rebuilt from the log at open. Writes go
//! to a dedicated writer thread (see [`writer`]) that group-commits them: many concurrent writes
//! share one transaction and one fsync, and each is acknowledged only once durable.

mod log;
mod writer;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use crate::backend::Backend;
use crate::engine::{DEFAULT_WATCH_BUFFER, Engine, WriteOp};
use crate::{KeyValue, Revision, StoreError, StoreResult};
use writer::{Limits, Reply, Request, Writer};

/// How to open a [`SqliteStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// The database file; its directory is created if missing. SQLite adds `-wal` next to it.
    pub path: PathBuf,
    /// Most requests committed in one transaction (default 1,024): bounds the latency a batch
    /// adds to its first writer.
    pub max_batch: usize,
    /// Most revisions compacted per transaction (default 10,000), so a large compaction is
    /// interleaved with writes instead of blocking them.
    pub compaction_step: Revision,
    /// Live events each watcher may have pending before it is closed with
    /// [`StoreError::WatcherTooSlow`] (default 100,000).
    pub watch_buffer: usize,
}

impl SqliteOptions {
    /// Default options for the database file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SqliteOptions {
            path: path.into(),
            ..Self::default()
        }
    }
}

impl Default for SqliteOptions {
    /// Defaults with the database file `flotilla.db` in the working directory.
    fn default() -> Self {
        SqliteOptions {
            path: PathBuf::from("flotilla.db"),
            max_batch: 1024,
            compaction_step: 10_000,
            watch_buffer: DEFAULT_WATCH_BUFFER,
        }
    }
}

/// The durable [`Storage`]: every acknowledged write has been fsynced (WAL, `synchronous=FULL`),
/// concurrent writes share fsyncs through group commit, and reads never touch disk.
///
/// The database is locked exclusively while open; a second store (in this or another process)
/// on the same file fails to open. If a commit fails with an unknown outcome (e.g. an fsync
/// error), the store refuses further writes with [`StoreError::Backend`] until it is reopened,
/// since the log may then hold writes the in-memory state lacks. Dropping the store finishes
/// the writer's current batch and stops its thread; open watch streams then end with
/// [`StoreError::Closed`].
pub struct SqliteStore {
    engine: Arc<Engine>,
    requests: Option<Sender<Request>>,
    writer: Option<JoinHandle<()>>,
    commits: Arc<AtomicU64>,
}

impl SqliteStore {
    /// Opens or creates the store and rebuilds its in-memory state from the log.
    ///
    /// This blocks while reading the whole log (call it at startup or from
    /// `tokio::task::spawn_blocking`). The revision counter continues after the highest revision
    /// ever written, and history above the compaction point is watchable again.
    pub fn open(options: SqliteOptions) -> StoreResult<SqliteStore> {
        if let Some(dir) = options
            .path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir).map_err(|error| {
                StoreError::Backend(format!("creating {}: {error}", dir.display()))
            })?;
        }
        let conn = log::open(&options.path)?;
        let (compacted, rows) = log::load(&conn).map_err(|error| {
            StoreError::Backend(format!("reading {}: {error}", options.path.display()))
        })?;
        let engine = Arc::new(Engine::restore(options.watch_buffer, compacted, rows));
        let (requests, receiver) = mpsc::channel();
        let commits = Arc::new(AtomicU64::new(0));
        let writer = Writer::new(
            conn,
            Arc::clone(&engine),
            receiver,
            Arc::clone(&commits),
            Limits {
                max_batch: options.max_batch,
                compaction_step: options.compaction_step,
            },
        );
        let writer = std::thread::Builder::new()
            .name("flotilla-store-writer".to_owned())
            .spawn(move || writer.run())
            .map_err(|error| StoreError::Backend(format!("starting writer thread: {error}")))?;
        Ok(SqliteStore {
            engine,
            requests: Some(requests),
            writer: Some(writer),
            commits,
        })
    }

    /// How many transactions (each one fsync) this store has committed since it was opened:
    /// write batches and compaction steps. Under concurrent writes it stays far below the
    /// number of writes, which is the point of group commit.
    pub fn commit_count(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// How many watch streams are currently registered (for metrics and leak checks).
    pub fn watcher_count(&self) -> usize {
        self.engine.watcher_count()
    }

    /// Sends a request to the writer thread and waits for its answer.
    fn call<T>(
        &self,
        request: impl FnOnce(Reply<T>) -> Request + Send + 'static,
    ) -> BoxFuture<'_, StoreResult<T>>
    where
        T: Send + 'static,
    {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let requests = self.requests.as_ref().ok_or(StoreError::Closed)?;
            requests
                .send(request(reply))
                .map_err(|_| StoreError::Closed)?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }
}

impl Backend for SqliteStore {
    fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn write(&self, op: WriteOp) -> BoxFuture<'_, StoreResult<KeyValue>> {
        self.call(move |reply| Request::Write { op, reply })
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StoreResult<()>> {
        self.call(move |reply| Request::Compact { revision, reply })
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer's loop once its current batch is done.
        self.requests = None;
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("store writer thread panicked");
        }
    }
}
