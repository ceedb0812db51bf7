//! Property: watches deliver exactly the store's events, checked against a reference model.
//!
//! Random creates, updates, stale updates, deletes and compactions run over a few keys in
//! nested prefixes, each result checked against the model. Then, for every watch prefix and
//! every retained revision, a watch yields exactly the model's events in order (no gaps, no
//! duplicates), reconnecting from the last seen revision continues the same sequence, a watch
//! from a compacted revision fails with `Compacted`, watchers opened before the first write saw
//! everything live, and lists at every retained revision match the model.

use std::collections::BTreeMap;

use flotilla_store::{EtcdOptions, Event, EventKind, KeyValue, Revision, Storage, StoreError};
use proptest::prelude::*;

use crate::common::{
    Fixture, assert_idle, bytes, list_all, next, shared_etcd_options, take_events,
};

const KEYS: [&str; 7] = [
    "/registry/a/x/k0",
    "/registry/a/x/k1",
    "/registry/a/y/k0",
    "/registry/a/y/k1",
    "/registry/b/k0",
    "/registry/b/k1",
    "/registry/bb/k0",
];

const WATCH_PREFIXES: [&str; 6] = [
    "/registry/a/",
    "/registry/a/x/",
    "/registry/b/",
    "/registry/a/y/k1",
    "/registry/bb/",
    "",
];

#[derive(Debug, Clone)]
enum Step {
    Create(usize),
    Update(usize),
    StaleUpdate(usize),
    Delete(usize),
    /// Compact this percentage of the retained history.
    Compact(i64),
}

fn step() -> impl Strategy<Value = Step> {
    let key = 0..KEYS.len();
    prop_oneof![
        3 => key.clone().prop_map(Step::Create),
        3 => key.clone().prop_map(Step::Update),
        1 => key.clone().prop_map(Step::StaleUpdate),
        2 => key.prop_map(Step::Delete),
        1 => (0i64..=100).prop_map(Step::Compact),
    ]
}

/// What a watch on `prefix` sees (directory prefix, exact key, or everything).
fn watched(prefix: &str, key: &str) -> bool {
    prefix.is_empty() || key == prefix || (prefix.ends_with('/') && key.starts_with(prefix))
}

/// The reference model: the latest live versions and every event.
#[derive(Default)]
struct Model {
    latest: BTreeMap<String, KeyValue>,
    events: Vec<Event>,
    current: Revision,
    compacted: Revision,
}

impl Model {
    fn record(&mut self, kind: EventKind, kv: KeyValue, prev: Option<KeyValue>) -> KeyValue {
        self.current = kv.mod_revision;
        match kind {
            EventKind::Put => self.latest.insert(kv.key.clone(), kv.clone()),
            EventKind::Delete => self.latest.remove(&kv.key),
        };
        self.events.push(Event {
            kind,
            kv: kv.clone(),
            prev,
        });
        kv
    }

    fn events_after(&self, prefix: &str, after: Revision) -> Vec<Event> {
        self.events
            .iter()
            .filter(|event| event.revision() > after && watched(prefix, &event.kv.key))
            .cloned()
            .collect()
    }

    /// Live keys with the byte prefix `prefix` at `revision`, in key order.
    fn list_at(&self, prefix: &str, revision: Revision) -> Vec<KeyValue> {
        let mut state = BTreeMap::new();
        for event in self
            .events
            .iter()
            .take_while(|event| event.revision() <= revision)
        {
            match event.kind {
                EventKind::Put => state.insert(event.kv.key.clone(), event.kv.clone()),
                EventKind::Delete => state.remove(&event.kv.key),
            };
        }
        state
            .into_values()
            .filter(|kv| kv.key.starts_with(prefix))
            .collect()
    }
}

/// Runs one step against the store and the model, checking the store's answer.
async fn execute(store: &dyn Storage, model: &mut Model, step: &Step) {
    let revision = model.current + 1;
    let value = bytes(&format!("v{revision}"));
    let not_found = |key: &str| StoreError::NotFound { key: key.into() };
    match *step {
        Step::Create(index) => {
            let key = KEYS[index];
            let want = match model.latest.get(key) {
                Some(_) => Err(StoreError::AlreadyExists { key: key.into() }),
                None => {
                    let kv = KeyValue {
                        key: key.into(),
                        value: value.clone(),
                        create_revision: revision,
                        mod_revision: revision,
                    };
                    Ok(model.record(EventKind::Put, kv, None))
                }
            };
            assert_eq!(store.create(key, value).await, want, "{step:?}");
        }
        Step::Update(index) => {
            let key = KEYS[index];
            let prev = model.latest.get(key).cloned();
            let expected = prev.as_ref().map_or(1, |prev| prev.mod_revision);
            let want = match prev {
                None => Err(not_found(key)),
                Some(prev) => {
                    let kv = KeyValue {
                        value: value.clone(),
                        mod_revision: revision,
                        ..prev.clone()
                    };
                    Ok(model.record(EventKind::Put, kv, Some(prev)))
                }
            };
            assert_eq!(store.update(key, value, expected).await, want, "{step:?}");
        }
        Step::StaleUpdate(index) => {
            let key = KEYS[index];
            let prev = model.latest.get(key);
            let expected = prev.map_or(1, |prev| prev.mod_revision - 1);
            let want = match prev {
                None => not_found(key),
                Some(prev) => StoreError::Conflict {
                    key: key.into(),
                    expected,
                    actual: prev.mod_revision,
                },
            };
            assert_eq!(
                store.update(key, value, expected).await,
                Err(want),
                "{step:?}"
            );
        }
        Step::Delete(index) => {
            let key = KEYS[index];
            let prev = model.latest.get(key).cloned();
            let expected = prev.as_ref().map_or(1, |prev| prev.mod_revision);
            let want = match prev {
                None => Err(not_found(key)),
                Some(prev) => {
                    let kv = KeyValue {
                        mod_revision: revision,
                        ..prev.clone()
                    };
                    Ok(model.record(EventKind::Delete, kv, Some(prev)))
                }
            };
            assert_eq!(store.delete(key, expected).await, want, "{step:?}");
        }
        Step::Compact(percent) => {
            let target = model.compacted + (model.current - model.compacted) * percent / 100;
            assert_eq!(store.compact(target).await, Ok(()), "{step:?}");
            model.compacted = model.compacted.max(target);
        }
    }
    assert_eq!(store.current_revision(), model.current);
    assert_eq!(store.compacted_revision(), model.compacted);
}

/// Reads `expected.len()` events after `after`, dropping the stream after `split` events and
/// resuming from the last revision seen.
async fn watch_with_reconnect(
    store: &dyn Storage,
    prefix: &str,
    after: Revision,
    split: usize,
    expected: &[Event],
) {
    let mut first = store.watch(prefix, after);
    let mut seen = take_events(&mut first, split).await;
    drop(first);
    let resume = seen.last().map_or(after, Event::revision);
    let mut second = store.watch(prefix, resume);
    seen.extend(take_events(&mut second, expected.len() - split).await);
    assert_eq!(
        seen, expected,
        "{prefix:?} after {after}, reconnect after {split}"
    );
    assert_idle(&mut second);
}

async fn check(fixture: Fixture, steps: Vec<Step>) {
    let store = &*fixture.store;
    let mut model = Model::default();
    let mut live: Vec<_> = WATCH_PREFIXES
        .iter()
        .map(|prefix| store.watch(prefix, 0))
        .collect();
    for step in &steps {
        execute(store, &mut model, step).await;
    }
    for (prefix, watch) in WATCH_PREFIXES.iter().zip(&mut live) {
        let expected = model.events_after(prefix, 0);
        assert_eq!(
            take_events(watch, expected.len()).await,
            expected,
            "live {prefix:?}"
        );
        assert_idle(watch);
    }
    for prefix in WATCH_PREFIXES {
        for after in model.compacted..=model.current {
            let expected = model.events_after(prefix, after);
            let mut watch = store.watch(prefix, after);
            assert_eq!(take_events(&mut watch, expected.len()).await, expected);
            assert_idle(&mut watch);
            let splits: Vec<usize> = if after == model.compacted {
                (0..=expected.len()).collect()
            } else {
                vec![expected.len() / 2]
            };
            for split in splits {
                watch_with_reconnect(store, prefix, after, split, &expected).await;
            }
        }
        if model.compacted > 0 {
            let after = model.compacted - 1;
            let mut watch = store.watch(prefix, after);
            let compacted = StoreError::Compacted {
                requested: after,
                compacted: model.compacted,
            };
            assert_eq!(next(&mut watch).await, Some(Err(compacted)));
            assert_eq!(next(&mut watch).await, None);
        }
    }
    for prefix in ["", "/registry/a/", "/registry/b"] {
        for revision in model.compacted..=model.current {
            let list = store
                .list(list_all(prefix, Some(revision)))
                .await
                .expect("list");
            assert_eq!(
                list.items,
                model.list_at(prefix, revision),
                "{prefix:?} at {revision}"
            );
        }
    }
    drop(live);
    assert_eq!(fixture.watcher_count(), 0);
}

fn block_on(check: impl Future<Output = ()>) {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
        .block_on(check);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The property against the memory backend.
    #[test]
    fn memory_watches_match_the_model(steps in prop::collection::vec(step(), 1..60)) {
        block_on(check(Fixture::memory(100_000), steps));
    }
}

proptest! {
    // Every write is an fsync here, so fewer cases.
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The property against the SQLite backend.
    #[test]
    fn sqlite_watches_match_the_model(steps in prop::collection::vec(step(), 1..60)) {
        block_on(check(Fixture::sqlite(100_000), steps));
    }
}

proptest! {
    // Every case runs on the binary's shared etcd, one test at a time, and every write is an
    // fsynced raft round trip, so fewer cases.
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The property against the etcd backend.
    #[test]
    fn etcd_watches_match_the_model(steps in prop::collection::vec(step(), 1..60)) {
        block_on(check(Fixture::etcd(100_000), steps));
    }
}

proptest! {
    // Without an event cache every watch that starts in the past reads its history from etcd,
    // which starts serving it up to 100 ms later: few cases, short histories.
    #![proptest_config(ProptestConfig::with_cases(4))]

    /// The property against the etcd backend with watch history read from etcd.
    #[test]
    fn etcd_watches_from_etcd_history_match_the_model(
        steps in prop::collection::vec(step(), 1..12)
    ) {
        let options = EtcdOptions {
            event_cache: 0,
            ..shared_etcd_options()
        };
        block_on(check(Fixture::etcd_with(options), steps));
    }
}
