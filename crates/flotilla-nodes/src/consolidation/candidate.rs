//! A node consolidation may remove: what it costs, where it runs, and the pods that would have
//! to move.

use std::collections::BTreeMap;
use std::fmt;

use super::balanced::PoolTotals;
use crate::scheduling::{CapacityType, SimPod};

/// A node that may be consolidated, as the caller's candidate filtering found it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The node name.
    pub node: String,
    /// The pool that launched it.
    pub pool: String,
    /// Its instance type.
    pub instance_type: String,
    /// How it was bought.
    pub capacity_type: CapacityType,
    /// Its zone.
    pub zone: String,
    /// The price per hour of its offering.
    pub price: f64,
    /// The pods that would move if it went (reschedulable: not DaemonSet or mirror pods).
    pub pods: Vec<SimPod>,
    /// The disruption cost the caller ordered candidates by, reported in explanations.
    pub disruption_cost: f64,
    /// What moving its pods costs: `1 + Σ max(0, eviction cost)` (Karpenter's
    /// `RescheduleDisruptionCost`), which Balanced scoring weighs.
    pub reschedule_cost: f64,
    /// Its pool's totals when the pool's consolidation policy is `Balanced`; `None` otherwise.
    pub balanced: Option<PoolTotals>,
}

impl fmt::Display for Candidate {
    /// `node-1 (kwok-D4-16gi-amd64-linux-g0, spot, test-zone-a, $0.1234/h, 3 pods, disruption cost 3.00)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {}, {}, ${:.4}/h, {} pods, disruption cost {:.2})",
            self.node,
            self.instance_type,
            self.capacity_type,
            self.zone,
            self.price,
            self.pods.len(),
            self.disruption_cost
        )
    }
}

/// Whether `pool` has budget left in `budgets`; a pool missing from the map has none (fail
/// closed, as Karpenter treats a budget it cannot evaluate).
pub(super) fn has_budget(budgets: &BTreeMap<String, u32>, pool: &str) -> bool {
    budgets.get(pool).is_some_and(|&left| left > 0)
}
