//! Reading the scheduler's model from Kubernetes objects: resource quantities, a pod's
//! effective requests (as kube-scheduler computes them), its node requirements and
//! tolerations, and a node's allocatable resources, labels and taints.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_apimachinery::quantity;
use flotilla_apimachinery::selector::from_label_selector_json;
use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
use serde_json::{Map, Value};

use super::labels;
use super::model::{ExistingNode, HostPort, SimPod, UNSPECIFIED_IP};
use super::requirements::{RequirementError, Requirements};
use super::resources::Resources;
use super::taints::{Taint, Toleration};
use super::topology::{AffinityTerm, BoundPod, PodSelector, PodTopology, Spread};

/// Why an object cannot be read into the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// A resource quantity does not parse.
    #[error("resource {resource:?} has an invalid quantity {value:?}")]
    Quantity {
        /// The resource name.
        resource: String,
        /// The text that does not parse.
        value: String,
    },
    /// A node-affinity expression is invalid.
    #[error("node affinity: {0}")]
    Requirement(#[from] RequirementError),
    /// A topology spread constraint's or pod affinity term's label selector is invalid.
    #[error("{0}: invalid label selector")]
    Selector(String),
}

/// The label Karpenter sets on a node once it is initialized.
const INITIALIZED_LABEL: &str = "karpenter.sh/initialized";

/// Taints that come and go with a node's start-up and health, ignored on nodes not yet
/// initialized (Karpenter's ephemeral taints).
const EPHEMERAL_TAINTS: [&str; 4] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "karpenter.sh/unregistered",
];

/// The resources of a resource list (`requests`, `allocatable`, a pool's `limits`): `cpu` in
/// millicores, `memory`, `pods` and `ephemeral-storage` in whole units, rounded up; other
/// resources are ignored and absent ones are zero.
pub fn resources_from_list(
    list: &BTreeMap<String, Quantity>,
) -> Result<Resources, ConversionError> {
    let mut resources = Resources::ZERO;
    for (name, Quantity(text)) in list {
        let field = match name.as_str() {
            "cpu" => &mut resources.cpu_millis,
            "memory" => &mut resources.memory_bytes,
            "pods" => &mut resources.pods,
            "ephemeral-storage" => &mut resources.ephemeral_storage_bytes,
            _ => continue,
        };
        let parsed = if name == "cpu" {
            quantity::parse_milli(text)
        } else {
            quantity::parse_units(text)
        };
        *field = parsed
            .and_then(|value| i64::try_from(value).ok())
            .ok_or_else(|| ConversionError::Quantity {
                resource: name.clone(),
                value: text.clone(),
            })?;
    }
    Ok(resources)
}

/// A pool's remaining launch allowance: `limits` minus what its nodes already have, with the
/// resources `limits` does not name left unlimited.
pub fn remaining_limits(
    limits: &BTreeMap<String, Quantity>,
    in_use: Resources,
) -> Result<Resources, ConversionError> {
    let named = resources_from_list(limits)?;
    let unlimited = |resource: &str, value: i64| {
        if limits.contains_key(resource) {
            value
        } else {
            i64::MAX
        }
    };
    let limit = Resources::new(
        unlimited("cpu", named.cpu_millis),
        unlimited("memory", named.memory_bytes),
        unlimited("pods", named.pods),
        unlimited("ephemeral-storage", named.ephemeral_storage_bytes),
    );
    Ok(limit - in_use)
}

fn container_requests(container: &Container) -> Result<Resources, ConversionError> {
    match container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
    {
        Some(requests) => resources_from_list(requests),
        None => Ok(Resources::ZERO),
    }
}

/// What a pod requests, as kube-scheduler computes it: the sum over containers (sidecar init
/// containers, `restartPolicy: Always`, included), at least each regular init container
/// together with the sidecars started before it, pod-level requests where set, plus the pod
/// overhead and one pod slot.
pub fn pod_requests(pod: &Pod) -> Result<Resources, ConversionError> {
    let Some(spec) = &pod.spec else {
        return Ok(Resources::new(0, 0, 1, 0));
    };
    let mut requests = Resources::ZERO;
    for container in &spec.containers {
        requests += container_requests(container)?;
    }
    let mut sidecars = Resources::ZERO;
    let mut init_peak = Resources::ZERO;
    for container in spec.init_containers.iter().flatten() {
        let own = container_requests(container)?;
        let during = if container.restart_policy.as_deref() == Some("Always") {
            requests += own;
            sidecars += own;
            sidecars
        } else {
            own + sidecars
        };
        init_peak = init_peak.max(&during);
    }
    requests = requests.max(&init_peak);
    if let Some(pod_level) = spec.resources.as_ref().and_then(|r| r.requests.as_ref()) {
        let pod_level_requests = resources_from_list(pod_level)?;
        if pod_level.contains_key("cpu") {
            requests.cpu_millis = pod_level_requests.cpu_millis;
        }
        if pod_level.contains_key("memory") {
            requests.memory_bytes = pod_level_requests.memory_bytes;
        }
    }
    if let Some(overhead) = &spec.overhead {
        requests += resources_from_list(overhead)?;
    }
    requests.pods = 1;
    Ok(requests)
}

/// Where a pod may run: one set of requirements per required node-affinity term (terms are
/// ORed), each ANDed with the `nodeSelector`; a single term of the `nodeSelector` alone when
/// there is no required node affinity. `matchFields` are not modelled.
pub fn pod_requirement_terms(pod: &Pod) -> Result<Vec<Requirements>, ConversionError> {
    let Some(spec) = &pod.spec else {
        return Ok(Vec::new());
    };
    let selector = Requirements::from_labels(spec.node_selector.iter().flatten());
    let terms = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|required| required.node_selector_terms.as_slice())
        .unwrap_or_default();
    if terms.is_empty() {
        return Ok(if selector.is_empty() {
            Vec::new()
        } else {
            vec![selector]
        });
    }
    terms
        .iter()
        .map(|term| {
            let expressions = term.match_expressions.as_deref().unwrap_or_default();
            Ok(selector.intersection(&Requirements::from_node_selector(expressions)?))
        })
        .collect()
}

/// A pod as the scheduler sees it, named `namespace/name`. Tolerations with an unknown
/// operator or effect are dropped (they tolerate nothing).
pub fn sim_pod(pod: &Pod) -> Result<SimPod, ConversionError> {
    let name = crate::pod::key(pod);
    let tolerations = pod
        .spec
        .iter()
        .flat_map(|s| s.tolerations.iter().flatten())
        .filter_map(Toleration::from_k8s)
        .collect();
    Ok(SimPod {
        name,
        requests: pod_requests(pod)?,
        requirement_terms: pod_requirement_terms(pod)?,
        tolerations,
        topology: pod_topology(pod)?,
        host_ports: host_ports(pod),
    })
}

/// The ports the pod's containers hold on the host (Karpenter's `GetHostPorts`): each
/// non-zero `hostPort`, its IP `0.0.0.0` and protocol `TCP` when unset.
pub fn host_ports(pod: &Pod) -> Vec<HostPort> {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            let port = p.host_port.filter(|&port| port != 0)?;
            Some(HostPort {
                ip: p
                    .host_ip
                    .clone()
                    .filter(|ip| !ip.is_empty())
                    .unwrap_or_else(|| UNSPECIFIED_IP.to_string()),
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_string()),
                port,
            })
        })
        .collect()
}

/// The pod's namespace and labels, its `DoNotSchedule` topology spread constraints and its
/// required pod affinity and anti-affinity terms. `ScheduleAnyway` constraints and preferred
/// terms are preferences, left to kube-scheduler.
pub fn pod_topology(pod: &Pod) -> Result<PodTopology, ConversionError> {
    let BoundPod {
        namespace, labels, ..
    } = bound_pod(pod);
    let own = BTreeSet::from([namespace.clone()]);
    // A missing selector matches no pod, as kube-scheduler reads it.
    let selector = |selector: Option<&K8sSelector>, what: &str| {
        selector
            .map(|s| {
                let json = serde_json::to_value(s).unwrap_or(Value::Null);
                from_label_selector_json(&json).map_err(|_| ConversionError::Selector(what.into()))
            })
            .transpose()
    };
    let spec = pod.spec.as_ref();
    let mut spread = Vec::new();
    for c in spec
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.when_unsatisfiable == "DoNotSchedule")
    {
        spread.push(Spread {
            key: c.topology_key.clone(),
            max_skew: u32::try_from(c.max_skew.max(1)).unwrap_or(1),
            pods: PodSelector {
                namespaces: own.clone(),
                selector: selector(c.label_selector.as_ref(), "topologySpreadConstraints")?,
            },
        });
    }
    let affinity = spec.and_then(|s| s.affinity.as_ref());
    let terms = |anti: bool| {
        let required = if anti {
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_ref()
                })
        } else {
            affinity
                .and_then(|a| a.pod_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_ref()
                })
        };
        required.into_iter().flatten().map(move |t| (anti, t))
    };
    let mut affinity_terms = Vec::new();
    for (anti, term) in terms(false).chain(terms(true)) {
        let namespaces = match term.namespaces.as_ref().filter(|n| !n.is_empty()) {
            Some(list) => list.iter().cloned().collect(),
            None => own.clone(),
        };
        affinity_terms.push(AffinityTerm {
            key: term.topology_key.clone(),
            pods: PodSelector {
                namespaces,
                selector: selector(term.label_selector.as_ref(), "podAffinity")?,
            },
            anti,
        });
    }
    Ok(PodTopology {
        namespace,
        labels,
        spread,
        affinity: affinity_terms,
    })
}

/// A pod's namespace and labels, as topology counts it where it runs, and the host ports it holds.
pub fn bound_pod(pod: &Pod) -> BoundPod {
    BoundPod {
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        labels: pod
            .metadata
            .labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
        host_ports: host_ports(pod),
    }
}

/// A node as the scheduler sees it, given what its bound pods request (the sum of
/// [`pod_requests`]). It is initialized when labelled `karpenter.sh/initialized=true`, its
/// pool is its `karpenter.sh/nodepool` label, and while not initialized its ephemeral
/// start-up taints are ignored; the caller removes the pool's startup taints too, and adds
/// the bound pods topology counts ([`bound_pod`]).
pub fn existing_node(node: &Node, requested: Resources) -> Result<ExistingNode, ConversionError> {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let initialized = labels.get(INITIALIZED_LABEL).is_some_and(|v| v == "true");
    let taints = node
        .spec
        .iter()
        .flat_map(|s| s.taints.iter().flatten())
        .filter(|t| initialized || !EPHEMERAL_TAINTS.contains(&t.key.as_str()))
        .filter_map(Taint::from_k8s)
        .collect();
    let allocatable = match node.status.as_ref().and_then(|s| s.allocatable.as_ref()) {
        Some(list) => resources_from_list(list)?,
        None => Resources::ZERO,
    };
    Ok(ExistingNode {
        name: node.metadata.name.clone().unwrap_or_default(),
        pool: labels.get(labels::NODE_POOL).cloned(),
        labels,
        taints,
        allocatable,
        requested,
        initialized,
        bound: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, NodeSpec,
        NodeStatus, PodSpec, ResourceRequirements,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn list(items: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
            .collect()
    }

    fn container(cpu: &str, memory: &str, restart_policy: Option<&str>) -> Container {
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements {
                requests: Some(list(&[("cpu", cpu), ("memory", memory)])),
                ..Default::default()
            }),
            restart_policy: restart_policy.map(str::to_string),
            ..Default::default()
        }
    }

    fn pod(spec: PodSpec) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            spec: Some(spec),
            ..Default::default()
        }
    }

    const MI: i64 = 1 << 20;

    #[test]
    fn reads_quantities() {
        let r = resources_from_list(&list(&[
            ("cpu", "1500m"),
            ("memory", "1Gi"),
            ("pods", "110"),
            ("nvidia.com/gpu", "1"),
        ]))
        .unwrap();
        assert_eq!(r, Resources::new(1500, 1 << 30, 110, 0));
        assert_eq!(
            resources_from_list(&list(&[("cpu", "lots")])),
            Err(ConversionError::Quantity {
                resource: "cpu".into(),
                value: "lots".into()
            })
        );
    }

    #[test]
    fn requests_sum_containers_and_take_the_init_peak() {
        let p = pod(PodSpec {
            containers: vec![
                container("500m", "100Mi", None),
                container("250m", "100Mi", None),
            ],
            init_containers: Some(vec![container("2", "50Mi", None)]),
            overhead: Some(list(&[("cpu", "10m")])),
            ..Default::default()
        });
        assert_eq!(
            pod_requests(&p).unwrap(),
            Resources::new(2010, 200 * MI, 1, 0)
        );
    }

    #[test]
    fn sidecars_add_to_the_containers_and_to_later_init_containers() {
        let p = pod(PodSpec {
            containers: vec![container("1", "100Mi", None)],
            init_containers: Some(vec![
                container("500m", "10Mi", Some("Always")),
                container("1", "300Mi", None),
            ]),
            ..Default::default()
        });
        // Containers + sidecar = 1500m/110Mi; the init container runs beside the sidecar:
        // 1500m/310Mi. The peak of each is taken.
        assert_eq!(
            pod_requests(&p).unwrap(),
            Resources::new(1500, 310 * MI, 1, 0)
        );
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn requirement_terms_and_the_node_selector() {
        let terms = |expressions: Vec<Vec<NodeSelectorRequirement>>| NodeSelector {
            node_selector_terms: expressions
                .into_iter()
                .map(|e| NodeSelectorTerm {
                    match_expressions: Some(e),
                    match_fields: None,
                })
                .collect(),
        };
        let p = pod(PodSpec {
            node_selector: Some([("team".to_string(), "a".to_string())].into()),
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(terms(vec![
                        vec![expression(labels::ZONE, "In", &["z1"])],
                        vec![expression(labels::ARCH, "In", &["arm64"])],
                    ])),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            tolerations: Some(vec![k8s_openapi::api::core::v1::Toleration {
                key: Some("gpu".into()),
                operator: Some("Exists".into()),
                ..Default::default()
            }]),
            ..Default::default()
        });
        let sim = sim_pod(&p).unwrap();
        assert_eq!(sim.name, "ns/p");
        let shown: Vec<String> = sim
            .requirement_terms
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "team In [a]; topology.kubernetes.io/zone In [z1]",
                "kubernetes.io/arch In [arm64]; team In [a]"
            ]
        );
        assert_eq!(sim.tolerations, [Toleration::exists("gpu")]);
        assert!(
            pod_requirement_terms(&pod(PodSpec::default()))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn nodes_ignore_ephemeral_taints_until_initialized() {
        let node = |initialized: bool| Node {
            metadata: ObjectMeta {
                name: Some("n".into()),
                labels: Some(
                    [
                        (INITIALIZED_LABEL.to_string(), initialized.to_string()),
                        (labels::NODE_POOL.to_string(), "default".to_string()),
                    ]
                    .into(),
                ),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                taints: Some(vec![k8s_openapi::api::core::v1::Taint {
                    key: "node.kubernetes.io/not-ready".into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                allocatable: Some(list(&[
                    ("cpu", "3920m"),
                    ("memory", "16Gi"),
                    ("pods", "110"),
                ])),
                ..Default::default()
            }),
        };
        let fresh = existing_node(&node(false), Resources::ZERO).unwrap();
        assert!(!fresh.initialized && fresh.taints.is_empty());
        assert_eq!(fresh.pool.as_deref(), Some("default"));
        assert_eq!(fresh.allocatable, Resources::new(3920, 16 << 30, 110, 0));
        let ready = existing_node(&node(true), Resources::ZERO).unwrap();
        assert_eq!(ready.taints.len(), 1);
    }

    #[test]
    fn remaining_limits_leave_unnamed_resources_unlimited() {
        let remaining =
            remaining_limits(&list(&[("cpu", "100")]), Resources::new(40_000, 1, 1, 0)).unwrap();
        assert_eq!(remaining.cpu_millis, 60_000);
        assert_eq!(remaining.memory_bytes, i64::MAX);
    }
}
