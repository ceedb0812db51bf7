//! Node prices from the simulated cloud's catalog, for the member agent's cost properties.

use flotilla_member::PriceSource;
use flotilla_sim::catalog::{self, CapacityType};

/// Prices instance types by the simulated cloud's catalog (Azure-style SKU names).
#[derive(Debug, Clone, Copy, Default)]
pub struct CatalogPrices;

impl PriceSource for CatalogPrices {
    fn hourly_price(&self, instance_type: &str, region: &str, capacity_type: &str) -> Option<f64> {
        let capacity = match capacity_type {
            "spot" => CapacityType::Spot,
            "on-demand" => CapacityType::OnDemand,
            _ => return None,
        };
        catalog::instance_type(instance_type).map(|t| t.price(region, capacity))
    }
}
