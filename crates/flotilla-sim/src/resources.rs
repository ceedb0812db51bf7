//! What a pod asks of a node and what a node offers: CPU, memory and pod slots.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Node, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use flotilla_apimachinery::quantity::{parse_milli, parse_units};

/// An amount of the resources the scheduler accounts for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPU in millicores.
    pub millicpu: i64,
    /// Memory in bytes.
    pub memory: i64,
}

impl Resources {
    /// The sum of two amounts.
    pub fn plus(self, other: Resources) -> Resources {
        Resources {
            millicpu: self.millicpu.saturating_add(other.millicpu),
            memory: self.memory.saturating_add(other.memory),
        }
    }

    /// The larger of each resource.
    pub fn max(self, other: Resources) -> Resources {
        Resources {
            millicpu: self.millicpu.max(other.millicpu),
            memory: self.memory.max(other.memory),
        }
    }
}

/// kube-scheduler's stand-in CPU request of a container that requests none (for scoring).
pub const DEFAULT_SCORING_MILLICPU: i64 = 100;
/// kube-scheduler's stand-in memory request of a container that requests none (for scoring).
pub const DEFAULT_SCORING_MEMORY: i64 = 200 << 20;

fn millicpu(q: &Quantity) -> Option<i64> {
    parse_milli(&q.0).and_then(|m| i64::try_from(m.max(0)).ok())
}

fn bytes(q: &Quantity) -> Option<i64> {
    parse_units(&q.0).and_then(|b| i64::try_from(b.max(0)).ok())
}

/// A container's request of `resource`: its request, else its limit (kube-apiserver defaults
/// a missing request to the limit).
fn container_quantity<'a>(container: &'a Container, resource: &str) -> Option<&'a Quantity> {
    let resources = container.resources.as_ref()?;
    let pick = |m: &'a Option<BTreeMap<String, Quantity>>| m.as_ref()?.get(resource);
    pick(&resources.requests).or_else(|| pick(&resources.limits))
}

/// One container's requests; with `scoring`, absent requests count as kube-scheduler's
/// defaults (100m CPU, 200Mi memory), as its scoring does.
fn container_requests(container: &Container, scoring: bool) -> Resources {
    let cpu = container_quantity(container, "cpu").and_then(millicpu);
    let memory = container_quantity(container, "memory").and_then(bytes);
    let (default_cpu, default_memory) = if scoring {
        (DEFAULT_SCORING_MILLICPU, DEFAULT_SCORING_MEMORY)
    } else {
        (0, 0)
    };
    Resources {
        millicpu: cpu.unwrap_or(default_cpu),
        memory: memory.unwrap_or(default_memory),
    }
}

fn requests(spec: &PodSpec, scoring: bool) -> Resources {
    let running = spec.containers.iter().fold(Resources::default(), |sum, c| {
        sum.plus(container_requests(c, scoring))
    });
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .fold(Resources::default(), |max, c| {
            max.max(container_requests(c, false))
        });
    let overhead = spec
        .overhead
        .as_ref()
        .map_or(Resources::default(), |o| Resources {
            millicpu: o.get("cpu").and_then(millicpu).unwrap_or(0),
            memory: o.get("memory").and_then(bytes).unwrap_or(0),
        });
    running.max(init).plus(overhead)
}

/// What a pod requests of its node: the containers' requests summed, init containers as the
/// maximum of any one, plus the pod overhead (kube-scheduler's `computePodResourceRequest`).
pub fn pod_requests(spec: &PodSpec) -> Resources {
    requests(spec, false)
}

/// The request kube-scheduler's scoring uses: as [`pod_requests`], but each container without
/// a CPU or memory request counts as requesting 100m / 200Mi.
pub fn pod_scoring_requests(spec: &PodSpec) -> Resources {
    requests(spec, true)
}

/// What a node offers pods: its `status.allocatable` CPU and memory, and its pod slots.
pub fn node_allocatable(node: &Node) -> (Resources, i64) {
    let allocatable = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
    let get = |name: &str| allocatable.and_then(|a| a.get(name));
    (
        Resources {
            millicpu: get("cpu").and_then(millicpu).unwrap_or(0),
            memory: get("memory").and_then(bytes).unwrap_or(0),
        },
        get("pods").and_then(bytes).unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ResourceRequirements;

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        let map = |pairs: &[(&str, &str)]| {
            (!pairs.is_empty()).then(|| {
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                    .collect()
            })
        };
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements {
                requests: map(requests),
                limits: map(limits),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn containers_sum_and_init_containers_take_the_max() {
        let cases: &[(&str, PodSpec, Resources)] = &[
            (
                "two containers sum",
                PodSpec {
                    containers: vec![
                        container(&[("cpu", "250m"), ("memory", "64Mi")], &[]),
                        container(&[("cpu", "500m")], &[]),
                    ],
                    ..Default::default()
                },
                Resources {
                    millicpu: 750,
                    memory: 64 << 20,
                },
            ),
            (
                "a bigger init container wins per resource",
                PodSpec {
                    containers: vec![container(&[("cpu", "250m"), ("memory", "1Gi")], &[])],
                    init_containers: Some(vec![
                        container(&[("cpu", "2")], &[]),
                        container(&[("cpu", "1")], &[]),
                    ]),
                    ..Default::default()
                },
                Resources {
                    millicpu: 2000,
                    memory: 1 << 30,
                },
            ),
            (
                "limits stand in for missing requests",
                PodSpec {
                    containers: vec![container(&[], &[("cpu", "1"), ("memory", "128Mi")])],
                    ..Default::default()
                },
                Resources {
                    millicpu: 1000,
                    memory: 128 << 20,
                },
            ),
            (
                "overhead adds",
                PodSpec {
                    containers: vec![container(&[("cpu", "100m")], &[])],
                    overhead: Some(
                        [("cpu".to_string(), Quantity("50m".into()))]
                            .into_iter()
                            .collect(),
                    ),
                    ..Default::default()
                },
                Resources {
                    millicpu: 150,
                    memory: 0,
                },
            ),
        ];
        for (name, spec, expected) in cases {
            assert_eq!(pod_requests(spec), *expected, "{name}");
        }
    }

    #[test]
    fn scoring_uses_defaults_for_missing_requests() {
        let spec = PodSpec {
            containers: vec![container(&[("cpu", "1")], &[]), container(&[], &[])],
            ..Default::default()
        };
        assert_eq!(
            pod_scoring_requests(&spec),
            Resources {
                millicpu: 1100,
                memory: 2 * DEFAULT_SCORING_MEMORY,
            }
        );
        assert_eq!(
            pod_requests(&spec),
            Resources {
                millicpu: 1000,
                memory: 0
            }
        );
    }
}
