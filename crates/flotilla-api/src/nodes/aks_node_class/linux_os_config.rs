//! `spec.linuxOSConfig` of an AKSNodeClass: the node's Linux settings (AKS custom Linux OS
//! configuration): a swap file, transparent huge pages and kernel parameters, each within the
//! bounds the AKS provider's schema sets. A change is node class drift.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A Kubernetes quantity of bytes, whole units only (`1500Mi`, `2Gi`), as the provider's
/// schema constrains `swapFileSize` and `containerLogMaxSize`.
pub const SIZE_PATTERN: &str = r"^\d+(E|P|T|G|M|K|Ei|Pi|Ti|Gi|Mi|Ki)$";

/// Linux settings of the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinuxOsConfig {
    /// Size of the swap file each node gets (`1500Mi`, `2Gi`; rounded to the megabyte);
    /// needs `kubelet.failSwapOn: false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = SIZE_PATTERN))]
    pub swap_file_size: Option<String>,
    /// Kernel parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysctls: Option<Sysctls>,
    /// When the kernel defragments memory to make huge pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent_huge_page_defrag: Option<HugePageDefrag>,
    /// Whether transparent huge pages are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent_huge_page_enabled: Option<HugePages>,
}

/// `transparentHugePageEnabled`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum HugePages {
    Always,
    Madvise,
    Never,
}

/// `transparentHugePageDefrag`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum HugePageDefrag {
    #[serde(rename = "always")]
    Always,
    #[serde(rename = "defer")]
    Defer,
    #[serde(rename = "defer+madvise")]
    DeferMadvise,
    #[serde(rename = "madvise")]
    Madvise,
    #[serde(rename = "never")]
    Never,
}

/// Kernel parameters, each within the range AKS allows (the sysctl each sets is named).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sysctls {
    /// `fs.aio-max-nr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 65536, max = 6553500))]
    pub fs_aio_max_nr: Option<i32>,
    /// `fs.file-max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 8192, max = 12000500))]
    pub fs_file_max: Option<i32>,
    /// `fs.inotify.max_user_watches`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 781250, max = 2097152))]
    pub fs_inotify_max_user_watches: Option<i32>,
    /// `fs.nr_open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 8192, max = 20000500))]
    pub fs_nr_open: Option<i32>,
    /// `kernel.threads-max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 20, max = 513785))]
    pub kernel_threads_max: Option<i32>,
    /// `net.core.netdev_max_backlog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1000, max = 3240000))]
    pub net_core_netdev_max_backlog: Option<i32>,
    /// `net.core.optmem_max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 20480, max = 4194304))]
    pub net_core_optmem_max: Option<i32>,
    /// `net.core.rmem_default`; at most `netCoreRmemMax`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 212992, max = 134217728))]
    pub net_core_rmem_default: Option<i32>,
    /// `net.core.rmem_max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 212992, max = 134217728))]
    pub net_core_rmem_max: Option<i32>,
    /// `net.core.somaxconn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4096, max = 3240000))]
    pub net_core_somaxconn: Option<i32>,
    /// `net.core.wmem_default`; at most `netCoreWmemMax`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 212992, max = 134217728))]
    pub net_core_wmem_default: Option<i32>,
    /// `net.core.wmem_max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 212992, max = 134217728))]
    pub net_core_wmem_max: Option<i32>,
    /// `net.ipv4.ip_local_port_range`: `FIRST LAST`, first in [1024, 60999], last in
    /// [32768, 65535], first ≤ last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4IPLocalPortRange")]
    #[schemars(regex(pattern = r"^\d+ \d+$"))]
    pub net_ipv4_ip_local_port_range: Option<String>,
    /// `net.ipv4.neigh.default.gc_thresh1`; at most `gc_thresh2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4NeighDefaultGcThresh1")]
    #[schemars(range(min = 128, max = 80000))]
    pub net_ipv4_neigh_default_gc_thresh1: Option<i32>,
    /// `net.ipv4.neigh.default.gc_thresh2`; at most `gc_thresh3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4NeighDefaultGcThresh2")]
    #[schemars(range(min = 512, max = 90000))]
    pub net_ipv4_neigh_default_gc_thresh2: Option<i32>,
    /// `net.ipv4.neigh.default.gc_thresh3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4NeighDefaultGcThresh3")]
    #[schemars(range(min = 1024, max = 100000))]
    pub net_ipv4_neigh_default_gc_thresh3: Option<i32>,
    /// `net.ipv4.tcp_fin_timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPFinTimeout")]
    #[schemars(range(min = 5, max = 120))]
    pub net_ipv4_tcp_fin_timeout: Option<i32>,
    /// `net.ipv4.tcp_keepalive_intvl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPKeepaliveIntvl")]
    #[schemars(range(min = 10, max = 90))]
    pub net_ipv4_tcp_keepalive_intvl: Option<i32>,
    /// `net.ipv4.tcp_keepalive_probes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPKeepaliveProbes")]
    #[schemars(range(min = 1, max = 15))]
    pub net_ipv4_tcp_keepalive_probes: Option<i32>,
    /// `net.ipv4.tcp_keepalive_time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPKeepaliveTime")]
    #[schemars(range(min = 30, max = 432000))]
    pub net_ipv4_tcp_keepalive_time: Option<i32>,
    /// `net.ipv4.tcp_max_syn_backlog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPMaxSynBacklog")]
    #[schemars(range(min = 128, max = 3240000))]
    pub net_ipv4_tcp_max_syn_backlog: Option<i32>,
    /// `net.ipv4.tcp_max_tw_buckets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPMaxTwBuckets")]
    #[schemars(range(min = 8000, max = 1440000))]
    pub net_ipv4_tcp_max_tw_buckets: Option<i32>,
    /// `net.ipv4.tcp_tw_reuse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "netIPv4TCPTwReuse")]
    pub net_ipv4_tcp_tw_reuse: Option<bool>,
    /// `net.netfilter.nf_conntrack_buckets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 65536, max = 524288))]
    pub net_netfilter_nf_conntrack_buckets: Option<i32>,
    /// `net.netfilter.nf_conntrack_max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 131072, max = 2097152))]
    pub net_netfilter_nf_conntrack_max: Option<i32>,
    /// `vm.max_map_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 65530, max = 262144))]
    pub vm_max_map_count: Option<i32>,
    /// `vm.swappiness`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub vm_swappiness: Option<i32>,
    /// `vm.vfs_cache_pressure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub vm_vfs_cache_pressure: Option<i32>,
}
