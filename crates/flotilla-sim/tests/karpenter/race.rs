//! A benchmark, not a CI test: Flotilla's provisioning scheduler against real Karpenter's on the
//! same pending pods and the same catalog, with zone topology spread, pod affinity and hostname
//! anti-affinity in the mix.
//!
//! The pods are made by a real cluster (Deployments, kube-scheduler marking them
//! unschedulable while no node exists). Real Karpenter (kwok provider, the simulated catalog)
//! gets a NodePool only once every pod waits, so its first provisioning run sees all of them;
//! its own histogram `karpenter_scheduler_scheduling_duration_seconds{controller="provisioner"}`
//! times that run (its `Solve`). Flotilla's scheduler then places the very same Pod objects
//! (read back from the cluster) on the same catalog, timed the same way (building the scheduler
//! and solving), several times; the median is compared. Run with:
//!
//! ```sh
//! cargo test --release -p flotilla-sim --test karpenter race -- --ignored --nocapture
//! ```

use std::time::{Duration, Instant};

use flotilla_api::nodes::NodePool;
use flotilla_nodes::scheduling::from_api::pool_model;
use flotilla_nodes::scheduling::from_k8s::sim_pod;
use flotilla_nodes::scheduling::{Resources, Scheduler, SchedulingOptions, SimPod};
use flotilla_testkit::{ClusterOptions, RealCluster, RealKarpenter, eventually};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::json;

use super::differential::{REGION, kwok_catalog};

/// The workload: (name, replicas, CPU, memory, what constrains it).
const WORKLOADS: &[(&str, i32, &str, &str, &str)] = &[
    ("spread", 400, "500m", "512Mi", "spread"),
    ("plain", 300, "1", "2Gi", ""),
    ("together", 200, "250m", "256Mi", "affinity"),
    ("alone", 50, "250m", "256Mi", "anti-affinity"),
];

/// How many times Flotilla's run is timed.
const RUNS: usize = 15;

/// A Deployment of `replicas` pods requesting `cpu` and `memory`, constrained by `kind`.
fn deployment(name: &str, replicas: i32, cpu: &str, memory: &str, kind: &str) -> String {
    let selector = json!({"matchLabels": {"app": name}});
    let mut spec = json!({
        "containers": [{"name": "app", "image": "nginx",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    });
    match kind {
        "spread" => {
            spec["topologySpreadConstraints"] = json!([{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector,
            }]);
        }
        "affinity" => {
            spec["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": selector}]}});
        }
        "anti-affinity" => {
            spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}]}});
        }
        _ => {}
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": selector,
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    })
    .to_string()
}

/// The NodePool spec both sides use (each names its own node class).
fn pool_spec() -> serde_json::Value {
    json!({
        "template": {"spec": {"requirements": [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ]}},
        "disruption": {"consolidateAfter": "Never"},
    })
}

/// The value of the sample `name{labels}` in Prometheus text `metrics`.
fn sample(metrics: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
}

/// The median of `values`.
fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark against real Karpenter (minutes); run with --ignored"]
async fn race_provisioning_against_real_karpenter() {
    let cluster = RealCluster::start_with(&ClusterOptions {
        nodes: 0,
        ..ClusterOptions::default()
    });
    let karpenter = RealKarpenter::start(&cluster, &kwok_catalog());
    let total: i32 = WORKLOADS.iter().map(|w| w.1).sum();
    for &(name, replicas, cpu, memory, kind) in WORKLOADS {
        let applied = cluster.kubectl_stdin(
            &["apply", "-f", "-"],
            &deployment(name, replicas, cpu, memory, kind),
        );
        assert!(applied.status.success(), "{applied:?}");
    }
    let client = cluster.client().await;
    let pods_api = Api::<Pod>::namespaced(client, "default");
    let unschedulable = |pod: &Pod| {
        pod.status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable"))
    };
    let mut pods = Vec::new();
    for _ in 0..240 {
        pods = pods_api.list(&ListParams::default()).await.unwrap().items;
        if pods.len() == total as usize && pods.iter().all(unschedulable) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        pods.len() == total as usize && pods.iter().all(unschedulable),
        "every pod waits unschedulable"
    );

    // Karpenter's first provisioning run with a pool sees every pod; runs before it (no pool:
    // nothing to do) are left out by reading the histogram just before.
    let metric = "karpenter_scheduler_scheduling_duration_seconds";
    let labels = r#"controller="provisioner""#;
    let read = || {
        let text = karpenter.metrics();
        let count = sample(&text, &format!("{metric}_count"), labels).unwrap_or(0.0);
        let sum = sample(&text, &format!("{metric}_sum"), labels).unwrap_or(0.0);
        (count, sum)
    };
    let mut spec = pool_spec();
    spec["template"]["spec"]["nodeClassRef"] = json!({
        "group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": RealKarpenter::NODE_CLASS,
    });
    let pool = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                      "metadata": {"name": "default"}, "spec": spec});
    let (count_before, sum_before) = read();
    let created = cluster.kubectl_stdin(&["apply", "-f", "-"], &pool.to_string());
    assert!(created.status.success(), "{created:?}");
    let (count, sum) = eventually(
        "Karpenter's first provisioning run with the pool",
        300,
        || {
            let (count, sum) = read();
            (count > count_before).then_some((count - count_before, sum - sum_before))
        },
    );
    let karpenter_run = Duration::from_secs_f64(sum / count);
    eventually("Karpenter's claims", 120, || {
        let out = cluster.kubectl_ok(&["get", "nodeclaims", "--no-headers"]);
        (!out.trim().is_empty()).then_some(())
    });
    let claims = cluster.kubectl_ok(&["get", "nodeclaims", "--no-headers"]);

    // Flotilla on the same Pod objects and catalog.
    let sim_pods: Vec<SimPod> = pods
        .iter()
        .map(|p| sim_pod(p).expect("pod converts"))
        .collect();
    let pod_refs: Vec<&SimPod> = sim_pods.iter().collect();
    let api_pool: NodePool = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "default"}, "spec": pool_spec(),
    }))
    .unwrap();
    let models = [pool_model(&api_pool, Resources::ZERO, 0, Resources::ZERO).unwrap()];
    let catalog = flotilla_sim::karpenter::cloud::instance_types(REGION);
    let mut times = Vec::new();
    let mut results = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut scheduler = Scheduler::new(&models, &catalog);
        let placed = scheduler.schedule(&[], &pod_refs, SchedulingOptions::default());
        times.push(start.elapsed());
        results = Some(placed);
    }
    let results = results.unwrap();
    let flotilla_run = median(times);
    eprintln!(
        "{total} pods (zone spread 400, zone affinity 200, hostname anti-affinity 50, plain 300)\n\
         Karpenter v1.15.0: {:.1} ms per provisioning run ({count} run(s) measured), {} claims\n\
         Flotilla: {:.2} ms median of {RUNS}, {} claims, {} pods unschedulable\n\
         ratio: {:.0}x",
        karpenter_run.as_secs_f64() * 1e3,
        claims.lines().count(),
        flotilla_run.as_secs_f64() * 1e3,
        results.new_claims.len(),
        results.unschedulable.len(),
        karpenter_run.as_secs_f64() / flotilla_run.as_secs_f64()
    );
    assert!(
        results.unschedulable.is_empty(),
        "{:?}",
        results.unschedulable
    );
}
