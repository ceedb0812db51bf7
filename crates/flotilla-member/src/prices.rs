//! Node prices a user gives the member agent, for the cost properties placements sort on
//! (`kubernetes.azure.com/per-cpu-core-cost`, `…/per-gb-memory-cost`): a table of hourly
//! prices by instance type, region and capacity type, in a file or in a ConfigMap on the
//! member, as YAML (or JSON):
//!
//! ```yaml
//! prices:
//! - instanceType: Standard_D8s_v5
//!   region: eastus          # omit for every region
//!   capacityType: spot      # on-demand (default) or spot
//!   hourly: 0.0768
//! ```
//!
//! [`PriceTable::from_entries`] checks a table (every price finite and not negative, capacity
//! types known, no entry twice) and names the entry at fault. A ConfigMap is followed
//! ([`Followed`]): the agent re-reads it as it changes, and while it is missing or wrong the
//! member reports its other properties and says why cost is missing ([`NoPrices`] for no
//! table at all).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde::Deserialize;

use crate::report::PriceSource;

/// The key of a price ConfigMap that holds the table.
pub const CONFIG_MAP_KEY: &str = "prices.yaml";

/// A price table as written: its entries.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    /// The prices.
    pub prices: Vec<PriceEntry>,
}

/// One hourly price.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceEntry {
    /// The instance type, as nodes carry it in `node.kubernetes.io/instance-type`.
    pub instance_type: String,
    /// The region (`topology.kubernetes.io/region`); none for every region.
    #[serde(default)]
    pub region: Option<String>,
    /// `on-demand` (default) or `spot` (`karpenter.sh/capacity-type`).
    #[serde(default)]
    pub capacity_type: Option<String>,
    /// Price of one node for an hour.
    pub hourly: f64,
}

/// Prices by (instance type, region or `None` for any, capacity type).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<(String, Option<String>, String), f64>,
}

impl PriceTable {
    /// Checks `file` and builds its table, or says which entry is wrong and why.
    pub fn from_file(file: PriceFile) -> Result<PriceTable, String> {
        Self::from_entries(file.prices)
    }

    /// Checks `entries` and builds the table, or says which entry is wrong and why.
    pub fn from_entries(entries: Vec<PriceEntry>) -> Result<PriceTable, String> {
        let mut prices = BTreeMap::new();
        for (i, entry) in entries.into_iter().enumerate() {
            let at = format!("prices[{i}]");
            if entry.instance_type.is_empty() {
                return Err(format!("{at}.instanceType: must not be empty"));
            }
            if !entry.hourly.is_finite() || entry.hourly < 0.0 {
                return Err(format!(
                    "{at}.hourly: {} is not a price (a number, 0 or more)",
                    entry.hourly
                ));
            }
            let capacity = entry.capacity_type.unwrap_or_else(|| "on-demand".into());
            if capacity != "on-demand" && capacity != "spot" {
                return Err(format!(
                    "{at}.capacityType: {capacity:?} is neither \"on-demand\" nor \"spot\""
                ));
            }
            let key = (entry.instance_type, entry.region, capacity);
            if prices.insert(key.clone(), entry.hourly).is_some() {
                let (instance, region, capacity) = key;
                let region = region.as_deref().unwrap_or("every region");
                return Err(format!(
                    "{at}: a second price for {instance} ({capacity}) in {region}"
                ));
            }
        }
        Ok(PriceTable { prices })
    }
}

impl PriceSource for PriceTable {
    /// The region's own price, else the price for every region.
    fn hourly_price(&self, instance_type: &str, region: &str, capacity_type: &str) -> Option<f64> {
        let key = |region: Option<&str>| {
            (
                instance_type.to_string(),
                region.map(str::to_string),
                capacity_type.to_string(),
            )
        };
        self.prices
            .get(&key(Some(region)))
            .or_else(|| self.prices.get(&key(None)))
            .copied()
    }
}

/// No price table: cost properties are left out, saying why.
#[derive(Debug, Clone)]
pub struct NoPrices {
    /// Why there are no prices, and how to give some.
    pub reason: String,
}

impl PriceSource for NoPrices {
    fn hourly_price(&self, _: &str, _: &str, _: &str) -> Option<f64> {
        None
    }

    fn unavailable(&self) -> Option<String> {
        Some(self.reason.clone())
    }
}

/// A price table that changes (a followed ConfigMap): the latest good table, or why there is
/// none.
#[derive(Debug, Clone)]
pub struct Followed(Arc<RwLock<Result<PriceTable, String>>>);

impl Followed {
    /// A followed table with nothing read yet; `why` says what is being waited for.
    pub fn waiting(why: String) -> Followed {
        Followed(Arc::new(RwLock::new(Err(why))))
    }

    /// Replaces the table (or the reason there is none).
    pub fn set(&self, table: Result<PriceTable, String>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = table;
    }
}

impl PriceSource for Followed {
    fn hourly_price(&self, instance_type: &str, region: &str, capacity_type: &str) -> Option<f64> {
        match &*self.0.read().unwrap_or_else(|e| e.into_inner()) {
            Ok(table) => table.hourly_price(instance_type, region, capacity_type),
            Err(_) => None,
        }
    }

    fn unavailable(&self) -> Option<String> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .err()
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        instance: &str,
        region: Option<&str>,
        capacity: Option<&str>,
        hourly: f64,
    ) -> PriceEntry {
        PriceEntry {
            instance_type: instance.into(),
            region: region.map(Into::into),
            capacity_type: capacity.map(Into::into),
            hourly,
        }
    }

    #[test]
    fn a_region_s_own_price_wins_over_the_price_for_every_region() {
        let table = PriceTable::from_entries(vec![
            entry("D8", None, None, 0.4),
            entry("D8", Some("westeurope"), None, 0.5),
            entry("D8", None, Some("spot"), 0.08),
        ])
        .unwrap();
        assert_eq!(table.hourly_price("D8", "eastus", "on-demand"), Some(0.4));
        assert_eq!(
            table.hourly_price("D8", "westeurope", "on-demand"),
            Some(0.5)
        );
        assert_eq!(table.hourly_price("D8", "westeurope", "spot"), Some(0.08));
        assert_eq!(table.hourly_price("D4", "eastus", "on-demand"), None);
        assert_eq!(table.unavailable(), None);
    }

    #[test]
    fn bad_entries_are_named() {
        for (entries, says) in [
            (vec![entry("", None, None, 1.0)], "prices[0].instanceType"),
            (vec![entry("D8", None, None, -1.0)], "prices[0].hourly: -1"),
            (
                vec![entry("D8", None, None, f64::NAN)],
                "prices[0].hourly: NaN",
            ),
            (
                vec![entry("D8", None, Some("reserved"), 1.0)],
                "prices[0].capacityType: \"reserved\"",
            ),
            (
                vec![
                    entry("D8", Some("eastus"), None, 1.0),
                    entry("D8", Some("eastus"), Some("on-demand"), 2.0),
                ],
                "prices[1]: a second price for D8 (on-demand) in eastus",
            ),
        ] {
            let err = PriceTable::from_entries(entries).unwrap_err();
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn the_file_format_refuses_unknown_fields() {
        let ok: PriceFile = serde_json::from_str(
            r#"{"prices": [{"instanceType": "D8", "region": "eastus", "hourly": 0.4}]}"#,
        )
        .unwrap();
        assert_eq!(
            PriceTable::from_file(ok)
                .unwrap()
                .hourly_price("D8", "eastus", "on-demand"),
            Some(0.4)
        );
        let err = serde_json::from_str::<PriceFile>(
            r#"{"prices": [{"instanceType": "D8", "price": 1}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("price"), "{err}");
    }

    #[test]
    fn a_followed_table_says_why_it_has_no_prices_until_it_has_some() {
        let followed = Followed::waiting("ConfigMap fleet-system/prices not found".into());
        assert_eq!(followed.hourly_price("D8", "eastus", "on-demand"), None);
        assert_eq!(
            followed.unavailable().as_deref(),
            Some("ConfigMap fleet-system/prices not found")
        );
        followed.set(PriceTable::from_entries(vec![entry("D8", None, None, 0.4)]));
        assert_eq!(
            followed.hourly_price("D8", "eastus", "on-demand"),
            Some(0.4)
        );
        assert_eq!(followed.unavailable(), None);
        let none = NoPrices {
            reason: "no table".into(),
        };
        assert_eq!(none.unavailable().as_deref(), Some("no table"));
    }
}
