//! The simulated fleet of `flotilla up`: the release catalog on the hub (KubernetesVersions and
//! NodeImageVersions, from the fleet file's `catalog:` or the built-in one); for each member
//! of the fleet definition, its MemberCluster and MaintenanceConfigurations on the hub, its
//! simulated cluster, its API under `/clusters/<name>/` and its member agent, which upgrades
//! the member through the simulated provider; then progress until every member has joined.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flotilla_api::cluster::MemberCluster;
use flotilla_api::conditions::is_true;
use flotilla_api::updates::MaintenanceConfiguration;
use flotilla_api::updates::maintenance::object_name;
use flotilla_apiserver::Clock;
use flotilla_apiserver::proxy::MemberApis;
use flotilla_member::Agent;
use flotilla_member::membership::{ensure_namespace, member_namespace};
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::{Fleet, MemberSpec, REGION_LABEL_KEYS};
use flotilla_sim::releases;
use flotilla_sim::upgrade::{Faults, SimProvider, follow_annotations};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::prices::CatalogPrices;

/// Field manager of the MemberClusters `up` writes.
const MANAGER: &str = "flotilla-up";
/// How many members are brought up at once.
const START_CONCURRENCY: usize = 64;

/// Everything the simulated fleet shares.
pub struct FleetRuntime {
    /// In-process client of the hub, for the runner's own writes.
    pub hub: Client,
    /// Opens another in-process client of the hub. Each member agent gets its own, as a real
    /// agent has its own connection, rather than 10,000 agents queueing through one client.
    pub connect: Arc<dyn Fn() -> Client + Send + Sync>,
    /// The clock every member follows.
    pub clock: Arc<dyn Clock>,
    /// Where member APIs are published for the hub's proxy.
    pub apis: MemberApis,
    /// From a pod's scheduling to its readiness, on the clock.
    pub readiness_delay: Duration,
    /// What Karpenter's feature gates switch on in every member's consolidation.
    pub consolidation: flotilla_sim::cluster::ConsolidationOptions,
}

/// Brings every member of `fleet` up, reports progress until all have joined, then keeps
/// them running until the returned future is dropped.
pub async fn run(mut fleet: Fleet, runtime: FleetRuntime) -> Result<()> {
    let total = fleet.members.len();
    if total == 0 {
        return std::future::pending().await;
    }
    let started = Instant::now();
    // Heartbeats are stamped to the second: anything from this second on is from this run.
    let since = runtime
        .clock
        .now()
        .round(
            jiff::TimestampRound::new()
                .smallest(jiff::Unit::Second)
                .mode(jiff::RoundMode::Trunc),
        )
        .unwrap_or_else(|_| runtime.clock.now());
    let images = seed_catalog(&runtime.hub, &fleet, runtime.clock.now()).await?;
    releases::default_node_images(&mut fleet, &images, runtime.clock.now())
        .map_err(|e| anyhow::anyhow!("choosing node images: {e}"))?;
    tracing::info!("starting {total} simulated member cluster(s)");
    let kinds = SimCluster::member_kinds();
    let runtime = &runtime;
    let kinds = &kinds;
    let members: Vec<(Arc<SimCluster>, Faults)> = futures::stream::iter(fleet.members)
        .map(|spec| async move { start_member(spec, runtime, kinds).await })
        .buffer_unordered(START_CONCURRENCY)
        .try_collect()
        .await?;
    let faults = members
        .iter()
        .map(|(sim, faults)| (sim.name().to_string(), faults.clone()))
        .collect();
    let _faults = tokio::spawn(follow_annotations(runtime.hub.clone(), faults));
    tracing::info!(
        "{total} member cluster(s) started in {:.1}s; waiting for their agents to join",
        started.elapsed().as_secs_f64()
    );
    wait_until_joined(&runtime.hub, total, started, since).await;
    // Keep the simulated clusters alive for as long as the hub runs.
    let _members = members;
    std::future::pending().await
}

/// Creates the release catalog's KubernetesVersions and NodeImageVersions on the hub, with
/// relative availability counted from `now`, and returns the NodeImageVersions (for pools that
/// name no image). Releases already there are left as they are, so a restart keeps the times
/// of the first start.
async fn seed_catalog(
    hub: &Client,
    fleet: &Fleet,
    now: jiff::Timestamp,
) -> Result<Vec<flotilla_api::updates::NodeImageVersion>> {
    let catalog = match &fleet.catalog {
        Some(catalog) => catalog.clone(),
        None => releases::builtin(fleet.members.iter().map(|m| m.region.as_str())),
    };
    let (versions, images) =
        releases::objects(&catalog, now).context("reading the fleet's release catalog")?;
    let created = |result: kube::Result<()>, what: String| match result {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("creating {what}")),
    };
    let api: Api<flotilla_api::updates::KubernetesVersion> = Api::all(hub.clone());
    for version in &versions {
        let result = api.create(&PostParams::default(), version).await.map(drop);
        created(result, format!("KubernetesVersion {}", version.name_any()))?;
    }
    let api: Api<flotilla_api::updates::NodeImageVersion> = Api::all(hub.clone());
    for image in &images {
        let result = api.create(&PostParams::default(), image).await.map(drop);
        created(result, format!("NodeImageVersion {}", image.name_any()))?;
    }
    Ok(images)
}

/// Applies the member's maintenance windows as MaintenanceConfigurations in its hub namespace
/// (created ahead of the membership controller if need be), each named as its window.
async fn seed_maintenance(hub: &Client, spec: &MemberSpec) -> Result<()> {
    if spec.maintenance_windows.is_empty() {
        return Ok(());
    }
    let namespace = member_namespace(&spec.name);
    ensure_namespace(hub, &namespace, &spec.name)
        .await
        .with_context(|| format!("creating namespace {namespace}"))?;
    let api: Api<MaintenanceConfiguration> = Api::namespaced(hub.clone(), &namespace);
    for window in &spec.maintenance_windows {
        let name = object_name(&window.name).unwrap_or(&window.name);
        let mut fields = serde_json::to_value(window)?;
        if let Some(fields) = fields.as_object_mut() {
            fields.remove("name");
        }
        let desired = json!({
            "apiVersion": "updates.flotilla.dev/v1beta1",
            "kind": "MaintenanceConfiguration",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"maintenanceWindow": fields},
        });
        api.patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(desired),
        )
        .await
        .with_context(|| {
            format!(
                "applying MaintenanceConfiguration {} of member {}",
                window.name, spec.name
            )
        })?;
    }
    Ok(())
}

async fn start_member(
    spec: MemberSpec,
    runtime: &FleetRuntime,
    kinds: &Arc<flotilla_apiserver::registry::Registry>,
) -> Result<(Arc<SimCluster>, Faults)> {
    ensure_member_cluster(&runtime.hub, &spec).await?;
    // A window the hub refuses must not keep the member from running: say so and go on.
    if let Err(e) = seed_maintenance(&runtime.hub, &spec).await {
        tracing::warn!("{e:#}");
    }
    let options = SimOptions {
        clock: runtime.clock.clone(),
        readiness_delay: runtime.readiness_delay,
        consolidation: runtime.consolidation,
        ..SimOptions::default()
    };
    let sim = SimCluster::start(&spec, options, kinds)
        .await
        .with_context(|| format!("starting simulated member {}", spec.name))?;
    let sim = Arc::new(sim);
    let faults = Faults::default();
    runtime.apis.insert(&spec.name, sim.router());
    let agent = Agent {
        name: spec.name.clone(),
        hub: (runtime.connect)(),
        member: sim.client(),
        clock: runtime.clock.clone(),
        prices: Arc::new(CatalogPrices),
        overrides: spec.properties.clone(),
        provider: Some(Arc::new(SimProvider::new(sim.clone(), faults.clone()))),
    };
    tokio::spawn(agent.run());
    Ok((sim, faults))
}

/// The MemberCluster of a simulated member: labels from the fleet definition plus the region
/// labels (`topology.kubernetes.io/region`, `fleet.azure.com/location`).
fn member_cluster(spec: &MemberSpec) -> serde_json::Value {
    let mut labels = serde_json::Map::new();
    for (k, v) in &spec.labels {
        labels.insert(k.clone(), json!(v));
    }
    for key in REGION_LABEL_KEYS {
        labels.insert(key.into(), json!(spec.region));
    }
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": spec.name, "labels": labels},
        "spec": {
            "identity": {"kind": "ServiceAccount", "name": format!("fleet-member-agent-{}", spec.name), "namespace": "fleet-system"},
            "heartbeatPeriodSeconds": 60,
        },
    })
}

/// Creates the member's MemberCluster, or (after a restart) re-applies the fields `up` owns.
async fn ensure_member_cluster(hub: &Client, spec: &MemberSpec) -> Result<()> {
    let api: Api<MemberCluster> = Api::all(hub.clone());
    let desired = member_cluster(spec);
    let object: MemberCluster = serde_json::from_value(desired.clone())?;
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => {
            api.patch(
                &spec.name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(desired),
            )
            .await
            .with_context(|| format!("updating MemberCluster {}", spec.name))?;
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("creating MemberCluster {}", spec.name)),
    }
}

/// Prints how many members have joined (at most once a second, from a watch of the
/// MemberClusters) until all `total` have. A member counts once it is `Joined` with a heartbeat
/// from this run (`since` on the clock), so a restart does not count the previous run's status.
async fn wait_until_joined(hub: &Client, total: usize, started: Instant, since: jiff::Timestamp) {
    let api: Api<MemberCluster> = Api::all(hub.clone());
    let mut events = Box::pin(watcher(api, watcher::Config::default()).default_backoff());
    let mut joined: HashMap<String, bool> = HashMap::new();
    let mut last_report = Instant::now();
    let mut reported = usize::MAX;
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(mc) | watcher::Event::InitApply(mc)) => {
                let is_joined = mc.status.as_ref().is_some_and(|s| {
                    is_true(&s.conditions, "Joined")
                        && s.agent_status.iter().flatten().any(|a| {
                            a.last_received_heartbeat
                                .as_ref()
                                .is_some_and(|hb| hb.0 >= since)
                        })
                });
                joined.insert(mc.name_any(), is_joined);
            }
            Ok(watcher::Event::Delete(mc)) => {
                joined.remove(&mc.name_any());
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "watching member clusters"),
        }
        let count = joined.values().filter(|j| **j).count();
        if count >= total {
            tracing::info!(
                "all {total} member cluster(s) joined in {:.1}s (resident memory {})",
                started.elapsed().as_secs_f64(),
                resident_memory().unwrap_or_else(|| "unknown".into())
            );
            return;
        }
        if count != reported && last_report.elapsed() >= Duration::from_secs(1) {
            tracing::info!("{count}/{total} member cluster(s) joined");
            reported = count;
            last_report = Instant::now();
        }
    }
}

/// This process's resident memory, from `/proc/self/status`.
fn resident_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(format!("{:.0} MiB", kib as f64 / 1024.0))
}
