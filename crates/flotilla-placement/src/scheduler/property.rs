//! Reading cluster properties as exact quantities, once per cluster and cycle.
//!
//! `resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>` reads
//! `status.resourceUsage.{capacity,allocatable,available}[<resource>]`; every other name reads
//! `status.properties[<name>].value`. Values compare as Kubernetes quantities in exact
//! thousandths ([`parse_milli`]). Each name is resolved once per cycle ([`Property`]), and the
//! properties a policy sorts by are read once per cluster into a [`PropertyTable`].

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::properties::{Capacity, RESOURCE_PREFIX, parse_resource_property};
use flotilla_apimachinery::quantity::parse_milli;

/// One property of one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading<'a> {
    /// The cluster reports the property.
    Value {
        /// The value in thousandths.
        milli: i128,
        /// The value as the cluster reports it.
        text: &'a str,
    },
    /// The cluster does not report the property.
    Missing,
    /// The cluster reports something that is not a quantity.
    NotAQuantity(&'a str),
    /// The name has the resource prefix but no known capacity word or resource.
    UnknownResource,
}

/// Where a property's value lives, worked out once per cycle from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Property<'p> {
    /// A figure of `status.resourceUsage`.
    Resource(Capacity, &'p str),
    /// A name with the resource prefix but no known capacity word or resource.
    UnknownResource,
    /// An entry of `status.properties`.
    Reported(&'p str),
}

impl<'p> Property<'p> {
    /// Where property `name` is read from.
    pub fn parse(name: &'p str) -> Self {
        match parse_resource_property(name) {
            Some((capacity, resource)) => Property::Resource(capacity, resource),
            None if name.starts_with(RESOURCE_PREFIX) => Property::UnknownResource,
            None => Property::Reported(name),
        }
    }

    /// Reads the property of `cluster`.
    pub fn read<'a>(self, cluster: &'a MemberCluster) -> Reading<'a> {
        let status = cluster.status.as_ref();
        let text = match self {
            Property::Resource(capacity, resource) => status
                .and_then(|s| s.resource_usage.as_ref())
                .and_then(|usage| match capacity {
                    Capacity::Total => usage.capacity.as_ref(),
                    Capacity::Allocatable => usage.allocatable.as_ref(),
                    Capacity::Available => usage.available.as_ref(),
                })
                .and_then(|figures| figures.get(resource))
                .map(|q| q.0.as_str()),
            Property::UnknownResource => return Reading::UnknownResource,
            Property::Reported(name) => status
                .and_then(|s| s.properties.as_ref())
                .and_then(|p| p.get(name))
                .map(|v| v.value.as_str()),
        };
        match text {
            None => Reading::Missing,
            Some(text) => match milli(text) {
                Some(milli) => Reading::Value { milli, text },
                None => Reading::NotAQuantity(text),
            },
        }
    }
}

impl Reading<'_> {
    /// The value in thousandths, if the cluster reports a quantity.
    pub fn milli(&self) -> Option<i128> {
        match self {
            Reading::Value { milli, .. } => Some(*milli),
            _ => None,
        }
    }
}

/// [`parse_milli`], without its allocation for the plain decimals clusters usually report
/// (`12`, `0.125`): at most 18 whole digits and 3 fraction digits, which need no rounding.
fn milli(text: &str) -> Option<i128> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || whole.len() > 18
        || fraction.len() > 3
        || !digits(whole)
        || !digits(fraction)
    {
        return parse_milli(text);
    }
    let whole: u64 = whole.parse().ok()?;
    let thousandths = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0, |acc, digit| acc * 10 + i128::from(digit - b'0'));
    Some(i128::from(whole) * 1000 + thousandths)
}

/// The property names a policy sorts by, each given a column of the [`PropertyTable`].
#[derive(Default)]
pub(crate) struct Columns<'p> {
    properties: Vec<(&'p str, Property<'p>)>,
}

impl<'p> Columns<'p> {
    /// The column of `name`, added if new.
    pub fn column(&mut self, name: &'p str) -> usize {
        match self.properties.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                self.properties.push((name, Property::parse(name)));
                self.properties.len() - 1
            }
        }
    }
}

/// Every cluster's values of the sorted properties, parsed once per cycle: one row per
/// cluster, in the order the rows are added; `None` where a cluster reports no quantity.
pub(crate) struct PropertyTable {
    width: usize,
    rows: usize,
    values: Vec<Option<i128>>,
}

impl PropertyTable {
    /// An empty table for `columns`, with room for `rows` clusters.
    pub fn new(columns: &Columns<'_>, rows: usize) -> Self {
        let width = columns.properties.len();
        Self {
            width,
            rows: 0,
            values: Vec::with_capacity(rows * width),
        }
    }

    /// Adds the row of `cluster`, reading `columns`.
    pub fn push(&mut self, cluster: &MemberCluster, columns: &Columns<'_>) {
        self.values.extend(
            columns
                .properties
                .iter()
                .map(|(_, p)| p.read(cluster).milli()),
        );
        self.rows += 1;
    }

    /// Adds the rows of `other`, which reads the same columns, after this table's rows.
    pub fn append(&mut self, other: PropertyTable) {
        self.values.extend(other.values);
        self.rows += other.rows;
    }

    /// Row `row`'s value in `column`.
    pub fn get(&self, row: usize, column: usize) -> Option<i128> {
        self.values[row * self.width + column]
    }

    /// The smallest and largest value in `column` over all rows that hold a quantity; `None`
    /// if none does.
    pub fn range(&self, column: usize) -> Option<(i128, i128)> {
        (0..self.rows)
            .filter_map(|row| self.get(row, column))
            .fold(None, |range, v| match range {
                None => Some((v, v)),
                Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster() -> MemberCluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "m"},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "a", "namespace": "n"}},
            "status": {
                "properties": {
                    "kubernetes-fleet.io/node-count": {"value": "3", "observationTime": "2026-01-01T00:00:00Z"},
                    "example.com/bad": {"value": "lots", "observationTime": "2026-01-01T00:00:00Z"}
                },
                "resourceUsage": {
                    "capacity": {"cpu": "8"},
                    "allocatable": {"cpu": "7800m"},
                    "available": {"cpu": "2500m", "memory": "1Gi"}
                }
            }
        }))
        .unwrap()
    }

    #[test]
    fn reads_properties_and_resource_usage() {
        let c = cluster();
        let read = |name: &str| Property::parse(name).read(&c);
        assert_eq!(
            read("kubernetes-fleet.io/node-count"),
            Reading::Value {
                milli: 3000,
                text: "3"
            }
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/total-cpu").milli(),
            Some(8000)
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/allocatable-cpu").milli(),
            Some(7800)
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/available-cpu").milli(),
            Some(2500)
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/available-memory").milli(),
            Some(1_073_741_824_000)
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/total-memory"),
            Reading::Missing
        );
        assert_eq!(
            read("resources.kubernetes-fleet.io/spare-cpu"),
            Reading::UnknownResource
        );
        assert_eq!(read("example.com/missing"), Reading::Missing);
        assert_eq!(read("example.com/bad"), Reading::NotAQuantity("lots"));
    }

    proptest::proptest! {
        /// The allocation-free path agrees with `parse_milli` on every text.
        #[test]
        fn fast_quantities_agree_with_parse_milli(text in "[0-9]{0,20}(\\.[0-9]{0,5})?[mkMGi]?") {
            proptest::prop_assert_eq!(milli(&text), parse_milli(&text));
        }
    }

    #[test]
    fn fast_quantities_handle_edges() {
        for text in [
            "0",
            "5",
            "5.",
            "0.125",
            "12.5",
            "999999999999999999",
            "1.2345",
            ".5",
            " 5",
            "5m",
            "-1",
        ] {
            assert_eq!(milli(text), parse_milli(text), "{text:?}");
        }
    }

    #[test]
    fn table_shares_columns_and_finds_ranges() {
        let clusters = vec![cluster(), cluster()];
        let mut columns = Columns::default();
        let cpu = columns.column("resources.kubernetes-fleet.io/available-cpu");
        let nodes = columns.column("kubernetes-fleet.io/node-count");
        assert_eq!(
            columns.column("resources.kubernetes-fleet.io/available-cpu"),
            cpu
        );
        let missing = columns.column("example.com/missing");
        let mut table = PropertyTable::new(&columns, clusters.len());
        for c in &clusters {
            table.push(c, &columns);
        }
        assert_eq!(table.get(1, nodes), Some(3000));
        assert_eq!(table.range(cpu), Some((2500, 2500)));
        assert_eq!(table.range(missing), None);
    }
}
