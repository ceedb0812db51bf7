//! `flotilla bench api`: the hub API server over real HTTPS — ConfigMap creates/s from
//! concurrent clients against etcd's raw put throughput, and the latency of listing a large
//! namespace as plain JSON — plus watch fan-out (see [`super::watch`]); and, side by side, the
//! same creates, GETs and list against the real kube-apiserver on the same etcd
//! ([`super::kube_peer`]), with the ratios and both processes' resident memory.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use flotilla_store::SharedStorage;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use super::Plan;
use super::etcd::{self, Etcd};
use super::https::{H2Client, HttpsHub};
use super::kube_peer::{KubePeer, resident_mib};
use super::measure::{Worker, config_map, median, payload, throughput};
use super::table::{Row, Target};
use super::{fanout, watch};

/// Namespace the create benchmark writes into.
const CREATE_NS: &str = "bench-create";
/// Namespace holding the objects listed.
const LIST_NS: &str = "bench-list";
/// HTTPS/2 creates (kubectl's path) must reach at least etcd's raw put throughput.
const CREATE_TARGET_RATIO: f64 = 1.0;
/// Single GETs measured through the gate and without it, each.
const GET_SAMPLES: usize = 2000;
/// The gate may add at most this share of a GET's latency (issue 8).
const GATE_TARGET_PERCENT: f64 = 5.0;
/// Median latency a full list may take, in milliseconds.
const LIST_TARGET_MS: f64 = 100.0;
/// The hub's creates/s must be at least this multiple of kube-apiserver's.
const KUBE_CREATE_RATIO: f64 = 2.0;
/// The hub's list time and resident memory must be at most this share of kube-apiserver's.
const KUBE_LIST_AND_MEMORY_RATIO: f64 = 0.5;

/// An API server the benchmark measures over HTTPS: the hub or its kube-apiserver peer.
pub trait Served {
    /// An HTTP/2 client over one TLS connection (client-go's path).
    fn h2(&self) -> Result<H2Client>;
}

impl Served for HttpsHub {
    fn h2(&self) -> Result<H2Client> {
        self.h2_client()
    }
}

impl Served for KubePeer {
    fn h2(&self) -> Result<H2Client> {
        self.h2_client()
    }
}

/// Starts the HTTPS hub over `store` (its PKI in `dir`) and creates the benchmark's namespaces, with
/// `plan.list_objects` ConfigMaps in the listed one (in process: setup is not measured).
pub async fn prepare(plan: &Plan, dir: &Path, store: SharedStorage) -> Result<HttpsHub> {
    let hub = HttpsHub::start(dir, store).await?;
    populate(plan, hub.hub().client()).await?;
    Ok(hub)
}

/// kube-apiserver beside the hub, and both processes' resident memory once each holds the
/// same `plan.list_objects` ConfigMaps and nothing else of the benchmark's (measured before
/// the create runs add their objects).
pub struct Peer {
    /// The running kube-apiserver.
    pub kube: KubePeer,
    /// kube-apiserver's resident memory then, MiB.
    pub kube_mib: f64,
    /// The bench process's (the in-process hub and its clients) resident memory then, MiB.
    pub hub_mib: f64,
}

/// Starts kube-apiserver on `etcd`, gives it the same namespaces and listed ConfigMaps (over
/// HTTPS; setup is not measured), and takes both processes' resident memory.
pub async fn prepare_peer(plan: &Plan, dir: &Path, etcd: &str) -> Result<Peer> {
    let kube = KubePeer::start(dir, etcd).await?;
    populate(plan, kube.client()?).await?;
    // Let both settle (watch caches filled, allocator quiet) before reading memory.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    Ok(Peer {
        kube_mib: kube.resident_mib()?,
        hub_mib: resident_mib(std::process::id())?,
        kube,
    })
}

/// Creates the benchmark's namespaces, with `plan.list_objects` ConfigMaps in the listed one.
async fn populate(plan: &Plan, client: Client) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in [CREATE_NS, LIST_NS] {
        let metadata = ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        };
        let namespace = Namespace {
            metadata,
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await?;
    }
    let api: Api<ConfigMap> = Api::namespaced(client, LIST_NS);
    let payload = payload();
    futures::stream::iter(0..plan.list_objects)
        .map(|i| {
            let object = config_map(format!("item-{i:05}"), &payload);
            let api = &api;
            async move { api.create(&PostParams::default(), &object).await }
        })
        .buffer_unordered(plan.writers)
        .try_for_each(|_| async { Ok(()) })
        .await?;
    Ok(())
}

/// One run: HTTPS creates, etcd's put throughput, the list, and watch fan-out.
pub async fn run_once(
    plan: &Plan,
    run: usize,
    hub: &HttpsHub,
    etcd: Option<&Etcd>,
    peer: Option<&Peer>,
) -> Result<Vec<Row>> {
    let creates_h2 = create_throughput_h2(plan, run, hub).await?;
    let creates = create_throughput(plan, run, hub).await?;
    let etcd = etcd::put_throughput(etcd, plan, &format!("/api-run-{run}")).await?;
    let list = list_latency(&hub.client()?, plan.list_objects, plan.lists).await?;
    let gets = get_throughput_h2(plan, &hub.h2_client()?).await?;
    let gets_ungated = get_throughput_h2(plan, &hub.h2_client_ungated()?).await?;
    let (latency, latency_ungated) = get_latencies(hub).await?;
    let mut rows = vec![
        Row {
            figure: format!(
                "ConfigMap creates over HTTPS/2, {} concurrent (client-go's path)",
                plan.writers
            ),
            value: creates_h2,
            unit: "creates/s",
            etcd,
            target: Target::EtcdRatioAtLeast(CREATE_TARGET_RATIO),
        },
        Row {
            figure: format!(
                "ConfigMap creates over HTTPS/1.1, {} kube-rs clients",
                plan.writers
            ),
            value: creates,
            unit: "creates/s",
            etcd,
            // For information: the target is kubectl's path, HTTP/2 (the row above).
            target: Target::None,
        },
        Row {
            figure: format!(
                "list {} ConfigMaps as JSON (median of {})",
                plan.list_objects, plan.lists
            ),
            value: list,
            unit: "ms",
            etcd: None,
            target: Target::AtMost(LIST_TARGET_MS),
        },
        Row {
            figure: format!(
                "ConfigMap GETs over HTTPS/2, {} concurrent, through the gate",
                plan.writers
            ),
            value: gets,
            unit: "GETs/s",
            etcd: None,
            target: Target::None,
        },
        Row {
            figure: "the same GETs without the gate".to_string(),
            value: gets_ungated,
            unit: "GETs/s",
            etcd: None,
            target: Target::None,
        },
        Row {
            figure: format!(
                "GET latency over HTTPS/2, one at a time, through the gate (median of {GET_SAMPLES})"
            ),
            value: latency,
            unit: "µs",
            etcd: None,
            target: Target::None,
        },
        Row {
            figure: "the same GETs without the gate (alternating with them)".to_string(),
            value: latency_ungated,
            unit: "µs",
            etcd: None,
            target: Target::None,
        },
        Row {
            figure: "the gate's share of GET latency (authn, RBAC, limits)".to_string(),
            value: 100.0 * (latency - latency_ungated) / latency,
            unit: "%",
            etcd: None,
            target: Target::AtMost(GATE_TARGET_PERCENT),
        },
    ];
    let mut fanouts = Vec::new();
    for watchers in plan.idle_watchers {
        let prefix = format!("fan-r{run}-hub-{watchers}");
        let delivery =
            fanout::delivery(hub, CREATE_NS, &prefix, watchers, plan.watch_writes).await?;
        rows.push(Row::info(
            format!(
                "watch fan-out over HTTPS/2: create → ADDED at all {watchers} watchers (median of {})",
                plan.watch_writes
            ),
            delivery,
            "µs",
        ));
        fanouts.push((watchers, delivery));
    }
    if let Some(peer) = peer {
        let hub_figures = HubFigures {
            creates: creates_h2,
            list,
            get: latency,
            fanouts,
        };
        rows.extend(against_peer(plan, run, peer, &hub_figures).await?);
    }
    rows.extend(watch::run_once(plan).await?);
    Ok(rows)
}

/// What the hub measured in a run, to set kube-apiserver's figures against.
struct HubFigures {
    /// Creates/s over HTTPS/2.
    creates: f64,
    /// List time, ms.
    list: f64,
    /// GET latency, µs.
    get: f64,
    /// Watch fan-out delivery, µs, per watcher count.
    fanouts: Vec<(usize, f64)>,
}

/// The same creates, list, GETs and watch fan-out against kube-apiserver, the ratios, and both
/// processes' resident memory while each holds the listed ConfigMaps.
async fn against_peer(plan: &Plan, run: usize, peer: &Peer, hub: &HubFigures) -> Result<Vec<Row>> {
    let (hub_creates, hub_list, hub_get) = (hub.creates, hub.list, hub.get);
    let creates = create_throughput_h2(plan, run, &peer.kube).await?;
    let list = list_latency(&peer.kube.client()?, plan.list_objects, plan.lists).await?;
    let get = get_latency(peer.kube.h2()?).await?;
    let (kube_memory, hub_memory) = (peer.kube_mib, peer.hub_mib);
    let ratio = |figure: &str, value: f64, target: Target| Row {
        figure: figure.to_string(),
        value,
        unit: "×",
        etcd: None,
        target,
    };
    let mut rows = vec![
        Row::info(
            format!(
                "kube-apiserver: ConfigMap creates over HTTPS/2, {} concurrent",
                plan.writers
            ),
            creates,
            "creates/s",
        ),
        Row::info(
            format!(
                "kube-apiserver: list {} ConfigMaps as JSON",
                plan.list_objects
            ),
            list,
            "ms",
        ),
        Row::info("kube-apiserver: GET latency over HTTPS/2".into(), get, "µs"),
        Row::info(
            format!(
                "kube-apiserver: resident memory holding {} ConfigMaps",
                plan.list_objects
            ),
            kube_memory,
            "MiB",
        ),
        Row::info(
            format!(
                "hub: resident memory holding {} ConfigMaps (the bench process: hub and its clients)",
                plan.list_objects
            ),
            hub_memory,
            "MiB",
        ),
        ratio(
            "hub ÷ kube-apiserver: creates/s",
            hub_creates / creates,
            Target::AtLeast(KUBE_CREATE_RATIO),
        ),
        ratio(
            "hub ÷ kube-apiserver: list time",
            hub_list / list,
            Target::AtMost(KUBE_LIST_AND_MEMORY_RATIO),
        ),
        ratio(
            "hub ÷ kube-apiserver: GET latency",
            hub_get / get,
            Target::None,
        ),
        ratio(
            "hub ÷ kube-apiserver: resident memory",
            hub_memory / kube_memory,
            Target::AtMost(KUBE_LIST_AND_MEMORY_RATIO),
        ),
    ];
    for (watchers, hub_delivery) in &hub.fanouts {
        let prefix = format!("fan-r{run}-kube-{watchers}");
        let delivery =
            fanout::delivery(&peer.kube, CREATE_NS, &prefix, *watchers, plan.watch_writes).await?;
        rows.push(Row::info(
            format!("kube-apiserver: watch fan-out, create → ADDED at all {watchers} watchers"),
            delivery,
            "µs",
        ));
        rows.push(ratio(
            &format!("hub ÷ kube-apiserver: watch fan-out to {watchers} watchers"),
            hub_delivery / delivery,
            Target::None,
        ));
    }
    Ok(rows)
}

/// Median latency in µs of single GETs, one at a time over one warm HTTP/2 connection.
async fn get_latency(client: H2Client) -> Result<f64> {
    let mut getter = H2Getter { client };
    getter.step().await?;
    let mut times = Vec::with_capacity(GET_SAMPLES);
    for _ in 0..GET_SAMPLES {
        let start = Instant::now();
        getter.step().await?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(times))
}

/// Creates/s of `plan.writers` clients, each with its own HTTPS connection (as separate
/// kubectl processes or controllers would have), creating ConfigMaps back to back.
async fn create_throughput(plan: &Plan, run: usize, hub: &HttpsHub) -> Result<f64> {
    let payload = payload();
    let workers = (0..plan.writers)
        .map(|w| {
            Ok(Creator {
                api: Api::namespaced(hub.client()?, CREATE_NS),
                prefix: format!("r{run}-w{w}-"),
                created: 0,
                payload: payload.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    throughput(workers, plan.duration).await
}

/// Creates/s of `plan.writers` concurrent requests multiplexed over one HTTP/2 TLS connection,
/// the way client-go (kubectl, Go controllers) talks to an API server.
async fn create_throughput_h2(plan: &Plan, run: usize, server: &impl Served) -> Result<f64> {
    let client = server.h2()?;
    let payload = payload();
    let workers = (0..plan.writers)
        .map(|w| H2Creator {
            client: client.clone(),
            prefix: format!("h2-r{run}-w{w}-"),
            created: 0,
            payload: payload.clone(),
        })
        .collect::<Vec<_>>();
    throughput(workers, plan.duration).await
}

/// GETs/s of one listed ConfigMap from `plan.writers` concurrent streams over `client`'s one
/// HTTP/2 connection.
async fn get_throughput_h2(plan: &Plan, client: &super::https::H2Client) -> Result<f64> {
    let workers = (0..plan.writers)
        .map(|_| H2Getter {
            client: client.clone(),
        })
        .collect::<Vec<_>>();
    throughput(workers, plan.duration).await
}

/// Median latencies in µs of single GETs through the gate and without it: [`GET_SAMPLES`]
/// of each, alternating, each over its own warm HTTP/2 connection, so both see the same
/// machine noise.
async fn get_latencies(hub: &HttpsHub) -> Result<(f64, f64)> {
    let mut gated = H2Getter {
        client: hub.h2_client()?,
    };
    let mut ungated = H2Getter {
        client: hub.h2_client_ungated()?,
    };
    gated.step().await?;
    ungated.step().await?;
    let mut times = (
        Vec::with_capacity(GET_SAMPLES),
        Vec::with_capacity(GET_SAMPLES),
    );
    for _ in 0..GET_SAMPLES {
        let start = Instant::now();
        gated.step().await?;
        times.0.push(start.elapsed().as_secs_f64() * 1e6);
        let start = Instant::now();
        ungated.step().await?;
        times.1.push(start.elapsed().as_secs_f64() * 1e6);
    }
    Ok((median(times.0), median(times.1)))
}

/// One stream of GETs of the first listed ConfigMap.
struct H2Getter {
    client: super::https::H2Client,
}

impl Worker for H2Getter {
    async fn step(&mut self) -> Result<()> {
        let path = format!("/api/v1/namespaces/{LIST_NS}/configmaps/item-00000");
        let status = self.client.get(&path).await?;
        if status != http::StatusCode::OK {
            bail!("GET over HTTP/2 answered {status}");
        }
        Ok(())
    }
}

/// One stream of ConfigMap creates over the shared HTTP/2 connection.
struct H2Creator {
    client: super::https::H2Client,
    prefix: String,
    created: usize,
    payload: String,
}

impl Worker for H2Creator {
    async fn step(&mut self) -> Result<()> {
        let object = config_map(format!("{}{}", self.prefix, self.created), &self.payload);
        let path = format!("/api/v1/namespaces/{CREATE_NS}/configmaps");
        let status = self
            .client
            .post_json(&path, serde_json::to_vec(&object)?)
            .await?;
        if status != http::StatusCode::CREATED {
            bail!("create over HTTP/2 answered {status}");
        }
        self.created += 1;
        Ok(())
    }
}

/// Median latency in milliseconds of `lists` full lists of [`LIST_NS`] as plain JSON (as
/// `kubectl get -o json` asks for it) over one warm HTTPS connection; a first, unmeasured list
/// opens the connection and checks that it returns `expected` items.
async fn list_latency(client: &Client, expected: usize, lists: usize) -> Result<f64> {
    let request = || {
        http::Request::get(format!("/api/v1/namespaces/{LIST_NS}/configmaps"))
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
    };
    let body = client.request_text(request()?).await?;
    let items = serde_json::from_str::<serde_json::Value>(&body)?["items"]
        .as_array()
        .map_or(0, Vec::len);
    if items != expected {
        bail!("listing {LIST_NS} returned {items} items, expected {expected}");
    }
    let mut samples = Vec::with_capacity(lists);
    for _ in 0..lists {
        let start = Instant::now();
        client.request_text(request()?).await?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(samples))
}

/// One HTTPS client creating uniquely named ConfigMaps.
struct Creator {
    api: Api<ConfigMap>,
    prefix: String,
    created: usize,
    payload: String,
}

impl Worker for Creator {
    async fn step(&mut self) -> Result<()> {
        let object = config_map(format!("{}{}", self.prefix, self.created), &self.payload);
        self.api.create(&PostParams::default(), &object).await?;
        self.created += 1;
        Ok(())
    }
}
