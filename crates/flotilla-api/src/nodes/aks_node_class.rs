//! `AKSNodeClass` (`karpenter.azure.com/v1beta1`): the Azure settings of the nodes a NodePool
//! launches. Its spec is hashed into the `karpenter.azure.com/aksnodeclass-hash` annotation;
//! a claim launched under another hash has drifted. `imageVersion` pins the node image
//! (absent: the newest of the family), so moving it rolls the pool's nodes onto a new image
//! through drift, within the pools' budgets.

mod linux_os_config;
mod local_dns;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use linux_os_config::{HugePageDefrag, HugePages, LinuxOsConfig, SIZE_PATTERN, Sysctls};
pub use local_dns::{
    DNS_DURATION_PATTERN, DnsProtocol, ForwardDestination, ForwardPolicy,
    LOCAL_DNS_PREFERRED_FROM_MINOR, LocalDns, LocalDnsMode, LocalDnsState, QueryLogging,
    ServeStale, ZONE_PATTERN, ZoneOverride,
};

/// The subnet ID of an Azure virtual network (case-insensitive), as the provider's schema
/// constrains `vnetSubnetID`.
pub const SUBNET_ID_PATTERN: &str = r"(?i)^\/subscriptions\/[^\/]+\/resourceGroups\/[a-zA-Z0-9_\-().]{0,89}[a-zA-Z0-9_\-()]\/providers\/Microsoft\.Network\/virtualNetworks\/[^\/]+\/subnets\/[^\/]+$";

/// The Azure settings of a pool's nodes.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.azure.com",
    version = "v1beta1",
    kind = "AKSNodeClass",
    plural = "aksnodeclasses",
    singular = "aksnodeclass",
    shortname = "aksnc",
    shortname = "aksncs",
    category = "karpenter",
    status = "AKSNodeClassStatus",
    derive = "PartialEq",
    doc = "AKSNodeClass holds the Azure settings (image, subnet, disk, kubelet) of the nodes a NodePool launches.",
    printcolumn(
        name = "Image-Family",
        type_ = "string",
        json_path = ".spec.imageFamily"
    ),
    printcolumn(
        name = "Image-Version",
        type_ = "string",
        json_path = ".status.imageVersion"
    ),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Subnet",
        type_ = "string",
        json_path = ".spec.vnetSubnetID",
        priority = 1
    ),
    printcolumn(
        name = "Kubernetes",
        type_ = "string",
        json_path = ".status.kubernetesVersion",
        priority = 1
    )
)]
#[serde(rename_all = "camelCase")]
pub struct AKSNodeClassSpec {
    /// The subnet nodes join; absent: the cluster's node subnet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "vnetSubnetID")]
    #[schemars(regex(pattern = SUBNET_ID_PATTERN))]
    pub vnet_subnet_id: Option<String>,
    /// OS disk size in GB (default 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "osDiskSizeGB")]
    #[schemars(range(min = 30, max = 2048))]
    #[schemars(extend("default" = 128))]
    pub os_disk_size_gb: Option<i32>,
    /// `Ubuntu` (default: the Ubuntu release AKS uses for the cluster's Kubernetes version),
    /// `Ubuntu2204`, `Ubuntu2404` or `AzureLinux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Ubuntu"))]
    pub image_family: Option<ImageFamily>,
    /// The node image version to run (`202501.05.0`); absent: the newest of the family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]{6}\.[0-9]{2}\.[0-9]+$"))]
    pub image_version: Option<String>,
    /// Whether nodes run a FIPS-enabled image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fips_mode: Option<FipsMode>,
    /// Kubelet settings of the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// Most pods per node, whatever its size (absent: the instance type's own); the kubelet
    /// reserves memory for each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 10, max = 250))]
    pub max_pods: Option<i32>,
    /// Azure tags of the instances (not part of drift): keys up to 512 characters, none of
    /// `<>%&?` or a backslash in them; values up to 256.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// Security settings of the instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Security>,
    /// The node-local DNS proxy ([`LocalDns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "localDNS")]
    pub local_dns: Option<LocalDns>,
    /// Linux settings of the nodes ([`LinuxOsConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "linuxOSConfig")]
    pub linux_os_config: Option<LinuxOsConfig>,
    /// Whether images are streamed to the nodes (lazy pulls); explicitly enabled, the pool
    /// gets no arm64 instance types, which do not support it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_streaming: Option<ArtifactStreaming>,
    /// GPU drivers of GPU instance types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
}

/// `spec.security`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Security {
    /// Whether the instances' disks and caches are encrypted on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_at_host: Option<bool>,
}

/// `spec.artifactStreaming`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactStreaming {
    /// Whether it is on (absent: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

impl AKSNodeClassSpec {
    /// Whether artifact streaming is explicitly on: the class's pools then launch no arm64
    /// instance types, as the AKS provider filters them.
    pub fn artifact_streaming_enabled(&self) -> bool {
        self.artifact_streaming
            .as_ref()
            .and_then(|a| a.enabled)
            .unwrap_or(false)
    }
}

/// `spec.gpu`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Gpu {
    /// `Driver` (default): AKS installs the GPU driver; `None`: the user does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Driver"))]
    pub mode: Option<GpuMode>,
}

/// `gpu.mode`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum GpuMode {
    Driver,
    None,
}

/// Node image families.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum ImageFamily {
    /// Whichever Ubuntu release AKS uses for the cluster's Kubernetes version
    /// ([`ImageFamily::resolve`]).
    #[default]
    Ubuntu,
    Ubuntu2204,
    Ubuntu2404,
    AzureLinux,
}

/// The first Kubernetes minor (of 1.x) whose nodes get Ubuntu 24.04 for the family `Ubuntu`;
/// earlier ones get 22.04, as the AKS provider resolves it.
pub const UBUNTU_2404_FROM_MINOR: u64 = 34;

impl ImageFamily {
    /// The concrete family this one stands for on a cluster running `kubernetes_version`
    /// (`1.33.2`, `v1.34.0`): `Ubuntu` is `Ubuntu2204` before 1.34 and `Ubuntu2404` from
    /// 1.34 (and when the version is not known yet); every other family is itself.
    pub fn resolve(self, kubernetes_version: &str) -> ImageFamily {
        if self != ImageFamily::Ubuntu {
            return self;
        }
        match kubernetes_minor(kubernetes_version) {
            Some(minor) if minor < UBUNTU_2404_FROM_MINOR => ImageFamily::Ubuntu2204,
            _ => ImageFamily::Ubuntu2404,
        }
    }
}

/// The minor of a Kubernetes version of 1.x (`1.33.2`, `v1.34.0`), if it is one.
fn kubernetes_minor(version: &str) -> Option<u64> {
    version
        .trim_start_matches('v')
        .strip_prefix("1.")
        .and_then(|rest| rest.split('.').next())
        .and_then(|minor| minor.parse::<u64>().ok())
}

/// FIPS mode.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum FipsMode {
    #[default]
    Disabled,
    FIPS,
}

/// Kubelet settings (a change is drift). Present, it gets the provider's defaults.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfiguration {
    /// `none` (default) or `static`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "none"))]
    pub cpu_manager_policy: Option<CpuManagerPolicy>,
    /// Whether CPU CFS quota is enforced (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "cpuCFSQuota")]
    #[schemars(extend("default" = true))]
    pub cpu_cfs_quota: Option<bool>,
    /// The CPU CFS quota period (default `100ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "cpuCFSQuotaPeriod")]
    #[schemars(extend("default" = "100ms"))]
    pub cpu_cfs_quota_period: Option<String>,
    /// Disk use above which image garbage collection always runs (percent); above
    /// `imageGCLowThresholdPercent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "imageGCHighThresholdPercent")]
    #[schemars(range(min = 0, max = 100))]
    pub image_gc_high_threshold_percent: Option<i32>,
    /// Disk use below which image garbage collection never runs (percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "imageGCLowThresholdPercent")]
    #[schemars(range(min = 0, max = 100))]
    pub image_gc_low_threshold_percent: Option<i32>,
    /// `none` (default), `best-effort`, `restricted` or `single-numa-node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "none"))]
    pub topology_manager_policy: Option<TopologyManagerPolicy>,
    /// Sysctls pods may set beyond the safe ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_unsafe_sysctls: Vec<String>,
    /// Most size of a container log file before rotation (default `50Mi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = SIZE_PATTERN))]
    #[schemars(extend("default" = "50Mi"))]
    pub container_log_max_size: Option<String>,
    /// Most log files kept per container (default 5, at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2))]
    #[schemars(extend("default" = 5))]
    pub container_log_max_files: Option<i32>,
    /// Most processes per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_pids_limit: Option<i64>,
    /// Whether the kubelet refuses to start with swap on; must be false with
    /// `linuxOSConfig.swapFileSize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_swap_on: Option<bool>,
}

/// `kubelet.cpuManagerPolicy`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum CpuManagerPolicy {
    None,
    Static,
}

/// `kubelet.topologyManagerPolicy`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum TopologyManagerPolicy {
    Restricted,
    BestEffort,
    None,
    SingleNumaNode,
}

/// What the node class resolved to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AKSNodeClassStatus {
    /// The node image version new nodes get (and every node must run, else it drifted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_version: Option<String>,
    /// The cluster's Kubernetes version: nodes with another kubelet version have drifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Whether the class's nodes run the node-local DNS proxy (`spec.localDNS.mode` resolved
    /// for the cluster's Kubernetes version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "localDNSState")]
    pub local_dns_state: Option<LocalDnsState>,
    /// `Ready` and why not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ubuntu_stands_for_the_release_of_the_cluster_s_kubernetes_version() {
        let cases = [
            (ImageFamily::Ubuntu, "1.33.9", ImageFamily::Ubuntu2204),
            (ImageFamily::Ubuntu, "v1.33.0", ImageFamily::Ubuntu2204),
            (ImageFamily::Ubuntu, "1.34.0", ImageFamily::Ubuntu2404),
            (ImageFamily::Ubuntu, "1.35.1", ImageFamily::Ubuntu2404),
            (ImageFamily::Ubuntu, "", ImageFamily::Ubuntu2404),
            (ImageFamily::Ubuntu2204, "1.35.1", ImageFamily::Ubuntu2204),
            (ImageFamily::AzureLinux, "1.30.0", ImageFamily::AzureLinux),
        ];
        for (family, version, resolved) in cases {
            assert_eq!(family.resolve(version), resolved, "{family:?} on {version}");
        }
    }
}
