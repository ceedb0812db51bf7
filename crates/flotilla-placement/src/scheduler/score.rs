//! Scores (PickN only): preferred cluster affinity, topology spread and the obsolete-placement
//! preference, compared lexicographically as (topology spread, affinity, obsolete).
//!
//! A preferred term adds its weight to a cluster its label selector matches (every cluster
//! when it has none); a cluster the selector does not match gets nothing from the term. With a
//! property sorter the weight is scaled by where the cluster's value lies between the smallest
//! and largest value: Descending `round((v−min)/(max−min)·w)`, Ascending
//! `round((1−(v−min)/(max−min))·w)`, 0 when min = max or the cluster does not report the
//! property. As in KubeFleet (`preparePluginState` reads every cluster of the cycle state, which
//! holds every member cluster listed), min and max range over **all** member clusters that
//! report the property, not only those that pass the filters or the term's label selector.
//! Weights of 0 are skipped.

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::policy::{PlacementPolicy, PropertySortOrder};

use super::ClusterScore;
use super::labels::LabelMatcher;
use super::property::{Columns, PropertyTable};

/// A cluster's full score. Derived ordering compares the fields in order: topology spread
/// first, then affinity, then the obsolete-placement preference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Score {
    /// Topology spread score.
    pub topology_spread: i32,
    /// Preferred cluster affinity score.
    pub affinity: i32,
    /// 1 when the cluster has an obsolete binding of the placement (picking it again disturbs
    /// least), else 0. Never recorded.
    pub obsolete: i32,
}

impl Score {
    /// The recorded part of the score, as KubeFleet records it (both fields set).
    pub fn recorded(self) -> ClusterScore {
        ClusterScore {
            affinity_score: Some(self.affinity),
            priority_score: Some(self.topology_spread),
        }
    }
}

/// The preferred terms of a policy, compiled once per cycle.
pub(crate) struct Preferences<'p> {
    terms: Vec<PreferredTerm>,
    columns: Columns<'p>,
}

/// One preferred term with a non-zero weight.
struct PreferredTerm {
    weight: i32,
    labels: Option<LabelMatcher>,
    sorter: Option<Sorter>,
}

/// A term's property sorter: its column in the property table and its order.
struct Sorter {
    column: usize,
    order: PropertySortOrder,
}

impl<'p> Preferences<'p> {
    /// Compiles the preferred terms of `policy`.
    pub fn new(policy: &'p PlacementPolicy) -> Self {
        let mut columns = Columns::default();
        let preferred = policy
            .affinity
            .as_ref()
            .and_then(|a| a.cluster_affinity.as_ref())
            .and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_deref()
            })
            .unwrap_or_default();
        let terms = preferred
            .iter()
            .filter(|p| p.weight != 0)
            .map(|p| PreferredTerm {
                weight: p.weight,
                labels: p.preference.label_selector.as_ref().map(LabelMatcher::new),
                sorter: p.preference.property_sorter().map(|s| Sorter {
                    column: columns.column(&s.name),
                    order: s.sort_order,
                }),
            })
            .collect();
        Self { terms, columns }
    }

    /// An empty table of the sorted properties, with room for `clusters` rows.
    pub fn table(&self, clusters: usize) -> PropertyTable {
        PropertyTable::new(&self.columns, clusters)
    }

    /// Adds `cluster`'s row to `table`: call for every cluster, in order.
    pub fn read(&self, table: &mut PropertyTable, cluster: &MemberCluster) {
        table.push(cluster, &self.columns);
    }

    /// The min/max of each term's sorted property over all rows of `table`, by term.
    pub fn ranges(&self, table: &PropertyTable) -> Vec<Option<(i128, i128)>> {
        self.terms
            .iter()
            .map(|t| t.sorter.as_ref().and_then(|s| table.range(s.column)))
            .collect()
    }

    /// The affinity score of cluster number `index`, given the `ranges` of [`Self::ranges`].
    pub fn affinity(
        &self,
        cluster: &MemberCluster,
        index: usize,
        table: &PropertyTable,
        ranges: &[Option<(i128, i128)>],
    ) -> i32 {
        self.terms
            .iter()
            .zip(ranges)
            .filter(|(term, _)| term.labels.as_ref().is_none_or(|l| l.matches(cluster)))
            .map(|(term, range)| match &term.sorter {
                None => term.weight,
                Some(sorter) => match (table.get(index, sorter.column), range) {
                    (Some(value), Some((min, max))) => {
                        interpolate(value, *min, *max, sorter.order, term.weight)
                    }
                    _ => 0,
                },
            })
            .sum()
    }
}

/// The share of `weight` a value earns between `min` and `max`, rounded half away from zero
/// (Go's `math.Round`); 0 when `min == max`.
fn interpolate(value: i128, min: i128, max: i128, order: PropertySortOrder, weight: i32) -> i32 {
    if min == max {
        return 0;
    }
    let ratio = (value - min) as f64 / (max - min) as f64;
    let share = match order {
        PropertySortOrder::Descending => ratio,
        PropertySortOrder::Ascending => 1.0 - ratio,
    };
    (share * f64::from(weight)).round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_compare_topology_first() {
        let s = |topology_spread, affinity, obsolete| Score {
            topology_spread,
            affinity,
            obsolete,
        };
        assert!(s(1, -100, 0) > s(0, 100, 1));
        assert!(s(0, 5, 0) > s(0, 4, 1));
        assert!(s(0, 5, 1) > s(0, 5, 0));
    }

    #[test]
    fn interpolation_rounds_like_go() {
        use PropertySortOrder::{Ascending, Descending};
        assert_eq!(interpolate(15, 10, 20, Descending, 5), 3); // 2.5 rounds up
        assert_eq!(interpolate(15, 10, 20, Descending, -5), -3); // -2.5 rounds down
        assert_eq!(interpolate(15, 10, 20, Ascending, 100), 50);
        assert_eq!(interpolate(7, 7, 7, Descending, 100), 0);
        assert_eq!(interpolate(20, 10, 20, Descending, -100), -100);
    }
}
