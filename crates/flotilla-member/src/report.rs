//! What a member agent reports about its cluster, computed purely from the cluster's nodes,
//! pods and version: the properties placements select on and the resource usage.
//!
//! - node counts under both KubeFleet's and the Azure provider's names;
//! - `resources.kubernetes-fleet.io/{total,allocatable,available}-{cpu,memory}` (also in
//!   `status.resourceUsage`), where available = allocatable − requests of the pods running on
//!   the nodes;
//! - `k8s.io/k8s-version`;
//! - `kubernetes.azure.com/per-cpu-core-cost` and `…/per-gb-memory-cost`: the nodes' hourly
//!   prices summed, divided by their cores or GiB, as `%.3f`. KubeFleet's Azure provider reports
//!   0 when a price is missing, which makes the cluster look free to cost-sorting placements;
//!   Flotilla leaves both out instead and says which instance type had no price.

use std::collections::BTreeMap;

use flotilla_api::cluster::properties::{
    AZURE_NODE_COUNT, Capacity, KUBERNETES_VERSION, NODE_COUNT, PER_CPU_CORE_COST,
    PER_GB_MEMORY_COST, parse_resource_property, resource_property,
};
use k8s_openapi::api::core::v1::{Node, Pod, ResourceRequirements};

use flotilla_apimachinery::quantity;

/// Node label holding the instance type (VM size).
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// Node label holding the region.
pub const REGION_LABEL: &str = "topology.kubernetes.io/region";
/// Node label holding the capacity type (`on-demand` or `spot`).
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";

/// Where node prices come from (the simulated cloud's catalog, or a real price list).
pub trait PriceSource: Send + Sync {
    /// Hourly price of one node of `instance_type` in `region` bought as `capacity_type`
    /// (`on-demand` or `spot`), if known.
    fn hourly_price(&self, instance_type: &str, region: &str, capacity_type: &str) -> Option<f64>;

    /// Why the source has no prices at all (no table was given, or it cannot be read), if
    /// so; the report then says this instead of naming the first unpriced node.
    fn unavailable(&self) -> Option<String> {
        None
    }
}

/// Resource figures of the whole cluster, as quantities by resource name (`cpu`, `memory`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Sum of node capacity.
    pub capacity: BTreeMap<String, String>,
    /// Sum of node allocatable.
    pub allocatable: BTreeMap<String, String>,
    /// Allocatable minus the requests of pods running on the nodes.
    pub available: BTreeMap<String, String>,
}

impl Usage {
    fn of_mut(&mut self, capacity: Capacity) -> &mut BTreeMap<String, String> {
        match capacity {
            Capacity::Total => &mut self.capacity,
            Capacity::Allocatable => &mut self.allocatable,
            Capacity::Available => &mut self.available,
        }
    }
}

/// Everything one collection found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Property name → quantity.
    pub properties: BTreeMap<String, String>,
    /// Resource usage.
    pub usage: Usage,
    /// What could not be determined, in words (empty when collection fully succeeded).
    pub problems: Vec<String>,
}

/// Sums of one resource figure over the nodes, in millicores and bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    cpu_millis: i64,
    memory_bytes: i64,
}

/// Computes the report for a cluster of `nodes` running `pods` at control-plane `version`,
/// then applies `overrides` (property name → quantity; resource properties also override the
/// matching `resourceUsage` entry).
pub fn report(
    nodes: &[Node],
    pods: &[Pod],
    version: &str,
    prices: &dyn PriceSource,
    overrides: &BTreeMap<String, String>,
) -> Report {
    let mut out = Report::default();
    let count = nodes.len().to_string();
    out.properties.insert(NODE_COUNT.into(), count.clone());
    out.properties.insert(AZURE_NODE_COUNT.into(), count);
    out.properties.insert(
        KUBERNETES_VERSION.into(),
        version.trim_start_matches('v').into(),
    );

    let capacity = sum(
        nodes,
        |n| n.status.as_ref()?.capacity.as_ref(),
        &mut out.problems,
    );
    let allocatable = sum(
        nodes,
        |n| n.status.as_ref()?.allocatable.as_ref(),
        &mut out.problems,
    );
    let requested = requests_on(nodes, pods);
    let available = Totals {
        cpu_millis: (allocatable.cpu_millis - requested.cpu_millis).max(0),
        memory_bytes: (allocatable.memory_bytes - requested.memory_bytes).max(0),
    };
    for (which, totals) in [
        (Capacity::Total, capacity),
        (Capacity::Allocatable, allocatable),
        (Capacity::Available, available),
    ] {
        let cpu = quantity::format_cpu(totals.cpu_millis.max(0).unsigned_abs());
        let memory = quantity::format_memory(totals.memory_bytes.max(0).unsigned_abs());
        out.properties
            .insert(resource_property(which, "cpu"), cpu.clone());
        out.properties
            .insert(resource_property(which, "memory"), memory.clone());
        let usage = out.usage.of_mut(which);
        usage.insert("cpu".into(), cpu);
        usage.insert("memory".into(), memory);
    }

    match hourly_cost(nodes, prices) {
        Ok(total) if capacity.cpu_millis > 0 && capacity.memory_bytes > 0 => {
            let cores = capacity.cpu_millis as f64 / 1000.0;
            let gib = capacity.memory_bytes as f64 / f64::from(1u32 << 30);
            out.properties
                .insert(PER_CPU_CORE_COST.into(), format!("{:.3}", total / cores));
            out.properties
                .insert(PER_GB_MEMORY_COST.into(), format!("{:.3}", total / gib));
        }
        Ok(_) => out
            .problems
            .push("cost properties not reported: the cluster has no CPU or memory capacity".into()),
        Err(problem) => out
            .problems
            .push(format!("cost properties not reported: {problem}")),
    }

    for (name, value) in overrides {
        out.properties.insert(name.clone(), value.clone());
        if let Some((which, resource)) = parse_resource_property(name) {
            out.usage
                .of_mut(which)
                .insert(resource.to_string(), value.clone());
        }
    }
    out
}

/// A node's capacity or allocatable resources.
type ResourceList = BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>;

/// Sums one resource figure of every node, noting nodes whose figures are missing or unreadable.
fn sum<'a>(
    nodes: &'a [Node],
    figures: impl Fn(&'a Node) -> Option<&'a ResourceList>,
    problems: &mut Vec<String>,
) -> Totals {
    let mut totals = Totals::default();
    for node in nodes {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let Some(map) = figures(node) else {
            problems.push(format!("node {name} reports no capacity"));
            continue;
        };
        let cpu = map
            .get("cpu")
            .and_then(|q| whole(quantity::parse_milli(&q.0)));
        let memory = map
            .get("memory")
            .and_then(|q| whole(quantity::parse_units(&q.0)));
        match (cpu, memory) {
            (Some(cpu), Some(memory)) => {
                totals.cpu_millis += cpu;
                totals.memory_bytes += memory;
            }
            _ => problems.push(format!("node {name} reports unreadable cpu or memory")),
        }
    }
    totals
}

/// CPU and memory requested by the pods that occupy the given nodes (bound, not finished).
fn requests_on(nodes: &[Node], pods: &[Pod]) -> Totals {
    let names: std::collections::HashSet<&str> = nodes
        .iter()
        .filter_map(|n| n.metadata.name.as_deref())
        .collect();
    let mut totals = Totals::default();
    for pod in pods {
        let Some(spec) = &pod.spec else { continue };
        let on_node = spec.node_name.as_deref().is_some_and(|n| names.contains(n));
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if !on_node || matches!(phase, Some("Succeeded" | "Failed")) {
            continue;
        }
        let requests = |r: &Option<ResourceRequirements>, key: &str, parse: Parse| -> i64 {
            r.as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|m| m.get(key))
                .and_then(|q| whole(parse(&q.0)))
                .unwrap_or(0)
        };
        // A pod needs the larger of its containers' sum and its largest init container.
        let need = |key: &str, parse: Parse| -> i64 {
            let main: i64 = spec
                .containers
                .iter()
                .map(|c| requests(&c.resources, key, parse))
                .sum();
            let init = spec
                .init_containers
                .iter()
                .flatten()
                .map(|c| requests(&c.resources, key, parse))
                .max()
                .unwrap_or(0);
            main.max(init)
        };
        totals.cpu_millis += need("cpu", quantity::parse_milli);
        totals.memory_bytes += need("memory", quantity::parse_units);
    }
    totals
}

/// A quantity parser: text to an exact integer amount.
type Parse = fn(&str) -> Option<i128>;

/// An exact amount that fits an `i64`.
fn whole(amount: Option<i128>) -> Option<i64> {
    amount.and_then(|a| i64::try_from(a).ok())
}

/// Summed hourly price of the nodes, or which node could not be priced.
fn hourly_cost(nodes: &[Node], prices: &dyn PriceSource) -> Result<f64, String> {
    if let Some(reason) = prices.unavailable() {
        return Err(reason);
    }
    let mut total = 0.0;
    for node in nodes {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let labels = node.metadata.labels.as_ref();
        let label = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
        let instance_type = label(INSTANCE_TYPE_LABEL)
            .ok_or_else(|| format!("node {name} has no {INSTANCE_TYPE_LABEL} label"))?;
        let region = label(REGION_LABEL)
            .ok_or_else(|| format!("node {name} has no {REGION_LABEL} label"))?;
        let capacity_type = label(CAPACITY_TYPE_LABEL).unwrap_or("on-demand");
        total += prices
            .hourly_price(instance_type, region, capacity_type)
            .ok_or_else(|| {
                format!("no price for instance type {instance_type} ({capacity_type}) in {region}")
            })?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Flat;
    impl PriceSource for Flat {
        fn hourly_price(&self, t: &str, _: &str, capacity: &str) -> Option<f64> {
            let base = match t {
                "small" => 0.1,
                "large" => 0.4,
                _ => return None,
            };
            Some(if capacity == "spot" { base * 0.5 } else { base })
        }
    }

    fn node(name: &str, kind: &str, cpu: &str, memory: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "node.kubernetes.io/instance-type": kind,
                "topology.kubernetes.io/region": "eastus"
            }},
            "status": {
                "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                "allocatable": {"cpu": "1900m", "memory": "7Gi", "pods": "110"}
            }
        }))
        .unwrap()
    }

    fn pod(node: &str, cpu: &str, memory: &str, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": node, "containers": [
                {"name": "a", "resources": {"requests": {"cpu": cpu, "memory": memory}}},
                {"name": "b", "resources": {"requests": {"cpu": cpu}}}
            ], "initContainers": [
                {"name": "i", "resources": {"requests": {"cpu": "3", "memory": "1Mi"}}}
            ]},
            "status": {"phase": phase}
        }))
        .unwrap()
    }

    #[test]
    fn sums_nodes_and_subtracts_running_pods() {
        let nodes = [
            node("n1", "small", "2", "8Gi"),
            node("n2", "large", "2", "8Gi"),
        ];
        let pods = [
            pod("n1", "250m", "1Gi", "Running"),
            pod("n2", "100m", "512Mi", "Pending"),
            pod("n2", "8", "8Gi", "Succeeded"),
            pod("elsewhere", "8", "8Gi", "Running"),
        ];
        let r = report(&nodes, &pods, "v1.30.3", &Flat, &BTreeMap::new());
        let p = |k: &str| r.properties.get(k).map(String::as_str);
        assert_eq!(p(NODE_COUNT), Some("2"));
        assert_eq!(p(AZURE_NODE_COUNT), Some("2"));
        assert_eq!(p(KUBERNETES_VERSION), Some("1.30.3"));
        assert_eq!(p("resources.kubernetes-fleet.io/total-cpu"), Some("4"));
        assert_eq!(
            p("resources.kubernetes-fleet.io/total-memory"),
            Some("16Gi")
        );
        assert_eq!(
            p("resources.kubernetes-fleet.io/allocatable-cpu"),
            Some("3800m")
        );
        // Init container (3 cores) outweighs the two containers (0.5 / 0.2 cores) on both pods.
        assert_eq!(p("resources.kubernetes-fleet.io/available-cpu"), Some("0"));
        assert_eq!(
            p("resources.kubernetes-fleet.io/available-memory"),
            Some("12800Mi")
        );
        assert_eq!(
            r.usage.allocatable.get("memory").map(String::as_str),
            Some("14Gi")
        );
        // (0.1 + 0.4) / 4 cores; / 16 GiB.
        assert_eq!(p(PER_CPU_CORE_COST), Some("0.125"));
        assert_eq!(p(PER_GB_MEMORY_COST), Some("0.031"));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn unpriced_nodes_leave_cost_out_and_say_why() {
        let nodes = [node("n1", "mystery", "2", "8Gi")];
        let r = report(&nodes, &[], "1.31.0", &Flat, &BTreeMap::new());
        assert!(!r.properties.contains_key(PER_CPU_CORE_COST));
        assert_eq!(
            r.problems,
            [
                "cost properties not reported: no price for instance type mystery (on-demand) in eastus"
            ]
        );
    }

    #[test]
    fn overrides_win_and_reach_resource_usage() {
        let nodes = [node("n1", "small", "2", "8Gi")];
        let overrides = BTreeMap::from([
            (
                "kubernetes.azure.com/node-count".to_string(),
                "12".to_string(),
            ),
            (
                "resources.kubernetes-fleet.io/available-cpu".to_string(),
                "64".to_string(),
            ),
            ("example.com/gpu-count".to_string(), "8".to_string()),
        ]);
        let r = report(&nodes, &[], "1.31.0", &Flat, &overrides);
        assert_eq!(r.properties["kubernetes.azure.com/node-count"], "12");
        assert_eq!(r.properties["kubernetes-fleet.io/node-count"], "1");
        assert_eq!(r.properties["example.com/gpu-count"], "8");
        assert_eq!(r.usage.available["cpu"], "64");
    }
}
