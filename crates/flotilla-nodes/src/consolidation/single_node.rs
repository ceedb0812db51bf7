//! Single-node consolidation (Karpenter's `singlenodeconsolidation.go`): the first candidate,
//! taking pools in turn, that can be deleted or replaced by one cheaper node.

use std::collections::BTreeMap;

use super::balanced;
use super::candidate::{Candidate, has_budget};
use super::command::{Decision, Method, Rejected};
use super::compute::{ConsolidationOptions, compute_consolidation};
use super::simulation::{Cluster, Simulator};

/// The single-node command for `candidates` (filtered and ordered by the caller) within
/// `budgets` (each pool's remaining disruptions; a pool not in the map has none), or why not.
///
/// Candidates are interleaved across pools — the first of each pool, then the second of each,
/// and so on — with the pools in `prioritized_pools` (those a previous search did not reach)
/// first, then the others in order of first appearance. Candidates of pools without budget,
/// empty candidates, and candidates of Balanced pools that even a delete would not pay for are
/// skipped; the first candidate whose command is valid (and approved by a Balanced pool) wins.
///
/// `should_stop` is asked before each simulation, and stands in for Karpenter's three-minute
/// timeout without reading a clock; when it says stop, the pools not yet examined are reported
/// in [`Decision::unexamined_pools`] for the caller to pass as `prioritized_pools` next time.
pub fn single_node_consolidation(
    cluster: Cluster<'_>,
    candidates: &[Candidate],
    budgets: &BTreeMap<String, u32>,
    prioritized_pools: &[String],
    options: &ConsolidationOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Decision {
    let mut decision = Decision::default();
    let ordered = interleave_by_pool(candidates, prioritized_pools);
    let mut simulator = Simulator::new(cluster);
    for (position, candidate) in ordered.iter().enumerate() {
        if !has_budget(budgets, &candidate.pool) {
            decision.constrained_by_budgets = true;
            continue;
        }
        if candidate.pods.is_empty() || !balanced::can_pass(candidate) {
            continue;
        }
        if should_stop() {
            decision.stopped = true;
            for rest in &ordered[position..] {
                if !decision.unexamined_pools.contains(&rest.pool) {
                    decision.unexamined_pools.push(rest.pool.clone());
                }
            }
            break;
        }
        let outcome =
            compute_consolidation(&mut simulator, &[candidate], Method::SingleNode, options)
                .and_then(|command| balanced::approve(command, &[candidate]));
        match outcome {
            Ok(command) => {
                decision.command = Some(command);
                break;
            }
            Err(why) => decision.rejected.push(Rejected {
                candidates: vec![candidate.node.clone()],
                why,
            }),
        }
    }
    decision.simulations = simulator.simulations();
    decision
}

/// The candidates taken one per pool in turn, keeping each pool's order, pools in
/// `prioritized` first and the rest by first appearance.
fn interleave_by_pool<'c>(
    candidates: &'c [Candidate],
    prioritized: &[String],
) -> Vec<&'c Candidate> {
    let mut pools: Vec<&str> = Vec::new();
    let mut by_pool: BTreeMap<&str, Vec<&Candidate>> = BTreeMap::new();
    for candidate in candidates {
        let queue = by_pool.entry(&candidate.pool).or_default();
        if queue.is_empty() {
            pools.push(&candidate.pool);
        }
        queue.push(candidate);
    }
    pools.sort_by_key(|pool| !prioritized.iter().any(|p| p == pool));
    let by_pool = &by_pool;
    let longest = by_pool.values().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|round| {
            pools
                .iter()
                .filter_map(move |pool| by_pool[pool].get(round).copied())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::{CapacityType, Resources};

    fn candidate(node: &str, pool: &str) -> Candidate {
        Candidate {
            node: node.into(),
            pool: pool.into(),
            instance_type: "t".into(),
            capacity_type: CapacityType::OnDemand,
            zone: "z".into(),
            price: 1.0,
            pods: Vec::new(),
            disruption_cost: 1.0,
            reschedule_cost: 1.0,
            balanced: None,
        }
    }

    #[test]
    fn pools_take_turns_prioritized_first() {
        let candidates = [
            candidate("a1", "a"),
            candidate("a2", "a"),
            candidate("a3", "a"),
            candidate("b1", "b"),
            candidate("c1", "c"),
            candidate("c2", "c"),
        ];
        let order = |prioritized: &[String]| -> Vec<String> {
            interleave_by_pool(&candidates, prioritized)
                .iter()
                .map(|c| c.node.clone())
                .collect()
        };
        assert_eq!(order(&[]), ["a1", "b1", "c1", "a2", "c2", "a3"]);
        assert_eq!(
            order(&["c".to_string()]),
            ["c1", "a1", "b1", "c2", "a2", "a3"]
        );
    }

    #[test]
    fn candidates_without_budget_or_pods_are_skipped() {
        let mut with_pod = candidate("p", "a");
        with_pod.pods = vec![crate::scheduling::SimPod::new(
            "x",
            Resources::new(1, 1, 1, 0),
        )];
        let candidates = [candidate("empty", "a"), with_pod, candidate("b1", "b")];
        let cluster = Cluster {
            pools: &[],
            instance_types: &[],
            nodes: &[],
            pending: &[],
        };
        let budgets = BTreeMap::from([("a".to_string(), 1)]);
        let decision = single_node_consolidation(
            cluster,
            &candidates,
            &budgets,
            &[],
            &ConsolidationOptions::default(),
            &mut || false,
        );
        assert!(decision.constrained_by_budgets);
        assert_eq!(decision.simulations, 1);
        assert_eq!(decision.rejected.len(), 1);
        assert_eq!(decision.rejected[0].candidates, ["p"]);
    }
}
