//! The pod scheduler: kube-scheduler's default filters (cordon, taints, node selector and
//! affinity, host ports, resource fit) and least-allocated scoring, over plain nodes and pods.
//!
//! Pending pods are taken in kube-scheduler's queue order (priority, then age); each binding
//! counts against its node before the next pod is placed. A pod that fits nowhere gets
//! kube-scheduler's `FailedScheduling` message: `0/3 nodes are available: 1 node(s) didn't
//! match Pod's node affinity/selector, 2 Insufficient cpu.`

use std::collections::{BTreeMap, HashMap};

use flotilla_nodes::scheduling::from_k8s::host_ports;
use flotilla_nodes::scheduling::model::{HostPort, ports_clash};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod, PodCondition};

use crate::actions::{Action, EventNote, Plan};
use crate::node_fit::misfit;
use crate::objects::{ObjectRef, name_of, namespace_of, time};
use crate::pod_state::{condition, is_terminal};
use crate::resources::{Resources, node_allocatable, pod_requests, pod_scoring_requests};

/// The scheduler name pods get by default; pods naming another scheduler are left alone.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// kube-scheduler's NodePorts reason: a pod on the node holds a host port the pod needs.
const PORTS_TAKEN: &str = "node(s) didn't have free ports for the requested pod ports";

/// kube-scheduler's message when the cluster has no nodes at all.
pub const NO_NODES: &str = "no nodes available to schedule pods";

/// What the scheduler decided for one pending pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub name: String,
    /// Where it goes, or why it cannot go anywhere.
    pub outcome: Outcome,
}

/// The outcome of scheduling one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Bind the pod to this node.
    Bind(String),
    /// No node fits; the message says why, as kube-scheduler phrases it.
    Unschedulable(String),
}

/// A node as the scheduler accounts for it.
struct NodeState<'a> {
    node: &'a Node,
    name: &'a str,
    allocatable: Resources,
    max_pods: i64,
    requested: Resources,
    scoring_requested: Resources,
    pods: i64,
    /// The host ports its pods hold.
    ports: Vec<HostPort>,
}

impl NodeState<'_> {
    fn add(&mut self, requested: Resources, scoring: Resources) {
        self.requested = self.requested.plus(requested);
        self.scoring_requested = self.scoring_requested.plus(scoring);
        self.pods += 1;
    }

    /// NodeResourcesFit: every resource the pod is short of on this node.
    fn shortfalls(&self, request: Resources) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.pods + 1 > self.max_pods {
            reasons.push("Too many pods".to_string());
        }
        let free = |alloc: i64, used: i64| alloc - used;
        if request.millicpu > 0
            && request.millicpu > free(self.allocatable.millicpu, self.requested.millicpu)
        {
            reasons.push("Insufficient cpu".to_string());
        }
        if request.memory > 0
            && request.memory > free(self.allocatable.memory, self.requested.memory)
        {
            reasons.push("Insufficient memory".to_string());
        }
        reasons
    }

    /// NodeResourcesLeastAllocated: the mean over CPU and memory of the free share (0..=100)
    /// left after placing a pod that requests `scoring`.
    fn score(&self, scoring: Resources) -> i64 {
        let share = |alloc: i64, used: i64| {
            if alloc <= 0 || used > alloc {
                0
            } else {
                (alloc - used) * 100 / alloc
            }
        };
        let after = self.scoring_requested.plus(scoring);
        (share(self.allocatable.millicpu, after.millicpu)
            + share(self.allocatable.memory, after.memory))
            / 2
    }
}

/// Whether the scheduler is responsible for placing `pod` now.
pub fn is_pending(pod: &Pod) -> bool {
    let Some(spec) = &pod.spec else {
        return false;
    };
    spec.node_name.as_deref().is_none_or(str::is_empty)
        && spec
            .scheduler_name
            .as_deref()
            .is_none_or(|s| s.is_empty() || s == DEFAULT_SCHEDULER)
        && spec
            .scheduling_gates
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        && pod.metadata.deletion_timestamp.is_none()
        && !is_terminal(pod)
}

/// Decides a node (or a reason) for every pending pod in `pods`; bound pods that are still
/// running count against their nodes. The result is in scheduling order and depends only on
/// the set of nodes and pods, not on their order.
pub fn schedule(nodes: &[Node], pods: &[Pod]) -> Vec<Decision> {
    let mut states: Vec<NodeState> = nodes
        .iter()
        .map(|node| {
            let (allocatable, max_pods) = node_allocatable(node);
            NodeState {
                node,
                name: node.metadata.name.as_deref().unwrap_or_default(),
                allocatable,
                max_pods,
                requested: Resources::default(),
                scoring_requested: Resources::default(),
                pods: 0,
                ports: Vec::new(),
            }
        })
        .collect();
    states.sort_by(|a, b| a.name.cmp(b.name));
    let index: BTreeMap<&str, usize> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name, i))
        .collect();
    for pod in pods.iter().filter(|p| !is_terminal(p)) {
        let Some(spec) = &pod.spec else { continue };
        if let Some(&i) = spec.node_name.as_deref().and_then(|n| index.get(n)) {
            states[i].add(pod_requests(spec), pod_scoring_requests(spec));
            states[i].ports.extend(host_ports(pod));
        }
    }
    let mut pending: Vec<&Pod> = pods.iter().filter(|p| is_pending(p)).collect();
    pending.sort_by(|a, b| {
        let priority = |p: &Pod| p.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
        priority(b)
            .cmp(&priority(a))
            .then_with(|| {
                a.metadata
                    .creation_timestamp
                    .cmp(&b.metadata.creation_timestamp)
            })
            .then_with(|| namespace_of(*a).cmp(namespace_of(*b)))
            .then_with(|| name_of(*a).cmp(name_of(*b)))
    });
    pending
        .into_iter()
        .map(|pod| {
            let outcome = place(&mut states, pod);
            Decision {
                namespace: namespace_of(pod).to_string(),
                name: name_of(pod).to_string(),
                outcome,
            }
        })
        .collect()
}

/// Filters and scores every node for one pod; on success, accounts the pod on its node.
fn place(states: &mut [NodeState], pod: &Pod) -> Outcome {
    if states.is_empty() {
        return Outcome::Unschedulable(NO_NODES.into());
    }
    let Some(spec) = &pod.spec else {
        return Outcome::Unschedulable(NO_NODES.into());
    };
    let request = pod_requests(spec);
    let scoring = pod_scoring_requests(spec);
    let ports = host_ports(pod);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut best: Option<(i64, usize)> = None;
    for (i, state) in states.iter().enumerate() {
        // kube-scheduler's filter order: node-level misfits, NodePorts, then resources.
        let failures = match misfit(spec, state.node) {
            Some(m) => vec![m.reason()],
            None if ports_clash(&ports, &state.ports) => vec![PORTS_TAKEN.to_string()],
            None => state.shortfalls(request),
        };
        if failures.is_empty() {
            let score = state.score(scoring);
            // Nodes are sorted by name, so the first of equal scores is the smallest name.
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, i));
            }
        }
        for reason in failures {
            *reasons.entry(reason).or_default() += 1;
        }
    }
    match best {
        Some((_, i)) => {
            states[i].add(request, scoring);
            states[i].ports.extend(ports);
            Outcome::Bind(states[i].name.to_string())
        }
        None => Outcome::Unschedulable(unschedulable_message(states.len(), &reasons)),
    }
}

/// The writes that carry out the scheduler's decisions: bind each placed pod (and record
/// `Scheduled`); mark each unplaceable pod `PodScheduled=False` with reason `Unschedulable` and
/// the scheduler's message (and record `FailedScheduling`) when that message is new.
pub fn plan(nodes: &[Node], pods: &[Pod], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let by_name: HashMap<(&str, &str), &Pod> = pods
        .iter()
        .map(|p| ((namespace_of(p), name_of(p)), p))
        .collect();
    for decision in schedule(nodes, pods) {
        let Some(pod) = by_name.get(&(decision.namespace.as_str(), decision.name.as_str())) else {
            continue;
        };
        match decision.outcome {
            Outcome::Bind(node) => {
                let mut bound = (*pod).clone();
                bound.spec.get_or_insert_default().node_name = Some(node.clone());
                bound.status = None;
                plan.push(Action::update(&bound));
                plan.push(Action::Record(EventNote::normal(
                    DEFAULT_SCHEDULER,
                    ObjectRef::of(*pod),
                    "Scheduled",
                    format!(
                        "Successfully assigned {}/{} to {node}",
                        decision.namespace, decision.name
                    ),
                )));
            }
            Outcome::Unschedulable(message) => {
                let current = condition(pod, "PodScheduled");
                let unchanged = current.is_some_and(|c| {
                    c.status == "False"
                        && c.reason.as_deref() == Some("Unschedulable")
                        && c.message.as_deref() == Some(message.as_str())
                });
                if unchanged {
                    continue;
                }
                let mut status = pod.status.clone().unwrap_or_default();
                status.phase = Some("Pending".into());
                let conditions = status.conditions.get_or_insert_default();
                let since = current
                    .filter(|c| c.status == "False")
                    .and_then(|c| c.last_transition_time.clone())
                    .unwrap_or_else(|| time(now));
                conditions.retain(|c| c.type_ != "PodScheduled");
                conditions.push(PodCondition {
                    type_: "PodScheduled".into(),
                    status: "False".into(),
                    reason: Some("Unschedulable".into()),
                    message: Some(message.clone()),
                    last_transition_time: Some(since),
                    ..Default::default()
                });
                plan.push(Action::write_status(*pod, &status));
                plan.push(Action::Record(EventNote::warning(
                    DEFAULT_SCHEDULER,
                    ObjectRef::of(*pod),
                    "FailedScheduling",
                    message,
                )));
            }
        }
    }
    plan
}

/// kube-scheduler's `FitError` message: the reasons with their node counts, as strings
/// `"<count> <reason>"` sorted as strings.
pub fn unschedulable_message(nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    let mut parts: Vec<String> = reasons
        .iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    parts.sort();
    let mut message = format!("0/{nodes} nodes are available:");
    if !parts.is_empty() {
        message.push_str(&format!(" {}.", parts.join(", ")));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_fit::tolerates;
    use k8s_openapi::api::core::v1::{
        Container, ContainerPort, NodeSpec, NodeStatus, PodSpec, PodStatus, ResourceRequirements,
        Taint, Toleration,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use proptest::prelude::*;

    fn node(name: &str, cpu: &str, memory: &str, pods: u32) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some([("kubernetes.io/hostname".to_string(), name.to_string())].into()),
                ..Default::default()
            },
            spec: Some(NodeSpec::default()),
            status: Some(NodeStatus {
                allocatable: Some(
                    [
                        ("cpu", cpu.to_string()),
                        ("memory", memory.to_string()),
                        ("pods", pods.to_string()),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), Quantity(v)))
                    .collect(),
                ),
                ..Default::default()
            }),
        }
    }

    fn pod(name: &str, cpu: &str, memory: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    resources: Some(ResourceRequirements {
                        requests: Some(
                            [("cpu", cpu), ("memory", memory)]
                                .into_iter()
                                .filter(|(_, v)| !v.is_empty())
                                .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                                .collect(),
                        ),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        }
    }

    fn bound(mut p: Pod, node: &str) -> Pod {
        p.spec.as_mut().unwrap().node_name = Some(node.into());
        p
    }

    fn outcomes(nodes: &[Node], pods: &[Pod]) -> Vec<(String, Outcome)> {
        schedule(nodes, pods)
            .into_iter()
            .map(|d| (d.name, d.outcome))
            .collect()
    }

    fn bind(n: &str) -> Outcome {
        Outcome::Bind(n.into())
    }

    fn unschedulable(m: &str) -> Outcome {
        Outcome::Unschedulable(m.into())
    }

    /// `p` holding host port `port` (TCP, every address).
    fn with_host_port(mut p: Pod, port: i32) -> Pod {
        p.spec.as_mut().unwrap().containers[0].ports = Some(vec![ContainerPort {
            container_port: port,
            host_port: Some(port),
            ..Default::default()
        }]);
        p
    }

    #[test]
    fn a_host_port_held_on_a_node_keeps_pods_wanting_it_off() {
        let nodes = vec![node("a", "4", "8Gi", 110), node("b", "4", "8Gi", 110)];
        let pods = vec![
            bound(with_host_port(pod("held", "100m", ""), 8080), "a"),
            with_host_port(pod("x", "100m", ""), 8080),
            with_host_port(pod("y", "100m", ""), 8080),
        ];
        assert_eq!(
            outcomes(&nodes, &pods),
            [
                ("x".to_string(), bind("b")),
                (
                    "y".to_string(),
                    unschedulable(
                        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
                    )
                ),
            ]
        );
    }

    #[test]
    fn table() {
        let three = || {
            vec![
                node("a", "2", "4Gi", 110),
                node("b", "2", "4Gi", 110),
                node("c", "2", "4Gi", 110),
            ]
        };
        let mut labelled = three();
        labelled[0]
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("disk".into(), "ssd".into());
        let mut tainted = three();
        tainted[1].spec.as_mut().unwrap().taints = Some(vec![Taint {
            key: "gpu".into(),
            value: Some("true".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        tainted[2].spec.as_mut().unwrap().unschedulable = Some(true);
        let mut wants_ssd = pod("p", "3", "");
        wants_ssd.spec.as_mut().unwrap().node_selector =
            Some([("disk".to_string(), "ssd".to_string())].into());
        type Case = (&'static str, Vec<Node>, Vec<Pod>, Vec<(String, Outcome)>);
        let cases: Vec<Case> = vec![
            (
                "least allocated spreads, ties go to the first name",
                three(),
                vec![
                    pod("p1", "1", "1Gi"),
                    pod("p2", "1", "1Gi"),
                    pod("p3", "1", "1Gi"),
                ],
                vec![
                    ("p1".into(), bind("a")),
                    ("p2".into(), bind("b")),
                    ("p3".into(), bind("c")),
                ],
            ),
            (
                "bound pods count against their node",
                three(),
                vec![
                    bound(pod("old", "1500m", ""), "a"),
                    bound(pod("old2", "1", ""), "b"),
                    pod("p", "1", ""),
                ],
                vec![("p".into(), bind("c"))],
            ),
            (
                "too big for every node",
                three(),
                vec![pod("p", "1000", "")],
                vec![(
                    "p".into(),
                    unschedulable("0/3 nodes are available: 3 Insufficient cpu."),
                )],
            ),
            (
                "selector and resources, reasons counted and sorted as strings",
                labelled,
                vec![wants_ssd],
                vec![(
                    "p".into(),
                    unschedulable(
                        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.",
                    ),
                )],
            ),
            (
                "one node can lack several resources",
                vec![node("a", "1", "1Gi", 110)],
                vec![pod("p", "2", "2Gi")],
                vec![(
                    "p".into(),
                    unschedulable(
                        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
                    ),
                )],
            ),
            (
                "taints and cordons stop at the first failing filter",
                tainted,
                vec![pod("p", "100", "")],
                vec![(
                    "p".into(),
                    unschedulable(
                        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {gpu: true}, 1 node(s) were unschedulable.",
                    ),
                )],
            ),
            (
                "pod slots run out",
                vec![node("a", "8", "8Gi", 1)],
                vec![bound(pod("old", "", ""), "a"), pod("p", "", "")],
                vec![(
                    "p".into(),
                    unschedulable("0/1 nodes are available: 1 Too many pods."),
                )],
            ),
            (
                "no nodes",
                vec![],
                vec![pod("p", "1", "")],
                vec![("p".into(), unschedulable(NO_NODES))],
            ),
        ];
        for (name, nodes, pods, expected) in cases {
            assert_eq!(outcomes(&nodes, &pods), expected, "{name}");
        }
    }

    #[test]
    fn queue_order_is_priority_then_age() {
        let nodes = vec![node("a", "1", "4Gi", 110)];
        let mut low = pod("low", "1", "");
        low.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-01-01T00:00:00Z".parse().unwrap(),
            ));
        let mut high = pod("high", "1", "");
        high.spec.as_mut().unwrap().priority = Some(1000);
        high.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-01-02T00:00:00Z".parse().unwrap(),
            ));
        let got = outcomes(&nodes, &[low, high]);
        assert_eq!(got[0], ("high".into(), bind("a")));
        assert_eq!(
            got[1],
            (
                "low".into(),
                unschedulable("0/1 nodes are available: 1 Insufficient cpu.")
            )
        );
    }

    #[test]
    fn leaves_bound_terminal_deleted_and_foreign_pods_alone() {
        let nodes = vec![node("a", "1", "1Gi", 110)];
        let mut done = bound(pod("done", "1", ""), "a");
        done.status = Some(PodStatus {
            phase: Some("Succeeded".into()),
            ..Default::default()
        });
        let mut foreign = pod("foreign", "", "");
        foreign.spec.as_mut().unwrap().scheduler_name = Some("other".into());
        let mut deleting = pod("deleting", "", "");
        deleting.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        // The terminal pod frees its CPU for the new one.
        let got = outcomes(&nodes, &[done, foreign, deleting, pod("p", "1", "")]);
        assert_eq!(got, vec![("p".into(), bind("a"))]);
    }

    fn arb_node(i: usize) -> impl Strategy<Value = Node> {
        (
            1u32..6,
            1u32..8,
            1u32..6,
            proptest::option::of(prop_oneof!["ssd", "hdd"]),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(move |(cpu, mem, pods, disk, tainted, cordoned)| {
                let mut n = node(
                    &format!("n{i}"),
                    &cpu.to_string(),
                    &format!("{mem}Gi"),
                    pods,
                );
                if let Some(d) = disk {
                    n.metadata.labels.as_mut().unwrap().insert("disk".into(), d);
                }
                let spec = n.spec.as_mut().unwrap();
                spec.unschedulable = cordoned.then_some(true);
                if tainted {
                    spec.taints = Some(vec![Taint {
                        key: "dedicated".into(),
                        value: Some("batch".into()),
                        effect: "NoSchedule".into(),
                        ..Default::default()
                    }]);
                }
                n
            })
    }

    fn arb_pod(i: usize, nodes: usize) -> impl Strategy<Value = Pod> {
        (
            0u32..3000,
            0u32..3000,
            proptest::option::of(prop_oneof!["ssd", "hdd"]),
            any::<bool>(),
            proptest::option::of(0..nodes.max(1)),
        )
            .prop_map(move |(cpu, mem, disk, tolerant, node)| {
                let mut p = pod(&format!("p{i}"), &format!("{cpu}m"), &format!("{mem}Mi"));
                let spec = p.spec.as_mut().unwrap();
                spec.node_selector = disk.map(|d| [("disk".to_string(), d.to_string())].into());
                if tolerant {
                    spec.tolerations = Some(vec![Toleration {
                        key: Some("dedicated".into()),
                        operator: Some("Exists".into()),
                        ..Default::default()
                    }]);
                }
                if let Some(n) = node.filter(|_| nodes > 0 && cpu < 200) {
                    spec.node_name = Some(format!("n{n}"));
                }
                p
            })
    }

    fn arb_cluster() -> impl Strategy<Value = (Vec<Node>, Vec<Pod>)> {
        (0usize..5, 0usize..12).prop_flat_map(|(n, p)| {
            let nodes: Vec<_> = (0..n).map(arb_node).collect();
            let pods: Vec<_> = (0..p).map(|i| arb_pod(i, n)).collect();
            (nodes, pods)
        })
    }

    proptest! {
        #[test]
        fn never_overcommits_nor_violates_rules((nodes, pods) in arb_cluster()) {
            let decisions = schedule(&nodes, &pods);
            let by_name: BTreeMap<&str, &Pod> = pods.iter().map(|p| (name_of(p), p)).collect();
            let mut placed: Vec<Pod> = pods.iter().filter(|p| !is_pending(p)).cloned().collect();
            for d in &decisions {
                let pod = by_name[d.name.as_str()];
                if let Outcome::Bind(n) = &d.outcome {
                    let node = nodes.iter().find(|x| name_of(*x) == n).unwrap();
                    prop_assert!(misfit(pod.spec.as_ref().unwrap(), node).is_none(), "{} on {}", d.name, n);
                    let taints = node.spec.as_ref().unwrap().taints.clone().unwrap_or_default();
                    for t in taints {
                        let tols = pod.spec.as_ref().unwrap().tolerations.clone().unwrap_or_default();
                        prop_assert!(tols.iter().any(|x| tolerates(x, &t)));
                    }
                    placed.push(bound(pod.clone(), n));
                } else {
                    prop_assert!(pod.spec.as_ref().unwrap().node_name.is_none());
                }
            }
            for node in &nodes {
                let name = name_of(node);
                let mine: Vec<&Pod> = placed.iter().filter(|p| p.spec.as_ref().unwrap().node_name.as_deref() == Some(name)).collect();
                let pre: Vec<&Pod> = pods.iter().filter(|p| p.spec.as_ref().unwrap().node_name.as_deref() == Some(name)).collect();
                let sum = |ps: &[&Pod]| ps.iter().fold(Resources::default(), |s, p| s.plus(pod_requests(p.spec.as_ref().unwrap())));
                let (alloc, max_pods) = node_allocatable(node);
                let (before, after) = (sum(&pre), sum(&mine));
                // New bindings never push a node over what it already had or its allocatable.
                prop_assert!(after.millicpu <= alloc.millicpu.max(before.millicpu));
                prop_assert!(after.memory <= alloc.memory.max(before.memory));
                prop_assert!(mine.len() as i64 <= max_pods.max(pre.len() as i64));
            }
        }

        #[test]
        fn deterministic_and_order_independent((nodes, pods) in arb_cluster(), seed in any::<u64>()) {
            let first = schedule(&nodes, &pods);
            prop_assert_eq!(&first, &schedule(&nodes, &pods));
            let mut shuffled_nodes = nodes.clone();
            let mut shuffled_pods = pods.clone();
            let rotate = |len: usize| if len == 0 { 0 } else { (seed as usize) % len };
            shuffled_nodes.rotate_left(rotate(nodes.len()));
            shuffled_pods.reverse();
            shuffled_pods.rotate_left(rotate(pods.len()));
            prop_assert_eq!(first, schedule(&shuffled_nodes, &shuffled_pods));
        }

        #[test]
        fn every_node_is_accounted_for_in_a_failure((nodes, pods) in arb_cluster()) {
            for d in schedule(&nodes, &pods) {
                if let Outcome::Unschedulable(message) = d.outcome {
                    if nodes.is_empty() {
                        prop_assert_eq!(message, NO_NODES);
                        continue;
                    }
                    let prefix = format!("0/{} nodes are available: ", nodes.len());
                    prop_assert!(message.starts_with(&prefix), "{}", message);
                    let counted: usize = message[prefix.len()..]
                        .trim_end_matches('.')
                        .split(", ")
                        .map(|part| part.split(' ').next().unwrap().parse::<usize>().unwrap())
                        .sum();
                    prop_assert!(counted >= nodes.len());
                }
            }
        }
    }
}
