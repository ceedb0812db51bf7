//! A benchmark, not a CI test: Flotilla's provisioning scheduler against real Karpenter's on the
//! same pending pods and the same catalog, with zone topology spread, pod affinity and hostname
//! anti-affinity in the mix; then one multi-node consolidation decision on the nodes Karpenter
//! launched, after most pods are scaled away.
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

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flotilla_api::nodes::NodePool;
use flotilla_nodes::consolidation::{
    Candidate, Cluster, ConsolidationOptions, multi_node_consolidation,
};
use flotilla_nodes::scheduling::from_api::pool_model;
use flotilla_nodes::scheduling::from_k8s::{bound_pod, existing_node, pod_requests, sim_pod};
use flotilla_nodes::scheduling::{
    CapacityType, ExistingNode, Resources, Scheduler, SchedulingOptions, SimPod,
};
use flotilla_testkit::{ClusterOptions, RealCluster, RealKarpenter, eventually};
use k8s_openapi::api::core::v1::{Node, Pod};
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
        "disruption": {"consolidateAfter": "Never", "budgets": [{"nodes": "100%"}]},
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

    // Flotilla on the same Pod objects and catalog, while the cluster is idle.
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

    consolidation(&cluster, &karpenter, &pods_api, &models, &catalog).await;
}

/// One multi-node consolidation decision on both sides, over the cluster Karpenter provisioned
/// with most pods scaled away. Karpenter's figures: the mean of
/// `karpenter_voluntary_disruption_decision_evaluation_duration_seconds{consolidation_type="multi"}`
/// over its multi-node evaluations from switching consolidation on to its first multi-node
/// decision, less the fixed 15 s validation wait such an evaluation includes (runs that found
/// nothing count too, so it is if anything low); and the mean of its disruption scheduling
/// simulations (`karpenter_scheduler_scheduling_duration_seconds{controller="disruption"}`).
/// Flotilla's: the median of building the candidates from the same nodes and pods and running
/// `multi_node_consolidation`.
async fn consolidation(
    cluster: &RealCluster,
    karpenter: &RealKarpenter,
    pods_api: &Api<Pod>,
    models: &[flotilla_nodes::scheduling::NodePool],
    catalog: &[flotilla_nodes::scheduling::InstanceType],
) {
    let running =
        |pod: &Pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
    list_until(pods_api, "every pod running", |pods| {
        pods.iter().all(running)
    })
    .await;
    for (name, replicas) in [("spread", 100), ("plain", 60), ("together", 50)] {
        cluster.kubectl_ok(&[
            "scale",
            "deployment",
            name,
            &format!("--replicas={replicas}"),
        ]);
    }
    let left: usize = 100 + 60 + 50 + 50;
    let pods = list_until(pods_api, "the scale-down", |pods| pods.len() == left).await;
    let nodes = Api::<Node>::all(cluster.client().await)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;

    // Flotilla on the same nodes and pods, while the cluster is idle.
    let mut times = Vec::new();
    let mut decision = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let (existing, candidates) = candidates(&nodes, &pods, catalog);
        let budgets = BTreeMap::from([("default".to_string(), existing.len() as u32)]);
        let view = Cluster {
            pools: models,
            instance_types: catalog,
            nodes: &existing,
            pending: &[],
        };
        let found = multi_node_consolidation(
            view,
            &candidates,
            &budgets,
            &ConsolidationOptions::default(),
            &mut || false,
        );
        times.push(start.elapsed());
        decision = Some(found);
    }
    let decision = decision.unwrap();
    let flotilla_run = median(times);

    let metric = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds";
    let labels = r#"consolidation_type="multi",reason="underutilized""#;
    let read = || {
        let text = karpenter.metrics();
        let count = sample(&text, &format!("{metric}_count"), labels).unwrap_or(0.0);
        let sum = sample(&text, &format!("{metric}_sum"), labels).unwrap_or(0.0);
        (count, sum)
    };
    let simulations = || {
        let text = karpenter.metrics();
        let name = "karpenter_scheduler_scheduling_duration_seconds";
        let labels = r#"controller="disruption""#;
        let count = sample(&text, &format!("{name}_count"), labels).unwrap_or(0.0);
        let sum = sample(&text, &format!("{name}_sum"), labels).unwrap_or(0.0);
        (count, sum)
    };
    let (count_before, sum_before) = read();
    let (simulations_before, simulated_before) = simulations();
    cluster.kubectl_ok(&[
        "patch",
        "nodepool",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"disruption":{"consolidateAfter":"0s"}}}"#,
    ]);
    // Until multi-node consolidation decides, or has evaluated three times (emptiness may
    // take the empty nodes first).
    let (evaluations, sum) = eventually("Karpenter's multi-node consolidation", 300, || {
        let text = karpenter.metrics();
        let decided = text.lines().any(|l| {
            l.starts_with("karpenter_voluntary_disruption_decisions_total{")
                && l.contains(r#"consolidation_type="multi""#)
        });
        let (count, sum) = read();
        let evaluations = count - count_before;
        (evaluations >= 1.0 && (decided || evaluations >= 3.0)).then_some((evaluations, sum))
    });
    // An evaluation that finds a command waits Karpenter's fixed 15 s validation period
    // before it returns; that wait is not work.
    let evaluation = Duration::from_secs_f64((sum - sum_before) / evaluations);
    let karpenter_run = evaluation.saturating_sub(Duration::from_secs(15));
    let (simulations_after, simulated_after) = simulations();
    let karpenter_simulation = Duration::from_secs_f64(
        (simulated_after - simulated_before) / (simulations_after - simulations_before).max(1.0),
    );

    eprintln!(
        "consolidation over {} nodes, {left} pods left\n\
         Karpenter v1.15.0: {:.1} ms per multi-node evaluation ({evaluations} measured, {:.1} ms \
         with the validation wait); {:.2} ms per disruption scheduling simulation ({} of them)\n\
         Flotilla: {:.2} ms median of {RUNS} ({} simulations; {})\n\
         ratio: {:.0}x per decision, {:.0}x per simulation",
        nodes.len(),
        karpenter_run.as_secs_f64() * 1e3,
        evaluation.as_secs_f64() * 1e3,
        karpenter_simulation.as_secs_f64() * 1e3,
        simulations_after - simulations_before,
        flotilla_run.as_secs_f64() * 1e3,
        decision.simulations,
        decision
            .command
            .as_ref()
            .map_or("no command".to_string(), |c| c.to_string()),
        karpenter_run.as_secs_f64() / flotilla_run.as_secs_f64(),
        karpenter_simulation.as_secs_f64() * decision.simulations.max(1) as f64
            / flotilla_run.as_secs_f64()
    );
}

/// Lists the live pods until `done` holds of them (at most four minutes), and returns them.
async fn list_until(api: &Api<Pod>, what: &str, done: impl Fn(&[Pod]) -> bool) -> Vec<Pod> {
    for _ in 0..480 {
        let pods = api.list(&ListParams::default()).await.unwrap().items;
        let live: Vec<Pod> = pods
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect();
        if done(&live) {
            return live;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The nodes as consolidation sees them, and a candidate per Karpenter node (every one, as
/// with `consolidateAfter: 0s`), ordered as Karpenter orders them: price per unit of
/// disruption, highest first.
fn candidates(
    nodes: &[Node],
    pods: &[Pod],
    catalog: &[flotilla_nodes::scheduling::InstanceType],
) -> (Vec<ExistingNode>, Vec<Candidate>) {
    let mut existing = Vec::new();
    let mut candidates = Vec::new();
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let on: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(&name))
            .collect();
        let requested = on
            .iter()
            .filter_map(|p| pod_requests(p).ok())
            .fold(Resources::ZERO, |a, b| a + b);
        let mut view = existing_node(node, requested).expect("node converts");
        view.bound = on.iter().map(|p| bound_pod(p)).collect();
        let labels = node.metadata.labels.clone().unwrap_or_default();
        let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
        let capacity_type = CapacityType::from_label(&label("karpenter.sh/capacity-type"))
            .unwrap_or(CapacityType::OnDemand);
        let zone = label("topology.kubernetes.io/zone");
        let instance_type = label("node.kubernetes.io/instance-type");
        let price = catalog
            .iter()
            .find(|it| it.name == instance_type)
            .and_then(|it| {
                it.offerings
                    .iter()
                    .find(|o| o.zone == zone && o.capacity_type == capacity_type)
            })
            .map_or(0.0, |o| o.price);
        let sim_pods: Vec<SimPod> = on.iter().filter_map(|p| sim_pod(p).ok()).collect();
        let moving = sim_pods.len() as f64;
        candidates.push(Candidate {
            node: name,
            pool: "default".into(),
            instance_type,
            capacity_type,
            zone,
            price,
            pods: sim_pods,
            disruption_cost: moving,
            reschedule_cost: 1.0 + moving,
            balanced: None,
        });
        existing.push(view);
    }
    candidates.sort_by(|a, b| {
        (b.price / b.reschedule_cost)
            .total_cmp(&(a.price / a.reschedule_cost))
            .then_with(|| a.node.cmp(&b.node))
    });
    (existing, candidates)
}
