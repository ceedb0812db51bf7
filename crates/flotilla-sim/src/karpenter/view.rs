//! One pass's index over a member's Karpenter objects: pools, node classes, claims, the node
//! of each claim (matched by provider ID, as Karpenter matches them) and the pods on each node.

use std::collections::{BTreeMap, HashMap};

use flotilla_api::nodes::{AKSNodeClass, DEFAULT_NODE_CLASS, NodeClaim, NodePool};
use k8s_openapi::api::core::v1::{Node, Pod};

use crate::reconcile::ClusterState;

/// The member's Karpenter objects, cross-referenced.
pub struct View<'s> {
    /// Everything read this pass.
    pub state: &'s ClusterState,
    /// Pools by name.
    pub pools: BTreeMap<&'s str, &'s NodePool>,
    /// Node classes by name.
    pub classes: BTreeMap<&'s str, &'s AKSNodeClass>,
    /// Nodes by provider ID.
    nodes_by_provider: HashMap<&'s str, &'s Node>,
    /// Claims by provider ID.
    claims_by_provider: HashMap<&'s str, &'s NodeClaim>,
    /// Pods by the node they are bound to.
    pods_by_node: HashMap<&'s str, Vec<&'s Pod>>,
}

/// A node's provider ID.
pub fn provider_id(node: &Node) -> Option<&str> {
    node.spec.as_ref()?.provider_id.as_deref()
}

/// A claim's provider ID, once launched.
pub fn claim_provider_id(claim: &NodeClaim) -> Option<&str> {
    claim.status.as_ref()?.provider_id.as_deref()
}

/// The name of an object's pool label.
pub fn pool_label(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<&str> {
    meta.labels
        .as_ref()?
        .get(flotilla_api::nodes::NODEPOOL_LABEL)
        .map(String::as_str)
}

impl<'s> View<'s> {
    /// Indexes `state`.
    pub fn new(state: &'s ClusterState) -> View<'s> {
        let name = |meta: &'s k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            meta.name.as_deref().unwrap_or_default()
        };
        let mut pods_by_node: HashMap<&str, Vec<&Pod>> = HashMap::new();
        for pod in &state.pods {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
                pods_by_node.entry(node).or_default().push(pod);
            }
        }
        View {
            pools: state
                .node_pools
                .iter()
                .map(|p| (name(&p.metadata), p))
                .collect(),
            classes: state
                .node_classes
                .iter()
                .map(|c| (name(&c.metadata), c))
                .collect(),
            nodes_by_provider: state
                .nodes
                .iter()
                .filter_map(|n| Some((provider_id(n)?, n)))
                .collect(),
            claims_by_provider: state
                .node_claims
                .iter()
                .filter_map(|c| Some((claim_provider_id(c)?, c)))
                .collect(),
            pods_by_node,
            state,
        }
    }

    /// The node `claim` launched, once it registered.
    pub fn node_of(&self, claim: &NodeClaim) -> Option<&'s Node> {
        self.nodes_by_provider
            .get(claim_provider_id(claim)?)
            .copied()
    }

    /// The claim that launched `node`, if Karpenter launched it.
    pub fn claim_of(&self, node: &Node) -> Option<&'s NodeClaim> {
        self.claims_by_provider.get(provider_id(node)?).copied()
    }

    /// The pods bound to the node named `node`.
    pub fn pods_on(&self, node: &str) -> &[&'s Pod] {
        self.pods_by_node.get(node).map_or(&[], Vec::as_slice)
    }

    /// The pool a claim or node belongs to, if it still exists.
    pub fn pool_of(
        &self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> Option<&'s NodePool> {
        self.pools.get(pool_label(meta)?).copied()
    }

    /// The node class a pool uses (AKS's `default` when it names none), if it exists.
    pub fn class_of(&self, pool: &NodePool) -> Result<&'s AKSNodeClass, String> {
        let name = pool
            .spec
            .template
            .spec
            .node_class_ref
            .as_ref()
            .map_or(DEFAULT_NODE_CLASS, |r| r.name.as_str());
        self.classes
            .get(name)
            .copied()
            .ok_or_else(|| format!("AKSNodeClass {name:?} does not exist"))
    }
}
