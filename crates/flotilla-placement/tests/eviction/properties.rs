//! Properties of the budget decision for any placement and bindings: an eviction of a healthy
//! bound binding is executed exactly when the budget allows more than 0 disruptions (never
//! when it allows 0 or fewer), and one more available cluster never turns a yes into a no.

use flotilla_api::placement::ClusterResourceBinding;
use flotilla_placement::eviction::Verdict;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::fixtures::{binding, budget, judge, pick_all, pick_n};

/// A generated budget value: an integer, or a percentage.
#[derive(Clone, Copy, Debug)]
enum Amount {
    Int(i64),
    Percent(i64),
}

impl Amount {
    fn json(self) -> Value {
        match self {
            Amount::Int(i) => json!(i),
            Amount::Percent(p) => json!(format!("{p}%")),
        }
    }

    /// Of `n` clusters, rounded up.
    fn of(self, n: i64) -> i64 {
        match self {
            Amount::Int(i) => i,
            Amount::Percent(p) => (p * n + 99) / 100,
        }
    }
}

fn amount() -> impl Strategy<Value = Amount> {
    prop_oneof![
        (0i64..8).prop_map(Amount::Int),
        (0i64..=100).prop_map(Amount::Percent),
    ]
}

/// Bindings to `m0`, `m1`, …: the target `m0` is healthy and bound (available or not yet);
/// `available[i]` says whether `m{i}` is available.
fn bindings(available: &[bool]) -> Vec<ClusterResourceBinding> {
    available
        .iter()
        .enumerate()
        .map(|(i, up)| {
            let b = binding(&format!("m{i}"));
            if *up { b } else { b.unavailable() }.build()
        })
        .collect()
}

fn executed(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Executed { .. })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pick_n_executes_exactly_when_the_budget_allows_more_than_zero(
        available in prop::collection::vec(any::<bool>(), 1..8),
        n in 0i32..8,
        amount in amount(),
        max in any::<bool>(),
    ) {
        let field = if max { "maxUnavailable" } else { "minAvailable" };
        let spec = budget(json!({ field: amount.json() }));
        let up = available.iter().filter(|a| **a).count() as i64;
        let total = available.len() as i64;
        let allowed = if max {
            amount.of(n.into()) - (total - up)
        } else {
            up - amount.of(n.into())
        };
        let verdict = judge("m0", Some(&pick_n(n)), &bindings(&available), Some(&spec));
        prop_assert_eq!(executed(&verdict), allowed > 0, "{:?}", verdict);
        if let Verdict::Executed { delete_binding, .. } = &verdict {
            prop_assert_eq!(delete_binding.as_deref(), Some("crp-m0"));
        }
    }

    #[test]
    fn pick_all_counts_an_integer_min_available_only(
        available in prop::collection::vec(any::<bool>(), 1..8),
        amount in amount(),
        max in any::<bool>(),
    ) {
        let field = if max { "maxUnavailable" } else { "minAvailable" };
        let spec = budget(json!({ field: amount.json() }));
        let up = available.iter().filter(|a| **a).count() as i64;
        let verdict = judge("m0", Some(&pick_all()), &bindings(&available), Some(&spec));
        let expected = match (max, amount) {
            (false, Amount::Int(min)) => up - min > 0,
            _ => false,
        };
        prop_assert_eq!(executed(&verdict), expected, "{:?}", verdict);
    }

    #[test]
    fn one_more_available_cluster_never_blocks_an_allowed_eviction(
        available in prop::collection::vec(any::<bool>(), 1..8),
        n in 0i32..8,
        amount in amount(),
        max in any::<bool>(),
        flip in any::<prop::sample::Index>(),
    ) {
        let field = if max { "maxUnavailable" } else { "minAvailable" };
        let spec = budget(json!({ field: amount.json() }));
        let crp = pick_n(n);
        let before = judge("m0", Some(&crp), &bindings(&available), Some(&spec));
        let mut better = available.clone();
        better[flip.index(available.len())] = true;
        let after = judge("m0", Some(&crp), &bindings(&better), Some(&spec));
        prop_assert!(!executed(&before) || executed(&after), "{:?} then {:?}", before, after);
    }
}
