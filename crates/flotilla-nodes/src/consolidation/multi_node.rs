//! Multi-node consolidation (Karpenter's `multinodeconsolidation.go`): the longest prefix of
//! the ordered candidates (at least two) that can go at once, replaced by at most one node,
//! found by binary search.

use std::collections::{BTreeMap, HashMap};

use super::balanced;
use super::candidate::{Candidate, has_budget};
use super::command::{Action, Command, Decision, Method, Rejected, Rejection};
use super::compute::{ConsolidationOptions, compute_consolidation, retain_cheaper};
use super::simulation::{Cluster, Simulator};

/// At most this many candidates are considered at once (Karpenter's batch of 100).
pub const MAX_CANDIDATES: usize = 100;

/// The multi-node command for `candidates` (filtered and ordered by the caller) within
/// `budgets` (each pool's remaining disruptions; a pool not in the map has none), or why not.
///
/// Candidates of pools without budget left are skipped (each one taken uses one), empty ones
/// are left to emptiness, and the first [`MAX_CANDIDATES`] remain. Then a binary search over
/// the prefix length, from 2 up: `mid = (lo + hi) / 2`; a valid command for the first `mid + 1`
/// candidates is kept and the search goes up, otherwise down. A replacement must be cheaper
/// than any candidate of the same instance type (`filterOutSameInstanceType`), and every
/// Balanced pool among the prefix's must approve it.
///
/// `should_stop` is asked before each simulation, and stands in for Karpenter's one-minute
/// timeout without reading a clock: the caller backs it with its clock (or a count). Once it
/// says stop, the last valid command found, if any, is returned.
pub fn multi_node_consolidation(
    cluster: Cluster<'_>,
    candidates: &[Candidate],
    budgets: &BTreeMap<String, u32>,
    options: &ConsolidationOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Decision {
    let mut decision = Decision::default();
    let mut budgets = budgets.clone();
    let mut chosen: Vec<&Candidate> = Vec::new();
    for candidate in candidates {
        if !has_budget(&budgets, &candidate.pool) {
            decision.constrained_by_budgets = true;
            continue;
        }
        if candidate.pods.is_empty() {
            continue;
        }
        chosen.push(candidate);
        if let Some(left) = budgets.get_mut(&candidate.pool) {
            *left -= 1;
        }
    }
    chosen.truncate(MAX_CANDIDATES);
    if chosen.len() < 2 {
        return decision;
    }
    let mut simulator = Simulator::new(cluster);
    let (mut lo, mut hi) = (1, chosen.len() - 1);
    while lo <= hi {
        if should_stop() {
            decision.stopped = true;
            break;
        }
        let mid = (lo + hi) / 2;
        let prefix = &chosen[..=mid];
        let outcome = compute_consolidation(&mut simulator, prefix, Method::MultiNode, options)
            .and_then(|command| without_same_instance_type(&simulator, command, prefix))
            .and_then(|command| balanced::approve(command, prefix));
        match outcome {
            Ok(command) => {
                decision.command = Some(command);
                lo = mid + 1;
            }
            Err(why) => {
                decision.rejected.push(Rejected {
                    candidates: prefix.iter().map(|c| c.node.clone()).collect(),
                    why,
                });
                hi = mid - 1;
            }
        }
    }
    decision.simulations = simulator.simulations();
    decision
}

/// A replacement keeps only options cheaper than the cheapest candidate running the same
/// instance type as some option: replacing several nodes with one of a type already among them
/// saves nothing over deleting the others (Karpenter's `filterOutSameInstanceType`, e.g.
/// `[t3a.2xlarge ×2, t3a.small] → t3a.nano` rather than `→ t3a.2xlarge`).
fn without_same_instance_type(
    simulator: &Simulator<'_>,
    mut command: Command,
    candidates: &[&Candidate],
) -> Result<Command, Rejection> {
    let Action::Replace(claim) = &mut command.action else {
        return Ok(command);
    };
    let mut cheapest_by_type: HashMap<&str, f64> = HashMap::new();
    for candidate in candidates {
        let price = cheapest_by_type
            .entry(&candidate.instance_type)
            .or_insert(f64::MAX);
        *price = price.min(candidate.price);
    }
    let max_price = claim
        .instance_type_options
        .iter()
        .filter_map(|o| cheapest_by_type.get(o.name.as_str()))
        .fold(f64::MAX, |a, &b| a.min(b));
    retain_cheaper(simulator, claim, max_price)
        .map_err(|why| why.unwrap_or(Rejection::SameInstanceType))?;
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::{
        CapacityType, InstanceType, NewClaim, NodePool, Offering, Requirements, Resources, SimPod,
        labels,
    };

    fn instance_type(name: &str, cpu: i64, price: f64) -> InstanceType {
        InstanceType::new(
            name,
            &[(labels::OS, "linux")],
            Resources::new(cpu * 1000, cpu << 32, 110, 0),
            Resources::ZERO,
            vec![Offering {
                zone: "z".into(),
                capacity_type: CapacityType::OnDemand,
                price,
                available: true,
            }],
        )
    }

    fn candidate(node: &str, instance_type: &str, price: f64, pod_cpu: i64) -> Candidate {
        Candidate {
            node: node.into(),
            pool: "default".into(),
            instance_type: instance_type.into(),
            capacity_type: CapacityType::OnDemand,
            zone: "z".into(),
            price,
            pods: vec![SimPod::new(
                &format!("{node}-pod"),
                Resources::new(pod_cpu, 1 << 20, 1, 0),
            )],
            disruption_cost: 1.0,
            reschedule_cost: 1.0,
            balanced: None,
        }
    }

    /// The reference's example: two `t3a.2xlarge` and a `t3a.small` are not replaced by a
    /// `t3a.2xlarge` (which deleting the other two would achieve) but by something cheaper.
    #[test]
    fn same_instance_type_replacements_must_be_cheaper_than_that_candidate() {
        let catalog = [
            instance_type("t3a.nano", 2, 0.0047),
            instance_type("t3a.small", 2, 0.0188),
            instance_type("t3a.2xlarge", 8, 0.3008),
        ];
        let pools = [NodePool::new("default")];
        let cluster = Cluster {
            pools: &pools,
            instance_types: &catalog,
            nodes: &[],
            pending: &[],
        };
        let candidates = [
            candidate("a", "t3a.2xlarge", 0.3008, 500),
            candidate("b", "t3a.2xlarge", 0.3008, 500),
            candidate("c", "t3a.small", 0.0188, 500),
        ];
        let refs: Vec<&Candidate> = candidates.iter().collect();
        let mut simulator = Simulator::new(cluster);
        let options = ConsolidationOptions::default();
        let command =
            compute_consolidation(&mut simulator, &refs, Method::MultiNode, &options).unwrap();
        let names = |c: &Command| match &c.action {
            Action::Replace(claim) => claim
                .instance_type_options
                .iter()
                .map(|o| o.name.clone())
                .collect::<Vec<_>>(),
            Action::Delete => Vec::new(),
        };
        assert_eq!(names(&command), ["t3a.nano", "t3a.small", "t3a.2xlarge"]);
        let filtered = without_same_instance_type(&simulator, command, &refs).unwrap();
        assert_eq!(names(&filtered), ["t3a.nano"]);

        // Only same-type options, none cheaper than their candidate: rejected.
        let claim = NewClaim {
            pool: "default".into(),
            requirements: Requirements::new(),
            instance_type_options: vec![crate::scheduling::scheduler::InstanceTypeOption {
                name: "t3a.small".into(),
                price: 0.0188,
            }],
            requests: Resources::ZERO,
            pods: Vec::new(),
        };
        let command = Command {
            method: Method::MultiNode,
            candidates: Vec::new(),
            action: Action::Replace(claim),
            candidates_price: 1.0,
            scores: Vec::new(),
        };
        assert_eq!(
            without_same_instance_type(&simulator, command, &refs),
            Err(Rejection::SameInstanceType)
        );
    }
}
