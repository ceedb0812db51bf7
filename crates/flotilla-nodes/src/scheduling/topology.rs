//! Pod topology in the provisioning scheduler, as Karpenter's `Topology` models it: topology
//! spread constraints (`whenUnsatisfiable: DoNotSchedule`) and required pod affinity and
//! anti-affinity, over the hostname, the zone or any node label.
//!
//! For every place a pod could go (an existing node, a claim being planned, a new claim from a
//! pool) the scheduler counts the matching pods per domain of the constraint's key and asks the
//! functions here which domains the pod may take. A claim whose domain is still open (several
//! zones) is narrowed to one: the allowed domain with the fewest matching pods, as Karpenter's
//! `nextDomainTopologySpread` picks it, so spread pods open claims zone by zone. Every new claim
//! is a hostname domain of its own with no pods yet.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_apimachinery::selector::LabelSelector;
use serde_json::{Map, Value};

use super::model::HostPort;

/// The label key whose domains are single nodes.
pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// Which pods a constraint counts: those in `namespaces` whose labels match `selector`.
#[derive(Clone, Debug, PartialEq)]
pub struct PodSelector {
    /// The namespaces counted (a term's `namespaces`, else the pod's own).
    pub namespaces: BTreeSet<String>,
    /// The label selector; none matches no pod (as kube-scheduler reads a missing one).
    pub selector: Option<LabelSelector>,
}

impl PodSelector {
    /// Whether a pod of `namespace` with `labels` is counted.
    pub fn matches(&self, namespace: &str, labels: &Map<String, Value>) -> bool {
        self.namespaces.contains(namespace)
            && self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}

/// A topology spread constraint the scheduler must honour (`DoNotSchedule`).
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// The node label whose values are the domains.
    pub key: String,
    /// The largest allowed difference between a domain's count and the smallest.
    pub max_skew: u32,
    /// The pods counted.
    pub pods: PodSelector,
}

/// A required pod (anti-)affinity term.
#[derive(Clone, Debug, PartialEq)]
pub struct AffinityTerm {
    /// The node label whose values are the domains.
    pub key: String,
    /// The pods it refers to.
    pub pods: PodSelector,
    /// Anti-affinity (no such pod in the domain) rather than affinity (one there already).
    pub anti: bool,
}

/// A pod's topology: its namespace and labels (what other pods' constraints count) and its own
/// constraints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodTopology {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's labels.
    pub labels: Map<String, Value>,
    /// Its `DoNotSchedule` topology spread constraints.
    pub spread: Vec<Spread>,
    /// Its required pod affinity and anti-affinity terms.
    pub affinity: Vec<AffinityTerm>,
}

impl PodTopology {
    /// Whether the pod has constraints (pods without any skip the topology work).
    pub fn constrained(&self) -> bool {
        !self.spread.is_empty() || !self.affinity.is_empty()
    }
}

/// A pod already bound to an existing node, as topology counts it and with the host ports it
/// holds there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundPod {
    /// Its namespace.
    pub namespace: String,
    /// Its labels.
    pub labels: Map<String, Value>,
    /// The ports it holds on the node's host.
    pub host_ports: Vec<HostPort>,
}

/// The domain a spread constraint lets a pod take among `candidates` (the domains the place
/// could be in), given the matching pods per domain and every domain the pod could reach
/// (`eligible`, whose smallest count is the skew's base; 0 for hostnames, as a new node is
/// always possible): the allowed candidate with the fewest pods, then the first by name.
pub fn spread_domain<'e, 'd>(
    counts: &BTreeMap<String, usize>,
    eligible: impl IntoIterator<Item = &'e str>,
    candidates: impl IntoIterator<Item = &'d str>,
    max_skew: u32,
    hostname: bool,
) -> Option<&'d str> {
    let count = |d: &str| counts.get(d).copied().unwrap_or(0);
    let min = if hostname {
        0
    } else {
        eligible.into_iter().map(count).min().unwrap_or(0)
    };
    candidates
        .into_iter()
        .filter(|d| count(d) < min + max_skew as usize)
        .min_by_key(|d| (count(d), *d))
}

/// The candidates an affinity term allows: for anti-affinity those without a matching pod; for
/// affinity those with one, or any when no matching pod runs anywhere and the pod matches its
/// own term (the first of a group, as kube-scheduler allows).
pub fn affinity_domains<'d>(
    counts: &BTreeMap<String, usize>,
    candidates: impl IntoIterator<Item = &'d str>,
    anti: bool,
    self_match: bool,
) -> Vec<&'d str> {
    let present = |d: &str| counts.get(d).is_some_and(|&n| n > 0);
    let none_anywhere = counts.values().all(|&n| n == 0);
    candidates
        .into_iter()
        .filter(|d| {
            if anti {
                !present(d)
            } else {
                present(d) || (none_anywhere && self_match)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(d, n)| (d.to_string(), *n)).collect()
    }

    const ZONES: [&str; 3] = ["z1", "z2", "z3"];

    #[test]
    fn spread_takes_the_emptiest_allowed_domain() {
        // Name, pods per domain, candidates, max skew, the domain wanted.
        type Case<'a> = (
            &'a str,
            &'a [(&'a str, usize)],
            &'a [&'a str],
            u32,
            Option<&'a str>,
        );
        let cases: &[Case] = &[
            ("nothing yet: the first zone", &[], &ZONES, 1, Some("z1")),
            (
                "the emptiest zone",
                &[("z1", 1), ("z2", 1)],
                &ZONES,
                1,
                Some("z3"),
            ),
            ("only z1 on offer, at skew", &[("z1", 1)], &["z1"], 1, None),
            ("skew 2 allows it", &[("z1", 1)], &["z1"], 2, Some("z1")),
            (
                "balanced: any, the first",
                &[("z1", 1), ("z2", 1), ("z3", 1)],
                &ZONES,
                1,
                Some("z1"),
            ),
            (
                "a full zone is skipped",
                &[("z1", 2), ("z2", 1), ("z3", 1)],
                &["z1", "z2"],
                1,
                Some("z2"),
            ),
        ];
        for (name, pairs, candidates, skew, want) in cases {
            let got = spread_domain(
                &counts(pairs),
                ZONES,
                candidates.iter().copied(),
                *skew,
                false,
            );
            assert_eq!(got, *want, "{name}");
        }
    }

    #[test]
    fn hostname_spread_counts_from_zero_because_a_new_node_is_possible() {
        let c = counts(&[("n1", 1), ("n2", 1)]);
        assert_eq!(spread_domain(&c, ["n1", "n2"], ["n1"], 1, true), None);
        assert_eq!(
            spread_domain(&c, ["n1", "n2"], ["new"], 1, true),
            Some("new")
        );
        assert_eq!(spread_domain(&c, ["n1", "n2"], ["n1"], 2, true), Some("n1"));
    }

    #[test]
    fn affinity_needs_a_matching_pod_and_anti_affinity_its_absence() {
        let c = counts(&[("z1", 2)]);
        assert_eq!(affinity_domains(&c, ZONES, true, true), vec!["z2", "z3"]);
        assert_eq!(affinity_domains(&c, ZONES, false, true), vec!["z1"]);
        let empty = counts(&[]);
        assert_eq!(affinity_domains(&empty, ZONES, false, true), ZONES.to_vec());
        assert!(affinity_domains(&empty, ZONES, false, false).is_empty());
    }

    proptest::proptest! {
        /// Placing pods one by one where `spread_domain` says never leaves a skew above the
        /// maximum among the domains.
        #[test]
        fn spread_keeps_the_skew(pods in 1usize..40, skew in 1u32..3, offered in 1usize..4) {
            let mut c = BTreeMap::new();
            let candidates = &ZONES[..offered];
            for _ in 0..pods {
                if let Some(d) = spread_domain(&c, candidates.iter().copied(), candidates.iter().copied(), skew, false) {
                    *c.entry(d.to_string()).or_insert(0) += 1;
                }
            }
            let n = |d: &str| c.get(d).copied().unwrap_or(0);
            let max = candidates.iter().map(|d| n(d)).max().unwrap();
            let min = candidates.iter().map(|d| n(d)).min().unwrap();
            proptest::prop_assert!(max - min <= skew as usize);
            proptest::prop_assert_eq!(c.values().sum::<usize>(), pods);
        }
    }
}
