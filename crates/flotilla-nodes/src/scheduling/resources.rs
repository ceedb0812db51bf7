//! The resources the scheduler packs: CPU, memory, pod slots and ephemeral storage, as plain
//! integers so that adding, subtracting and comparing them is exact and cheap.

use std::ops::{Add, AddAssign, Sub, SubAssign};

/// An amount of each resource the scheduler packs: what a pod requests, what a node or
/// instance type offers, or what a pool may still launch.
///
/// Signed, so that a remaining amount can go below zero without wrapping; kept `Copy` because
/// the scheduler adds and compares these on every placement attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    /// CPU in millicores (`250m` → 250).
    pub cpu_millis: i64,
    /// Memory in bytes.
    pub memory_bytes: i64,
    /// Pod slots (a pod requests one).
    pub pods: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage_bytes: i64,
}

impl Resources {
    /// Nothing of anything.
    pub const ZERO: Resources = Resources {
        cpu_millis: 0,
        memory_bytes: 0,
        pods: 0,
        ephemeral_storage_bytes: 0,
    };

    /// Everything without bound: the start for a pool limit that names only some resources.
    pub const UNLIMITED: Resources = Resources {
        cpu_millis: i64::MAX,
        memory_bytes: i64::MAX,
        pods: i64::MAX,
        ephemeral_storage_bytes: i64::MAX,
    };

    /// The resources of the four components, in the order of the fields.
    pub const fn new(
        cpu_millis: i64,
        memory_bytes: i64,
        pods: i64,
        ephemeral_storage_bytes: i64,
    ) -> Self {
        Resources {
            cpu_millis,
            memory_bytes,
            pods,
            ephemeral_storage_bytes,
        }
    }

    /// Whether every component of `self` is at most the same component of `capacity`.
    pub fn fits(&self, capacity: &Resources) -> bool {
        self.cpu_millis <= capacity.cpu_millis
            && self.memory_bytes <= capacity.memory_bytes
            && self.pods <= capacity.pods
            && self.ephemeral_storage_bytes <= capacity.ephemeral_storage_bytes
    }

    /// The component-wise maximum, as kube-scheduler combines init containers with the rest.
    pub fn max(&self, other: &Resources) -> Resources {
        self.zip(other, i64::max)
    }

    /// The component-wise minimum.
    pub fn min(&self, other: &Resources) -> Resources {
        self.zip(other, i64::min)
    }

    fn zip(&self, other: &Resources, f: impl Fn(i64, i64) -> i64) -> Resources {
        Resources {
            cpu_millis: f(self.cpu_millis, other.cpu_millis),
            memory_bytes: f(self.memory_bytes, other.memory_bytes),
            pods: f(self.pods, other.pods),
            ephemeral_storage_bytes: f(self.ephemeral_storage_bytes, other.ephemeral_storage_bytes),
        }
    }
}

impl Add for Resources {
    type Output = Resources;

    /// Component-wise, saturating so that adding to [`Resources::UNLIMITED`] stays unlimited.
    fn add(self, other: Resources) -> Resources {
        self.zip(&other, i64::saturating_add)
    }
}

impl Sub for Resources {
    type Output = Resources;

    /// Component-wise, saturating; an unlimited component stays unlimited.
    fn sub(self, other: Resources) -> Resources {
        self.zip(&other, |a, b| {
            if a == i64::MAX {
                a
            } else {
                a.saturating_sub(b)
            }
        })
    }
}

impl AddAssign for Resources {
    fn add_assign(&mut self, other: Resources) {
        *self = *self + other;
    }
}

impl SubAssign for Resources {
    fn sub_assign(&mut self, other: Resources) {
        *self = *self - other;
    }
}

impl std::fmt::Display for Resources {
    /// `cpu=1500m memory=2Gi pods=3`, leaving out unlimited and zero storage, for reasons.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let amount = |value: i64, format: fn(u64) -> String| {
            if value == i64::MAX {
                "unlimited".to_string()
            } else if value < 0 {
                format!("-{}", format(value.unsigned_abs()))
            } else {
                format(value.unsigned_abs())
            }
        };
        write!(
            f,
            "cpu={} memory={} pods={}",
            amount(self.cpu_millis, flotilla_apimachinery::quantity::format_cpu),
            amount(
                self.memory_bytes,
                flotilla_apimachinery::quantity::format_memory
            ),
            amount(self.pods, |n| n.to_string()),
        )?;
        if self.ephemeral_storage_bytes != 0 {
            write!(
                f,
                " ephemeral-storage={}",
                amount(
                    self.ephemeral_storage_bytes,
                    flotilla_apimachinery::quantity::format_memory
                )
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GI: i64 = 1 << 30;

    #[test]
    fn fits_needs_every_component_to_fit() {
        let capacity = Resources::new(2000, 4 * GI, 10, 0);
        assert!(Resources::new(2000, 4 * GI, 10, 0).fits(&capacity));
        assert!(!Resources::new(2001, GI, 1, 0).fits(&capacity));
        assert!(!Resources::new(1, GI, 11, 0).fits(&capacity));
        assert!(!Resources::new(1, GI, 1, 1).fits(&capacity));
    }

    #[test]
    fn unlimited_stays_unlimited() {
        let used = Resources::new(1000, GI, 1, 0);
        assert_eq!(Resources::UNLIMITED - used, Resources::UNLIMITED);
        assert_eq!(Resources::UNLIMITED + used, Resources::UNLIMITED);
    }

    #[test]
    fn displays_in_kubernetes_units() {
        let r = Resources::new(1500, 2 * GI, 3, 0);
        assert_eq!(r.to_string(), "cpu=1500m memory=2Gi pods=3");
        assert_eq!(
            (Resources::ZERO - r).to_string(),
            "cpu=-1500m memory=-2Gi pods=-3"
        );
    }
}
