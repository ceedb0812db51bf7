//! The plain data the scheduler reads: pods to place, nodes that exist, and pools that can
//! launch more. The controller fills these from the member's objects ([`super::from_k8s`]
//! reads pods and nodes).

use std::collections::BTreeMap;

use super::requirements::Requirements;
use super::resources::Resources;
use super::taints::{Taint, Toleration};
use super::topology::{BoundPod, PodTopology};

/// A pod as the scheduler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct SimPod {
    /// A name unique among the pods of one scheduling run (`namespace/name`).
    pub name: String,
    /// What it requests, one pod slot included.
    pub requests: Resources,
    /// Where it may run: one set of requirements per required node-affinity term, each
    /// combined with the `nodeSelector`. Terms are ORed; the scheduler tries them in order
    /// and keeps the first that places the pod. Empty means no requirement at all.
    pub requirement_terms: Vec<Requirements>,
    /// The taints it tolerates.
    pub tolerations: Vec<Toleration>,
    /// Its namespace, labels, topology spread constraints and pod (anti-)affinity.
    pub topology: PodTopology,
    /// The ports it holds on its node's host.
    pub host_ports: Vec<HostPort>,
}

/// The host IP a port binds when none is given: every address, so it clashes with any.
pub const UNSPECIFIED_IP: &str = "0.0.0.0";

/// A port a pod holds on its node (`containers[].ports[].hostPort`): two pods holding the same
/// port and protocol cannot share a node unless they bind different addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// The host IP (`0.0.0.0` when unset).
    pub ip: String,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
    /// The port number.
    pub port: i32,
}

impl HostPort {
    /// Whether pods holding `self` and `other` could not share a node (Karpenter's
    /// `HostPort.Matches`): the same port and protocol, and the same IP or either unspecified.
    pub fn clashes(&self, other: &HostPort) -> bool {
        self.port == other.port
            && self.protocol == other.protocol
            && (self.ip == other.ip || [&self.ip, &other.ip].iter().any(|ip| is_unspecified(ip)))
    }
}

/// Whether `ip` is the unspecified IPv4 or IPv6 address.
fn is_unspecified(ip: &str) -> bool {
    ip.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified())
}

/// Whether any of `wanted` clashes with any of `held`.
pub fn ports_clash<'p>(wanted: &[HostPort], held: impl IntoIterator<Item = &'p HostPort>) -> bool {
    !wanted.is_empty()
        && held
            .into_iter()
            .any(|h| wanted.iter().any(|w| w.clashes(h)))
}

impl SimPod {
    /// A pod with `requests` and no requirements or tolerations.
    pub fn new(name: &str, requests: Resources) -> Self {
        SimPod {
            name: name.to_string(),
            requests,
            requirement_terms: Vec::new(),
            tolerations: Vec::new(),
            topology: PodTopology::default(),
            host_ports: Vec::new(),
        }
    }

    /// The same pod, holding `ports` on its node.
    pub fn with_host_ports(mut self, ports: Vec<HostPort>) -> Self {
        self.host_ports = ports;
        self
    }

    /// The same pod, required to run where `requirements` hold (a single term).
    pub fn with_requirements(mut self, requirements: Requirements) -> Self {
        self.requirement_terms = vec![requirements];
        self
    }

    /// The same pod, with `topology`.
    pub fn with_topology(mut self, topology: PodTopology) -> Self {
        self.topology = topology;
        self
    }

    /// The same pod, tolerating `tolerations`.
    pub fn with_tolerations(mut self, tolerations: Vec<Toleration>) -> Self {
        self.tolerations = tolerations;
        self
    }
}

/// A node that exists (or a launched claim not yet a node), with what is already bound to it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExistingNode {
    /// The node name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// The taints that count for scheduling. For a node not yet initialized the controller
    /// leaves out its pool's startup taints and the ephemeral not-ready/unreachable taints,
    /// as Karpenter's `StateNode.Taints` does.
    pub taints: Vec<Taint>,
    /// What pods can use.
    pub allocatable: Resources,
    /// What the pods already bound to it request (DaemonSet pods included).
    pub requested: Resources,
    /// Whether Karpenter has initialized it (`karpenter.sh/initialized`); placing a pod on an
    /// uninitialized node is an error in consolidation simulations.
    pub initialized: bool,
    /// The pool that launched it, if Karpenter manages it.
    pub pool: Option<String>,
    /// The pods bound to it, as topology spread and pod affinity count them.
    pub bound: Vec<BoundPod>,
}

impl ExistingNode {
    /// What is left for new pods.
    pub fn available(&self) -> Resources {
        self.allocatable - self.requested
    }
}

/// A pool that can launch nodes (the scheduling side of a `NodePool`).
///
/// Startup taints are not part of it: Karpenter ignores them when deciding whether a pod fits.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePool {
    /// The pool name.
    pub name: String,
    /// Higher weights are tried first.
    pub weight: i32,
    /// `spec.template.spec.requirements`.
    pub requirements: Requirements,
    /// `spec.template.metadata.labels`: every node carries them.
    pub labels: BTreeMap<String, String>,
    /// `spec.template.spec.taints`.
    pub taints: Vec<Taint>,
    /// What the pool may still launch (`spec.limits` minus what its nodes have), `None` for no
    /// limit; unlimited components are `i64::MAX`. A launch counts against it with the largest
    /// capacity among the claim's instance-type options, as in Karpenter.
    pub remaining: Option<Resources>,
    /// How many more nodes the pool's `limits.nodes` allows, `None` without that limit; each
    /// new claim takes one.
    pub remaining_nodes: Option<u64>,
    /// What the DaemonSet pods that would run on a node of this pool request: every new claim
    /// starts with it.
    pub daemon_overhead: Resources,
}

impl NodePool {
    /// A pool of `name` with weight 0 and no requirements, labels, taints, limits or daemons.
    pub fn new(name: &str) -> Self {
        NodePool {
            name: name.to_string(),
            weight: 0,
            requirements: Requirements::new(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            remaining: None,
            remaining_nodes: None,
            daemon_overhead: Resources::ZERO,
        }
    }
}
