//! The Prometheus families a member's Karpenter publishes, with Karpenter's names: gauges
//! computed from the member's state each pass ([`publish`]), and the counters and histograms
//! its controllers' decisions add to ([`crate::actions::Plan::observe`]).

use flotilla_api::nodes::NodePool;
use flotilla_apimachinery::quantity::parse_milli;
use flotilla_apiserver::metrics::registry::{LONG_SECONDS, counted};
use flotilla_apiserver::metrics::{Desc, Registry};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

use crate::reconcile::ClusterState;

/// Allowed disruptions per pool and reason.
pub const ALLOWED_DISRUPTIONS: Desc = Desc::gauge(
    "karpenter_nodepools_allowed_disruptions",
    "The number of nodes for a given NodePool that can be concurrently disrupting at a point in time. Labeled by NodePool and reason.",
    &["nodepool", "reason"],
);
/// What each pool's nodes add up to (`nodes` among the resource types).
pub const NODEPOOL_USAGE: Desc = Desc::gauge(
    "karpenter_nodepools_usage",
    "The amount of resources provisioned by a NodePool (nodes included). Labeled by NodePool and resource type.",
    &["nodepool", "resource_type"],
);
/// Each pool's limits.
pub const NODEPOOL_LIMIT: Desc = Desc::gauge(
    "karpenter_nodepools_limit",
    "Limits specified on the NodePool that restrict the quantity of resources provisioned. Labeled by NodePool and resource type.",
    &["nodepool", "resource_type"],
);
/// NodeClaims by pool and condition (their lifecycle state).
pub const NODECLAIM_CONDITIONS: Desc = Desc::gauge(
    "operator_nodeclaim_status_condition_count",
    "The number of NodeClaims with a condition of a type and status. Labeled by NodePool, condition type, status and reason.",
    &["nodepool", "type", "status", "reason"],
);
/// Nodes Karpenter tracks.
pub const NODE_COUNT: Desc = Desc::gauge(
    "karpenter_cluster_state_node_count",
    "Current count of nodes in cluster state.",
    &[],
);
/// Nodes by pool and readiness.
pub const NODES: Desc = Desc::gauge(
    "karpenter_nodes_current",
    "Nodes of each NodePool by readiness (Ready, NotReady) and whether they are being deleted.",
    &["nodepool", "ready", "deleting"],
);
/// Pods by phase (one series per phase and node pool; Karpenter's per-pod series would be
/// one per pod of every member).
pub const PODS: Desc = Desc::gauge(
    "karpenter_pods_state",
    "Pods by phase and by the NodePool of the node they are bound to (none when unbound or on a node no NodePool owns).",
    &["phase", "nodepool"],
);
/// NodeClaims created, by reason (`provisioning`, `disruption`) and pool.
pub const NODECLAIMS_CREATED: Desc = Desc::counter(
    "karpenter_nodeclaims_created_total",
    "Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created and the owning nodepool.",
    &["reason", "nodepool"],
);
/// NodeClaims whose instance was released, by pool.
pub const NODECLAIMS_TERMINATED: Desc = Desc::counter(
    "karpenter_nodeclaims_terminated_total",
    "Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool.",
    &["nodepool"],
);
/// NodeClaims disrupted, by reason and pool.
pub const NODECLAIMS_DISRUPTED: Desc = Desc::counter(
    "karpenter_nodeclaims_disrupted_total",
    "Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted and the owning nodepool.",
    &["reason", "nodepool"],
);
/// Disruption decisions carried out, by decision (`delete`, `replace`), reason and
/// consolidation type (`empty`, `single`, `multi`, or empty for drift).
pub const DISRUPTION_DECISIONS: Desc = Desc::counter(
    "karpenter_voluntary_disruption_decisions_total",
    "Number of disruption decisions performed. Labeled by disruption decision, reason, and consolidation type.",
    &["decision", "reason", "consolidation_type"],
);
/// Time from a NodeClaim's creation to its node being initialized.
pub const PROVISIONING_DURATION: Desc = Desc::histogram(
    "karpenter_nodeclaims_initialization_duration_seconds",
    "Time from a NodeClaim's creation until its node is initialized (launched, registered and ready). Labeled by NodePool.",
    &["nodepool"],
    LONG_SECONDS,
);

/// Consolidation moves scored, by decision (`approved`, `rejected`), pool and policy: every
/// move found for a pool, and the moves Balanced pools rejected.
pub const CONSOLIDATION_MOVES: Desc = Desc::counter(
    "karpenter_consolidation_moves_total",
    "Number of balanced consolidation moves. Labeled by decision, NodePool, and policy.",
    &["decision", "nodepool", "policy"],
);
/// The scores Balanced pools gave consolidation moves, by decision, pool and policy.
pub const CONSOLIDATION_SCORE: Desc = Desc::histogram(
    "karpenter_consolidation_score",
    "Score of balanced consolidation moves. Labeled by decision, NodePool, and policy.",
    &["decision", "nodepool", "policy"],
    &[0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0],
);

/// Every family above, so a member's `/metrics` lists each before its first sample.
pub const ALL: &[&Desc] = &[
    &ALLOWED_DISRUPTIONS,
    &NODEPOOL_USAGE,
    &NODEPOOL_LIMIT,
    &NODECLAIM_CONDITIONS,
    &NODE_COUNT,
    &NODES,
    &PODS,
    &NODECLAIMS_CREATED,
    &NODECLAIMS_TERMINATED,
    &NODECLAIMS_DISRUPTED,
    &DISRUPTION_DECISIONS,
    &PROVISIONING_DURATION,
    &CONSOLIDATION_MOVES,
    &CONSOLIDATION_SCORE,
];

/// The label value of the pool that owns an object.
pub const POOL_LABEL: &str = "karpenter.sh/nodepool";

/// A quantity as a number (cores for CPU, bytes for memory, a count otherwise).
fn amount(q: &Quantity) -> f64 {
    parse_milli(&q.0).map_or(0.0, |m| m as f64 / 1000.0)
}

fn per_resource(
    pool: &NodePool,
    resources: &BTreeMap<String, Quantity>,
) -> Vec<(Vec<String>, f64)> {
    let name = pool.metadata.name.clone().unwrap_or_default();
    resources
        .iter()
        .map(|(resource, q)| (vec![name.clone(), resource.clone()], amount(q)))
        .collect()
}

/// Publishes the gauges computed from `state` (replacing the previous figures whole, so the
/// series of pools and nodes that are gone disappear).
pub fn publish(registry: &Registry, state: &ClusterState) {
    for desc in ALL {
        registry.describe(desc);
    }
    let pools = &state.node_pools;
    registry.replace(
        &ALLOWED_DISRUPTIONS,
        pools.iter().flat_map(|pool| {
            let name = pool.metadata.name.clone().unwrap_or_default();
            pool.status
                .iter()
                .flat_map(|s| &s.allowed_disruptions)
                .map(move |f| (vec![name.clone(), f.reason.clone()], f.allowed as f64))
        }),
    );
    registry.replace(
        &NODEPOOL_USAGE,
        pools.iter().flat_map(|p| {
            p.status
                .as_ref()
                .map(|s| per_resource(p, &s.resources))
                .unwrap_or_default()
        }),
    );
    registry.replace(
        &NODEPOOL_LIMIT,
        pools.iter().flat_map(|p| per_resource(p, &p.spec.limits)),
    );
    registry.replace(
        &NODECLAIM_CONDITIONS,
        counted(state.node_claims.iter().flat_map(|claim| {
            let pool = claim
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(POOL_LABEL))
                .cloned()
                .unwrap_or_default();
            claim
                .status
                .iter()
                .flat_map(|s| &s.conditions)
                .map(move |c| {
                    vec![
                        pool.clone(),
                        c.type_.clone(),
                        c.status.clone(),
                        c.reason.clone(),
                    ]
                })
        })),
    );
    registry.set(&NODE_COUNT, &[], state.nodes.len() as f64);
    let pool_of_node: BTreeMap<&str, &str> = state
        .nodes
        .iter()
        .filter_map(|n| {
            let pool = n.metadata.labels.as_ref()?.get(POOL_LABEL)?;
            Some((n.metadata.name.as_deref()?, pool.as_str()))
        })
        .collect();
    registry.replace(
        &NODES,
        counted(state.nodes.iter().filter_map(|n| {
            let name = n.metadata.name.as_deref()?;
            let pool = pool_of_node.get(name)?;
            let ready = flotilla_nodes::pool_status::node_ready(n);
            Some(vec![
                pool.to_string(),
                ready.to_string(),
                n.metadata.deletion_timestamp.is_some().to_string(),
            ])
        })),
    );
    registry.replace(
        &PODS,
        counted(state.pods.iter().map(|p| {
            let phase = p
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_else(|| "Pending".into());
            let pool = p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .and_then(|n| pool_of_node.get(n))
                .map_or(String::new(), |p| p.to_string());
            vec![phase, pool]
        })),
    );
}
