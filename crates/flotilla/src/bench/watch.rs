//! Watch fan-out: one write into a watched namespace while K idle watchers wait on other
//! namespaces. The hub runs in process over the memory store, so disk latency does not hide
//! the server-side cost being measured (the fan-out code is the store engine's, shared with
//! the SQLite backend): write latency and write→event delivery latency must not grow with K.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use flotilla_apiserver::engine::WriteOptions;
use flotilla_apiserver::registry::ResourceInfo;
use flotilla_apiserver::selectors::ListFilter;
use flotilla_apiserver::watch::{WatchEvent, WatchOptions};
use flotilla_apiserver::{Hub, HubOptions};
use flotilla_store::MemoryStore;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Plan;
use super::measure::{config_map, median, payload};
use super::table::{Row, Target};

/// The namespace written to and watched.
const WATCHED: &str = "watched";
/// Writes made before measuring, to warm allocator and caches.
const WARMUP: usize = 5;
/// How much slower the figures may be with many idle watchers than with few: "does not grow
/// with K" on a noisy machine. A per-watcher cost of even 0.1 µs would exceed it at K = 1,000.
const MAX_GROWTH: f64 = 1.5;

/// One run: a hub per idle-watcher count of the plan, written to alternately (so machine noise
/// hits both alike), then the growth between them.
pub async fn run_once(plan: &Plan) -> Result<Vec<Row>> {
    let [few, many] = plan.idle_watchers;
    let mut setups = [Setup::start(few).await?, Setup::start(many).await?];
    let mut samples: [Vec<(f64, f64)>; 2] = Default::default();
    for i in 0..WARMUP + plan.watch_writes {
        // Alternate which hub goes first, so neither always follows the other's write.
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for s in order {
            let latency = setups[s].write().await?;
            if i >= WARMUP {
                samples[s].push(latency);
            }
        }
    }
    let medians = |s: usize| {
        let (write, delivery): (Vec<f64>, Vec<f64>) = samples[s].iter().copied().unzip();
        (median(write), median(delivery))
    };
    let ((write_few, delivery_few), (write_many, delivery_many)) = (medians(0), medians(1));
    let figures = [
        ("write→event delivery", delivery_few, delivery_many),
        ("write latency", write_few, write_many),
    ];
    Ok(figures
        .into_iter()
        .flat_map(|(name, small, large)| {
            [
                Row::info(format!("{name}, {few} idle watchers"), small, "µs"),
                Row::info(format!("{name}, {many} idle watchers"), large, "µs"),
                Row {
                    figure: format!("{name} growth, {many} vs {few} watchers"),
                    value: large / small,
                    unit: "×",
                    etcd: None,
                    target: Target::AtMost(MAX_GROWTH),
                },
            ]
        })
        .collect())
}

/// An in-process hub with `idle` watchers on other namespaces and one on [`WATCHED`], whose
/// events are timestamped on arrival.
struct Setup {
    hub: Hub,
    configmaps: Arc<ResourceInfo>,
    /// Held only to keep the idle watches open.
    _idle: Vec<mpsc::Receiver<WatchEvent>>,
    arrivals: mpsc::UnboundedReceiver<Instant>,
    receiver: JoinHandle<()>,
    payload: String,
    written: usize,
}

impl Setup {
    async fn start(idle: usize) -> Result<Setup> {
        let hub = Hub::start(Arc::new(MemoryStore::new()), HubOptions::default()).await?;
        let engine = hub.engine();
        let snapshot = engine.registry().snapshot();
        let namespaces = snapshot
            .get("", "v1", "namespaces")
            .context("namespaces are not served")?;
        let configmaps = snapshot
            .get("", "v1", "configmaps")
            .context("configmaps are not served")?;
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WATCHED}});
        engine
            .create(&namespaces, None, namespace, &WriteOptions::default())
            .await?;
        let before = engine.metrics().open_watches();
        let mut idle_watches = Vec::with_capacity(idle);
        for i in 0..idle {
            idle_watches.push(
                engine
                    .watch(
                        Arc::clone(&configmaps),
                        Some(format!("idle-{i}")),
                        options(),
                    )
                    .await?,
            );
        }
        let mut watched = engine
            .watch(Arc::clone(&configmaps), Some(WATCHED.to_owned()), options())
            .await?;
        let opened = engine.metrics().open_watches() - before;
        if opened != idle as i64 + 1 {
            bail!("expected {} open watches, found {opened}", idle + 1);
        }
        let (arrived, arrivals) = mpsc::unbounded_channel();
        let receiver = tokio::spawn(async move {
            while watched.recv().await.is_some() {
                if arrived.send(Instant::now()).is_err() {
                    break;
                }
            }
        });
        Ok(Setup {
            hub,
            configmaps,
            _idle: idle_watches,
            arrivals,
            receiver,
            payload: payload(),
            written: 0,
        })
    }

    /// Creates a ConfigMap in [`WATCHED`]: its write latency and write→event delivery latency,
    /// in microseconds.
    async fn write(&mut self) -> Result<(f64, f64)> {
        let object =
            serde_json::to_value(config_map(format!("cm-{}", self.written), &self.payload))?;
        self.written += 1;
        let start = Instant::now();
        self.hub
            .engine()
            .create(
                &self.configmaps,
                Some(WATCHED),
                object,
                &WriteOptions::default(),
            )
            .await?;
        let written = start.elapsed();
        let arrival = self
            .arrivals
            .recv()
            .await
            .context("the watch on the written namespace ended")?;
        Ok((micros(written), micros(arrival - start)))
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.receiver.abort();
    }
}

/// A watch from now on, without bookmarks, that outlives the measurement.
fn options() -> WatchOptions {
    WatchOptions {
        resource_version: None,
        send_initial_events: false,
        allow_bookmarks: false,
        timeout: Duration::from_secs(3600),
        bookmark_interval: Duration::from_secs(3600),
        filter: ListFilter::default(),
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
