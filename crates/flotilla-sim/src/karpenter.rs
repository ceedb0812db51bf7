//! Node auto-provisioning inside a simulated member: the NodePool status controller, run as
//! one more pure pass over the member's state. Each pool's status says what its nodes add up
//! to and how many more may be disrupted now, per reason and with the budget that says so;
//! the pass wakes again when a budget window opens or closes.

use flotilla_api::nodes::{AKSNodeClass, DEFAULT_NODE_CLASS, NodePool};
use flotilla_apiserver::metrics::GaugeFamily;
use flotilla_nodes::pool_status::{in_pool, next_budget_change, pool_status};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use kube::Resource;

use crate::actions::{Action, Plan};
use crate::objects::ObjectRef;
use crate::reconcile::ClusterState;

/// The AKSNodeClass every member has from the start, as AKS node auto-provisioning creates
/// it: pools that name no node class use it.
pub fn default_node_class() -> AKSNodeClass {
    AKSNodeClass::new(DEFAULT_NODE_CLASS, Default::default())
}

/// A reference to a kube-rs resource, for status writes.
fn reference<K: Resource<DynamicType = ()>>(obj: &K) -> ObjectRef {
    let meta = obj.meta();
    ObjectRef {
        api_version: K::api_version(&()).to_string(),
        kind: K::kind(&()).to_string(),
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
    }
}

/// Whether the node class `pool` uses exists.
fn node_class_ready(pool: &NodePool, classes: &[AKSNodeClass]) -> Result<(), String> {
    let name = pool
        .spec
        .template
        .spec
        .node_class_ref
        .as_ref()
        .map_or(DEFAULT_NODE_CLASS, |r| r.name.as_str());
    if classes
        .iter()
        .any(|c| c.metadata.name.as_deref() == Some(name))
    {
        Ok(())
    } else {
        Err(format!("AKSNodeClass {name:?} does not exist"))
    }
}

/// The gauge of allowed disruptions per pool and reason, as Karpenter names it.
pub const ALLOWED_DISRUPTIONS_METRIC: &str = "karpenter_nodepools_allowed_disruptions";

/// The allowed-disruptions gauge, per pool and reason, from the pools' stored statuses (a
/// status write wakes the next pass, which publishes the new figures).
pub fn allowed_disruptions_gauge(pools: &[NodePool]) -> GaugeFamily {
    let samples = pools
        .iter()
        .flat_map(|pool| {
            let name = pool.metadata.name.clone().unwrap_or_default();
            pool.status
                .iter()
                .flat_map(|s| &s.allowed_disruptions)
                .map(move |figure| {
                    (
                        vec![
                            ("nodepool".to_string(), name.clone()),
                            ("reason".to_string(), figure.reason.clone()),
                        ],
                        figure.allowed as f64,
                    )
                })
        })
        .collect();
    GaugeFamily {
        help: "How many more nodes of a NodePool may be disrupted now, per reason.".into(),
        samples,
    }
}

/// The NodePool status controller's pass at `now`: status writes where a pool's status
/// changed, and a wake-up at the next budget window edge.
pub fn plan(state: &ClusterState, now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    for pool in &state.node_pools {
        let name = pool.metadata.name.as_deref().unwrap_or_default();
        let nodes: Vec<&Node> = state.nodes.iter().filter(|n| in_pool(n, name)).collect();
        let status = pool_status(
            pool,
            &nodes,
            node_class_ready(pool, &state.node_classes),
            now,
        );
        if pool.status.as_ref() != Some(&status) {
            plan.push(Action::WriteStatus {
                target: reference(pool),
                status: serde_json::to_value(&status).unwrap_or_default(),
            });
        }
        if let Some(at) = next_budget_change(pool, now) {
            plan.wake(at);
        }
    }
    plan
}
