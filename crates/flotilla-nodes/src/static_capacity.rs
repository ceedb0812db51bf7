//! Static NodePools (`spec.replicas`, Karpenter's static capacity): the pool keeps exactly that
//! many nodes whatever the pods ask for. Below the count it launches claims from its template,
//! within `limits.nodes`; above it, it removes the surplus: claims not launched yet first, then
//! empty nodes, then the nodes whose pods cost least to move (fewest pods), as Karpenter's
//! static deprovisioning picks them. Consolidation leaves static pools alone.

/// One of a static pool's claims, as the decision sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticClaim {
    /// The claim's name.
    pub name: String,
    /// Whether the cloud has launched it (it has a provider ID).
    pub launched: bool,
    /// The workload pods on its node.
    pub pods: usize,
}

/// What a static pool does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaticDecision {
    /// The pool has its count (or cannot grow: `limits.nodes`).
    Hold,
    /// Launch this many claims from the template.
    Launch(u64),
    /// Delete these claims, in order.
    Remove(Vec<String>),
}

/// The decision for a pool of `replicas` nodes at most `node_limit` (`limits.nodes`), whose
/// claims not being deleted are `claims`.
pub fn decide(replicas: u64, node_limit: Option<u64>, claims: &[StaticClaim]) -> StaticDecision {
    let running = claims.len() as u64;
    if running < replicas {
        let room = node_limit.map_or(u64::MAX, |limit| limit.saturating_sub(running));
        return match (replicas - running).min(room) {
            0 => StaticDecision::Hold,
            n => StaticDecision::Launch(n),
        };
    }
    if running == replicas {
        return StaticDecision::Hold;
    }
    let mut order: Vec<&StaticClaim> = claims.iter().collect();
    order.sort_by(|a, b| (a.launched, a.pods, &a.name).cmp(&(b.launched, b.pods, &b.name)));
    let surplus = usize::try_from(running - replicas).unwrap_or(usize::MAX);
    StaticDecision::Remove(
        order
            .into_iter()
            .take(surplus)
            .map(|c| c.name.clone())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(name: &str, launched: bool, pods: usize) -> StaticClaim {
        StaticClaim {
            name: name.into(),
            launched,
            pods,
        }
    }

    #[test]
    fn a_static_pool_keeps_its_count() {
        let three = [
            claim("a", true, 3),
            claim("b", true, 0),
            claim("c", false, 0),
        ];
        // Name, replicas, limits.nodes, the claims, the decision wanted.
        type Case<'a> = (&'a str, u64, Option<u64>, &'a [StaticClaim], StaticDecision);
        let cases: &[Case] = &[
            ("none yet", 2, None, &[], StaticDecision::Launch(2)),
            ("at its count", 3, None, &three, StaticDecision::Hold),
            ("one short", 4, None, &three, StaticDecision::Launch(1)),
            (
                "the node limit caps it",
                6,
                Some(4),
                &three,
                StaticDecision::Launch(1),
            ),
            (
                "the node limit is reached",
                6,
                Some(3),
                &three,
                StaticDecision::Hold,
            ),
            (
                "unlaunched first, then empty",
                1,
                None,
                &three,
                StaticDecision::Remove(vec!["c".into(), "b".into()]),
            ),
            (
                "scaled to zero",
                0,
                None,
                &three,
                StaticDecision::Remove(vec!["c".into(), "b".into(), "a".into()]),
            ),
        ];
        for (name, replicas, limit, claims, want) in cases {
            assert_eq!(decide(*replicas, *limit, claims), *want, "{name}");
        }
    }

    proptest::proptest! {
        /// Whatever the claims, the decision leaves the pool at its count, or as close as the
        /// node limit allows, and removes only claims it has.
        #[test]
        fn lands_on_the_count(replicas in 0u64..8, limit in proptest::option::of(0u64..8),
                              shape in proptest::collection::vec((proptest::bool::ANY, 0usize..4), 0..8)) {
            let claims: Vec<StaticClaim> = shape
                .iter()
                .enumerate()
                .map(|(i, (launched, pods))| claim(&format!("c{i}"), *launched, *pods))
                .collect();
            let running = claims.len() as u64;
            let after = match decide(replicas, limit, &claims) {
                StaticDecision::Hold => running,
                StaticDecision::Launch(n) => running + n,
                StaticDecision::Remove(names) => {
                    proptest::prop_assert!(names.iter().all(|n| claims.iter().any(|c| &c.name == n)));
                    running - names.len() as u64
                }
            };
            let target = if running > replicas { replicas } else { replicas.min(limit.unwrap_or(u64::MAX).max(running)) };
            proptest::prop_assert_eq!(after, target);
        }
    }
}
