//! The label keys the scheduler knows by name, and which of them are well known: a pool need not
//! constrain a well-known label for a pod to ask for one of its values, because every instance
//! type says its own value (Karpenter's `WellKnownLabels`).

/// The instance type of a node (`Standard_D4s_v5`).
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
/// The CPU architecture (`amd64`, `arm64`).
pub const ARCH: &str = "kubernetes.io/arch";
/// The operating system (`linux`, `windows`).
pub const OS: &str = "kubernetes.io/os";
/// The zone a node runs in.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// The region a node runs in.
pub const REGION: &str = "topology.kubernetes.io/region";
/// Spot or on-demand.
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// The pool that launched a node; forbidden in pool templates.
pub const NODE_POOL: &str = "karpenter.sh/nodepool";
/// The Windows build of a Windows node.
pub const WINDOWS_BUILD: &str = "node.kubernetes.io/windows-build";
/// The Azure VM size family (`D`, `E`).
pub const SKU_FAMILY: &str = "karpenter.azure.com/sku-family";
/// The Azure VM size name.
pub const SKU_NAME: &str = "karpenter.azure.com/sku-name";
/// The Azure VM size version (`5` for `_v5`).
pub const SKU_VERSION: &str = "karpenter.azure.com/sku-version";
/// The vCPU count of the Azure VM size.
pub const SKU_CPU: &str = "karpenter.azure.com/sku-cpu";
/// The memory of the Azure VM size in MiB.
pub const SKU_MEMORY: &str = "karpenter.azure.com/sku-memory";

/// The well-known labels: those Karpenter (with the Azure provider) lets a pod constrain
/// although the pool does not, because every instance type or offering defines them.
pub const WELL_KNOWN: [&str; 13] = [
    INSTANCE_TYPE,
    ARCH,
    OS,
    ZONE,
    REGION,
    CAPACITY_TYPE,
    NODE_POOL,
    WINDOWS_BUILD,
    SKU_FAMILY,
    SKU_NAME,
    SKU_VERSION,
    SKU_CPU,
    SKU_MEMORY,
];

/// Whether `key` is one of the [`WELL_KNOWN`] labels.
pub fn is_well_known(key: &str) -> bool {
    WELL_KNOWN.contains(&key)
}
