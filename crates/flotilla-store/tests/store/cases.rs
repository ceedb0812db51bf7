//! Behaviour of every [`Storage`] operation and error, run against every backend.
//!
//! Each case takes a fixture factory (buffer size → fixture); `backend_suite!` at the bottom
//! instantiates every case once per backend.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use flotilla_store::{
    Event, EventKind, KeyValue, ListRequest, Revision, Storage, StoreError, StoreResult,
};
use futures::future::join_all;

use crate::common::{Fixture, assert_idle, bytes, kv, list_all, next, take_events};

/// Builds a fixture whose watchers buffer the given number of live events.
type Make = fn(usize) -> Fixture;

/// The watch buffer of cases that do not test overflow.
const BUFFER: usize = 100_000;

/// A write, for table-driven cases.
#[derive(Debug, Clone, Copy)]
enum Op {
    Create(&'static str, &'static str),
    Update(&'static str, &'static str, Revision),
    Delete(&'static str, Revision),
}

async fn run(store: &dyn Storage, op: Op) -> StoreResult<KeyValue> {
    match op {
        Op::Create(key, value) => store.create(key, bytes(value)).await,
        Op::Update(key, value, expected) => store.update(key, bytes(value), expected).await,
        Op::Delete(key, expected) => store.delete(key, expected).await,
    }
}

async fn revisions_start_at_zero_and_count_successful_writes(make: Make) {
    let store = make(BUFFER).store;
    assert_eq!(
        (store.current_revision(), store.compacted_revision()),
        (0, 0)
    );
    let table = [
        (Op::Create("/t/a", "1"), Ok(kv("/t/a", "1", 1, 1))),
        (Op::Update("/t/a", "2", 1), Ok(kv("/t/a", "2", 1, 2))),
        (Op::Create("/t/b", "1"), Ok(kv("/t/b", "1", 3, 3))),
        (Op::Delete("/t/a", 2), Ok(kv("/t/a", "2", 1, 4))),
        (Op::Create("/t/a", "3"), Ok(kv("/t/a", "3", 5, 5))),
    ];
    for (op, expected) in table {
        assert_eq!(run(&*store, op).await, expected, "{op:?}");
        assert_eq!(
            store.current_revision(),
            expected.map_or(0, |kv| kv.mod_revision)
        );
    }
}

async fn failed_writes_report_the_right_error_and_change_nothing(make: Make) {
    let store = make(BUFFER).store;
    for op in [
        Op::Create("/t/a", "1"),
        Op::Update("/t/a", "2", 1),
        Op::Create("/t/gone", "x"),
        Op::Delete("/t/gone", 3),
    ] {
        run(&*store, op).await.expect("setup write");
    }
    let not_found = |key: &str| StoreError::NotFound { key: key.into() };
    let conflict = |key: &str, expected, actual| StoreError::Conflict {
        key: key.into(),
        expected,
        actual,
    };
    let table = [
        (
            Op::Create("/t/a", "x"),
            StoreError::AlreadyExists { key: "/t/a".into() },
        ),
        (Op::Update("/t/missing", "x", 1), not_found("/t/missing")),
        (Op::Update("/t/gone", "x", 3), not_found("/t/gone")),
        (Op::Update("/t/a", "x", 1), conflict("/t/a", 1, 2)),
        (Op::Update("/t/a", "x", 7), conflict("/t/a", 7, 2)),
        (Op::Delete("/t/missing", 1), not_found("/t/missing")),
        (Op::Delete("/t/gone", 3), not_found("/t/gone")),
        (Op::Delete("/t/a", 1), conflict("/t/a", 1, 2)),
    ];
    for (op, error) in table {
        assert_eq!(run(&*store, op).await, Err(error), "{op:?}");
    }
    assert_eq!(store.current_revision(), 4);
    assert_eq!(store.get("/t/a").await, Ok(Some(kv("/t/a", "2", 1, 2))));
    assert_eq!(store.get("/t/gone").await, Ok(None));
}

async fn get_returns_the_latest_live_version(make: Make) {
    let store = make(BUFFER).store;
    assert_eq!(store.get("/g/a").await, Ok(None));
    store.create("/g/a", bytes("1")).await.expect("create");
    store.update("/g/a", bytes("2"), 1).await.expect("update");
    assert_eq!(store.get("/g/a").await, Ok(Some(kv("/g/a", "2", 1, 2))));
    // A get never matches by prefix.
    assert_eq!(store.get("/g/").await, Ok(None));
    store.delete("/g/a", 2).await.expect("delete");
    assert_eq!(store.get("/g/a").await, Ok(None));
}

async fn list_filters_by_byte_prefix_in_key_order(make: Make) {
    let store = make(BUFFER).store;
    for key in ["/r/b/1", "/r/a/2", "/r/ab/1", "/r/a/1", "/s/a/1"] {
        store.create(key, bytes(key)).await.expect("create");
    }
    let table: [(&str, &[&str]); 5] = [
        ("/r/a/", &["/r/a/1", "/r/a/2"]),
        ("/r/a", &["/r/a/1", "/r/a/2", "/r/ab/1"]),
        ("/r/", &["/r/a/1", "/r/a/2", "/r/ab/1", "/r/b/1"]),
        ("/r/c/", &[]),
        ("", &["/r/a/1", "/r/a/2", "/r/ab/1", "/r/b/1", "/s/a/1"]),
    ];
    for (prefix, expected) in table {
        let list = store.list(list_all(prefix, None)).await.expect("list");
        let keys: Vec<&str> = list.items.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, expected, "prefix {prefix:?}");
        assert_eq!((list.revision, list.remaining), (5, 0));
    }
}

async fn list_at_a_revision_sees_that_revision(make: Make) {
    let store = make(BUFFER).store;
    for op in [
        Op::Create("/h/a", "a1"),
        Op::Create("/h/b", "b2"),
        Op::Update("/h/a", "a3", 1),
        Op::Delete("/h/b", 2),
        Op::Create("/h/b", "b5"),
    ] {
        run(&*store, op).await.expect("write");
    }
    let table = [
        (Some(0), vec![]),
        (Some(1), vec![kv("/h/a", "a1", 1, 1)]),
        (
            Some(2),
            vec![kv("/h/a", "a1", 1, 1), kv("/h/b", "b2", 2, 2)],
        ),
        (
            Some(3),
            vec![kv("/h/a", "a3", 1, 3), kv("/h/b", "b2", 2, 2)],
        ),
        (Some(4), vec![kv("/h/a", "a3", 1, 3)]),
        (
            Some(5),
            vec![kv("/h/a", "a3", 1, 3), kv("/h/b", "b5", 5, 5)],
        ),
        (None, vec![kv("/h/a", "a3", 1, 3), kv("/h/b", "b5", 5, 5)]),
    ];
    for (revision, items) in table {
        let list = store.list(list_all("/h/", revision)).await.expect("list");
        assert_eq!(list.items, items, "at {revision:?}");
        assert_eq!(list.revision, revision.unwrap_or(5));
    }
}

async fn list_rejects_future_and_compacted_revisions(make: Make) {
    let store = make(BUFFER).store;
    for key in ["/e/a", "/e/b", "/e/c", "/e/d"] {
        store.create(key, bytes("v")).await.expect("create");
    }
    store.compact(2).await.expect("compact");
    let table = [
        (
            5,
            Err(StoreError::FutureRevision {
                requested: 5,
                current: 4,
            }),
        ),
        (
            1,
            Err(StoreError::Compacted {
                requested: 1,
                compacted: 2,
            }),
        ),
        (
            -1,
            Err(StoreError::Compacted {
                requested: -1,
                compacted: 2,
            }),
        ),
        (2, Ok(2)),
        (4, Ok(4)),
    ];
    for (revision, expected) in table {
        let outcome = store.list(list_all("/e/", Some(revision))).await;
        assert_eq!(
            outcome.map(|list| list.items.len()),
            expected,
            "at {revision}"
        );
    }
}

async fn list_pages_with_limit_start_after_and_remaining(make: Make) {
    let store = make(BUFFER).store;
    for name in ["a", "b", "c", "d", "e"] {
        store
            .create(&format!("/p/{name}"), bytes(name))
            .await
            .expect("create");
    }
    store
        .create("/q/a", bytes("other prefix"))
        .await
        .expect("create");
    let page = |start_after: Option<&str>, limit| ListRequest {
        prefix: "/p/".into(),
        revision: None,
        start_after: start_after.map(str::to_owned),
        limit,
    };
    let table: [(Option<&str>, usize, &[&str], usize); 7] = [
        (None, 2, &["a", "b"], 3),
        (Some("/p/b"), 2, &["c", "d"], 1),
        (Some("/p/d"), 2, &["e"], 0),
        (Some("/p/e"), 2, &[], 0),
        (Some("/a"), 2, &["a", "b"], 3),
        (Some("/p/bb"), 0, &["c", "d", "e"], 0),
        (None, 5, &["a", "b", "c", "d", "e"], 0),
    ];
    for (start_after, limit, names, remaining) in table {
        let list = store.list(page(start_after, limit)).await.expect("list");
        let got: Vec<&[u8]> = list.items.iter().map(|kv| &kv.value[..]).collect();
        let want: Vec<&[u8]> = names.iter().map(|name| name.as_bytes()).collect();
        assert_eq!(got, want, "after {start_after:?} limit {limit}");
        assert_eq!(
            list.remaining, remaining,
            "after {start_after:?} limit {limit}"
        );
    }
}

async fn paging_at_a_fixed_revision_stays_consistent_while_writes_continue(make: Make) {
    let store = make(BUFFER).store;
    for i in 0..25 {
        store
            .create(&format!("/page/k{i:02}"), bytes(&format!("v{i}")))
            .await
            .expect("create");
    }
    let snapshot = store.list(list_all("/page/", None)).await.expect("list");
    let mut pages = Vec::new();
    let mut start_after = None;
    let mut churn = 0;
    loop {
        let page = store
            .list(ListRequest {
                prefix: "/page/".into(),
                revision: Some(snapshot.revision),
                start_after: start_after.clone(),
                limit: 7,
            })
            .await
            .expect("page");
        assert_eq!(page.revision, snapshot.revision);
        assert_eq!(page.remaining, 25 - pages.len() - page.items.len());
        pages.extend(page.items.iter().cloned());
        let Some(last) = page.items.last() else {
            break;
        };
        start_after = Some(last.key.clone());
        // Writes between pages: updates, deletes, and new keys on both sides of the cursor.
        let victim = format!("/page/k{churn:02}");
        let current = store.get(&victim).await.expect("get").expect("live key");
        store
            .update(&victim, bytes("changed"), current.mod_revision)
            .await
            .expect("update");
        let doomed = format!("/page/k{:02}", 24 - churn);
        let current = store.get(&doomed).await.expect("get").expect("live key");
        store
            .delete(&doomed, current.mod_revision)
            .await
            .expect("delete");
        store
            .create(&format!("/page/k{churn:02}x"), bytes("new"))
            .await
            .expect("create");
        store
            .create(&format!("/page/k{:02}x", 20 - churn), bytes("new"))
            .await
            .expect("create");
        churn += 1;
        if page.remaining == 0 {
            break;
        }
    }
    assert_eq!(pages, snapshot.items);
    assert!(store.current_revision() > snapshot.revision + 8);
}

async fn update_and_delete_return_the_versions_watchers_see(make: Make) {
    let store = make(BUFFER).store;
    let created = store.create("/v/a", bytes("1")).await.expect("create");
    let updated = store
        .update("/v/a", bytes("2"), created.mod_revision)
        .await
        .expect("update");
    assert_eq!(updated, kv("/v/a", "2", 1, 2));
    let deleted = store
        .delete("/v/a", updated.mod_revision)
        .await
        .expect("delete");
    assert_eq!(deleted, kv("/v/a", "2", 1, 3));
    let recreated = store.create("/v/a", bytes("3")).await.expect("recreate");
    assert_eq!(recreated, kv("/v/a", "3", 4, 4));
    let mut watch = store.watch("/v/", 0);
    let events = take_events(&mut watch, 4).await;
    let expected = vec![
        Event {
            kind: EventKind::Put,
            kv: created.clone(),
            prev: None,
        },
        Event {
            kind: EventKind::Put,
            kv: updated.clone(),
            prev: Some(created),
        },
        Event {
            kind: EventKind::Delete,
            kv: deleted,
            prev: Some(updated),
        },
        Event {
            kind: EventKind::Put,
            kv: recreated,
            prev: None,
        },
    ];
    assert_eq!(events, expected);
    assert_idle(&mut watch);
}

async fn compaction_rules(make: Make) {
    let store = make(BUFFER).store;
    for op in [
        Op::Create("/c/a", "a1"),
        Op::Update("/c/a", "a2", 1),
        Op::Create("/c/b", "b3"),
        Op::Delete("/c/b", 3),
        Op::Create("/c/c", "c5"),
    ] {
        run(&*store, op).await.expect("write");
    }
    assert_eq!(
        store.compact(6).await,
        Err(StoreError::FutureRevision {
            requested: 6,
            current: 5
        })
    );
    assert_eq!(store.compact(0).await, Ok(()));
    assert_eq!(store.compacted_revision(), 0);
    assert_eq!(store.compact(4).await, Ok(()));
    assert_eq!(store.compacted_revision(), 4);
    // At or below the compaction point: a no-op.
    assert_eq!(store.compact(3).await, Ok(()));
    assert_eq!(store.compact(4).await, Ok(()));
    assert_eq!(store.compacted_revision(), 4);
    // The latest live versions survive; reads at the compaction point still work.
    let at_four = store.list(list_all("/c/", Some(4))).await.expect("list");
    assert_eq!(at_four.items, vec![kv("/c/a", "a2", 1, 2)]);
    let now = store.list(list_all("/c/", None)).await.expect("list");
    assert_eq!(
        now.items,
        vec![kv("/c/a", "a2", 1, 2), kv("/c/c", "c5", 5, 5)]
    );
    assert_eq!(store.get("/c/a").await, Ok(Some(kv("/c/a", "a2", 1, 2))));
    // Only events above the compaction point are replayed.
    let mut watch = store.watch("/c/", 4);
    assert_eq!(
        take_events(&mut watch, 1).await[0].kv,
        kv("/c/c", "c5", 5, 5)
    );
    assert_idle(&mut watch);
    // A compacted-away tombstone leaves the key free to be created again.
    assert_eq!(
        store.create("/c/b", bytes("b6")).await,
        Ok(kv("/c/b", "b6", 6, 6))
    );
    assert_eq!(store.compact(6).await, Ok(()));
    assert_eq!(store.current_revision(), 6);
    let mut watch = store.watch("/c/", 6);
    assert_idle(&mut watch);
}

async fn watch_from_a_compacted_revision_fails_first(make: Make) {
    let fixture = make(BUFFER);
    let store = &fixture.store;
    for key in ["/w/a", "/w/b", "/w/c"] {
        store.create(key, bytes("v")).await.expect("create");
    }
    store.compact(2).await.expect("compact");
    for after in [0, 1] {
        let mut watch = store.watch("/w/", after);
        assert_eq!(
            next(&mut watch).await,
            Some(Err(StoreError::Compacted {
                requested: after,
                compacted: 2
            }))
        );
        assert_eq!(next(&mut watch).await, None);
    }
    assert_eq!(fixture.watcher_count(), 0);
    let mut watch = store.watch("/w/", 2);
    assert_eq!(take_events(&mut watch, 1).await[0].kv.key, "/w/c");
}

async fn watch_replays_history_then_follows_live_writes(make: Make) {
    let store = make(BUFFER).store;
    store.create("/l/a", bytes("1")).await.expect("create");
    store.create("/l/b", bytes("2")).await.expect("create");
    let mut watch = store.watch("/l/", 0);
    let history = take_events(&mut watch, 2).await;
    assert_eq!(
        history.iter().map(Event::revision).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_idle(&mut watch);
    store.update("/l/a", bytes("3"), 1).await.expect("update");
    let live = take_events(&mut watch, 1).await;
    assert_eq!(live[0].kv, kv("/l/a", "3", 1, 3));
    assert_eq!(live[0].prev, Some(kv("/l/a", "1", 1, 1)));
    assert_idle(&mut watch);
}

async fn watch_delivers_only_matching_keys(make: Make) {
    let store = make(BUFFER).store;
    let keys = [
        "/registry/apps/deployments/ns-a/web",
        "/registry/apps/deployments/ns-a/web2",
        "/registry/apps/deployments/ns-ab/web",
        "/registry/apps/deployments/ns-b/web",
        "/registry/apps/statefulsets/ns-a/db",
        "/registry/core/pods/ns-a/web",
    ];
    let prefixes: [(&str, &[usize]); 6] = [
        ("/registry/apps/deployments/", &[0, 1, 2, 3]),
        ("/registry/apps/deployments/ns-a/", &[0, 1]),
        ("/registry/apps/deployments/ns-a/web", &[0]),
        ("/registry/apps/deployments/ns-a", &[]),
        ("/registry/apps/", &[0, 1, 2, 3, 4]),
        ("/registry/batch/", &[]),
    ];
    let mut watches: Vec<_> = prefixes
        .iter()
        .map(|(prefix, _)| store.watch(prefix, 0))
        .collect();
    for key in keys {
        store.create(key, bytes(key)).await.expect("create");
    }
    for ((prefix, expected), watch) in prefixes.iter().zip(&mut watches) {
        let events = take_events(watch, expected.len()).await;
        let got: Vec<&str> = events.iter().map(|event| event.kv.key.as_str()).collect();
        let want: Vec<&str> = expected.iter().map(|&index| keys[index]).collect();
        assert_eq!(got, want, "prefix {prefix}");
        assert_idle(watch);
    }
}

async fn watch_after_the_current_revision_waits_for_newer_events(make: Make) {
    let store = make(BUFFER).store;
    store.create("/f/a", bytes("1")).await.expect("create");
    let mut watch = store.watch("/f/", 3);
    assert_idle(&mut watch);
    store.create("/f/b", bytes("2")).await.expect("create");
    store.create("/f/c", bytes("3")).await.expect("create");
    assert_idle(&mut watch);
    store.create("/f/d", bytes("4")).await.expect("create");
    assert_eq!(
        take_events(&mut watch, 1).await[0].kv,
        kv("/f/d", "4", 4, 4)
    );
}

async fn slow_watchers_are_closed_without_blocking_writers(make: Make) {
    let fixture = make(4);
    let store = &fixture.store;
    for i in 0..6 {
        store
            .create(&format!("/s/h{i}"), bytes("history"))
            .await
            .expect("create");
    }
    // Replayed history does not count against the live buffer.
    let mut replaying = store.watch("/s/", 0);
    assert_eq!(take_events(&mut replaying, 6).await.len(), 6);
    let mut slow = store.watch("/s/", store.current_revision());
    let mut fast = store.watch("/s/", store.current_revision());
    for i in 0..10 {
        store
            .create(&format!("/s/k{i}"), bytes("v"))
            .await
            .expect("create");
        assert_eq!(
            take_events(&mut fast, 1).await[0].kv.key,
            format!("/s/k{i}")
        );
    }
    assert_eq!(next(&mut slow).await, Some(Err(StoreError::WatcherTooSlow)));
    assert_eq!(next(&mut slow).await, None);
    // The replaying watcher was not drained either and overflowed too; the fast one lives on.
    assert_eq!(fixture.watcher_count(), 1);
    drop(fast);
    assert_eq!(fixture.watcher_count(), 0);
}

async fn a_burst_of_own_writes_is_history_for_a_watch_started_after_it(make: Make) {
    let fixture = make(1);
    let store = &fixture.store;
    for round in 0..10 {
        let start = store.current_revision();
        let writes = (0..200).map(|i| store.create(&format!("/b/{round}/{i}"), bytes("v")));
        for written in join_all(writes).await {
            written.expect("create");
        }
        // Started at once: a backend whose event feed lags its writes (etcd) must still deliver
        // all of them as history, not through the one-event live buffer.
        let mut watch = store.watch(&format!("/b/{round}/"), start);
        let events = take_events(&mut watch, 200).await;
        let mut revisions: Vec<Revision> = events.iter().map(Event::revision).collect();
        assert!(revisions.is_sorted(), "round {round}: {revisions:?}");
        revisions.dedup();
        assert_eq!(revisions.len(), 200, "round {round}");
        assert_idle(&mut watch);
    }
}

async fn dropped_watch_streams_unregister(make: Make) {
    let fixture = make(BUFFER);
    let store = &fixture.store;
    let first = store.watch("/u/", 0);
    let second = store.watch("/u/a", 0);
    let third = store.watch("/u/", 5);
    assert_eq!(fixture.watcher_count(), 3);
    drop(second);
    assert_eq!(fixture.watcher_count(), 2);
    store.create("/u/a", bytes("v")).await.expect("create");
    drop(first);
    drop(third);
    assert_eq!(fixture.watcher_count(), 0);
}

async fn closing_the_store_ends_watches(make: Make) {
    let fixture = make(BUFFER);
    fixture
        .store
        .create("/z/a", bytes("v"))
        .await
        .expect("create");
    let mut watch = fixture.store.watch("/z/", 1);
    drop(fixture);
    assert_eq!(next(&mut watch).await, Some(Err(StoreError::Closed)));
    assert_eq!(next(&mut watch).await, None);
}

async fn concurrent_read_modify_write_loses_no_updates(make: Make) {
    let store = make(BUFFER).store;
    store.create("/counter", bytes("0")).await.expect("create");
    let successes = Arc::new(AtomicUsize::new(0));
    let tasks = (0..64).map(|_| {
        let store = Arc::clone(&store);
        let successes = Arc::clone(&successes);
        tokio::spawn(async move {
            for _ in 0..5 {
                loop {
                    let current = store.get("/counter").await.expect("get").expect("counter");
                    let value: u64 = std::str::from_utf8(&current.value)
                        .expect("utf8")
                        .parse()
                        .expect("number");
                    let next = bytes(&(value + 1).to_string());
                    match store.update("/counter", next, current.mod_revision).await {
                        Ok(_) => break,
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(error) => panic!("unexpected {error}"),
                    }
                }
                successes.fetch_add(1, Ordering::Relaxed);
            }
        })
    });
    for task in join_all(tasks).await {
        task.expect("task");
    }
    let successes = successes.load(Ordering::Relaxed);
    assert_eq!(successes, 320);
    let counter = store.get("/counter").await.expect("get").expect("counter");
    assert_eq!(counter.value, bytes(&successes.to_string()));
    assert_eq!(counter.mod_revision, store.current_revision());
    assert_eq!(store.current_revision(), 1 + successes as Revision);
}

async fn concurrent_writes_are_watched_in_revision_order(make: Make) {
    let store = make(BUFFER).store;
    let mut watch = store.watch("/o/", 0);
    let writers = (0..16).map(|task| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            for i in 0..20 {
                store
                    .create(&format!("/o/{task}/{i}"), bytes("v"))
                    .await
                    .expect("create");
            }
        })
    });
    for writer in join_all(writers).await {
        writer.expect("writer");
    }
    let events = take_events(&mut watch, 320).await;
    let revisions: Vec<Revision> = events.iter().map(Event::revision).collect();
    assert_eq!(revisions, (1..=320).collect::<Vec<_>>());
    // Each writer's own writes keep their order.
    let mut last_seen: BTreeMap<String, usize> = BTreeMap::new();
    for event in &events {
        let (task, index) = event.kv.key["/o/".len()..]
            .split_once('/')
            .expect("key shape");
        let index: usize = index.parse().expect("index");
        let previous = last_seen.insert(task.to_owned(), index);
        assert_eq!(previous.map_or(0, |previous| previous + 1), index);
    }
}

async fn lists_ten_thousand_keys_in_order(make: Make) {
    let store = make(BUFFER).store;
    let keys: Vec<String> = (0..10_000).map(|i| format!("/big/ns/k{i:05}")).collect();
    let writes = keys.iter().map(|key| store.create(key, bytes("{\"a\":1}")));
    for outcome in join_all(writes).await {
        outcome.expect("create");
    }
    // How fast is a benchmark's business (`flotilla bench api` lists 10,000 objects), not a test's.
    let list = store.list(list_all("/big/", None)).await.expect("list");
    assert_eq!(list.items.len(), 10_000);
    assert!(list.items.windows(2).all(|pair| pair[0].key < pair[1].key));
}

macro_rules! backend_suite {
    ($($case:ident),* $(,)?) => {
        /// Every case against [`flotilla_store::MemoryStore`].
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::common::Fixture::memory).await;
                }
            )*
        }

        /// Every case against [`flotilla_store::SqliteStore`] in a temporary directory.
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::common::Fixture::sqlite).await;
                }
            )*
        }

        /// Every case against [`flotilla_store::EtcdStore`] on the binary's shared etcd.
        mod etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::common::Fixture::etcd).await;
                }
            )*
        }
    };
}

backend_suite!(
    revisions_start_at_zero_and_count_successful_writes,
    failed_writes_report_the_right_error_and_change_nothing,
    get_returns_the_latest_live_version,
    list_filters_by_byte_prefix_in_key_order,
    list_at_a_revision_sees_that_revision,
    list_rejects_future_and_compacted_revisions,
    list_pages_with_limit_start_after_and_remaining,
    paging_at_a_fixed_revision_stays_consistent_while_writes_continue,
    update_and_delete_return_the_versions_watchers_see,
    compaction_rules,
    watch_from_a_compacted_revision_fails_first,
    watch_replays_history_then_follows_live_writes,
    watch_delivers_only_matching_keys,
    watch_after_the_current_revision_waits_for_newer_events,
    slow_watchers_are_closed_without_blocking_writers,
    a_burst_of_own_writes_is_history_for_a_watch_started_after_it,
    dropped_watch_streams_unregister,
    closing_the_store_ends_watches,
    concurrent_read_modify_write_loses_no_updates,
    concurrent_writes_are_watched_in_revision_order,
    lists_ten_thousand_keys_in_order,
);
