//! One PickN decision over a large fleet: 10,000 member clusters with realistic status, a
//! required term (labels and a property), and two property sorters (available CPU, a resource
//! property; per-CPU-core cost, a reported property). Target: ≤ 20 ms median per decision.
//! Measured with mimalloc, the global allocator of the `flotilla` binary that runs it.

use std::sync::Arc;

use criterion::{Criterion, black_box};
use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_placement::scheduler::{SchedulingInput, schedule};
use serde_json::json;

/// The allocator of the `flotilla` binary, which runs the scheduler.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLUSTERS: usize = 10_000;
const NOW: &str = "2026-03-01T12:00:00Z";

/// A small deterministic generator (64-bit LCG), so every run benches the same fleet.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

fn fleet() -> Vec<MemberCluster> {
    let regions = [
        "eastus",
        "westus",
        "westeurope",
        "northeurope",
        "japaneast",
        "brazilsouth",
    ];
    let envs = ["prod", "staging", "canary", "dev"];
    let mut rng = Lcg(42);
    (0..CLUSTERS)
        .map(|i| {
            let nodes = 1 + rng.next(40);
            let cores_per_node = [4, 8, 16, 32][usize::try_from(rng.next(4)).unwrap()];
            let capacity_m = nodes * cores_per_node * 1000;
            let allocatable_m = capacity_m - nodes * 80;
            let available_m = allocatable_m * rng.next(100) / 100;
            let memory_gi = nodes * cores_per_node * 4;
            let cost = format!("{}.{:03}", rng.next(2), rng.next(1000));
            let mem_cost = format!("0.{:03}", rng.next(1000));
            let region = regions[i % regions.len()];
            let taints = if rng.next(50) == 0 {
                json!([{"key": "maintenance", "effect": "NoSchedule"}])
            } else {
                json!([])
            };
            let heartbeat = if rng.next(100) == 0 { "2026-03-01T11:40:00Z" } else { "2026-03-01T11:59:30Z" };
            let condition = |t: &str| {
                json!({"type": t, "status": "True", "reason": t, "message": format!("{t} is true"),
                       "lastTransitionTime": "2026-02-01T00:00:00Z", "observedGeneration": 1})
            };
            let observed = "2026-03-01T11:59:30Z";
            serde_json::from_value(json!({
                "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
                "kind": "MemberCluster",
                "metadata": {
                    "name": format!("member-{i:05}"),
                    "uid": format!("00000000-0000-0000-0000-{i:012}"),
                    "resourceVersion": (1000 + i).to_string(),
                    "generation": 1,
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "finalizers": ["kubernetes-fleet.io/membercluster-finalizer"],
                    "labels": {
                        "fleet.azure.com/location": region,
                        "topology.kubernetes.io/region": region,
                        "topology.kubernetes.io/zone": format!("{region}-{}", 1 + i % 3),
                        "environment": envs[i % envs.len()],
                        "team": format!("team-{}", i % 17),
                        "kubernetes-fleet.io/cluster-name": format!("member-{i:05}")
                    }
                },
                "spec": {
                    "identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"},
                    "heartbeatPeriodSeconds": 60,
                    "taints": taints
                },
                "status": {
                    "conditions": [condition("ReadyToJoin"), condition("Joined"), condition("Healthy")],
                    "properties": {
                        "kubernetes-fleet.io/node-count": {"value": nodes.to_string(), "observationTime": observed},
                        "kubernetes.azure.com/node-count": {"value": nodes.to_string(), "observationTime": observed},
                        "kubernetes.azure.com/per-cpu-core-cost": {"value": cost, "observationTime": observed},
                        "kubernetes.azure.com/per-gb-memory-cost": {"value": mem_cost, "observationTime": observed},
                        "k8s.io/k8s-version": {"value": "1.31.2", "observationTime": observed}
                    },
                    "resourceUsage": {
                        "capacity": {"cpu": (capacity_m / 1000).to_string(), "memory": format!("{memory_gi}Gi"), "pods": (nodes * 110).to_string()},
                        "allocatable": {"cpu": format!("{allocatable_m}m"), "memory": format!("{}Mi", memory_gi * 1024 - nodes * 750), "pods": (nodes * 110).to_string()},
                        "available": {"cpu": format!("{available_m}m"), "memory": format!("{}Ki", memory_gi * 1024 * 1024 / 3), "pods": (nodes * 40).to_string()},
                        "observationTime": observed
                    },
                    "agentStatus": [{
                        "type": "MemberAgent",
                        "lastReceivedHeartbeat": heartbeat,
                        "conditions": [condition("Joined"), condition("Healthy")]
                    }]
                }
            }))
            .unwrap()
        })
        .collect()
}

fn policy() -> PlacementPolicy {
    serde_json::from_value(json!({
        "placementType": "PickN",
        "numberOfClusters": 100,
        "affinity": {"clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [{
                "labelSelector": {"matchExpressions": [{"key": "environment", "operator": "In", "values": ["prod", "staging"]}]},
                "propertySelector": {"matchExpressions": [{"name": "kubernetes-fleet.io/node-count", "operator": "Ge", "values": ["3"]}]}
            }]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 60, "preference": {"propertySorter": {"name": "resources.kubernetes-fleet.io/available-cpu", "sortOrder": "Descending"}}},
                {"weight": 40, "preference": {"propertySorter": {"name": "kubernetes.azure.com/per-cpu-core-cost", "sortOrder": "Ascending"}}}
            ]
        }}
    }))
    .unwrap()
}

fn pick_n(c: &mut Criterion) {
    let clusters: Vec<Arc<MemberCluster>> = fleet().into_iter().map(Arc::new).collect();
    let policy = policy();
    let input = SchedulingInput {
        policy: &policy,
        policy_snapshot: "crp-1",
        clusters: &clusters,
        bindings: &[],
        now: NOW.parse().unwrap(),
        eligibility: EligibilityWindows::default(),
        previous: &[],
    };
    let decision = schedule(&input);
    assert_eq!(decision.selected().count(), 100);
    assert_eq!(decision.clusters.len(), CLUSTERS);
    c.bench_function("pick_n_100_of_10000_two_sorters", |b| {
        b.iter(|| schedule(black_box(&input)))
    });
}

fn main() {
    let mut criterion = Criterion::default().sample_size(30).configure_from_args();
    pick_n(&mut criterion);
    criterion.final_summary();
}
