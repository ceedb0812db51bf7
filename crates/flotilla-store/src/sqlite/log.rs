//! The durable revision log: a kine-style append-only SQLite table.
//!
//! Each write is one row whose `id` is its revision. Tombstones keep the deleted value.
//! `prev_revision` points at the row the write superseded (live or tombstone), which is what
//! compaction removes. The compaction revision lives in `meta` under kine's key name.
//!
//! There are no secondary indexes: reads are served from memory, the log is only scanned in
//! `id` order at open and touched by primary key during compaction, so indexes would only slow
//! down appends.

use std::fmt;
use std::path::Path;

use bytes::Bytes;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::engine::{LogRow, Prepared};
use crate::{EventKind, Revision, StoreError, StoreResult};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kine (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
";

/// Page size of a new log. Rows are whole objects (one to a few KiB, appended in revision
/// order); 16 KiB pages hold several, so a group commit writes a few WAL frames (one `pwrite`
/// each) instead of one per row, and a large object spills into fewer overflow pages.
const PAGE_SIZE: u32 = 16_384;

/// The `meta` row holding the compaction revision (kube-apiserver's key name, as in kine).
const COMPACT_REV_KEY: &str = "compact_rev_key";

const INSERT: &str = "INSERT INTO kine \
    (id, name, created, deleted, create_revision, prev_revision, value) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// Opens (creating if needed) the log at `path`: WAL journal, `synchronous=FULL` so every
/// commit is fsynced, and an exclusive lock so a second process cannot write behind our
/// in-memory state.
pub(super) fn open(path: &Path) -> StoreResult<Connection> {
    let failed = |error: rusqlite::Error| {
        StoreError::Backend(format!("opening {}: {error}", path.display()))
    };
    let conn = Connection::open(path).map_err(failed)?;
    // Must precede the first WAL access so the lock is taken and no shared memory is used.
    conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE")
        .map_err(failed)?;
    // Takes effect only when the file is created (an existing log keeps its page size).
    conn.execute_batch(&format!("PRAGMA page_size = {PAGE_SIZE}"))
        .map_err(failed)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(failed)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Backend(format!(
            "{}: cannot use WAL journal (got {mode})",
            path.display()
        )));
    }
    conn.execute_batch("PRAGMA synchronous = FULL")
        .map_err(failed)?;
    conn.execute_batch(SCHEMA).map_err(failed)?;
    Ok(conn)
}

/// Reads the compaction revision and every row, in revision order.
pub(super) fn load(conn: &Connection) -> rusqlite::Result<(Revision, Vec<LogRow>)> {
    let compacted = conn
        .query_row(
            "SELECT value FROM meta WHERE name = ?1",
            [COMPACT_REV_KEY],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let mut statement =
        conn.prepare("SELECT id, name, deleted, create_revision, value FROM kine ORDER BY id")?;
    let rows = statement
        .query_map([], |row| {
            Ok(LogRow {
                revision: row.get(0)?,
                key: row.get(1)?,
                deleted: row.get(2)?,
                create_revision: row.get(3)?,
                value: Bytes::from(row.get::<_, Vec<u8>>(4)?),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((compacted, rows))
}

/// Why an append failed, and whether its outcome is known.
#[derive(Debug)]
pub(super) enum AppendError {
    /// Failed before commit and rolled back: nothing was written.
    NotWritten(rusqlite::Error),
    /// The commit itself failed: the rows may or may not be durable.
    Uncertain(rusqlite::Error),
}

impl fmt::Display for AppendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppendError::NotWritten(error) => write!(f, "write failed: {error}"),
            AppendError::Uncertain(error) => write!(f, "commit failed: {error}"),
        }
    }
}

/// Appends `writes` (consecutive revisions) in one transaction: one fsync for the whole batch.
pub(super) fn append(conn: &mut Connection, writes: &[&Prepared]) -> Result<(), AppendError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(AppendError::NotWritten)?;
    {
        let mut insert = tx.prepare_cached(INSERT).map_err(AppendError::NotWritten)?;
        for write in writes {
            let event = &write.event;
            insert
                .execute(params![
                    event.kv.mod_revision,
                    event.kv.key,
                    event.kind == EventKind::Put && event.prev.is_none(),
                    event.kind == EventKind::Delete,
                    event.kv.create_revision,
                    write.prev_revision,
                    &event.kv.value[..],
                ])
                .map_err(AppendError::NotWritten)?;
        }
    }
    tx.commit().map_err(AppendError::Uncertain)
}

/// Compacts the revisions in `(after, upto]` in one transaction: removes the rows superseded
/// by a write in that range and the tombstones in it, and records `upto` as the compaction
/// revision. Applied to consecutive ranges, this leaves exactly each key's latest live row at
/// or below the compaction revision, plus everything above it.
pub(super) fn compact(
    conn: &mut Connection,
    after: Revision,
    upto: Revision,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Superseded rows first: tombstones in the range still name the rows they replaced.
    tx.execute(
        "DELETE FROM kine WHERE id IN \
         (SELECT prev_revision FROM kine WHERE id > ?1 AND id <= ?2 AND prev_revision > 0)",
        params![after, upto],
    )?;
    tx.execute(
        "DELETE FROM kine WHERE id > ?1 AND id <= ?2 AND deleted = 1",
        params![after, upto],
    )?;
    tx.execute(
        "INSERT INTO meta (name, value) VALUES (?1, ?2) \
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        params![COMPACT_REV_KEY, upto],
    )?;
    tx.commit()
}
