//! The simulated cloud's instance types, zones and prices.
//!
//! Modelled on Karpenter's KWOK provider (`reference/karpenter.md` §9): sizes of
//! {1, 2, 4, 8, 16, 32, 48, 64, 96} vCPU × {2, 4, 8} GiB per vCPU × {amd64, arm64}; pods =
//! min(16·vCPU, 1024) capped at AKS's 250; price per hour = 0.025·vCPU + 0.001·GB (10^9 bytes);
//! spot = 0.7 × on-demand. Names follow Azure's VM SKU pattern so fleet files read naturally:
//! family `F` (2 GiB/vCPU, compute), `D` (4 GiB/vCPU, general) and `E` (8 GiB/vCPU, memory),
//! `p` marks arm64: `Standard_D4s_v5` is 4 vCPU / 16 GiB amd64, `Standard_E8ps_v5` is
//! 8 vCPU / 64 GiB arm64. Every type is offered in every zone of every region (`<region>-1`
//! to `<region>-3`, as AKS names zones), with a regional price multiplier.

use std::fmt;

/// vCPU sizes offered in every family.
const SIZES: &[u32] = &[1, 2, 4, 8, 16, 32, 48, 64, 96];

/// Families: SKU letter and GiB of memory per vCPU.
const FAMILIES: &[(char, u32)] = &[('F', 2), ('D', 4), ('E', 8)];

/// Most pods a node may run (AKS's maximum `maxPods`).
const MAX_PODS: u32 = 250;

/// Spot instances cost this fraction of on-demand.
const SPOT_DISCOUNT: f64 = 0.7;

/// Regional price multipliers; regions not listed cost the base price.
const REGION_PRICE: &[(&str, f64)] = &[
    ("eastus", 1.0),
    ("eastus2", 1.0),
    ("westus", 1.08),
    ("westus2", 1.0),
    ("centralus", 1.04),
    ("northeurope", 1.1),
    ("westeurope", 1.15),
    ("uksouth", 1.16),
    ("japaneast", 1.2),
    ("southeastasia", 1.12),
];

/// CPU architecture of an instance type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// x86-64.
    Amd64,
    /// 64-bit ARM.
    Arm64,
}

impl Arch {
    /// The `kubernetes.io/arch` label value.
    pub fn label(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }
}

/// How an instance is bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapacityType {
    /// Pay as you go.
    OnDemand,
    /// Cheaper, may be reclaimed.
    Spot,
}

impl CapacityType {
    /// The `karpenter.sh/capacity-type` label value.
    pub fn label(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "on-demand",
            CapacityType::Spot => "spot",
        }
    }
}

/// One instance type of the simulated cloud.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceType {
    /// SKU name, e.g. `Standard_D4s_v5`.
    pub name: String,
    /// Virtual CPUs.
    pub vcpu: u32,
    /// Memory in GiB.
    pub memory_gib: u32,
    /// Most pods a node of this type runs.
    pub pods: u32,
    /// CPU architecture.
    pub arch: Arch,
}

impl InstanceType {
    /// Memory in bytes.
    pub fn memory_bytes(&self) -> u64 {
        u64::from(self.memory_gib) << 30
    }

    /// On-demand price per hour in the base region (KWOK's formula).
    pub fn base_price(&self) -> f64 {
        0.025 * f64::from(self.vcpu) + 0.001 * (self.memory_bytes() as f64 / 1e9)
    }

    /// Price per hour in `region` for `capacity`.
    pub fn price(&self, region: &str, capacity: CapacityType) -> f64 {
        let regional = self.base_price() * region_multiplier(region);
        match capacity {
            CapacityType::OnDemand => regional,
            CapacityType::Spot => regional * SPOT_DISCOUNT,
        }
    }

    /// Allocatable CPU in millicores: capacity minus kube-reserved (6% of the first core,
    /// 1% of the second, 0.5% of the next two, 0.25% of the rest, as AKS and Karpenter reserve).
    pub fn allocatable_millicpu(&self) -> u64 {
        let cores = u64::from(self.vcpu) * 1000;
        let reserved = reserve_cpu_millis(self.vcpu);
        cores.saturating_sub(reserved)
    }

    /// Allocatable memory in bytes: capacity minus kube-reserved (11 MiB per pod + 255 MiB)
    /// minus the 100 MiB eviction threshold.
    pub fn allocatable_memory_bytes(&self) -> u64 {
        let reserved = (11 * u64::from(self.pods) + 255 + 100) << 20;
        self.memory_bytes().saturating_sub(reserved)
    }
}

impl fmt::Display for InstanceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} vCPU, {} GiB, {})",
            self.name,
            self.vcpu,
            self.memory_gib,
            self.arch.label()
        )
    }
}

/// Millicores kube-reserved on a node of `vcpu` cores (2.5m per core beyond the fourth is
/// rounded down to 2m).
fn reserve_cpu_millis(vcpu: u32) -> u64 {
    (0..vcpu)
        .map(|core| match core {
            0 => 60,
            1 => 10,
            2 | 3 => 5,
            _ => 2,
        })
        .sum()
}

/// The regional price multiplier of `region` (1.0 where the catalog has no entry).
pub fn region_multiplier(region: &str) -> f64 {
    REGION_PRICE
        .iter()
        .find(|(r, _)| *r == region)
        .map_or(1.0, |(_, m)| *m)
}

/// The zones of a region, as AKS names availability zones.
pub fn zones(region: &str) -> [String; 3] {
    [1, 2, 3].map(|n| format!("{region}-{n}"))
}

/// Every instance type of the catalog, smallest first within each family.
pub fn instance_types() -> Vec<InstanceType> {
    let mut out = Vec::with_capacity(FAMILIES.len() * SIZES.len() * 2);
    for &(family, per_cpu) in FAMILIES {
        for &vcpu in SIZES {
            for arch in [Arch::Amd64, Arch::Arm64] {
                let arm = if arch == Arch::Arm64 { "p" } else { "" };
                out.push(InstanceType {
                    name: format!("Standard_{family}{vcpu}{arm}s_v5"),
                    vcpu,
                    memory_gib: vcpu * per_cpu,
                    pods: (16 * vcpu).min(1024).min(MAX_PODS),
                    arch,
                });
            }
        }
    }
    out
}

/// The instance type named `name`, if the catalog has it.
pub fn instance_type(name: &str) -> Option<InstanceType> {
    instance_types().into_iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decode_to_their_shape() {
        let d4 = instance_type("Standard_D4s_v5").unwrap();
        assert_eq!((d4.vcpu, d4.memory_gib, d4.arch), (4, 16, Arch::Amd64));
        let e8 = instance_type("Standard_E8ps_v5").unwrap();
        assert_eq!((e8.vcpu, e8.memory_gib, e8.arch), (8, 64, Arch::Arm64));
        assert_eq!(instance_type("Standard_F2s_v5").unwrap().pods, 32);
        assert_eq!(instance_type("Standard_D96s_v5").unwrap().pods, 250);
        assert!(instance_type("Standard_D3s_v5").is_none());
    }

    #[test]
    fn prices_follow_kwok_and_region() {
        let d4 = instance_type("Standard_D4s_v5").unwrap();
        // 0.025·4 + 0.001·(16 GiB in GB).
        let expected = 0.1 + 0.001 * (16.0 * 1_073_741_824.0 / 1e9);
        assert!((d4.base_price() - expected).abs() < 1e-12);
        assert!((d4.price("eastus", CapacityType::Spot) - expected * 0.7).abs() < 1e-12);
        assert!(d4.price("westeurope", CapacityType::OnDemand) > d4.base_price());
        assert_eq!(region_multiplier("mars-1"), 1.0);
    }

    #[test]
    fn allocatable_is_less_than_capacity_and_positive() {
        for t in instance_types() {
            assert!(t.allocatable_millicpu() < u64::from(t.vcpu) * 1000, "{t}");
            assert!(t.allocatable_millicpu() > 0, "{t}");
            assert!(t.allocatable_memory_bytes() < t.memory_bytes(), "{t}");
            assert!(t.allocatable_memory_bytes() > 0, "{t}");
        }
        let d4 = instance_type("Standard_D4s_v5").unwrap();
        assert_eq!(d4.allocatable_millicpu(), 4000 - 80);
    }

    #[test]
    fn names_are_unique() {
        let all = instance_types();
        let mut names: Vec<_> = all.iter().map(|t| t.name.clone()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert_eq!(zones("eastus")[2], "eastus-3");
    }
}
