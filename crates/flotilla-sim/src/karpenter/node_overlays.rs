//! The NodeOverlay controller: the catalog each pool sees with the overlays' price changes
//! applied (`flotilla_nodes::overlay`), and each overlay's status, as Karpenter's: Ready and
//! ValidationSucceeded, False with reason `Conflict` when an overlay of the same weight already
//! changes an offering it matches.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::nodes::{NodeOverlay, NodeOverlayStatus};
use flotilla_nodes::overlay::{self, Overlaid, Overlay};
use flotilla_nodes::scheduling::{InstanceType, NewClaim, NodePool, Requirement, labels};
use jiff::Timestamp;

use super::status_write;
use crate::actions::Plan;
use crate::reconcile::ClusterState;

/// The annotation Karpenter puts on a claim some of whose instance-type options have a price
/// an overlay changed.
pub const PRICE_OVERLAY_APPLIED_ANNOTATION: &str = "karpenter.sh/price-overlay-applied";

/// Whether an overlay changed the price of one of `new`'s options for its pool (the claim
/// then carries [`PRICE_OVERLAY_APPLIED_ANNOTATION`]).
pub fn price_overlaid(catalog: &[InstanceType], new: &NewClaim) -> bool {
    let pool = Requirement::single(&new.pool);
    new.instance_type_options.iter().any(|option| {
        catalog.iter().any(|it| {
            it.name == option.name && it.requirements.get(labels::NODE_POOL) == Some(&pool)
        })
    })
}

/// `catalog` with the state's overlays applied for its pools, and the overlays' status writes.
pub fn reconcile(
    state: &ClusterState,
    catalog: &[InstanceType],
    now: Timestamp,
) -> (Overlaid, Plan) {
    let pools: Vec<NodePool> = state
        .node_pools
        .iter()
        .map(|pool| NodePool {
            labels: pool
                .spec
                .template
                .metadata
                .as_ref()
                .map(|m| m.labels.clone())
                .unwrap_or_default(),
            ..NodePool::new(pool.metadata.name.as_deref().unwrap_or_default())
        })
        .collect();
    let mut invalid = Vec::new();
    let overlays: Vec<Overlay> = state
        .node_overlays
        .iter()
        .filter_map(|o| {
            Overlay::from_api(o)
                .map_err(|why| invalid.push((o.metadata.name.clone().unwrap_or_default(), why)))
                .ok()
        })
        .collect();
    let overlaid = overlay::apply(catalog, &pools, &overlays);
    let mut plan = Plan::default();
    for o in &state.node_overlays {
        let name = o.metadata.name.as_deref().unwrap_or_default();
        let failure = invalid
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, why)| ("RuntimeValidation", why.clone()))
            .or_else(|| {
                overlaid
                    .conflicts
                    .contains(name)
                    .then(|| ("Conflict", "conflict with another overlay".to_string()))
            });
        let status = status(o, failure, overlaid.changed.get(name).copied(), now);
        if o.status.as_ref() != Some(&status) {
            plan.push(status_write(o, &status));
        }
    }
    (overlaid, plan)
}

/// The overlay's status: ValidationSucceeded and Ready True, or both False with `failure`'s
/// reason and message (Ready as Karpenter's root condition: `UnhealthyDependents`). Beyond
/// Karpenter, Ready says how many offerings the overlay prices (`changed`), so an overlay
/// whose requirements match nothing is seen at once.
fn status(
    o: &NodeOverlay,
    failure: Option<(&str, String)>,
    changed: Option<usize>,
    now: Timestamp,
) -> NodeOverlayStatus {
    let mut status = o.status.clone().unwrap_or_default();
    let generation = o.metadata.generation;
    let (validation, ready) = match &failure {
        None => (
            NewCondition {
                type_: "ValidationSucceeded",
                status: "True",
                reason: "ValidationSucceeded",
                message: String::new(),
                observed_generation: generation,
            },
            NewCondition {
                type_: "Ready",
                status: "True",
                reason: "Ready",
                message: match changed {
                    Some(0) => {
                        "matches no offering of any NodePool's instance types: it changes no price"
                            .into()
                    }
                    Some(n) => format!("changes the price of {n} offering(s) across the NodePools"),
                    None => String::new(),
                },
                observed_generation: generation,
            },
        ),
        Some((reason, message)) => (
            NewCondition {
                type_: "ValidationSucceeded",
                status: "False",
                reason,
                message: message.clone(),
                observed_generation: generation,
            },
            NewCondition {
                type_: "Ready",
                status: "False",
                reason: "UnhealthyDependents",
                message: "ValidationSucceeded=False".into(),
                observed_generation: generation,
            },
        ),
    };
    set_condition(&mut status.conditions, validation, now);
    set_condition(&mut status.conditions, ready, now);
    status
}
