//! Karpenter's `Balanced` consolidation policy: a move must save enough of its pool's cost for
//! the share of the pool's disruption it causes.
//!
//! A move's score in a pool is `(savings / pool cost) / (move disruption / pool disruption)`,
//! approved when at least `1/k` with `k` = [`BALANCED_K`]. A node's disruption is
//! `1 + Σ max(0, eviction cost)` over the pods that would move, so an empty node still costs
//! one. A move across several Balanced pools needs every one to approve, each credited with the
//! savings in proportion to the cost its candidates bring.

use std::collections::BTreeMap;
use std::fmt;

use super::candidate::Candidate;
use super::command::{Command, Rejection};

/// Karpenter's `BalancedK`: a move passes when its score is at least `1/k`.
pub const BALANCED_K: u32 = 2;

/// A Balanced pool's totals, which a move's savings and disruption are measured against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolTotals {
    /// What all the pool's nodes cost together, per hour.
    pub cost: f64,
    /// The disruption cost of all the pool's nodes together (each `1 + Σ pod eviction costs`).
    pub disruption: f64,
}

/// One Balanced pool's score for one move.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolScore {
    /// The pool.
    pub pool: String,
    /// The savings credited to the pool, as a fraction of its total cost.
    pub savings_fraction: f64,
    /// The move's disruption in the pool, as a fraction of its total disruption.
    pub disruption_fraction: f64,
}

impl PoolScore {
    /// Scores `savings` and `disruption` against `totals` (Karpenter's `ScoreMove`); zero
    /// totals give a zero score.
    pub fn new(pool: &str, savings: f64, disruption: f64, totals: PoolTotals) -> Self {
        let (savings_fraction, disruption_fraction) =
            if totals.cost <= 0.0 || totals.disruption <= 0.0 {
                (0.0, 0.0)
            } else {
                (savings / totals.cost, disruption / totals.disruption)
            };
        PoolScore {
            pool: pool.to_string(),
            savings_fraction,
            disruption_fraction,
        }
    }

    /// The score: savings fraction over disruption fraction; 0 when nothing is saved, infinite
    /// when something is saved for no disruption.
    pub fn value(&self) -> f64 {
        if self.savings_fraction <= 0.0 {
            0.0
        } else if self.disruption_fraction == 0.0 {
            f64::INFINITY
        } else {
            self.savings_fraction / self.disruption_fraction
        }
    }

    /// The least score approved: `1/k`.
    pub fn threshold() -> f64 {
        1.0 / f64::from(BALANCED_K)
    }

    /// Whether the pool approves the move.
    pub fn approved(&self) -> bool {
        self.value() >= Self::threshold()
    }
}

impl fmt::Display for PoolScore {
    /// Karpenter's wording: `score 0.75 >= threshold 0.50 (k: 2, savings 75.0%, disruption
    /// 100.0%)`, with `<` when rejected.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "score {:.2} {} threshold {:.2} (k: {}, savings {:.1}%, disruption {:.1}%)",
            self.value(),
            if self.approved() { ">=" } else { "<" },
            Self::threshold(),
            BALANCED_K,
            self.savings_fraction * 100.0,
            self.disruption_fraction * 100.0
        )
    }
}

/// Whether a candidate could pass even at its best, a delete that saves its whole price
/// (Karpenter's `CanPassThreshold`); true for candidates of pools that are not Balanced.
pub fn can_pass(candidate: &Candidate) -> bool {
    candidate.balanced.is_none_or(|totals| {
        totals.cost <= 0.0
            || PoolScore::new(
                &candidate.pool,
                candidate.price,
                candidate.reschedule_cost,
                totals,
            )
            .approved()
    })
}

/// The scores of a move that removes `candidates` and saves `savings` per hour, one per
/// Balanced pool among the candidates' pools, in pool order (Karpenter's
/// `EvaluateBalancedMove`). The move is approved when every score is.
pub fn score_move(candidates: &[&Candidate], savings: f64) -> Vec<PoolScore> {
    let source_cost: f64 = candidates.iter().map(|c| c.price).sum();
    let mut by_pool: BTreeMap<&str, Vec<&Candidate>> = BTreeMap::new();
    for candidate in candidates {
        by_pool.entry(&candidate.pool).or_default().push(candidate);
    }
    let several_pools = by_pool.len() > 1;
    by_pool
        .iter()
        .filter_map(|(pool, members)| {
            let totals = members[0].balanced?;
            let pool_cost: f64 = members.iter().map(|c| c.price).sum();
            let disruption: f64 = members.iter().map(|c| c.reschedule_cost).sum();
            let credited = if several_pools && source_cost > 0.0 {
                savings * pool_cost / source_cost
            } else {
                savings
            };
            Some(PoolScore::new(pool, credited, disruption, totals))
        })
        .collect()
}

/// `command` with its Balanced scores, or the first Balanced pool that rejects it. The savings
/// are the candidates' price less the replacement's cheapest option (Karpenter's
/// `EstimatedSavings`).
pub fn approve(mut command: Command, candidates: &[&Candidate]) -> Result<Command, Rejection> {
    let savings = command.candidates_price - command.replacement_price().unwrap_or(0.0);
    let scores = score_move(candidates, savings);
    if let Some(rejected) = scores.iter().find(|s| !s.approved()) {
        return Err(Rejection::Unbalanced(rejected.clone()));
    }
    command.scores = scores;
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::CapacityType;
    use proptest::prelude::*;

    fn candidate(pool: &str, price: f64, pods: u32, balanced: Option<PoolTotals>) -> Candidate {
        Candidate {
            node: format!("{pool}-{price}"),
            pool: pool.into(),
            instance_type: "t".into(),
            capacity_type: CapacityType::OnDemand,
            zone: "z".into(),
            price,
            pods: Vec::new(),
            disruption_cost: f64::from(pods),
            reschedule_cost: 1.0 + f64::from(pods),
            balanced,
        }
    }

    const POOL: PoolTotals = PoolTotals {
        cost: 1.0,
        disruption: 10.0,
    };

    #[test]
    fn scores_follow_karpenter_table() {
        // (savings, move disruption, approved): threshold 0.5 with k = 2.
        let cases = [
            (0.5, 5.0, true),   // half the cost for half the disruption: 1.0
            (0.25, 5.0, true),  // exactly the threshold: 0.5
            (0.2, 5.0, false),  // 0.4
            (0.1, 1.0, true),   // a tenth for a tenth: 1.0
            (0.0, 1.0, false),  // nothing saved
            (-0.1, 1.0, false), // a move that costs more
        ];
        for (savings, disruption, approved) in cases {
            let score = PoolScore::new("p", savings, disruption, POOL);
            assert_eq!(
                score.approved(),
                approved,
                "savings {savings}, disruption {disruption}: {score}"
            );
        }
        let free = PoolScore::new("p", 0.1, 0.0, POOL);
        assert!(free.value().is_infinite() && free.approved());
        let unknown = PoolScore::new("p", 0.5, 1.0, PoolTotals::default());
        assert_eq!(unknown.value(), 0.0);
    }

    #[test]
    fn the_message_is_karpenters() {
        let score = PoolScore::new("p", 0.75, 10.0, POOL);
        assert_eq!(
            score.to_string(),
            "score 0.75 >= threshold 0.50 (k: 2, savings 75.0%, disruption 100.0%)"
        );
        let score = PoolScore::new("p", 0.1, 5.0, POOL);
        assert_eq!(
            score.to_string(),
            "score 0.20 < threshold 0.50 (k: 2, savings 10.0%, disruption 50.0%)"
        );
    }

    #[test]
    fn only_balanced_pools_score_and_savings_split_by_source_cost() {
        let a = candidate("a", 0.3, 2, Some(POOL));
        let b = candidate("b", 0.1, 2, None);
        let scores = score_move(&[&a, &b], 0.2);
        assert_eq!(scores.len(), 1);
        assert_eq!(scores[0].pool, "a");
        // 0.2 saved, 3/4 of the source cost is pool a's: 0.15 of a cost of 1.0.
        assert!((scores[0].savings_fraction - 0.15).abs() < 1e-12);
        assert!((scores[0].disruption_fraction - 0.3).abs() < 1e-12);
        let alone = score_move(&[&a], 0.2);
        assert!((alone[0].savings_fraction - 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_candidate_that_cannot_pass_even_deleted_is_skipped() {
        // Deleting saves 0.1 of the pool's cost for 0.5 of its disruption: 0.2.
        assert!(!can_pass(&candidate("a", 0.1, 4, Some(POOL))));
        assert!(can_pass(&candidate("a", 0.5, 4, Some(POOL))));
        assert!(can_pass(&candidate("a", 0.1, 4, None)));
    }

    proptest! {
        /// More savings never turns an approval into a rejection, nor does less disruption.
        #[test]
        fn scores_are_monotone(
            savings in 0.0f64..2.0,
            more in 0.0f64..1.0,
            disruption in 0.1f64..20.0,
            less in 0.0f64..0.1,
        ) {
            let base = PoolScore::new("p", savings, disruption, POOL);
            let richer = PoolScore::new("p", savings + more, disruption, POOL);
            let gentler = PoolScore::new("p", savings, disruption - less, POOL);
            prop_assert!(!base.approved() || richer.approved());
            prop_assert!(!base.approved() || gentler.approved());
        }

        /// The delete bound holds: if even deleting a candidate is rejected, every move that
        /// saves less (a replacement) is rejected too.
        #[test]
        fn a_failed_delete_bounds_every_replacement(
            price in 0.01f64..1.0,
            pods in 0u32..20,
            replacement in 0.0f64..1.0,
        ) {
            let c = candidate("a", price, pods, Some(POOL));
            if !can_pass(&c) {
                let scores = score_move(&[&c], price - replacement * price);
                prop_assert!(scores.iter().all(|s| !s.approved()));
            }
        }
    }
}
