//! Emptiness and drift, the disruption methods that need no cost comparison (reference §2).
//! Both take the candidates in the controller's order and the budgets left per pool, and spend
//! the budgets of the nodes they pick; a method returns at most one command.

use std::collections::BTreeMap;

use flotilla_api::nodes::DisruptionReason;

use super::candidate::NodeFacts;

/// Nodes each pool may still lose for one reason (pools absent: nothing).
pub type Remaining = BTreeMap<String, i64>;

/// A disruption decided: which nodes go, how many new nodes replace them, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Command<R> {
    /// The reason, as budgets and the `DisruptionReason` condition name it.
    pub reason: DisruptionReason,
    /// The claims of the nodes to disrupt.
    pub claims: Vec<String>,
    /// The nodes to launch first (empty: a plain delete).
    pub replacements: Vec<R>,
    /// Why, for events and conditions.
    pub explanation: String,
}

/// What a method learns from simulating the removal of some nodes: the new nodes their pods
/// would need, or why a pod would find no home.
pub type Simulation<R> = Result<Vec<R>, String>;

/// Takes one node of `pool` from `remaining` if any is left.
fn spend(remaining: &mut Remaining, pool: &str) -> bool {
    match remaining.get_mut(pool) {
        Some(left) if *left > 0 => {
            *left -= 1;
            true
        }
        _ => false,
    }
}

/// Emptiness: every empty, consolidatable candidate whose pool allows it (and does not say
/// `consolidateAfter: Never`), deleted together. `never`: pools with `consolidateAfter: Never`.
pub fn emptiness<R>(
    candidates: &[&NodeFacts],
    never: &dyn Fn(&str) -> bool,
    remaining: &mut Remaining,
) -> Option<Command<R>> {
    let mut claims = Vec::new();
    let mut held = 0;
    for node in candidates {
        let pool = node.pool.as_deref().unwrap_or_default();
        if !node.is_empty() || !node.consolidatable || never(pool) {
            continue;
        }
        if spend(remaining, pool) {
            claims.push(node.claim.clone());
        } else {
            held += 1;
        }
    }
    if claims.is_empty() {
        return None;
    }
    let held = if held > 0 {
        format!("; {held} more empty node(s) wait for their pools' Empty budgets")
    } else {
        String::new()
    };
    Some(Command {
        reason: DisruptionReason::Empty,
        explanation: format!(
            "Emptiness: {} node(s) run no workload pods{held}",
            claims.len()
        ),
        claims,
        replacements: Vec::new(),
    })
}

/// Drift: drifted candidates, empty ones first, then the longest drifted. All empty drifted
/// nodes the budgets allow are deleted together; otherwise the first non-empty node whose pods
/// can be rehomed (on existing nodes or on `simulate`'s replacements) is replaced.
pub fn drift<R>(
    candidates: &[&NodeFacts],
    remaining: &mut Remaining,
    simulate: &mut dyn FnMut(&NodeFacts) -> Simulation<R>,
) -> Option<Command<R>> {
    let mut drifted: Vec<&NodeFacts> = candidates
        .iter()
        .copied()
        .filter(|n| n.drifted_since.is_some())
        .collect();
    drifted.sort_by_key(|n| (!n.is_empty(), n.drifted_since, n.name.clone()));
    let empty: Vec<String> = drifted
        .iter()
        .filter(|n| n.is_empty())
        .filter(|n| spend(remaining, n.pool.as_deref().unwrap_or_default()))
        .map(|n| n.claim.clone())
        .collect();
    if !empty.is_empty() {
        return Some(Command {
            reason: DisruptionReason::Drifted,
            explanation: format!("Drift: {} empty drifted node(s) deleted", empty.len()),
            claims: empty,
            replacements: Vec::new(),
        });
    }
    for node in drifted.into_iter().filter(|n| !n.is_empty()) {
        let pool = node.pool.as_deref().unwrap_or_default();
        if remaining.get(pool).copied().unwrap_or(0) <= 0 {
            continue;
        }
        if let Ok(replacements) = simulate(node) {
            spend(remaining, pool);
            return Some(Command {
                reason: DisruptionReason::Drifted,
                explanation: format!(
                    "Drift: node {} replaced by {} new node(s)",
                    node.name,
                    replacements.len()
                ),
                claims: vec![node.claim.clone()],
                replacements,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests;
