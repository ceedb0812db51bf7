//! Durability across a process crash: every acknowledged write survives SIGKILL.
//!
//! The test re-executes its own binary as a child (switched into writer mode by an environment
//! variable). The child runs 64 concurrent writers against a `SqliteStore` and prints each
//! write to stdout as soon as it is acknowledged. The parent kills the child with SIGKILL after
//! a few hundred acknowledgements, reopens the store, and checks that every acknowledged write
//! is there and that the log is consistent.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{ListRequest, Revision, SqliteOptions, SqliteStore, Storage};
use futures::StreamExt;
use futures::future::join_all;

/// Set in the child: the directory of the store to write to.
const CHILD_DIR: &str = "FLOTILLA_STORE_CRASH_CHILD_DIR";
/// This test's name, to run only it in the child.
const TEST_NAME: &str = "acknowledged_writes_survive_sigkill";
/// Acknowledgements to wait for before killing the child.
const ACKS_BEFORE_KILL: usize = 400;

/// Each key is created (step 1), then updated (step 2); its value names both.
fn value(key: &str, step: u32) -> Bytes {
    Bytes::from(format!("{key}#{step}"))
}

/// The step a stored value was written by, checking the value's shape.
fn step_of(key: &str, value: &[u8]) -> u32 {
    let text = std::str::from_utf8(value).expect("utf8 value");
    let (value_key, step) = text.rsplit_once('#').expect("value shape");
    assert_eq!(value_key, key, "value of {key} names another key");
    step.parse().expect("step number")
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    match std::env::var_os(CHILD_DIR) {
        Some(dir) => child(Path::new(&dir)),
        None => parent(),
    }
}

/// Writer mode: 64 tasks create and update keys forever, printing every acknowledgement.
fn child(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store =
            Arc::new(SqliteStore::open(SqliteOptions::new(dir.join("store.db"))).expect("open"));
        let writers = (0..64).map(|task| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                for i in 0.. {
                    let key = format!("/crash/{task}/{i}");
                    let created = store.create(&key, value(&key, 1)).await.expect("create");
                    acknowledge(&key, 1);
                    store
                        .update(&key, value(&key, 2), created.mod_revision)
                        .await
                        .expect("update");
                    acknowledge(&key, 2);
                }
            })
        });
        for writer in join_all(writers).await {
            writer.expect("writer");
        }
    });
}

fn acknowledge(key: &str, step: u32) {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "ACK {key} {step}").expect("stdout");
    stdout.flush().expect("flush");
}

/// Runs the child, kills it mid-flight, and checks the store it leaves behind.
fn parent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    // A reader thread forwards the child's lines, so the parent can give up on a stuck child.
    let stdout = child.stdout.take().expect("child stdout");
    let (lines, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.expect("read child stdout")).is_err() {
                break;
            }
        }
    });
    let mut acked: BTreeMap<String, u32> = BTreeMap::new();
    let mut record = |line: String| {
        if let Some(ack) = line.strip_prefix("ACK ") {
            let (key, step) = ack.split_once(' ').expect("ack shape");
            let step: u32 = step.parse().expect("ack step");
            let previous = acked.insert(key.to_owned(), step).unwrap_or(0);
            assert!(previous < step, "{key} acknowledged twice");
            true
        } else {
            false
        }
    };
    let mut acks = 0;
    while acks < ACKS_BEFORE_KILL {
        match received.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => acks += usize::from(record(line)),
            Err(error) => {
                let _ = child.kill();
                panic!("child stopped acknowledging after {acks} writes: {error}");
            }
        }
    }
    child.kill().expect("SIGKILL child");
    let status = child.wait().expect("wait for child");
    assert!(!status.success(), "child was not killed: {status}");
    // Lines already in the pipe were acknowledged before the kill.
    reader.join().expect("reader thread");
    for line in received.try_iter() {
        record(line);
    }
    assert!(acked.len() >= ACKS_BEFORE_KILL / 2);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = SqliteStore::open(SqliteOptions::new(dir.path().join("store.db")))
            .expect("reopen after crash");
        let current = store.current_revision();
        for (key, &step) in &acked {
            let stored = store
                .get(key)
                .await
                .expect("get")
                .unwrap_or_else(|| panic!("acknowledged {key} lost"));
            let stored_step = step_of(key, &stored.value);
            assert!(
                stored_step >= step,
                "{key}: acknowledged step {step}, found {stored_step}"
            );
            assert_eq!(stored.value, value(key, stored_step));
        }
        let list = store
            .list(ListRequest {
                prefix: "/crash/".into(),
                ..ListRequest::default()
            })
            .await
            .expect("list");
        for kv in &list.items {
            let step = step_of(&kv.key, &kv.value);
            assert!(kv.create_revision <= kv.mod_revision && kv.mod_revision <= current);
            assert_eq!(step == 1, kv.create_revision == kv.mod_revision, "{kv:?}");
        }
        // The log holds every revision exactly once, in order, and each event is well formed.
        let mut watch = store.watch("/crash/", 0);
        let mut expected: Revision = 1;
        while expected <= current {
            let event = watch.next().await.expect("event").expect("no error");
            assert_eq!(event.revision(), expected);
            step_of(&event.kv.key, &event.kv.value);
            expected += 1;
        }
        let next = store
            .create("/crash/after", Bytes::from_static(b"x"))
            .await
            .expect("write");
        assert_eq!(next.mod_revision, current + 1);
    });
}
