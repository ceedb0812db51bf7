//! Node auto-provisioning inside a simulated member, with Karpenter v1's semantics: one more
//! pure pass over the member's state, in Karpenter's controllers' order.
//!
//! - [`node_classes`]: each AKSNodeClass's status (the image and Kubernetes version it
//!   resolves to);
//! - [`node_overlays`]: the catalog with the NodeOverlays' price changes, and their status;
//! - [`provisioner`]: unschedulable pods → new NodeClaims;
//! - [`claims`]: each claim's launch, registration, initialization, `Consolidatable`,
//!   `Drifted`, expiration and finalization, on the simulated [`cloud`];
//! - [`disruption`]: Emptiness → Drift → multi-node → single-node consolidation within the
//!   pools' budgets, with the 15-second validation and the command queue;
//! - [`termination`]: draining and releasing nodes being deleted;
//! - the NodePool status (resources, allowed disruptions per reason, conditions), waking again
//!   when a budget window opens or closes;
//! - [`metrics`]: the Prometheus families Karpenter publishes, under Karpenter's names.
//!
//! What the real controllers keep in memory between passes is in [`Memory`].

pub mod claims;
pub mod cloud;
pub mod disruption;
pub mod memory;
pub mod metrics;
pub mod node_classes;
pub mod node_overlays;
pub mod provisioner;
pub mod termination;
pub mod view;

pub use memory::Memory;

use flotilla_api::nodes::{AKSNodeClass, DEFAULT_NODE_CLASS};
use flotilla_nodes::pool_status::{in_pool, next_budget_change, pool_status};
use flotilla_nodes::scheduling::InstanceType;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use kube::Resource;

use crate::actions::{Action, Plan};
use crate::objects::ObjectRef;
use crate::reconcile::{ClusterState, Settings};

/// The AKSNodeClass every member has from the start, as AKS node auto-provisioning creates
/// it: pools that name no node class use it.
pub fn default_node_class() -> AKSNodeClass {
    AKSNodeClass::new(DEFAULT_NODE_CLASS, Default::default())
}

/// The component Karpenter's events name.
pub const COMPONENT: &str = "karpenter";

/// What Karpenter's controllers know of the member they run in.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The member's name (in provider IDs).
    pub member: &'a str,
    /// Its region (zones and prices).
    pub region: &'a str,
    /// Its control plane's Kubernetes version (what new nodes' kubelets run).
    pub kubernetes_version: &'a str,
    /// The instance types the simulated cloud offers there, as the pools see them: with the
    /// NodeOverlays' price changes (what the scheduler and consolidation weigh).
    pub catalog: &'a [InstanceType],
    /// The same at the cloud's own prices: what a launch picks the cheapest offering from.
    pub cloud: &'a [InstanceType],
    /// What Karpenter's feature gates switch on in its consolidation.
    pub consolidation: flotilla_nodes::consolidation::ConsolidationOptions,
}

/// A reference to a kube-rs resource, for status writes and events.
pub(crate) fn reference<K: Resource<DynamicType = ()>>(obj: &K) -> ObjectRef {
    let meta = obj.meta();
    ObjectRef {
        api_version: K::api_version(&()).to_string(),
        kind: K::kind(&()).to_string(),
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
    }
}

/// The status write of `obj` (a kube-rs resource) with `status`.
pub(crate) fn status_write<K: Resource<DynamicType = ()>, S: serde::Serialize>(
    obj: &K,
    status: &S,
) -> Action {
    Action::WriteStatus {
        target: reference(obj),
        status: serde_json::to_value(status).unwrap_or_default(),
    }
}

/// Every Karpenter controller's pass at `now` in the member `settings` describes. A member
/// with no NodePool and no NodeClaim runs only the node class and pool status controllers.
pub fn plan(
    state: &ClusterState,
    settings: &Settings,
    memory: &mut Memory,
    now: Timestamp,
) -> Plan {
    let view = view::View::new(state);
    let mut plan = node_classes::reconcile(state, &settings.kubernetes_version, now);
    plan.merge(pools(&view, memory, now));
    let unused = state.node_pools.is_empty() && state.node_claims.is_empty();
    if unused && state.node_overlays.is_empty() {
        return plan;
    }
    // Built only for members that use Karpenter: most members of a large fleet do not.
    let cloud = node_classes::shape(
        cloud::instance_types(&settings.region),
        &view,
        &settings.region,
    );
    let (overlaid, overlays) = node_overlays::reconcile(state, &cloud, now);
    plan.merge(overlays);
    if unused {
        return plan;
    }
    let ctx = Context {
        member: &settings.member,
        region: &settings.region,
        kubernetes_version: &settings.kubernetes_version,
        catalog: &overlaid.instance_types,
        cloud: &cloud,
        consolidation: settings.consolidation,
    };
    let budgets = termination::Budgets::new(&state.pod_disruption_budgets, &state.pods);
    plan.merge(provisioner::reconcile(&view, &ctx, memory, now));
    let (disruption, marks) = disruption::reconcile(&view, &ctx, memory, &budgets, now);
    plan.merge(disruption);
    plan.merge(claims::reconcile(&view, &ctx, memory, &marks, now));
    plan.merge(termination::reconcile(&view, budgets, now));
    plan
}

/// The NodePool status controller's pass at `now`: status writes where a pool's status
/// changed, and a wake-up at the next budget window edge.
fn pools(view: &view::View<'_>, memory: &Memory, now: Timestamp) -> Plan {
    let state = view.state;
    let mut plan = Plan::default();
    for pool in &state.node_pools {
        let name = pool.metadata.name.as_deref().unwrap_or_default();
        let nodes: Vec<&Node> = state.nodes.iter().filter(|n| in_pool(n, name)).collect();
        let failure = memory
            .launch_failures
            .get(name)
            .map(|(at, why)| (*at, why.as_str()));
        let class = view.class_of(pool).map(|_| ());
        let status = pool_status(pool, &nodes, class, failure, now);
        if pool.status.as_ref() != Some(&status) {
            plan.push(status_write(pool, &status));
        }
        if let Some(at) = next_budget_change(pool, now) {
            plan.wake(at);
        }
    }
    plan
}
