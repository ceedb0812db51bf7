//! Names of the cluster properties member agents report and placements select on
//! (`reference/kubefleet.md` §5, and the names the seed documents use).

/// Number of nodes (KubeFleet's default property provider).
pub const NODE_COUNT: &str = "kubernetes-fleet.io/node-count";
/// Number of nodes under the Azure provider's name, which the seed examples select on.
pub const AZURE_NODE_COUNT: &str = "kubernetes.azure.com/node-count";
/// The control plane's Kubernetes version.
pub const KUBERNETES_VERSION: &str = "k8s.io/k8s-version";
/// Hourly cost of one CPU core: the nodes' hourly prices summed, over their cores (`%.3f`).
pub const PER_CPU_CORE_COST: &str = "kubernetes.azure.com/per-cpu-core-cost";
/// Hourly cost of one GiB of memory: the nodes' hourly prices summed, over their GiB (`%.3f`).
pub const PER_GB_MEMORY_COST: &str = "kubernetes.azure.com/per-gb-memory-cost";
/// Prefix of the resource properties, which read `status.resourceUsage`.
pub const RESOURCE_PREFIX: &str = "resources.kubernetes-fleet.io/";

/// Which of a cluster's resource figures a resource property names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capacity {
    /// Sum of the nodes' capacity.
    Total,
    /// Sum of the nodes' allocatable capacity.
    Allocatable,
    /// Allocatable minus what pods request.
    Available,
}

impl Capacity {
    /// All three, in the order KubeFleet lists them.
    pub const ALL: [Capacity; 3] = [Capacity::Total, Capacity::Allocatable, Capacity::Available];

    /// The word used in property names.
    pub fn word(self) -> &'static str {
        match self {
            Capacity::Total => "total",
            Capacity::Allocatable => "allocatable",
            Capacity::Available => "available",
        }
    }
}

/// `resources.kubernetes-fleet.io/<capacity>-<resource>`, e.g. `…/available-cpu`.
pub fn resource_property(capacity: Capacity, resource: &str) -> String {
    format!("{RESOURCE_PREFIX}{}-{resource}", capacity.word())
}

/// Splits a resource property name into its capacity and resource (`cpu`, `memory`), or
/// `None` if `name` is not one.
pub fn parse_resource_property(name: &str) -> Option<(Capacity, &str)> {
    let rest = name.strip_prefix(RESOURCE_PREFIX)?;
    Capacity::ALL.into_iter().find_map(|c| {
        rest.strip_prefix(c.word())
            .and_then(|r| r.strip_prefix('-'))
            .filter(|r| !r.is_empty())
            .map(|r| (c, r))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_property_names_round_trip() {
        for c in Capacity::ALL {
            for r in ["cpu", "memory"] {
                let name = resource_property(c, r);
                assert_eq!(parse_resource_property(&name), Some((c, r)));
            }
        }
        assert_eq!(
            resource_property(Capacity::Available, "cpu"),
            "resources.kubernetes-fleet.io/available-cpu"
        );
        assert_eq!(parse_resource_property(NODE_COUNT), None);
        assert_eq!(
            parse_resource_property("resources.kubernetes-fleet.io/total-"),
            None
        );
        assert_eq!(
            parse_resource_property("resources.kubernetes-fleet.io/spare-cpu"),
            None
        );
    }
}
