//! One pass of every simulated controller over a member's state: the workload controllers,
//! the scheduler, the kubelets, the service allocator and Karpenter's controllers, as one pure
//! function (Karpenter's in-memory state passed in and out).

use std::collections::HashMap;

use flotilla_api::nodes::{AKSNodeClass, NodeClaim, NodeOverlay, NodePool};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::actions::Plan;
use crate::kubelet::Timing;
use crate::objects::{controller_uid, name_of, uid_of};
use crate::{
    daemonset, deployment, disruption_budget, job, karpenter, kubelet, replicaset, scheduler,
    services, statefulset,
};

/// Everything the controllers read, as listed from the member's API.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods.
    pub pods: Vec<Pod>,
    /// Services.
    pub services: Vec<Service>,
    /// Deployments.
    pub deployments: Vec<Deployment>,
    /// ReplicaSets.
    pub replica_sets: Vec<ReplicaSet>,
    /// StatefulSets.
    pub stateful_sets: Vec<StatefulSet>,
    /// DaemonSets.
    pub daemon_sets: Vec<DaemonSet>,
    /// Jobs.
    pub jobs: Vec<Job>,
    /// PodDisruptionBudgets.
    pub pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// Karpenter NodePools.
    pub node_pools: Vec<NodePool>,
    /// Karpenter NodeClaims.
    pub node_claims: Vec<NodeClaim>,
    /// AKSNodeClasses.
    pub node_classes: Vec<AKSNodeClass>,
    /// Karpenter NodeOverlays.
    pub node_overlays: Vec<NodeOverlay>,
}

/// What the controllers need to know about the member they run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The member's name (seeds its load-balancer addresses).
    pub member: String,
    /// Its region (the zones and prices of its cloud).
    pub region: String,
    /// Its control plane's Kubernetes version (new nodes' kubelets run it).
    pub kubernetes_version: String,
    /// How long containers take.
    pub timing: Timing,
    /// What Karpenter's feature gates switch on in its consolidation.
    pub consolidation: flotilla_nodes::consolidation::ConsolidationOptions,
}

/// Groups objects by the uid of their controller.
fn by_controller<T, F>(items: &[T], meta: F) -> HashMap<&str, Vec<&T>>
where
    F: Fn(&T) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
{
    let mut out: HashMap<&str, Vec<&T>> = HashMap::new();
    for item in items {
        if let Some(uid) = controller_uid(meta(item)) {
            out.entry(uid).or_default().push(item);
        }
    }
    out
}

/// Runs every controller once over `state` at `now`; `memory` is what Karpenter's controllers
/// keep between passes.
pub fn plan(
    state: &ClusterState,
    settings: &Settings,
    memory: &mut karpenter::Memory,
    now: Timestamp,
) -> Plan {
    let mut plan = Plan::default();
    let pods_of = by_controller(&state.pods, |p| &p.metadata);
    let sets_of = by_controller(&state.replica_sets, |r| &r.metadata);
    let none = Vec::new();
    for d in &state.deployments {
        let owned = sets_of.get(uid_of(d)).unwrap_or(&none);
        plan.merge(deployment::reconcile(d, owned, now));
    }
    let no_pods = Vec::new();
    let owned_pods = |uid: &str| pods_of.get(uid).unwrap_or(&no_pods).as_slice();
    for rs in &state.replica_sets {
        plan.merge(replicaset::reconcile(rs, owned_pods(uid_of(rs)), now));
    }
    for set in &state.stateful_sets {
        plan.merge(statefulset::reconcile(set, owned_pods(uid_of(set)), now));
    }
    for ds in &state.daemon_sets {
        plan.merge(daemonset::reconcile(
            ds,
            owned_pods(uid_of(ds)),
            &state.nodes,
            now,
        ));
    }
    for j in &state.jobs {
        plan.merge(job::reconcile(j, owned_pods(uid_of(j)), now));
    }
    plan.merge(scheduler::plan(&state.nodes, &state.pods, now));
    let mut on_node: HashMap<&str, Vec<&Pod>> = HashMap::new();
    for pod in &state.pods {
        if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            on_node.entry(node).or_default().push(pod);
        }
    }
    for node in &state.nodes {
        let pods = on_node.get(name_of(node)).unwrap_or(&no_pods);
        plan.merge(kubelet::sync_node(node, pods, now, &settings.timing));
    }
    plan.merge(services::allocate(&state.services, &settings.member));
    plan.merge(disruption_budget::reconcile(
        &state.pod_disruption_budgets,
        &state.pods,
        now,
    ));
    plan.merge(karpenter::plan(state, settings, memory, now));
    plan
}

#[cfg(test)]
mod tests;
