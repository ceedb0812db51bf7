//! The scheduling simulation at Karpenter's benchmark sizes (`reference/karpenter.md` §8).
//!
//! - `schedule/N`: N pending pods of mixed shapes onto an empty cluster from one pool over the
//!   400-type KWOK-like catalog ([`kwok_catalog`]); criterion's throughput is pods, so
//!   elements/s is pods/s. Target: ≥ 12,000 pods/s at 1,000, 5,000 and 10,000 pods (Karpenter
//!   publishes ~1,200–1,300).
//! - `schedule_topology/N`: the same pods in 20 workloads (by an `app` label), where one in
//!   five of them spreads over zones (maxSkew 1) and one in five refuses to share a node with
//!   its workload (hostname anti-affinity): the topology work Karpenter's pod mix exercises.
//! - `consolidate/multi_node/1000`: one multi-node consolidation decision over 1,000
//!   on-demand 8-vCPU nodes, each a candidate a third full, with a budget of 100 (the default
//!   10%): the binary search over the first 100 candidates, every step a scheduling simulation
//!   of their pods onto the other 900 nodes. Target: ≤ 1 s.

use std::collections::BTreeMap;

use criterion::{BenchmarkId, Criterion, Throughput, black_box};
use flotilla_apimachinery::selector::LabelSelector;
use flotilla_nodes::consolidation::{
    Candidate, Cluster, ConsolidationOptions, multi_node_consolidation,
};
use flotilla_nodes::scheduling::labels;
use flotilla_nodes::scheduling::topology::{AffinityTerm, PodSelector, PodTopology, Spread};
use flotilla_nodes::scheduling::{
    CapacityType, ExistingNode, InstanceType, NodePool, Operator, Requirement, Requirements,
    Resources, SchedulingOptions, SimPod, kwok_catalog, schedule,
};

const SIZES: [usize; 3] = [1_000, 5_000, 10_000];
const MIB: i64 = 1 << 20;

fn requirement(key: &str, operator: Operator, values: &[&str]) -> Requirements {
    let mut requirements = Requirements::new();
    requirements.add(
        key,
        Requirement::new(operator, values).expect("valid requirement"),
    );
    requirements
}

/// The benchmark's pool: linux nodes of either architecture, spot or on-demand, with a small
/// DaemonSet overhead.
fn pool() -> NodePool {
    let mut requirements = requirement(labels::OS, Operator::In, &["linux"]);
    requirements.add(
        labels::CAPACITY_TYPE,
        Requirement::new(Operator::In, &["spot", "on-demand"]).expect("valid requirement"),
    );
    NodePool {
        requirements,
        daemon_overhead: Resources::new(200, 256 * MIB, 2, 0),
        ..NodePool::new("default")
    }
}

/// `count` pods cycling through six CPU sizes (100m–4) and five memory sizes (128Mi–4Gi);
/// one in ten asks for a zone, one in ten for arm64, one in ten for on-demand capacity.
fn pods(count: usize) -> Vec<SimPod> {
    const CPUS: [i64; 6] = [100, 250, 500, 1000, 2000, 4000];
    const MEMORIES: [i64; 5] = [128, 512, 1024, 2048, 4096];
    (0..count)
        .map(|i| {
            let requests = Resources::new(CPUS[i % 6], MEMORIES[(i / 6) % 5] * MIB, 1, 0);
            let pod = SimPod::new(&format!("default/pod-{i}"), requests);
            match i % 10 {
                0 => {
                    let zone =
                        ["test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"][(i / 10) % 4];
                    pod.with_requirements(requirement(labels::ZONE, Operator::In, &[zone]))
                }
                1 => pod.with_requirements(requirement(labels::ARCH, Operator::In, &["arm64"])),
                2 => pod.with_requirements(requirement(
                    labels::CAPACITY_TYPE,
                    Operator::In,
                    &["on-demand"],
                )),
                _ => pod,
            }
        })
        .collect()
}

/// [`pods`] in 20 workloads: one in five spreads over zones, one in five wants a node of its
/// own among its workload.
fn topology_pods(count: usize) -> Vec<SimPod> {
    pods(count)
        .into_iter()
        .enumerate()
        .map(|(i, pod)| {
            let app = format!("app-{}", i % 20);
            let pods = PodSelector {
                namespaces: ["default".to_string()].into(),
                selector: Some(LabelSelector::parse(&format!("app={app}")).expect("selector")),
            };
            let mut topology = PodTopology {
                namespace: "default".into(),
                labels: [("app".to_string(), serde_json::Value::String(app))]
                    .into_iter()
                    .collect(),
                ..PodTopology::default()
            };
            match i % 5 {
                3 => topology.spread.push(Spread {
                    key: labels::ZONE.into(),
                    max_skew: 1,
                    pods,
                }),
                4 => topology.affinity.push(AffinityTerm {
                    key: "kubernetes.io/hostname".into(),
                    pods,
                    anti: true,
                }),
                _ => {}
            }
            pod.with_topology(topology)
        })
        .collect()
}

fn scheduling(c: &mut Criterion) {
    bench_schedule(c, "schedule", &SIZES, pods);
    bench_schedule(c, "schedule_topology", &[1_000], topology_pods);
}

/// Benchmark group `name`: the pods `make` gives at each of `sizes`, scheduled from scratch.
fn bench_schedule(c: &mut Criterion, name: &str, sizes: &[usize], make: fn(usize) -> Vec<SimPod>) {
    let catalog = kwok_catalog(400);
    let pools = [pool()];
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for &size in sizes {
        let pods = make(size);
        let results = schedule(&pools, &catalog, &[], &pods, SchedulingOptions::default());
        assert!(
            results.unschedulable.is_empty(),
            "{:?}",
            results.unschedulable.first_key_value()
        );
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(BenchmarkId::from_parameter(size), |b| {
            b.iter(|| {
                schedule(
                    black_box(&pools),
                    &catalog,
                    &[],
                    black_box(&pods),
                    SchedulingOptions::default(),
                )
            })
        });
    }
    group.finish();
}

const NODES: usize = 1_000;
const NODE_TYPE: &str = "kwok-D8-32gi-amd64-linux-g0";

/// `count` initialized nodes of [`NODE_TYPE`], each with six pods (2.5 vCPU, 5 GiB of its 8 and
/// 32), and a candidate for each, in node order.
fn cluster_nodes(catalog: &[InstanceType], count: usize) -> (Vec<ExistingNode>, Vec<Candidate>) {
    let it = catalog
        .iter()
        .find(|t| t.name == NODE_TYPE)
        .expect("the node type");
    let price = it
        .cheapest_offering(&requirement(
            labels::CAPACITY_TYPE,
            Operator::In,
            &["on-demand"],
        ))
        .expect("an on-demand offering")
        .price;
    let shapes = [
        (1000, 2048),
        (500, 1024),
        (500, 1024),
        (250, 512),
        (125, 256),
        (125, 256),
    ];
    (0..count)
        .map(|i| {
            let name = format!("node-{i:04}");
            let pods: Vec<SimPod> = shapes
                .iter()
                .enumerate()
                .map(|(j, (cpu, memory))| {
                    SimPod::new(
                        &format!("default/{name}-{j}"),
                        Resources::new(*cpu, memory * MIB, 1, 0),
                    )
                })
                .collect();
            let requested = pods.iter().fold(Resources::ZERO, |acc, p| acc + p.requests);
            let labels = [
                (labels::OS, "linux"),
                (labels::ARCH, "amd64"),
                (labels::INSTANCE_TYPE, NODE_TYPE),
                (labels::CAPACITY_TYPE, "on-demand"),
                (labels::ZONE, "test-zone-a"),
                (labels::NODE_POOL, "default"),
                ("kubernetes.io/hostname", name.as_str()),
            ];
            let node = ExistingNode {
                name: name.clone(),
                labels: labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                taints: Vec::new(),
                allocatable: it.allocatable(),
                requested,
                initialized: true,
                pool: Some("default".to_string()),
                bound: Vec::new(),
            };
            let candidate = Candidate {
                node: name,
                pool: "default".to_string(),
                instance_type: NODE_TYPE.to_string(),
                capacity_type: CapacityType::OnDemand,
                zone: "test-zone-a".to_string(),
                price,
                pods,
                disruption_cost: 6.0,
                reschedule_cost: 7.0,
                balanced: None,
            };
            (node, candidate)
        })
        .unzip()
}

fn consolidation(c: &mut Criterion) {
    let catalog = kwok_catalog(400);
    let pools = [pool()];
    let (nodes, candidates) = cluster_nodes(&catalog, NODES);
    let cluster = Cluster {
        pools: &pools,
        instance_types: &catalog,
        nodes: &nodes,
        pending: &[],
    };
    let budgets = BTreeMap::from([("default".to_string(), 100)]);
    let options = ConsolidationOptions::default();
    let decide = || {
        multi_node_consolidation(
            cluster,
            black_box(&candidates),
            &budgets,
            &options,
            &mut || false,
        )
    };
    let decision = decide();
    let command = decision.command.as_ref().expect("a command");
    assert_eq!(command.candidates.len(), 100, "{command}");
    let mut group = c.benchmark_group("consolidate");
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("multi_node", NODES), |b| b.iter(decide));
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    scheduling(&mut criterion);
    consolidation(&mut criterion);
    criterion.final_summary();
}
