//! `spec.localDNS` of an AKSNodeClass: a DNS proxy on every node, with how it resolves and
//! forwards each zone for pods on the VNet's DNS and on the cluster's CoreDNS. Whether it runs
//! is resolved into `status.localDNSState` ([`LocalDnsState`]); a change of the spec is node
//! class drift.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A DNS zone: `.` or a domain name (an optional trailing dot).
pub const ZONE_PATTERN: &str = r"^(\.|[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?)$";

/// A duration of whole seconds, minutes or hours (`1h`, `30m`, `1h30m`).
pub const DNS_DURATION_PATTERN: &str = r"^([0-9]+(s|m|h))+$";

/// The node-local DNS proxy.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalDns {
    /// Whether nodes run it: `Required`, `Preferred` (when the cluster's Kubernetes version
    /// supports it, 1.35 on) or `Disabled`.
    pub mode: LocalDnsMode,
    /// Per zone, how queries of pods using the VNet's DNS are served; must hold `.` and
    /// `cluster.local`.
    #[schemars(length(max = 100))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["zone"]))]
    #[serde(rename = "vnetDNSOverrides")]
    pub vnet_dns_overrides: Vec<ZoneOverride>,
    /// Per zone, how queries of pods using the cluster's DNS are served; must hold `.` and
    /// `cluster.local`.
    #[schemars(length(max = 100))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["zone"]))]
    #[serde(rename = "kubeDNSOverrides")]
    pub kube_dns_overrides: Vec<ZoneOverride>,
}

/// `localDNS.mode`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum LocalDnsMode {
    Required,
    Preferred,
    Disabled,
}

/// The first Kubernetes minor (of 1.x) on which `Preferred` runs the proxy.
pub const LOCAL_DNS_PREFERRED_FROM_MINOR: u64 = 35;

impl LocalDnsMode {
    /// Whether nodes of a class in this mode run the proxy on a cluster running
    /// `kubernetes_version` (`1.35.0`, `v1.34.2`; unknown counts as too old).
    pub fn resolve(self, kubernetes_version: &str) -> LocalDnsState {
        match self {
            LocalDnsMode::Required => LocalDnsState::Enabled,
            LocalDnsMode::Disabled => LocalDnsState::Disabled,
            LocalDnsMode::Preferred => match super::kubernetes_minor(kubernetes_version) {
                Some(minor) if minor >= LOCAL_DNS_PREFERRED_FROM_MINOR => LocalDnsState::Enabled,
                _ => LocalDnsState::Disabled,
            },
        }
    }
}

/// `status.localDNSState`: whether the class's nodes run the proxy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum LocalDnsState {
    Enabled,
    Disabled,
}

/// How the proxy serves one zone; every field is required, as the provider's schema has it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ZoneOverride {
    /// The zone (`.`, `cluster.local`, `example.com`).
    #[schemars(length(min = 1, max = 254), regex(pattern = ZONE_PATTERN))]
    pub zone: String,
    /// `Error` or `Log`.
    pub query_logging: QueryLogging,
    /// `PreferUDP` or `ForceTCP` towards the upstream.
    pub protocol: DnsProtocol,
    /// `ClusterCoreDNS` or `VnetDNS`.
    pub forward_destination: ForwardDestination,
    /// `Sequential`, `RoundRobin` or `Random` among upstream servers.
    pub forward_policy: ForwardPolicy,
    /// Most concurrent queries.
    #[schemars(range(min = 0))]
    pub max_concurrent: i32,
    /// How long answers are cached (`1h`).
    #[schemars(regex(pattern = DNS_DURATION_PATTERN))]
    pub cache_duration: String,
    /// How long a stale answer may be served (`30m`).
    #[schemars(regex(pattern = DNS_DURATION_PATTERN))]
    pub serve_stale_duration: String,
    /// `Verify`, `Immediate` or `Disable`.
    pub serve_stale: ServeStale,
}

/// `queryLogging`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum QueryLogging {
    Error,
    Log,
}

/// `protocol`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum DnsProtocol {
    PreferUDP,
    ForceTCP,
}

/// `forwardDestination`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum ForwardDestination {
    ClusterCoreDNS,
    VnetDNS,
}

/// `forwardPolicy`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum ForwardPolicy {
    Sequential,
    RoundRobin,
    Random,
}

/// `serveStale`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[allow(missing_docs)]
pub enum ServeStale {
    Verify,
    Immediate,
    Disable,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_runs_the_proxy_from_kubernetes_1_35() {
        let cases = [
            (LocalDnsMode::Required, "1.30.0", LocalDnsState::Enabled),
            (LocalDnsMode::Disabled, "1.36.0", LocalDnsState::Disabled),
            (LocalDnsMode::Preferred, "1.34.9", LocalDnsState::Disabled),
            (LocalDnsMode::Preferred, "v1.35.0", LocalDnsState::Enabled),
            (LocalDnsMode::Preferred, "1.36.1", LocalDnsState::Enabled),
            (LocalDnsMode::Preferred, "", LocalDnsState::Disabled),
        ];
        for (mode, version, state) in cases {
            assert_eq!(mode.resolve(version), state, "{mode:?} on {version}");
        }
    }
}
