//! The in-memory MVCC engine shared by both backends.
//!
//! The engine holds everything reads and watches need, so neither ever touches disk:
//!
//! - per-key version history above the compaction point (plus each key's latest live version at
//!   or below it), so lists can be served at any retained revision;
//! - the event ring: every event with a revision above the compaction point, in revision order,
//!   so watches can replay history;
//! - the watcher registry (see [`crate::watchers`]).
//!
//! Writes are split in two steps so the SQLite backend can make them durable in between:
//! [`Engine::plan`] checks compare-and-swap conditions and assigns revisions without changing
//! anything, and [`Engine::apply`] installs the planned events and publishes them to watchers.
//! The memory backend does both under one lock with [`Engine::write`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use bytes::Bytes;

use crate::watchers::{self, History, Registry};
use crate::{
    Event, EventKind, KeyValue, ListRequest, ListResult, Revision, StoreError, StoreResult,
    WatchStream,
};

/// Default capacity of each watcher's live-event channel.
pub(crate) const DEFAULT_WATCH_BUFFER: usize = 100_000;

/// One version of a key in the history.
#[derive(Debug, Clone)]
struct Version {
    /// Revision of the write that produced this version.
    mod_revision: Revision,
    /// Revision at which the key was created (for a tombstone: of the deleted incarnation).
    create_revision: Revision,
    /// The value; `None` marks a tombstone (the key was deleted at `mod_revision`).
    value: Option<Bytes>,
}

impl Version {
    /// The version a planned event leaves behind.
    fn of(event: &Event) -> Self {
        Version {
            mod_revision: event.kv.mod_revision,
            create_revision: event.kv.create_revision,
            value: match event.kind {
                EventKind::Put => Some(event.kv.value.clone()),
                EventKind::Delete => None,
            },
        }
    }

    /// This version as a [`KeyValue`], or `None` for a tombstone.
    fn key_value(&self, key: &str) -> Option<KeyValue> {
        self.value.as_ref().map(|value| KeyValue {
            key: key.to_owned(),
            value: value.clone(),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
        })
    }
}

/// A conditional write, as the [`crate::Storage`] trait offers them.
#[derive(Debug, Clone)]
pub(crate) enum WriteOp {
    /// Create `key` if it has no live version.
    Create {
        /// The key.
        key: String,
        /// The new value.
        value: Bytes,
    },
    /// Replace `key` if its latest version is live and has `mod_revision == expected`.
    Update {
        /// The key.
        key: String,
        /// The new value.
        value: Bytes,
        /// The caller's view of the key's latest modification revision.
        expected: Revision,
    },
    /// Delete `key` if its latest version is live and has `mod_revision == expected`.
    Delete {
        /// The key.
        key: String,
        /// The caller's view of the key's latest modification revision.
        expected: Revision,
    },
}

impl WriteOp {
    /// The key this operation writes.
    fn key(&self) -> &str {
        match self {
            WriteOp::Create { key, .. }
            | WriteOp::Update { key, .. }
            | WriteOp::Delete { key, .. } => key,
        }
    }
}

/// A write whose conditions held, with its revision assigned, ready to be logged and applied.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// The event the write produces (its revision is `event.kv.mod_revision`).
    pub(crate) event: Arc<Event>,
    /// Revision of the key's previous version, live or tombstone (0 if none): the log row this
    /// write supersedes, which compaction may later remove.
    pub(crate) prev_revision: Revision,
}

/// One row of a durable log, in revision order, used to rebuild the engine.
#[derive(Debug, Clone)]
pub(crate) struct LogRow {
    /// The row's revision.
    pub(crate) revision: Revision,
    /// The key.
    pub(crate) key: String,
    /// Whether the row is a tombstone.
    pub(crate) deleted: bool,
    /// The key's create revision.
    pub(crate) create_revision: Revision,
    /// The value (for a tombstone, the deleted value).
    pub(crate) value: Bytes,
}

/// The MVCC state and watcher registry behind one lock.
pub(crate) struct Engine {
    state: RwLock<State>,
    watch_buffer: usize,
}

struct State {
    /// Revision of the latest write.
    current: Revision,
    /// Compaction revision: history at and below it is gone.
    compacted: Revision,
    /// Per-key history, oldest first; never empty.
    keys: BTreeMap<String, Vec<Version>>,
    /// Every event with revision in `(compacted, current]`, in order.
    ring: VecDeque<Arc<Event>>,
    /// Live watchers by prefix.
    watchers: Registry,
}

impl Engine {
    /// An empty engine whose watchers buffer up to `watch_buffer` live events each.
    pub(crate) fn new(watch_buffer: usize) -> Self {
        Engine {
            state: RwLock::new(State {
                current: 0,
                compacted: 0,
                keys: BTreeMap::new(),
                ring: VecDeque::new(),
                watchers: Registry::default(),
            }),
            watch_buffer: watch_buffer.max(1),
        }
    }

    /// Rebuilds an engine from a durable log: `rows` in revision order, `compacted` the
    /// persisted compaction revision. Rows at or below it seed the history; rows above it are
    /// replayed as events into the ring.
    pub(crate) fn restore(
        watch_buffer: usize,
        compacted: Revision,
        rows: impl IntoIterator<Item = LogRow>,
    ) -> Self {
        let engine = Engine::new(watch_buffer);
        {
            let mut state = engine.write_state();
            state.compacted = compacted;
            state.current = compacted;
            for row in rows {
                state.restore_row(row);
            }
            state.compact_all_keys();
        }
        engine
    }

    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The revision of the latest write.
    pub(crate) fn current_revision(&self) -> Revision {
        self.read_state().current
    }

    /// The compaction revision.
    pub(crate) fn compacted_revision(&self) -> Revision {
        self.read_state().compacted
    }

    /// The latest live version of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<KeyValue> {
        let state = self.read_state();
        state.keys.get(key)?.last()?.key_value(key)
    }

    /// Live keys under a prefix at a revision, paged.
    pub(crate) fn list(&self, request: &ListRequest) -> StoreResult<ListResult> {
        self.read_state().list(request)
    }

    /// Checks and applies one write atomically (the memory backend's write path).
    pub(crate) fn write(&self, op: &WriteOp) -> StoreResult<KeyValue> {
        let mut state = self.write_state();
        let latest = state
            .keys
            .get(op.key())
            .and_then(|versions| versions.last());
        let prepared = prepare(op, latest, state.current + 1)?;
        let kv = prepared.event.kv.clone();
        state.install(prepared.event);
        Ok(kv)
    }

    /// Checks a batch of writes against the current state and the batch's earlier writes,
    /// assigning consecutive revisions to those that pass. Changes nothing: the caller makes
    /// the accepted writes durable, then calls [`Engine::apply`] with them in order.
    pub(crate) fn plan<'a>(
        &self,
        ops: impl IntoIterator<Item = &'a WriteOp>,
    ) -> Vec<StoreResult<Prepared>> {
        let state = self.read_state();
        let mut batch: HashMap<&'a str, Version> = HashMap::new();
        let mut next = state.current + 1;
        let mut plans = Vec::new();
        for op in ops {
            let latest = batch.get(op.key()).or_else(|| {
                state
                    .keys
                    .get(op.key())
                    .and_then(|versions| versions.last())
            });
            let plan = prepare(op, latest, next);
            if let Ok(prepared) = &plan {
                next += 1;
                batch.insert(op.key(), Version::of(&prepared.event));
            }
            plans.push(plan);
        }
        plans
    }

    /// Installs writes planned by [`Engine::plan`] (in order, with no other write in between)
    /// and publishes their events.
    pub(crate) fn apply<'a>(&self, prepared: impl IntoIterator<Item = &'a Prepared>) {
        let mut state = self.write_state();
        for write in prepared {
            state.install(Arc::clone(&write.event));
        }
    }

    /// Validates a compaction request: `Ok(false)` when `revision` is already compacted (a
    /// no-op), `Ok(true)` when there is work, `FutureRevision` beyond the current revision.
    pub(crate) fn check_compact(&self, revision: Revision) -> StoreResult<bool> {
        let state = self.read_state();
        if revision <= state.compacted {
            Ok(false)
        } else if revision > state.current {
            Err(StoreError::FutureRevision {
                requested: revision,
                current: state.current,
            })
        } else {
            Ok(true)
        }
    }

    /// Forgets history at and below `revision` (see [`Engine::check_compact`] for the rules).
    pub(crate) fn compact(&self, revision: Revision) -> StoreResult<()> {
        if self.check_compact(revision)? {
            let mut state = self.write_state();
            // Re-check under the write lock: another compaction may have overtaken us.
            if revision > state.compacted {
                state.compact(revision);
            }
        }
        Ok(())
    }

    /// Watches keys matching `prefix` with revision above `after` (see [`crate::Storage::watch`]).
    pub(crate) fn watch(self: &Arc<Self>, prefix: &str, after: Revision) -> WatchStream {
        let mut state = self.write_state();
        if after < state.compacted {
            return watchers::failed(StoreError::Compacted {
                requested: after,
                compacted: state.compacted,
            });
        }
        let start = state
            .ring
            .partition_point(|event| event.revision() <= after);
        let replay = state
            .ring
            .range(start..)
            .filter(|event| watchers::matches(prefix, &event.kv.key))
            .cloned()
            .collect();
        let subscription = state.watchers.subscribe(prefix, after, self.watch_buffer);
        let registration = Registration {
            engine: Arc::downgrade(self),
            prefix: prefix.to_owned(),
            id: subscription.id,
        };
        watchers::stream(
            subscription,
            History::Replay(replay),
            Box::new(registration),
        )
    }

    /// How many watchers are registered.
    pub(crate) fn watcher_count(&self) -> usize {
        self.read_state().watchers.len()
    }
}

/// Removes a watcher from its engine's registry when dropped.
struct Registration {
    engine: Weak<Engine>,
    prefix: String,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.upgrade() {
            engine
                .write_state()
                .watchers
                .unregister(&self.prefix, self.id);
        }
    }
}

/// Checks `op` against the key's latest version and builds the event it produces at `revision`.
fn prepare(op: &WriteOp, latest: Option<&Version>, revision: Revision) -> StoreResult<Prepared> {
    let key = op.key();
    let live = latest.filter(|version| version.value.is_some());
    let (kind, value, create_revision, prev) = match op {
        WriteOp::Create { value, .. } => {
            if live.is_some() {
                return Err(StoreError::AlreadyExists {
                    key: key.to_owned(),
                });
            }
            (EventKind::Put, value.clone(), revision, None)
        }
        WriteOp::Update {
            value, expected, ..
        } => {
            let prev = expect_revision(key, live, *expected)?;
            (
                EventKind::Put,
                value.clone(),
                prev.create_revision,
                Some(prev),
            )
        }
        WriteOp::Delete { expected, .. } => {
            let prev = expect_revision(key, live, *expected)?;
            (
                EventKind::Delete,
                prev.value.clone(),
                prev.create_revision,
                Some(prev),
            )
        }
    };
    Ok(Prepared {
        event: Arc::new(Event {
            kind,
            kv: KeyValue {
                key: key.to_owned(),
                value,
                create_revision,
                mod_revision: revision,
            },
            prev,
        }),
        prev_revision: latest.map_or(0, |version| version.mod_revision),
    })
}

/// The compare of compare-and-swap: the key's live version must be at `expected`.
fn expect_revision(key: &str, live: Option<&Version>, expected: Revision) -> StoreResult<KeyValue> {
    let Some(current) = live.and_then(|version| version.key_value(key)) else {
        return Err(StoreError::NotFound {
            key: key.to_owned(),
        });
    };
    if current.mod_revision != expected {
        return Err(StoreError::Conflict {
            key: key.to_owned(),
            expected,
            actual: current.mod_revision,
        });
    }
    Ok(current)
}

impl State {
    fn list(&self, request: &ListRequest) -> StoreResult<ListResult> {
        let revision = match request.revision {
            None => self.current,
            Some(requested) if requested > self.current => {
                return Err(StoreError::FutureRevision {
                    requested,
                    current: self.current,
                });
            }
            Some(requested) if requested < self.compacted => {
                return Err(StoreError::Compacted {
                    requested,
                    compacted: self.compacted,
                });
            }
            Some(requested) => requested,
        };
        let prefix = request.prefix.as_str();
        let start = match request.start_after.as_deref() {
            Some(after) if after >= prefix => Bound::Excluded(after),
            _ => Bound::Included(prefix),
        };
        let limit = if request.limit == 0 {
            usize::MAX
        } else {
            request.limit
        };
        let mut items = Vec::new();
        let mut remaining = 0;
        let matching = self
            .keys
            .range::<str, _>((start, Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix));
        for (key, versions) in matching {
            let Some(version) = version_at(versions, revision, self.current) else {
                continue;
            };
            if version.value.is_none() {
                continue;
            }
            if items.len() < limit {
                items.extend(version.key_value(key));
            } else {
                remaining += 1;
            }
        }
        Ok(ListResult {
            items,
            revision,
            remaining,
        })
    }

    /// Appends an event's version to its key's history and the ring, and publishes it.
    fn install(&mut self, event: Arc<Event>) {
        debug_assert_eq!(
            event.revision(),
            self.current + 1,
            "revisions must be consecutive"
        );
        self.current = event.revision();
        let version = Version::of(&event);
        match self.keys.get_mut(event.kv.key.as_str()) {
            Some(versions) => versions.push(version),
            None => {
                self.keys.insert(event.kv.key.clone(), vec![version]);
            }
        }
        self.watchers.publish(&event);
        self.ring.push_back(event);
    }

    /// Adds one durable log row: history only at or below the compaction point, history and
    /// an event above it.
    fn restore_row(&mut self, row: LogRow) {
        let versions = self.keys.entry(row.key.clone()).or_default();
        let version = Version {
            mod_revision: row.revision,
            create_revision: row.create_revision,
            value: (!row.deleted).then(|| row.value.clone()),
        };
        if row.revision > self.compacted {
            let prev = versions.last().and_then(|last| last.key_value(&row.key));
            let kind = if row.deleted {
                EventKind::Delete
            } else {
                EventKind::Put
            };
            self.ring.push_back(Arc::new(Event {
                kind,
                kv: KeyValue {
                    key: row.key,
                    value: row.value,
                    create_revision: row.create_revision,
                    mod_revision: row.revision,
                },
                prev,
            }));
            self.current = row.revision;
        }
        versions.push(version);
    }

    /// Drops history at and below `revision` and trims the ring.
    fn compact(&mut self, revision: Revision) {
        while let Some(event) = self.ring.front()
            && event.revision() <= revision
        {
            // Only keys written since the last compaction can have history to drop.
            if let Some(event) = self.ring.pop_front() {
                self.compact_key(&event.kv.key, revision);
            }
        }
        self.compacted = revision;
    }

    /// Normalises every key's history to the compaction point (used after a restore).
    fn compact_all_keys(&mut self) {
        let compacted = self.compacted;
        self.keys.retain(|_, versions| {
            compact_history(versions, compacted);
            !versions.is_empty()
        });
    }

    fn compact_key(&mut self, key: &str, revision: Revision) {
        if let Some(versions) = self.keys.get_mut(key) {
            compact_history(versions, revision);
            if versions.is_empty() {
                self.keys.remove(key);
            }
        }
    }
}

/// The version of a key visible at `revision` (the newest one at or below it).
fn version_at(versions: &[Version], revision: Revision, current: Revision) -> Option<&Version> {
    if revision >= current {
        return versions.last();
    }
    let visible = versions.partition_point(|version| version.mod_revision <= revision);
    visible.checked_sub(1).map(|index| &versions[index])
}

/// Keeps only what reads at or above `revision` can see: the version visible at `revision` if
/// it is live, and everything newer.
fn compact_history(versions: &mut Vec<Version>, revision: Revision) {
    let visible = versions.partition_point(|version| version.mod_revision <= revision);
    let Some(base) = visible.checked_sub(1) else {
        return;
    };
    let drop_to = if versions[base].value.is_some() {
        base
    } else {
        visible
    };
    versions.drain(..drop_to);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(mod_revision: Revision, live: bool) -> Version {
        Version {
            mod_revision,
            create_revision: 1,
            value: live.then(|| Bytes::from_static(b"v")),
        }
    }

    fn revisions(versions: &[Version]) -> Vec<Revision> {
        versions
            .iter()
            .map(|version| version.mod_revision)
            .collect()
    }

    /// A history as (revision, live) pairs, a compaction revision, the revisions kept.
    type CompactCase = (&'static [(Revision, bool)], Revision, &'static [Revision]);

    #[test]
    fn compact_history_keeps_the_visible_live_version_and_newer() {
        let cases: &[CompactCase] = &[
            (&[(1, true), (3, true), (5, true)], 4, &[3, 5]),
            (&[(1, true), (3, true), (5, true)], 5, &[5]),
            (&[(1, true), (3, true), (5, true)], 0, &[1, 3, 5]),
            (&[(1, true), (3, false), (5, true)], 4, &[5]),
            (&[(1, true), (3, false)], 3, &[]),
            (&[(1, true), (3, false)], 2, &[1, 3]),
        ];
        for (history, revision, expected) in cases {
            let mut versions: Vec<Version> = history
                .iter()
                .map(|&(rev, live)| version(rev, live))
                .collect();
            compact_history(&mut versions, *revision);
            assert_eq!(revisions(&versions), *expected, "{history:?} at {revision}");
        }
    }

    #[test]
    fn version_at_finds_the_newest_version_not_after_the_revision() {
        let versions = vec![version(2, true), version(4, false), version(7, true)];
        let at = |revision| version_at(&versions, revision, 9).map(|v| v.mod_revision);
        assert_eq!(at(1), None);
        assert_eq!(at(2), Some(2));
        assert_eq!(at(6), Some(4));
        assert_eq!(at(9), Some(7));
    }

    #[test]
    fn plan_sees_earlier_writes_of_the_same_batch() {
        let engine = Engine::new(8);
        let key = "/k".to_owned();
        let ops = vec![
            WriteOp::Create {
                key: key.clone(),
                value: Bytes::from_static(b"a"),
            },
            WriteOp::Create {
                key: key.clone(),
                value: Bytes::from_static(b"b"),
            },
            WriteOp::Update {
                key: key.clone(),
                value: Bytes::from_static(b"c"),
                expected: 1,
            },
            WriteOp::Delete {
                key: key.clone(),
                expected: 1,
            },
        ];
        let plans = engine.plan(&ops);
        assert_eq!(plans[0].as_ref().map(|p| p.event.revision()).ok(), Some(1));
        assert_eq!(
            plans[1].as_ref().err(),
            Some(&StoreError::AlreadyExists { key: key.clone() })
        );
        assert_eq!(plans[2].as_ref().map(|p| p.prev_revision).ok(), Some(1));
        assert_eq!(
            plans[3].as_ref().err(),
            Some(&StoreError::Conflict {
                key: key.clone(),
                expected: 1,
                actual: 2
            })
        );
        // Planning changes nothing until applied.
        assert_eq!(engine.current_revision(), 0);
        engine.apply(plans.iter().filter_map(|plan| plan.as_ref().ok()));
        assert_eq!(engine.current_revision(), 2);
        assert_eq!(
            engine.get(&key).map(|kv| kv.value),
            Some(Bytes::from_static(b"c"))
        );
    }
}
