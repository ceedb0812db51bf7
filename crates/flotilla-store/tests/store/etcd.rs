//! etcd-only behaviour: several stores (hub replicas) on one namespace, history read from etcd,
//! compaction made by another store, connection failures, and a three-member cluster losing a
//! member.
//!
//! Tests on the binary's shared etcd hold the etcd turn (see [`EtcdTurn`]); the failure tests
//! start etcd servers of their own. Waiting for something to propagate polls against a generous
//! deadline; nothing sleeps in place of an assertion.

use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_store::etcd::testing::{self, LocalEtcd, LocalEtcdCluster};
use flotilla_store::{
    EtcdOptions, EtcdStore, Event, EventKind, Revision, Storage, StoreError, StoreResult,
};
use futures::future::join_all;
use tokio::time::Instant;

use crate::common::{
    EtcdTurn, assert_idle, bytes, connect_etcd, kv, list_all, next, on_etcd_runtime,
    shared_etcd_options, take_events,
};

/// How long anything may take to propagate between stores on a slow machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// Polls `condition` until it holds, failing the test after [`PATIENCE`].
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two stores on one fresh namespace of the shared etcd (two hub replicas); the turn must be
/// held.
fn replicas(_turn: &EtcdTurn) -> (EtcdStore, EtcdStore) {
    let options = shared_etcd_options();
    let first = connect_etcd(options.clone()).expect("connect");
    let second = connect_etcd(options).expect("connect");
    (first, second)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_see_each_others_writes_in_reads_watches_and_revisions() {
    let turn = EtcdTurn::take();
    let (a, b) = replicas(&turn);
    let mut watch = b.watch("/r/", 0);
    let created = a.create("/r/x", bytes("1")).await.expect("create");
    // Reads are linearizable: visible to the other replica as soon as the write returns.
    assert_eq!(b.get("/r/x").await, Ok(Some(created.clone())));
    let list = b.list(list_all("/r/", None)).await.expect("list");
    assert_eq!(list.items, vec![created.clone()]);
    assert_eq!(list.revision, created.mod_revision);
    let updated = a.update("/r/x", bytes("2"), 1).await.expect("update");
    let events = take_events(&mut watch, 2).await;
    assert_eq!(events[0].kv, created);
    assert_eq!(events[1].kv, updated);
    assert_eq!(events[1].prev, Some(created));
    eventually("the second replica's current revision", || {
        b.current_revision() == updated.mod_revision
    })
    .await;
    // And the other way round, from a watch opened after the writes.
    let deleted = b
        .delete("/r/x", updated.mod_revision)
        .await
        .expect("delete");
    let mut watch = a.watch("/r/", updated.mod_revision);
    let event = take_events(&mut watch, 1).await.remove(0);
    assert_eq!(
        (event.kind, event.kv, event.prev),
        (EventKind::Delete, deleted.clone(), Some(updated))
    );
    assert_eq!(a.get("/r/x").await, Ok(None));
    eventually("the first replica's current revision", || {
        a.current_revision() == deleted.mod_revision
    })
    .await;
    assert_idle(&mut watch);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_store_learns_of_writes_elsewhere_in_etcd() {
    let _turn = EtcdTurn::take();
    let idle = connect_etcd(shared_etcd_options()).expect("connect");
    let busy = connect_etcd(shared_etcd_options()).expect("connect");
    // A read brings the idle store's revision up to date (the other store's connection wrote).
    assert_eq!(idle.get("/o/a").await, Ok(None));
    let before = idle.current_revision();
    for key in ["/o/a", "/o/b", "/o/c"] {
        busy.create(key, bytes("v")).await.expect("create");
    }
    // etcd has one revision counter: writes in another namespace advance this one too, and the
    // idle store hears of them through its watch's progress requests.
    eventually("the idle store's current revision", || {
        idle.current_revision() == before + 3
    })
    .await;
    assert_eq!(
        idle.list(list_all("", None)).await.map(|l| l.items),
        Ok(vec![])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_and_swap_conflicts_between_replicas() {
    let turn = EtcdTurn::take();
    let (a, b) = replicas(&turn);
    let created = a.create("/cas/k", bytes("0")).await.expect("create");
    assert_eq!(
        b.create("/cas/k", bytes("again")).await,
        Err(StoreError::AlreadyExists {
            key: "/cas/k".into()
        })
    );
    let seen_by_b = b.get("/cas/k").await.expect("get").expect("live");
    let updated = a
        .update("/cas/k", bytes("a"), created.mod_revision)
        .await
        .expect("update");
    let conflict = StoreError::Conflict {
        key: "/cas/k".into(),
        expected: seen_by_b.mod_revision,
        actual: updated.mod_revision,
    };
    assert_eq!(
        b.update("/cas/k", bytes("b"), seen_by_b.mod_revision).await,
        Err(conflict.clone())
    );
    assert_eq!(
        b.delete("/cas/k", seen_by_b.mod_revision).await,
        Err(conflict)
    );
    a.delete("/cas/k", updated.mod_revision)
        .await
        .expect("delete");
    assert_eq!(
        b.update("/cas/k", bytes("b"), updated.mod_revision).await,
        Err(StoreError::NotFound {
            key: "/cas/k".into()
        })
    );

    // Read-modify-write from both replicas at once loses no update.
    a.create("/cas/counter", bytes("0")).await.expect("create");
    let increments = [&a, &b].into_iter().flat_map(|store| {
        (0..6).map(move |_| async move {
            for _ in 0..5 {
                loop {
                    let current = store.get("/cas/counter").await.expect("get").expect("live");
                    let value: u64 = std::str::from_utf8(&current.value)
                        .expect("utf8")
                        .parse()
                        .expect("number");
                    let next = bytes(&(value + 1).to_string());
                    match store
                        .update("/cas/counter", next, current.mod_revision)
                        .await
                    {
                        Ok(_) => break,
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(error) => panic!("unexpected {error}"),
                    }
                }
            }
        })
    });
    join_all(increments).await;
    let counter = a.get("/cas/counter").await.expect("get").expect("live");
    assert_eq!(counter.value, bytes("60"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_by_one_replica_fails_old_reads_and_watches_on_the_others() {
    let _turn = EtcdTurn::take();
    // No event cache: the watching replica must read history from etcd.
    let options = EtcdOptions {
        event_cache: 0,
        ..shared_etcd_options()
    };
    let a = connect_etcd(options.clone()).expect("connect");
    let watcher = connect_etcd(options.clone()).expect("connect");
    let lister = connect_etcd(options.clone()).expect("connect");
    for key in ["/k/1", "/k/2", "/k/3", "/k/4", "/k/5"] {
        a.create(key, bytes("v")).await.expect("create");
    }
    // Once the watching replica's feed has passed the writes, older watches need etcd.
    let mut caught_up = watcher.watch("/k/", 0);
    take_events(&mut caught_up, 5).await;
    drop(caught_up);
    a.compact(3).await.expect("compact");
    let compacted = |requested| StoreError::Compacted {
        requested,
        compacted: 3,
    };
    let mut watch = watcher.watch("/k/", 1);
    assert_eq!(next(&mut watch).await, Some(Err(compacted(1))));
    assert_eq!(next(&mut watch).await, None);
    assert_eq!(watcher.compacted_revision(), 3);
    assert_eq!(watcher.watcher_count(), 0);
    assert_eq!(
        lister.list(list_all("/k/", Some(2))).await,
        Err(compacted(2))
    );
    assert_eq!(lister.compacted_revision(), 3);
    // Compacting again below the point is a no-op, wherever it comes from.
    assert_eq!(lister.compact(2).await, Ok(()));
    // History from the compaction point on is still there.
    let mut watch = watcher.watch("/k/", 3);
    let keys: Vec<String> = take_events(&mut watch, 2)
        .await
        .into_iter()
        .map(|event| event.kv.key)
        .collect();
    assert_eq!(keys, ["/k/4", "/k/5"]);
    // A replica connecting later knows the compaction point from the start.
    let late = connect_etcd(options).expect("connect");
    assert_eq!(late.compacted_revision(), 3);
    assert_eq!(late.current_revision(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_before_the_event_cache_read_history_from_etcd_then_follow_live_writes() {
    let _turn = EtcdTurn::take();
    let options = shared_etcd_options();
    let writer = connect_etcd(options.clone()).expect("connect");
    let a1 = writer.create("/h/a", bytes("1")).await.expect("create");
    let b2 = writer.create("/h/b", bytes("2")).await.expect("create");
    let a3 = writer.update("/h/a", bytes("3"), 1).await.expect("update");
    let b4 = writer.delete("/h/b", 2).await.expect("delete");
    // Connected after the writes: none of them is in its event cache.
    let reader = connect_etcd(EtcdOptions {
        event_cache: 2,
        ..options
    })
    .expect("connect");
    let expected = vec![
        Event {
            kind: EventKind::Put,
            kv: a1.clone(),
            prev: None,
        },
        Event {
            kind: EventKind::Put,
            kv: b2.clone(),
            prev: None,
        },
        Event {
            kind: EventKind::Put,
            kv: a3.clone(),
            prev: Some(a1),
        },
        Event {
            kind: EventKind::Delete,
            kv: b4,
            prev: Some(b2),
        },
    ];
    let mut everything = reader.watch("/h/", 0);
    assert_eq!(take_events(&mut everything, 4).await, expected);
    let mut one_key = reader.watch("/h/a", 1);
    assert_eq!(take_events(&mut one_key, 1).await, expected[2..3]);
    // Live writes follow the history, in order, without duplicates.
    let a5 = writer.update("/h/a", bytes("5"), 3).await.expect("update");
    let c6 = writer.create("/h/c", bytes("6")).await.expect("create");
    let live = take_events(&mut everything, 2).await;
    assert_eq!((live[0].kv.clone(), live[1].kv.clone()), (a5.clone(), c6));
    assert_eq!(live[0].prev, Some(a3));
    assert_eq!(take_events(&mut one_key, 1).await[0].kv, a5);
    assert_idle(&mut everything);
    assert_idle(&mut one_key);
    assert_eq!(reader.watcher_count(), 2);
    drop((everything, one_key));
    assert_eq!(reader.watcher_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_to_no_etcd_is_a_backend_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let outcome = EtcdStore::connect(EtcdOptions {
        timeout: Duration::from_secs(1),
        ..EtcdOptions::new([endpoint.clone()])
    })
    .await;
    match outcome {
        Err(StoreError::Backend(message)) => assert!(message.contains(&endpoint), "{message}"),
        Err(other) => panic!("expected a backend error, got {other}"),
        Ok(_) => panic!("connected to nothing"),
    }
    let outcome = EtcdStore::connect(EtcdOptions::new(Vec::<String>::new())).await;
    assert!(matches!(outcome, Err(StoreError::Backend(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_whose_etcd_is_gone_reports_backend_errors() {
    let binary = testing::locate_or_install().expect("etcd");
    let etcd = on_etcd_runtime(LocalEtcd::start(&binary)).expect("start etcd");
    let store = connect_etcd(EtcdOptions {
        timeout: Duration::from_secs(2),
        ..EtcdOptions::new([etcd.endpoint()])
    })
    .expect("connect");
    let created = store.create("/g/a", bytes("v")).await.expect("create");
    let mut watch = store.watch("/g/", 0);
    assert_eq!(take_events(&mut watch, 1).await[0].kv, created);
    drop(etcd);
    let backend = |outcome: StoreResult<()>| matches!(outcome, Err(StoreError::Backend(_)));
    assert!(backend(store.get("/g/a").await.map(drop)));
    assert!(backend(store.list(list_all("/g/", None)).await.map(drop)));
    assert!(backend(store.create("/g/b", bytes("v")).await.map(drop)));
    assert!(backend(store.update("/g/a", bytes("w"), 1).await.map(drop)));
    assert!(backend(store.compact(1).await));
    // The watch waits for etcd to come back rather than failing; the revision stays known.
    assert_idle(&mut watch);
    assert_eq!(store.current_revision(), created.mod_revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_resume_without_gaps_when_etcd_restarts() {
    let (mut etcd, store) = cluster(1, Duration::from_secs(2)).await;
    let mut from_start = store.watch("/w/", 0);
    let mut one_key = store.watch("/w/b", 0);
    let keys: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|name| format!("/w/{name}"))
        .collect();
    for key in &keys[..3] {
        store.create(key, bytes(key)).await.expect("create");
    }
    assert_created(&mut from_start, &keys[..3]).await;
    etcd.kill(0);
    // Meanwhile writes fail with a backend error (after the store's timeout).
    assert!(matches!(
        store.create("/w/lost", bytes("v")).await,
        Err(StoreError::Backend(_))
    ));
    on_etcd_runtime(etcd.restart(0)).expect("restart etcd");
    // The watch registered before the outage and one registered during it both resume.
    let mut after_outage = store.watch("/w/", 2);
    for key in &keys[3..] {
        write_through_failover(&store, key, key, None).await;
    }
    assert_created(&mut from_start, &keys[3..]).await;
    assert_created(&mut after_outage, &keys[2..]).await;
    assert_created(&mut one_key, &keys[1..2]).await;
    for watch in [&mut from_start, &mut after_outage, &mut one_key] {
        assert_idle(watch);
    }
}

/// A cluster of `size` members and a store given every member, whose operations give up
/// after `timeout`.
async fn cluster(size: usize, timeout: Duration) -> (LocalEtcdCluster, EtcdStore) {
    let binary = testing::locate_or_install().expect("etcd");
    let cluster = on_etcd_runtime(LocalEtcdCluster::start(&binary, size)).expect("start cluster");
    let store = connect_etcd(EtcdOptions {
        timeout,
        ..EtcdOptions::new(cluster.endpoints())
    })
    .expect("connect");
    (cluster, store)
}

/// The index of the cluster's leader, once one is elected.
async fn leader(cluster: &LocalEtcdCluster) -> usize {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(leader) = on_etcd_runtime(cluster.leader()) {
            return leader;
        }
        assert!(Instant::now() < deadline, "no leader within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Creates `key` (valued `key`) if `expected` is `None`, else updates it to `value` from
/// `expected`, retrying while the outcome is unknown (a backend error while a member dies):
/// if an earlier attempt was applied after all, the key holds the value written. Returns the
/// new version's revision.
async fn write_through_failover(
    store: &EtcdStore,
    key: &str,
    value: &str,
    expected: Option<Revision>,
) -> Revision {
    let deadline = Instant::now() + PATIENCE * 3;
    loop {
        let outcome = match expected {
            None => store.create(key, bytes(value)).await,
            Some(expected) => store.update(key, bytes(value), expected).await,
        };
        match outcome {
            Ok(written) => return written.mod_revision,
            Err(StoreError::AlreadyExists { .. } | StoreError::Conflict { .. }) => {
                let found = store.get(key).await.expect("get").expect("live");
                assert_eq!(found.value, bytes(value), "{key}: {outcome:?}");
                return found.mod_revision;
            }
            Err(StoreError::Backend(message)) => {
                assert!(Instant::now() < deadline, "write {key}: {message}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(other) => panic!("write {key}: {other}"),
        }
    }
}

/// Waits for `count` events and checks they are exactly `keys`' creations, in order.
async fn assert_created(watch: &mut flotilla_store::WatchStream, keys: &[String]) {
    let events = take_events(watch, keys.len()).await;
    let seen: Vec<&str> = events.iter().map(|event| event.kv.key.as_str()).collect();
    assert_eq!(seen, keys);
    assert!(
        events
            .windows(2)
            .all(|pair| pair[0].revision() < pair[1].revision())
    );
    assert!(events.iter().all(|event| event.kind == EventKind::Put));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_keeps_serving_when_a_follower_dies() {
    let (mut cluster, store) = cluster(3, Duration::from_secs(15)).await;
    let mut watch = store.watch("/f/", 0);
    let keys: Vec<String> = (0..30).map(|i| format!("/f/k{i:02}")).collect();
    for key in &keys[..10] {
        store.create(key, bytes(key)).await.expect("create");
    }
    assert_created(&mut watch, &keys[..10]).await;
    let leader = leader(&cluster).await;
    cluster.kill((leader + 1) % 3);
    // A follower's loss needs no election. Reads always succeed (retried on another member).
    // So do writes, except one caught in flight on the connection to the dead member, whose
    // outcome is unknown (a backend error saying so); such writes are checked and retried.
    for (i, key) in keys[10..].iter().enumerate() {
        let created = write_through_failover(&store, key, key, None).await;
        let found = store.get(key).await.expect("get").expect("live");
        assert_eq!((found.value, found.mod_revision), (bytes(key), created));
        let updated = write_through_failover(&store, key, "updated", Some(created)).await;
        let list = store.list(list_all("/f/", None)).await.expect("list");
        assert_eq!(list.items.len(), 11 + i);
        assert_eq!(list.revision, updated);
    }
    // The watch keeps flowing (resumed on another member if its own died): every event once.
    let events = take_events(&mut watch, 40).await;
    let revisions: Vec<Revision> = events.iter().map(Event::revision).collect();
    assert_eq!(revisions, (11..=50).collect::<Vec<_>>());
    assert_idle(&mut watch);
    assert_eq!(store.current_revision(), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_recovers_when_its_leader_dies() {
    let (mut cluster, store) = cluster(3, Duration::from_secs(15)).await;
    let mut watch = store.watch("/l/", 0);
    let keys: Vec<String> = (0..20).map(|i| format!("/l/k{i:02}")).collect();
    for key in &keys[..5] {
        store.create(key, bytes(key)).await.expect("create");
    }
    let leader = leader(&cluster).await;
    cluster.kill(leader);
    // Writes during the election may fail with an unknown outcome; the store keeps accepting
    // them once a new leader is elected, and no write is lost or applied twice.
    let mut revisions = BTreeSet::new();
    for key in &keys[5..] {
        revisions.insert(write_through_failover(&store, key, key, None).await);
    }
    assert_eq!(revisions.len(), 15);
    let list = store.list(list_all("/l/", None)).await.expect("list");
    let listed: Vec<&str> = list.items.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(listed, keys);
    assert_eq!(
        store.get(&keys[19]).await,
        Ok(Some(kv(&keys[19], &keys[19], 20, 20)))
    );
    assert_created(&mut watch, &keys).await;
    assert_idle(&mut watch);
}
