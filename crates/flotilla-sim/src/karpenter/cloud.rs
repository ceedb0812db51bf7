//! The simulated Azure cloud Karpenter launches from: the member's instance-type catalog as the
//! scheduler sees it (every type offered on-demand and spot in each of the region's zones, at
//! the region's price), the launch of a claim on its cheapest compatible offering, and the
//! machine that launch boots into.

use std::collections::BTreeMap;

use flotilla_api::nodes::{NODEPOOL_LABEL, NodeClaim};
use flotilla_nodes::scheduling::from_api;
use flotilla_nodes::scheduling::labels;
use flotilla_nodes::scheduling::{CapacityType, InstanceType, Offering, Requirements, Resources};

use crate::catalog::{self, CapacityType as CatalogCapacity};

/// The Azure VM size version of every catalog type (`_v5`).
const SKU_VERSION: &str = "5";

/// The scheduler's view of the catalog in `region`.
pub fn instance_types(region: &str) -> Vec<InstanceType> {
    catalog::instance_types()
        .iter()
        .map(|it| offered(region, it))
        .collect()
}

/// The same for nodes whose kubelet runs at most `max_pods` pods (an AKSNodeClass's
/// `maxPods`): that many pods per node, and the memory the kubelet reserves for them.
pub fn instance_types_with_max_pods(region: &str, max_pods: u32) -> Vec<InstanceType> {
    catalog::instance_types()
        .into_iter()
        .map(|mut it| {
            it.pods = max_pods;
            offered(region, &it)
        })
        .collect()
}

/// Catalog type `it` as offered in `region`: on-demand and spot in each of its zones.
fn offered(region: &str, it: &catalog::InstanceType) -> InstanceType {
    let zones = catalog::zones(region);
    let offerings = zones
        .iter()
        .flat_map(|zone| {
            [
                (CapacityType::OnDemand, CatalogCapacity::OnDemand),
                (CapacityType::Spot, CatalogCapacity::Spot),
            ]
            .map(|(capacity_type, priced)| Offering {
                zone: zone.clone(),
                capacity_type,
                price: it.price(region, priced),
                available: true,
            })
        })
        .collect();
    let family = it.name.trim_start_matches("Standard_")[..1].to_string();
    let cpu = it.vcpu.to_string();
    let memory_mib = (u64::from(it.memory_gib) * 1024).to_string();
    let capacity = Resources::new(
        i64::from(it.vcpu) * 1000,
        i64::try_from(it.memory_bytes()).unwrap_or(i64::MAX),
        i64::from(it.pods),
        0,
    );
    let allocatable = Resources::new(
        i64::try_from(it.allocatable_millicpu()).unwrap_or(0),
        i64::try_from(it.allocatable_memory_bytes()).unwrap_or(0),
        i64::from(it.pods),
        0,
    );
    InstanceType::new(
        &it.name,
        &[
            (labels::ARCH, it.arch.label()),
            (labels::OS, "linux"),
            (labels::REGION, region),
            (labels::SKU_NAME, &it.name),
            (labels::SKU_FAMILY, &family),
            (labels::SKU_CPU, &cpu),
            (labels::SKU_MEMORY, &memory_mib),
            (labels::SKU_VERSION, SKU_VERSION),
        ],
        capacity,
        capacity - allocatable,
        offerings,
    )
}

/// What a claim launched as: its instance type and the offering bought.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch<'c> {
    /// The instance type.
    pub instance_type: &'c InstanceType,
    /// The offering (zone, capacity type, price).
    pub offering: &'c Offering,
}

impl Launch<'_> {
    /// The labels the claim and its node carry for this launch: the instance type's
    /// single-valued labels, the zone and capacity type bought, and the pool's.
    pub fn labels(&self, claim: &NodeClaim) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .instance_type
            .requirements
            .iter()
            .filter_map(|(key, requirement)| {
                let mut values = requirement.values()?.iter();
                match (values.next(), values.next()) {
                    (Some(only), None) => Some((key.to_string(), only.clone())),
                    _ => None,
                }
            })
            .collect();
        out.insert(labels::ZONE.into(), self.offering.zone.clone());
        out.insert(
            labels::CAPACITY_TYPE.into(),
            self.offering.capacity_type.label().into(),
        );
        if let Some(pool) = claim
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(NODEPOOL_LABEL))
        {
            out.insert(NODEPOOL_LABEL.into(), pool.clone());
        }
        out
    }
}

/// Launches `claim`: the cheapest available offering, over every catalog type its
/// requirements allow, that its requirements allow; or why nothing can launch.
pub fn launch<'c>(claim: &NodeClaim, catalog: &'c [InstanceType]) -> Result<Launch<'c>, String> {
    let requirements: Requirements = from_api::requirements(&claim.spec.requirements)
        .map_err(|e| format!("the claim's requirements do not parse: {e}"))?;
    let requested = claim
        .spec
        .resources
        .as_ref()
        .map(|r| flotilla_nodes::scheduling::from_k8s::resources_from_list(&r.requests))
        .transpose()
        .map_err(|e| e.to_string())?
        .unwrap_or(Resources::ZERO);
    catalog
        .iter()
        .filter(|it| it.requirements.intersects(&requirements).is_ok())
        .filter(|it| requested.fits(&it.allocatable()))
        .filter_map(|it| {
            it.cheapest_offering(&requirements)
                .map(|offering| Launch {
                    instance_type: it,
                    offering,
                })
        })
        .min_by(|a, b| {
            a.offering
                .price
                .total_cmp(&b.offering.price)
                .then_with(|| a.instance_type.name.cmp(&b.instance_type.name))
        })
        .ok_or_else(|| {
            "InsufficientCapacity: no instance type offered in this region satisfies the claim's requirements and requests".to_string()
        })
}

/// The catalog entry (for building its node) of an instance type name.
pub fn catalog_entry(name: &str) -> Option<catalog::InstanceType> {
    catalog::instance_type(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::nodes::{
        NodeClaimSpec, NodeSelectorRequirementWithMinValues, RequirementOperator,
    };

    fn claim(requirements: &[(&str, RequirementOperator, &[&str])]) -> NodeClaim {
        NodeClaim::new(
            "c",
            NodeClaimSpec {
                requirements: requirements
                    .iter()
                    .map(|(k, op, v)| NodeSelectorRequirementWithMinValues {
                        key: k.to_string(),
                        operator: *op,
                        values: v.iter().map(|s| s.to_string()).collect(),
                        min_values: None,
                    })
                    .collect(),
                ..Default::default()
            },
        )
    }

    #[test]
    fn the_catalog_offers_every_type_in_three_zones_both_ways() {
        let types = instance_types("westeurope");
        assert_eq!(types.len(), catalog::instance_types().len());
        let d4 = types.iter().find(|t| t.name == "Standard_D4s_v5").unwrap();
        assert_eq!(d4.offerings.len(), 6);
        assert!(d4.allocatable().cpu_millis < 4000);
        assert!(d4.requirements.get(labels::SKU_FAMILY).unwrap().has("D"));
    }

    #[test]
    fn a_launch_takes_the_cheapest_offering_the_claim_allows() {
        let types = instance_types("eastus");
        let on_demand_d = claim(&[
            (
                labels::CAPACITY_TYPE,
                RequirementOperator::In,
                &["on-demand"],
            ),
            (labels::SKU_FAMILY, RequirementOperator::In, &["D"]),
            (labels::ARCH, RequirementOperator::In, &["amd64"]),
        ]);
        let launch = launch(&on_demand_d, &types).unwrap();
        assert_eq!(launch.instance_type.name, "Standard_D1s_v5");
        assert_eq!(launch.offering.capacity_type, CapacityType::OnDemand);
        let labels = launch.labels(&on_demand_d);
        assert_eq!(labels[labels::INSTANCE_TYPE], "Standard_D1s_v5");
        assert_eq!(labels[labels::CAPACITY_TYPE], "on-demand");
        let nowhere = claim(&[(labels::ZONE, RequirementOperator::In, &["mars-1"])]);
        assert!(
            super::launch(&nowhere, &types)
                .unwrap_err()
                .contains("InsufficientCapacity")
        );
    }
}
