//! The writer thread: the only owner of the SQLite connection, doing group commit.
//!
//! Each round drains every queued request (up to a batch limit), checks the writes' conditions
//! against the engine plus the batch's earlier writes, appends the accepted ones in one
//! transaction (one fsync), applies them to the engine — which publishes their events in
//! revision order — and only then answers every caller. A failed condition fails only its own
//! request. Compaction runs in bounded steps between rounds so it never stalls writers for long.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::log::{self, AppendError};
use crate::engine::{Engine, Prepared, WriteOp};
use crate::{KeyValue, Revision, StoreError, StoreResult};

/// Where the writer sends one answer.
pub(super) type Reply<T> = oneshot::Sender<StoreResult<T>>;

/// A request to the writer thread.
pub(super) enum Request {
    /// A conditional write.
    Write {
        /// The write.
        op: WriteOp,
        /// Answered once the write is durable and visible, or failed.
        reply: Reply<KeyValue>,
    },
    /// A compaction up to `revision`.
    Compact {
        /// The revision to compact to.
        revision: Revision,
        /// Answered once the compaction point has reached `revision`.
        reply: Reply<()>,
    },
}

/// Tunables of the writer, from [`super::SqliteOptions`].
pub(super) struct Limits {
    /// Most requests taken per round.
    pub(super) max_batch: usize,
    /// Most revisions compacted per transaction.
    pub(super) compaction_step: Revision,
}

/// State of the writer thread.
pub(super) struct Writer {
    conn: Connection,
    engine: Arc<Engine>,
    requests: Receiver<Request>,
    commits: Arc<AtomicU64>,
    limits: Limits,
    compaction: Option<Compaction>,
    /// Set when a commit failed with an unknown outcome: writes are refused from then on,
    /// because the log may hold rows the engine does not.
    failure: Option<String>,
}

/// A compaction in progress.
struct Compaction {
    target: Revision,
    waiters: Vec<(Revision, Reply<()>)>,
}

impl Writer {
    /// A writer over an open log whose content `engine` already mirrors.
    pub(super) fn new(
        conn: Connection,
        engine: Arc<Engine>,
        requests: Receiver<Request>,
        commits: Arc<AtomicU64>,
        limits: Limits,
    ) -> Self {
        Writer {
            conn,
            engine,
            requests,
            commits,
            limits: Limits {
                max_batch: limits.max_batch.max(1),
                compaction_step: limits.compaction_step.max(1),
            },
            compaction: None,
            failure: None,
        }
    }

    /// Serves requests until every sender is gone.
    pub(super) fn run(mut self) {
        while let Some(batch) = self.next_batch() {
            let mut writes = Vec::with_capacity(batch.len());
            let mut compactions = Vec::new();
            for request in batch {
                match request {
                    Request::Write { op, reply } => writes.push((op, reply)),
                    Request::Compact { revision, reply } => compactions.push((revision, reply)),
                }
            }
            if !writes.is_empty() {
                self.commit(writes);
            }
            for (revision, reply) in compactions {
                self.queue_compaction(revision, reply);
            }
            self.compaction_step();
        }
    }

    /// The next round's requests: blocks for the first one unless a compaction has work left,
    /// then takes whatever else is queued. `None` once the store is dropped.
    fn next_batch(&self) -> Option<Vec<Request>> {
        let mut batch = Vec::new();
        if self.compaction.is_none() {
            batch.push(self.requests.recv().ok()?);
        }
        while batch.len() < self.limits.max_batch {
            match self.requests.try_recv() {
                Ok(request) => batch.push(request),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) if batch.is_empty() => return None,
                Err(TryRecvError::Disconnected) => break,
            }
        }
        Some(batch)
    }

    /// Group commit of one round of writes.
    fn commit(&mut self, writes: Vec<(WriteOp, Reply<KeyValue>)>) {
        if let Some(failure) = &self.failure {
            for (_, reply) in writes {
                // A caller that gave up waiting is no error.
                let _ = reply.send(Err(StoreError::Backend(failure.clone())));
            }
            return;
        }
        let plans = self.engine.plan(writes.iter().map(|(op, _)| op));
        let accepted: Vec<&Prepared> = plans.iter().filter_map(|plan| plan.as_ref().ok()).collect();
        if !accepted.is_empty() {
            if let Err(error) = log::append(&mut self.conn, &accepted) {
                let message = error.to_string();
                if let AppendError::Uncertain(_) = error {
                    tracing::error!(%message, "store commit failed; refusing further writes");
                    self.failure = Some(message.clone());
                } else {
                    tracing::warn!(%message, "store write batch failed");
                }
                for (_, reply) in writes {
                    let _ = reply.send(Err(StoreError::Backend(message.clone())));
                }
                return;
            }
            self.commits.fetch_add(1, Ordering::Relaxed);
            self.engine.apply(accepted);
        }
        for ((_, reply), plan) in writes.into_iter().zip(plans) {
            let _ = reply.send(plan.map(|prepared| prepared.event.kv.clone()));
        }
    }

    /// Validates a compaction request and adds it to the compaction in progress.
    fn queue_compaction(&mut self, revision: Revision, reply: Reply<()>) {
        match self.engine.check_compact(revision) {
            Ok(true) => {
                let compaction = self.compaction.get_or_insert_with(|| Compaction {
                    target: revision,
                    waiters: Vec::new(),
                });
                compaction.target = compaction.target.max(revision);
                compaction.waiters.push((revision, reply));
            }
            Ok(false) => {
                let _ = reply.send(Ok(()));
            }
            Err(error) => {
                let _ = reply.send(Err(error));
            }
        }
    }

    /// Compacts the next step of revisions, if a compaction is in progress, and answers the
    /// requests it completes.
    fn compaction_step(&mut self) {
        let Some(compaction) = self.compaction.as_mut() else {
            return;
        };
        let from = self.engine.compacted_revision();
        let upto = compaction
            .target
            .min(from.saturating_add(self.limits.compaction_step));
        let outcome = log::compact(&mut self.conn, from, upto)
            .map_err(|error| StoreError::Backend(format!("compaction failed: {error}")))
            .and_then(|()| {
                self.commits.fetch_add(1, Ordering::Relaxed);
                self.engine.compact(upto)
            });
        match outcome {
            Ok(()) => {
                let (done, waiting) = std::mem::take(&mut compaction.waiters)
                    .into_iter()
                    .partition(|(revision, _)| *revision <= upto);
                compaction.waiters = waiting;
                for (_, reply) in done {
                    let _ = reply.send(Ok(()));
                }
                if upto >= compaction.target {
                    self.compaction = None;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "store compaction failed");
                for (_, reply) in compaction.waiters.drain(..) {
                    let _ = reply.send(Err(error.clone()));
                }
                self.compaction = None;
            }
        }
    }
}
