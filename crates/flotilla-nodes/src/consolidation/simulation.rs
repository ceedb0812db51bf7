//! The cluster as consolidation sees it, and the scheduling simulation of removing candidates
//! (Karpenter's `SimulateScheduling`): the candidates' nodes are gone, and their pods join the
//! pending pods in a scheduling run over the remaining nodes and the pools.

use std::collections::{HashMap, HashSet};

use super::candidate::Candidate;
use crate::scheduling::{
    ExistingNode, InstanceType, NodePool, Requirements, Results, Scheduler, SchedulingOptions,
    SimPod,
};

/// The cluster consolidation simulates against.
#[derive(Clone, Copy, Debug)]
pub struct Cluster<'a> {
    /// The pools replacements may come from.
    pub pools: &'a [NodePool],
    /// The instance types they may launch.
    pub instance_types: &'a [InstanceType],
    /// Every node pods may use, candidates included (they are left out per simulation), and
    /// launched claims not yet nodes (as uninitialized nodes).
    pub nodes: &'a [ExistingNode],
    /// Pods waiting for a node, plus the reschedulable pods of nodes being deleted: they join
    /// every simulation, but need not schedule for a command to be valid.
    pub pending: &'a [SimPod],
}

/// Runs consolidation's scheduling simulations over one cluster, reusing what the scheduler has
/// worked out between runs.
pub struct Simulator<'a> {
    cluster: Cluster<'a>,
    scheduler: Scheduler<'a>,
    /// The catalog by name: several entries share a name where a NodeOverlay changed a type's
    /// prices for some pools (each restricted to its pools by `karpenter.sh/nodepool`).
    instance_types: HashMap<&'a str, Vec<&'a InstanceType>>,
    simulations: usize,
}

impl<'a> Simulator<'a> {
    /// A simulator over `cluster`.
    pub fn new(cluster: Cluster<'a>) -> Self {
        Simulator {
            cluster,
            scheduler: Scheduler::new(cluster.pools, cluster.instance_types),
            instance_types: cluster.instance_types.iter().fold(
                HashMap::new(),
                |mut by_name: HashMap<&str, Vec<&InstanceType>>, it| {
                    by_name.entry(it.name.as_str()).or_default().push(it);
                    by_name
                },
            ),
            simulations: 0,
        }
    }

    /// Where the pending pods and the candidates' pods would go without the candidates' nodes.
    /// Pods placed on uninitialized nodes count as unschedulable.
    pub fn simulate(&mut self, candidates: &[&Candidate]) -> Results {
        self.simulations += 1;
        let removed: HashSet<&str> = candidates.iter().map(|c| c.node.as_str()).collect();
        let nodes: Vec<&ExistingNode> = self
            .cluster
            .nodes
            .iter()
            .filter(|n| !removed.contains(n.name.as_str()))
            .collect();
        let pods: Vec<&SimPod> = self
            .cluster
            .pending
            .iter()
            .chain(candidates.iter().flat_map(|c| &c.pods))
            .collect();
        let options = SchedulingOptions {
            uninitialized_nodes_are_errors: true,
        };
        self.scheduler.schedule(&nodes, &pods, options)
    }

    /// The instance type named `name` as a claim with `requirements` (which name its pool)
    /// sees it.
    pub fn instance_type(
        &self,
        name: &str,
        requirements: &Requirements,
    ) -> Option<&'a InstanceType> {
        self.instance_types
            .get(name)?
            .iter()
            .copied()
            .find(|it| it.requirements.intersects(requirements).is_ok())
    }

    /// How many simulations have run.
    pub fn simulations(&self) -> usize {
        self.simulations
    }
}
