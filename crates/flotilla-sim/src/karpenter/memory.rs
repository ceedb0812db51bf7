//! What Karpenter's controllers keep in memory between passes, as the real ones keep it in
//! their process: the pods last seen on each claim's node (to notice pods leaving), the
//! disruption command waiting for its validation, and which warnings were already reported.
//! Losing it (a restart) costs a re-check, never a wrong decision.

use std::collections::{BTreeSet, HashMap};

use flotilla_api::nodes::DisruptionReason;
use flotilla_nodes::scheduling::NewClaim;
use jiff::Timestamp;

/// A disruption decided and waiting for its 15-second validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The method that chose it (`Emptiness`, `multi-node consolidation`…).
    pub method: String,
    /// The budget reason it spends.
    pub reason: DisruptionReason,
    /// The claims to disrupt.
    pub claims: Vec<String>,
    /// The nodes to launch first.
    pub replacements: Vec<NewClaim>,
    /// Why, for events and conditions.
    pub explanation: String,
    /// When it was decided.
    pub decided_at: Timestamp,
}

/// Karpenter's in-memory state in one member.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    /// Claim name → a fingerprint of the workload pods on its node when last seen.
    pub pod_sets: HashMap<String, u64>,
    /// The command waiting for validation, if any.
    pub pending: Option<Proposal>,
    /// Keys of warnings already recorded as events (so a standing problem is said once).
    pub reported: BTreeSet<String>,
    /// Pool name → its latest launch failure: when, and why (for `NodeRegistrationHealthy`).
    pub launch_failures: HashMap<String, (Timestamp, String)>,
    /// The provisioning batch window open now, if pods are pending.
    pub batch: Option<flotilla_nodes::batch::Window>,
}

impl Memory {
    /// Whether `key` is newly reported (and remembers it).
    pub fn first_report(&mut self, key: String) -> bool {
        self.reported.insert(key)
    }
}
