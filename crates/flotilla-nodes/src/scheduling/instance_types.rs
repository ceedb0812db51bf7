//! What the cloud can launch: instance types, each with the labels its nodes carry, its
//! capacity, and its offerings (a zone and capacity type at a price), and a generated
//! KWOK-like catalog for simulations and benchmarks.

use std::fmt;

use super::labels;
use super::requirements::{Operator, Requirement, Requirements};
use super::resources::Resources;

/// How an instance is bought.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CapacityType {
    /// Pay as you go; the cloud does not reclaim it.
    OnDemand,
    /// Spare capacity at a discount; the cloud may reclaim it.
    Spot,
}

impl CapacityType {
    /// The value of the `karpenter.sh/capacity-type` label.
    pub fn label(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "on-demand",
            CapacityType::Spot => "spot",
        }
    }

    /// The capacity type a `karpenter.sh/capacity-type` label names.
    pub fn from_label(value: &str) -> Option<Self> {
        match value {
            "on-demand" => Some(CapacityType::OnDemand),
            "spot" => Some(CapacityType::Spot),
            _ => None,
        }
    }
}

impl fmt::Display for CapacityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One way to buy an instance type: in a zone, as a capacity type, at a price.
#[derive(Clone, Debug, PartialEq)]
pub struct Offering {
    /// The zone (`topology.kubernetes.io/zone`).
    pub zone: String,
    /// Spot or on-demand.
    pub capacity_type: CapacityType,
    /// Price per hour.
    pub price: f64,
    /// Whether the cloud can launch it now (not out of capacity).
    pub available: bool,
}

impl Offering {
    /// Whether a node launched from this offering could satisfy `requirements`: its zone and
    /// capacity type are allowed where constrained.
    pub fn compatible(&self, requirements: &Requirements) -> bool {
        requirements
            .get(labels::ZONE)
            .is_none_or(|r| r.has(&self.zone))
            && requirements
                .get(labels::CAPACITY_TYPE)
                .is_none_or(|r| r.has(self.capacity_type.label()))
    }
}

/// An instance type: the labels its nodes carry (as requirements), what it holds, and how it
/// can be bought (Karpenter's `cloudprovider.InstanceType`).
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceType {
    /// The instance type name (`node.kubernetes.io/instance-type`).
    pub name: String,
    /// The labels a node of this type carries, the zone and capacity type spanning every
    /// offering.
    pub requirements: Requirements,
    /// What the machine has.
    pub capacity: Resources,
    /// What the kubelet, the system and eviction thresholds reserve.
    pub overhead: Resources,
    /// How it can be bought.
    pub offerings: Vec<Offering>,
}

impl InstanceType {
    /// An instance type whose requirements are its name, the given single-valued `labels`
    /// (architecture, OS, SKU labels…), and the zones and capacity types of its offerings.
    pub fn new(
        name: &str,
        labels: &[(&str, &str)],
        capacity: Resources,
        overhead: Resources,
        offerings: Vec<Offering>,
    ) -> Self {
        let mut requirements = Requirements::new();
        requirements.add(labels::INSTANCE_TYPE, Requirement::single(name));
        for (key, value) in labels {
            requirements.add(key, Requirement::single(value));
        }
        let zones: Vec<&str> = offerings.iter().map(|o| o.zone.as_str()).collect();
        let capacity_types: Vec<&str> = offerings.iter().map(|o| o.capacity_type.label()).collect();
        for (key, values) in [
            (labels::ZONE, zones),
            (labels::CAPACITY_TYPE, capacity_types),
        ] {
            if let Ok(requirement) = Requirement::new(super::requirements::Operator::In, &values) {
                requirements.add(key, requirement);
            }
        }
        InstanceType {
            name: name.to_string(),
            requirements,
            capacity,
            overhead,
            offerings,
        }
    }

    /// Rules this type out for the NodePools `pools` (a `karpenter.sh/nodepool NotIn`
    /// requirement): what a node class rules out for its pools, such as arm64 types under
    /// artifact streaming, or the standard shape where the class sets its own.
    pub fn exclude_pools<S: AsRef<str>>(&mut self, pools: &[S]) {
        self.pools(Operator::NotIn, pools);
    }

    /// Offers this type to the NodePools `pools` only (`karpenter.sh/nodepool In`): a shape
    /// their node class gives it.
    pub fn only_for_pools<S: AsRef<str>>(&mut self, pools: &[S]) {
        self.pools(Operator::In, pools);
    }

    fn pools<S: AsRef<str>>(&mut self, operator: Operator, pools: &[S]) {
        if let Ok(which) = Requirement::new(operator, pools) {
            self.requirements.add(labels::NODE_POOL, which);
        }
    }

    /// What pods can use: capacity minus overhead.
    pub fn allocatable(&self) -> Resources {
        self.capacity - self.overhead
    }

    /// The available offerings compatible with `requirements`.
    pub fn compatible_offerings<'s, 'r>(
        &'s self,
        requirements: &'r Requirements,
    ) -> impl Iterator<Item = &'s Offering> + use<'s, 'r> {
        self.offerings
            .iter()
            .filter(move |o| o.available && o.compatible(requirements))
    }

    /// Whether a node of this type could satisfy `requirements`: its labels intersect them and
    /// an available offering is compatible (Karpenter's `filterInstanceTypesByRequirements`,
    /// without the resource check).
    pub fn compatible(&self, requirements: &Requirements) -> bool {
        self.requirements.intersects(requirements).is_ok()
            && self.compatible_offerings(requirements).next().is_some()
    }

    /// The cheapest available offering compatible with `requirements`: what a launch picks.
    pub fn cheapest_offering(&self, requirements: &Requirements) -> Option<&Offering> {
        self.compatible_offerings(requirements)
            .min_by(|a, b| a.price.total_cmp(&b.price))
    }

    /// The most a launch under `requirements` could cost (Karpenter's `WorstLaunchPrice`): the
    /// most expensive compatible available offering of the first non-empty tier of spot, then
    /// on-demand (there is no reserved capacity here); `None` if nothing is compatible.
    pub fn worst_launch_price(&self, requirements: &Requirements) -> Option<f64> {
        [CapacityType::Spot, CapacityType::OnDemand]
            .into_iter()
            .find_map(|tier| {
                self.compatible_offerings(requirements)
                    .filter(|o| o.capacity_type == tier)
                    .map(|o| o.price)
                    .max_by(f64::total_cmp)
            })
    }
}

/// A pool's `minValues` that a set of instance-type options falls short of.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("minValues of {min_values} for {key:?} not met: the options span {found} values")]
pub struct MinValuesShortfall {
    /// The label key.
    pub key: String,
    /// How many distinct values the pool asks for.
    pub min_values: u32,
    /// How many the options span.
    pub found: usize,
}

/// The first `minValues` in `requirements` that `options` do not meet: for each key with
/// `minValues`, the options' labels must span that many distinct values (Karpenter's
/// `SatisfiesMinValues`).
pub fn unmet_min_values<'a>(
    requirements: &Requirements,
    options: impl Iterator<Item = &'a InstanceType> + Clone,
) -> Option<MinValuesShortfall> {
    requirements.iter().find_map(|(key, requirement)| {
        let min_values = requirement.min_values()?;
        let values: std::collections::BTreeSet<&str> = options
            .clone()
            .filter_map(|it| it.requirements.get(key)?.values())
            .flatten()
            .map(String::as_str)
            .collect();
        (values.len() < min_values as usize).then(|| MinValuesShortfall {
            key: key.to_string(),
            min_values,
            found: values.len(),
        })
    })
}

/// The zones of the KWOK provider's simulated cloud.
pub const KWOK_ZONES: [&str; 4] = ["test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"];

/// The vCPU sizes of the KWOK provider's instance types.
const KWOK_CPUS: [i64; 12] = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256];
/// GiB of memory per vCPU, and the Azure-like family letter each ratio stands for.
const KWOK_MEMORY_RATIOS: [(i64, &str); 3] = [(2, "F"), (4, "D"), (8, "E")];
const KWOK_OSES: [&str; 2] = ["linux", "windows"];
const KWOK_ARCHES: [&str; 2] = ["amd64", "arm64"];
/// How much dearer each generation is than the one before (older hardware, as clouds price it).
const GENERATION_PRICE_STEP: f64 = 0.1;
/// Spot price as a share of on-demand.
const SPOT_DISCOUNT: f64 = 0.7;

/// A catalog of `count` instance types modelled on Karpenter's KWOK provider
/// (`kwok/tools/gen_instance_types.go`): the first 144 are its grid, vCPU
/// {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256} × GiB per vCPU {2, 4, 8} × {linux, windows}
/// × {amd64, arm64}, with `min(16·vCPU, 1024)` pods, no overhead, and an on-demand price of
/// `0.025·vCPU + 0.001·GB`. Past 144 the grid repeats as further generations (`-g1`, `-g2`…),
/// each 10% dearer than the one before, so that 400 types (Karpenter's benchmark size) are the
/// first two generations and most of a third. Every type is offered on-demand and spot
/// (0.7 × on-demand) in each of [`KWOK_ZONES`].
pub fn kwok_catalog(count: usize) -> Vec<InstanceType> {
    let grid = KWOK_ARCHES.iter().flat_map(|arch| {
        KWOK_OSES.iter().flat_map(move |os| {
            KWOK_CPUS.iter().flat_map(move |cpu| {
                KWOK_MEMORY_RATIOS
                    .iter()
                    .map(move |(ratio, family)| (*arch, *os, *cpu, cpu * ratio, *family))
            })
        })
    });
    let grid: Vec<_> = grid.collect();
    (0..count)
        .map(|i| {
            let generation = i / grid.len();
            let (arch, os, cpu, memory_gib, family) = grid[i % grid.len()];
            kwok_instance_type(generation, arch, os, cpu, memory_gib, family)
        })
        .collect()
}

fn kwok_instance_type(
    generation: usize,
    arch: &str,
    os: &str,
    cpu: i64,
    memory_gib: i64,
    family: &str,
) -> InstanceType {
    const GIB: i64 = 1 << 30;
    let name = format!("kwok-{family}{cpu}-{memory_gib}gi-{arch}-{os}-g{generation}");
    let memory_bytes = memory_gib * GIB;
    let base_price = 0.025 * cpu as f64 + 0.001 * memory_bytes as f64 / 1e9;
    let on_demand = base_price * (1.0 + GENERATION_PRICE_STEP * generation as f64);
    let offerings = KWOK_ZONES
        .iter()
        .flat_map(|zone| {
            [
                (CapacityType::OnDemand, on_demand),
                (CapacityType::Spot, on_demand * SPOT_DISCOUNT),
            ]
            .map(|(capacity_type, price)| Offering {
                zone: zone.to_string(),
                capacity_type,
                price,
                available: true,
            })
        })
        .collect();
    let cpu_label = cpu.to_string();
    let memory_mib = (memory_gib * 1024).to_string();
    let version = generation.to_string();
    InstanceType::new(
        &name,
        &[
            (labels::ARCH, arch),
            (labels::OS, os),
            (labels::SKU_FAMILY, family),
            (labels::SKU_CPU, &cpu_label),
            (labels::SKU_MEMORY, &memory_mib),
            (labels::SKU_VERSION, &version),
        ],
        Resources::new(cpu * 1000, memory_bytes, (16 * cpu).min(1024), 0),
        Resources::ZERO,
        offerings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::requirements::Operator;

    fn requirements(items: &[(&str, Operator, &[&str])]) -> Requirements {
        let mut r = Requirements::new();
        for (key, op, values) in items {
            r.add(key, Requirement::new(*op, values).unwrap());
        }
        r
    }

    #[test]
    fn the_catalog_starts_with_the_kwok_grid_and_is_deterministic() {
        let catalog = kwok_catalog(400);
        assert_eq!(catalog.len(), 400);
        assert_eq!(catalog, kwok_catalog(400));
        let names: std::collections::BTreeSet<_> = catalog.iter().map(|t| &t.name).collect();
        assert_eq!(names.len(), 400);
        let first = &catalog[0];
        assert_eq!(first.name, "kwok-F1-2gi-amd64-linux-g0");
        assert_eq!(first.capacity, Resources::new(1000, 2 << 30, 16, 0));
        assert_eq!(first.offerings.len(), 8);
        let second_generation = &catalog[144];
        assert_eq!(second_generation.name, "kwok-F1-2gi-amd64-linux-g1");
        let price = |t: &InstanceType| t.cheapest_offering(&Requirements::new()).unwrap().price;
        assert!((price(second_generation) / price(first) - 1.1).abs() < 1e-9);
    }

    #[test]
    fn cheapest_offering_and_worst_launch_price_follow_the_requirements() {
        let it = &kwok_catalog(1)[0];
        let on_demand = 0.025 + 0.001 * (2u64 << 30) as f64 / 1e9;
        let any = Requirements::new();
        assert!((it.cheapest_offering(&any).unwrap().price - on_demand * 0.7).abs() < 1e-12);
        // Spot is the first non-empty tier, so the worst launch is a spot one.
        assert!((it.worst_launch_price(&any).unwrap() - on_demand * 0.7).abs() < 1e-12);
        let od = requirements(&[(labels::CAPACITY_TYPE, Operator::In, &["on-demand"])]);
        assert!((it.worst_launch_price(&od).unwrap() - on_demand).abs() < 1e-12);
        let nowhere = requirements(&[(labels::ZONE, Operator::In, &["elsewhere"])]);
        assert_eq!(it.cheapest_offering(&nowhere), None);
        assert_eq!(it.worst_launch_price(&nowhere), None);
        assert!(!it.compatible(&nowhere));
    }

    #[test]
    fn unavailable_offerings_do_not_count() {
        let mut it = kwok_catalog(1).remove(0);
        for offering in &mut it.offerings {
            offering.available = offering.zone == "test-zone-b";
        }
        let zone_a = requirements(&[(labels::ZONE, Operator::In, &["test-zone-a"])]);
        assert!(!it.compatible(&zone_a));
        assert_eq!(
            it.cheapest_offering(&Requirements::new()).unwrap().zone,
            "test-zone-b"
        );
    }

    #[test]
    fn min_values_count_distinct_option_labels() {
        let catalog = kwok_catalog(6);
        let mut wants = Requirements::new();
        wants.add(
            labels::SKU_FAMILY,
            Requirement::new(Operator::Exists, &[] as &[&str])
                .unwrap()
                .with_min_values(3),
        );
        assert_eq!(unmet_min_values(&wants, catalog.iter()), None);
        assert_eq!(
            unmet_min_values(&wants, catalog.iter().take(2)),
            Some(MinValuesShortfall {
                key: labels::SKU_FAMILY.into(),
                min_values: 3,
                found: 2
            })
        );
    }

    #[test]
    fn compatible_checks_labels() {
        let it = &kwok_catalog(1)[0];
        let arm = requirements(&[(labels::ARCH, Operator::In, &["arm64"])]);
        assert!(!it.compatible(&arm));
        let big = requirements(&[(labels::SKU_CPU, Operator::Gt, &["4"])]);
        assert!(!it.compatible(&big));
        let custom = requirements(&[("team", Operator::In, &["a"])]);
        assert!(
            it.compatible(&custom),
            "instance types say nothing about custom labels"
        );
    }
}
