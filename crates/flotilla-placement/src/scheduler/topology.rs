//! Topology spread constraints (PickN only): KubeFleet's topologyspreadconstraints plugin.
//!
//! For each constraint, the domains are the values of the topology key among all clusters, and
//! a domain's count is the number of its clusters with a Scheduled or Bound binding under the
//! current policy snapshot. Placing one more binding in a domain changes the skew (largest
//! minus smallest count) by +1 when all domains are equal, −1 in the unique least-loaded
//! domain, +1 in a most-loaded domain, and 0 otherwise; it violates the constraint when the
//! skew would exceed `maxSkew`. `DoNotSchedule` violations filter the cluster out;
//! `ScheduleAnyway` violations cost 1000 points; otherwise the score is −(skew change), summed
//! over constraints. Clusters without the topology key are outside the spread (score 0).

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::policy::{TopologySpreadConstraint, UnsatisfiableConstraintAction};

use super::cluster_labels;

/// The score penalty for violating a `ScheduleAnyway` constraint.
const SCHEDULE_ANYWAY_PENALTY: i32 = 1000;

/// Why placing on a cluster would break a `DoNotSchedule` constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Violation<'a> {
    /// The constraint's topology key.
    pub key: &'a str,
    /// The constraint's `maxSkew`.
    pub max_skew: i32,
    /// The cluster's domain (its value of the key).
    pub domain: &'a str,
    /// How many of the placement's clusters the domain already has.
    pub count: usize,
    /// The count of the least-loaded domain.
    pub smallest: usize,
    /// The skew after placing on the cluster.
    pub skew_after: i64,
}

/// The spread verdict on every cluster, by index.
pub(crate) struct Spread<'a> {
    /// The topology spread score of each cluster (empty without constraints).
    scores: Vec<i32>,
    /// The first `DoNotSchedule` constraint each violating cluster would break.
    violations: HashMap<usize, Violation<'a>>,
}

impl<'a> Spread<'a> {
    /// The topology spread score of cluster number `index`.
    pub fn score(&self, index: usize) -> i32 {
        self.scores.get(index).copied().unwrap_or_default()
    }

    /// The `DoNotSchedule` constraint cluster number `index` would break, if any.
    pub fn violation(&self, index: usize) -> Option<Violation<'a>> {
        self.violations.get(&index).copied()
    }
}

/// The smallest, second smallest and largest domain counts of one constraint.
struct Counts<'a> {
    by_domain: HashMap<&'a str, usize>,
    smallest: usize,
    second_smallest: usize,
    largest: usize,
}

impl<'a> Counts<'a> {
    fn of(
        key: &str,
        clusters: &'a [Arc<MemberCluster>],
        active: &impl Fn(&MemberCluster) -> bool,
    ) -> Self {
        let mut by_domain: HashMap<&str, usize> = HashMap::new();
        for cluster in clusters {
            if let Some(domain) = cluster_labels(cluster).get(key) {
                *by_domain.entry(domain.as_str()).or_default() += usize::from(active(cluster));
            }
        }
        let mut sorted: Vec<usize> = by_domain.values().copied().collect();
        sorted.sort_unstable();
        let smallest = sorted.first().copied().unwrap_or_default();
        Self {
            smallest,
            second_smallest: sorted.get(1).copied().unwrap_or(smallest),
            largest: sorted.last().copied().unwrap_or_default(),
            by_domain,
        }
    }

    /// The skew change of one more binding in a domain holding `count`, and whether the new
    /// skew exceeds `max_skew` (KubeFleet's `willViolate`).
    fn place(&self, count: usize, max_skew: i32) -> (i32, bool, i64) {
        let skew = i64::try_from(self.largest - self.smallest).unwrap_or(i64::MAX);
        let change = if self.largest == self.smallest {
            1
        } else if count == self.smallest && self.smallest != self.second_smallest {
            -1
        } else if count == self.largest {
            1
        } else {
            0
        };
        let after = skew + i64::from(change);
        (change, after > i64::from(max_skew), after)
    }
}

/// Evaluates `constraints` for every cluster; `active` says whether a cluster has a Scheduled
/// or Bound binding under the current snapshot.
pub(crate) fn evaluate<'a>(
    constraints: &'a [TopologySpreadConstraint],
    clusters: &'a [Arc<MemberCluster>],
    active: impl Fn(&MemberCluster) -> bool,
) -> Spread<'a> {
    let mut spread = Spread {
        scores: Vec::new(),
        violations: HashMap::new(),
    };
    if constraints.is_empty() {
        return spread;
    }
    spread.scores = vec![0; clusters.len()];
    let action = |c: &TopologySpreadConstraint| c.when_unsatisfiable.unwrap_or_default();
    let do_not_schedule = constraints
        .iter()
        .filter(|c| action(c) == UnsatisfiableConstraintAction::DoNotSchedule);
    let schedule_anyway = constraints
        .iter()
        .filter(|c| action(c) == UnsatisfiableConstraintAction::ScheduleAnyway);
    for constraint in do_not_schedule.chain(schedule_anyway) {
        let key = constraint.topology_key.as_str();
        let max_skew = constraint.max_skew.unwrap_or(1);
        let counts = Counts::of(key, clusters, &active);
        for (i, cluster) in clusters.iter().enumerate() {
            if spread.violations.contains_key(&i) {
                continue;
            }
            let Some(domain) = cluster_labels(cluster).get(key) else {
                continue;
            };
            let count = counts.by_domain[domain.as_str()];
            let (change, violated, skew_after) = counts.place(count, max_skew);
            match (violated, action(constraint)) {
                (false, _) => spread.scores[i] -= change,
                (true, UnsatisfiableConstraintAction::ScheduleAnyway) => {
                    spread.scores[i] -= SCHEDULE_ANYWAY_PENALTY;
                }
                (true, UnsatisfiableConstraintAction::DoNotSchedule) => {
                    let violation = Violation {
                        key,
                        max_skew,
                        domain,
                        count,
                        smallest: counts.smallest,
                        skew_after,
                    };
                    spread.violations.insert(i, violation);
                }
            }
        }
    }
    spread
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(name: &str, zone: Option<&str>) -> MemberCluster {
        let labels = zone.map_or(json!({}), |z| json!({ "zone": z }));
        serde_json::from_value(json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": name, "labels": labels},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "a", "namespace": "n"}}
        }))
        .unwrap()
    }

    fn active_among(names: &[&'static str]) -> impl Fn(&MemberCluster) -> bool {
        let names = names.to_vec();
        move |c| names.contains(&crate::scheduler::cluster_name(c))
    }

    fn constraint(action: UnsatisfiableConstraintAction) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: None,
            topology_key: "zone".into(),
            when_unsatisfiable: Some(action),
        }
    }

    #[test]
    fn skew_changes_follow_kubefleet() {
        // Zones: a has 1 active binding, b has 0, c has 0; one cluster has no zone.
        let clusters = [
            cluster("a1", Some("a")),
            cluster("a2", Some("a")),
            cluster("b1", Some("b")),
            cluster("c1", Some("c")),
            cluster("x", None),
        ]
        .map(Arc::new);
        let active = active_among(&["a1"]);
        let constraints = [constraint(UnsatisfiableConstraintAction::DoNotSchedule)];
        let spread = evaluate(&constraints, &clusters, &active);
        // a is the largest domain: +1 would make skew 2 > 1, a violation.
        assert_eq!(
            spread.violation(1),
            Some(Violation {
                key: "zone",
                max_skew: 1,
                domain: "a",
                count: 1,
                smallest: 0,
                skew_after: 2
            })
        );
        assert!(spread.violation(0).is_some());
        // b and c tie for smallest: no change.
        assert_eq!(spread.score(2), 0);
        assert_eq!(spread.violation(2), None);
        assert_eq!(spread.score(4), 0);

        let anyway = [constraint(UnsatisfiableConstraintAction::ScheduleAnyway)];
        let spread = evaluate(&anyway, &clusters, &active);
        assert_eq!(spread.score(1), -1000);
        assert!((0..clusters.len()).all(|i| spread.violation(i).is_none()));
        let none = evaluate(&[], &clusters, &active);
        assert_eq!((none.score(1), none.violation(1)), (0, None));
    }

    #[test]
    fn unique_smallest_domain_scores_one() {
        let clusters = [
            cluster("a1", Some("a")),
            cluster("b1", Some("b")),
            cluster("b2", Some("b")),
        ]
        .map(Arc::new);
        let constraints = [constraint(UnsatisfiableConstraintAction::DoNotSchedule)];
        let spread = evaluate(&constraints, &clusters, active_among(&["b1"]));
        assert_eq!(spread.score(0), 1);
        assert!(spread.violation(2).is_some());
        // All equal: +1 each, allowed with maxSkew 1.
        let spread = evaluate(&constraints, &clusters, active_among(&[]));
        assert_eq!(
            [spread.score(0), spread.score(1), spread.score(2)],
            [-1, -1, -1]
        );
    }
}
