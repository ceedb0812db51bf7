//! `flotilla bench store`: durable writes/s of the embedded SQLite store under concurrent
//! writers, against etcd's put throughput with the same writers and values.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use flotilla_store::{Revision, SqliteOptions, SqliteStore, Storage};

use super::Plan;
use super::etcd::{self, Etcd};
use super::measure::{KeyMix, Worker, Write, payload, throughput};
use super::table::{Row, Target};

/// The SQLite store must sustain at least this multiple of etcd's put throughput.
const TARGET_RATIO: f64 = 2.0;

/// One run: a fresh store in `dir/run-N`, then etcd, each for `plan.duration`.
pub async fn run_once(
    plan: &Plan,
    run: usize,
    dir: &Path,
    etcd: Option<&Etcd>,
) -> Result<Vec<Row>> {
    let path = dir.join(format!("run-{run}")).join("store.db");
    let store = Arc::new(open(path).await?);
    let value = Bytes::from(payload());
    let workers = (0..plan.writers)
        .map(|w| StoreWriter {
            store: Arc::clone(&store),
            prefix: format!("/registry/bench/w{w}/"),
            mix: KeyMix::default(),
            revisions: Vec::new(),
            value: value.clone(),
        })
        .collect();
    let writes = throughput(workers, plan.duration).await?;
    let writes_per_commit = store.current_revision() as f64 / store.commit_count().max(1) as f64;
    let etcd = etcd::put_throughput(etcd, plan, &format!("/store-run-{run}")).await?;
    Ok(vec![
        Row {
            figure: format!("durable writes, SqliteStore, {} writers", plan.writers),
            value: writes,
            unit: "writes/s",
            etcd,
            target: Target::EtcdRatioAtLeast(TARGET_RATIO),
        },
        Row::info(
            "writes per fsync (group commit)".to_owned(),
            writes_per_commit,
            "writes",
        ),
    ])
}

/// Opens (or creates) a SQLite store at `path` off the async threads.
pub async fn open(path: PathBuf) -> Result<SqliteStore> {
    let store =
        tokio::task::spawn_blocking(move || SqliteStore::open(SqliteOptions::new(path))).await?;
    store.context("opening the SQLite store")
}

/// One store writer: creates and updates (compare-and-swap on the key's last revision) as
/// [`KeyMix`] says, each awaited until the store acknowledges it after fsync.
struct StoreWriter {
    store: Arc<SqliteStore>,
    prefix: String,
    mix: KeyMix,
    revisions: Vec<Revision>,
    value: Bytes,
}

impl Worker for StoreWriter {
    async fn step(&mut self) -> Result<()> {
        match self.mix.next_write() {
            Write::Create(n) => {
                let kv = self
                    .store
                    .create(&format!("{}{n}", self.prefix), self.value.clone())
                    .await?;
                self.revisions.push(kv.mod_revision);
            }
            Write::Update(n) => {
                let key = format!("{}{n}", self.prefix);
                let kv = self
                    .store
                    .update(&key, self.value.clone(), self.revisions[n])
                    .await?;
                self.revisions[n] = kv.mod_revision;
            }
        }
        Ok(())
    }
}
