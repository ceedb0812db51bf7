//! The nodes of a simulated member, built from its node pools as AKS builds them: named
//! `aks-<pool>-<8 digits>-vmss<6-digit index>`, spread round-robin over the region's zones,
//! labelled, sized from the instance-type catalog, and Ready.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus,
    NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::catalog::{self, InstanceType};
use crate::fleet::{MemberSpec, NodePoolSpec};
use crate::ids::{fnv1a32, hex_digest, uuid_like};
use crate::objects::time;
use flotilla_apimachinery::quantity::{format_cpu, format_kibibytes};

/// The label naming a node's AKS agent pool.
pub const AGENT_POOL_LABEL: &str = "kubernetes.azure.com/agentpool";
/// The label naming a node's AKS node image version.
pub const NODE_IMAGE_LABEL: &str = "kubernetes.azure.com/node-image-version";

/// Ephemeral storage every node reports (a 128 GB OS disk), in KiB.
const EPHEMERAL_KIB: u64 = 129_886_128;
/// The container runtime every node reports.
const CONTAINER_RUNTIME: &str = "containerd://1.7.25-1";
/// First node address (AKS's default node subnet is 10.224.0.0/16; Azure keeps .0–.3).
const NODE_SUBNET_FIRST: Ipv4Addr = Ipv4Addr::new(10, 224, 0, 4);
/// Node `n` of a member gets pod CIDR `10.244.0.0 + n·256` / 24 (AKS overlay's default range).
const POD_CIDR_BASE: Ipv4Addr = Ipv4Addr::new(10, 244, 0, 0);

/// A node pool names an instance type the catalog does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("node pool {pool:?} uses unknown instance type {instance_type:?}")]
pub struct UnknownInstanceType {
    /// The pool.
    pub pool: String,
    /// The instance type it names.
    pub instance_type: String,
}

/// The 8-digit number AKS puts in a pool's node names, derived from member and pool.
pub fn pool_digits(member: &str, pool: &str) -> String {
    format!(
        "{:08}",
        fnv1a32(format!("{member}/{pool}").as_bytes()) % 100_000_000
    )
}

/// The name of node `index` of `pool` in `member`: `aks-system-12345678-vmss000000`.
pub fn node_name(member: &str, pool: &str, index: u32) -> String {
    format!("aks-{pool}-{}-vmss{index:06}", pool_digits(member, pool))
}

/// The OS image and kernel a node image version runs.
pub fn os_of(node_image: &str) -> (&'static str, &'static str) {
    if node_image.contains("AzureLinux") {
        ("Microsoft Azure Linux 3.0", "6.6.64.2-9.azl3")
    } else if node_image.contains("2404") {
        ("Ubuntu 24.04.1 LTS", "6.8.0-1021-azure")
    } else {
        ("Ubuntu 22.04.5 LTS", "5.15.0-1079-azure")
    }
}

/// `v1.30.3` for `1.30.3` or `v1.30.3`.
pub fn git_version(kubernetes_version: &str) -> String {
    format!("v{}", kubernetes_version.trim_start_matches('v'))
}

/// Every node of `member`, in pool order, ready at `now`. Nodes are numbered across the
/// member (for addresses) and within their pool (for names and zones).
pub fn nodes(member: &MemberSpec, now: Timestamp) -> Result<Vec<Node>, UnknownInstanceType> {
    let zones = catalog::zones(&member.region);
    let mut out = Vec::new();
    for pool in &member.node_pools {
        let instance =
            catalog::instance_type(&pool.instance_type).ok_or_else(|| UnknownInstanceType {
                pool: pool.name.clone(),
                instance_type: pool.instance_type.clone(),
            })?;
        for index in 0..pool.count {
            let ordinal = u32::try_from(out.len()).unwrap_or(u32::MAX);
            let zone = &zones[usize::try_from(index).unwrap_or(0) % zones.len()];
            out.push(node(member, pool, &instance, index, ordinal, zone, now));
        }
    }
    Ok(out)
}

fn quantities(pairs: [(&str, String); 4]) -> BTreeMap<String, Quantity> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_string(), Quantity(v)))
        .collect()
}

/// One simulated machine, as much as its Node shows of it.
#[derive(Debug, Clone)]
pub struct Machine<'a> {
    /// The member it runs in.
    pub member: &'a str,
    /// The node's name.
    pub name: String,
    /// Its instance type.
    pub instance: &'a InstanceType,
    /// The member's region.
    pub region: &'a str,
    /// Its zone.
    pub zone: &'a str,
    /// Its place among the member's machines (sets its addresses).
    pub ordinal: u32,
    /// The node image it runs.
    pub image: &'a str,
    /// Its kubelet's Kubernetes version.
    pub kubernetes_version: &'a str,
    /// `on-demand` or `spot`.
    pub capacity_type: &'a str,
    /// Labels beyond the well-known ones every node carries.
    pub labels: BTreeMap<String, String>,
}

fn node(
    member: &MemberSpec,
    pool: &NodePoolSpec,
    instance: &InstanceType,
    index: u32,
    ordinal: u32,
    zone: &str,
    now: Timestamp,
) -> Node {
    machine_node(
        &Machine {
            member: &member.name,
            name: node_name(&member.name, &pool.name, index),
            instance,
            region: &member.region,
            zone,
            ordinal,
            image: &pool.node_image_version,
            kubernetes_version: &member.kubernetes_version,
            capacity_type: "on-demand",
            labels: [(AGENT_POOL_LABEL.to_string(), pool.name.clone())].into(),
        },
        now,
    )
}

/// The Node of `machine`, Ready at `now`.
pub fn machine_node(machine: &Machine<'_>, now: Timestamp) -> Node {
    let Machine {
        member,
        instance,
        zone,
        ordinal,
        ..
    } = *machine;
    let name = machine.name.clone();
    let arch = instance.arch.label();
    let version = git_version(machine.kubernetes_version);
    let mut labels: BTreeMap<String, String> = [
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", arch),
        ("node.kubernetes.io/instance-type", instance.name.as_str()),
        ("topology.kubernetes.io/region", machine.region),
        ("topology.kubernetes.io/zone", zone),
        (NODE_IMAGE_LABEL, machine.image),
        ("karpenter.sh/capacity-type", machine.capacity_type),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    labels.extend(machine.labels.clone());
    let address = Ipv4Addr::from(u32::from(NODE_SUBNET_FIRST).wrapping_add(ordinal));
    let pod_cidr = format!(
        "{}/24",
        Ipv4Addr::from(u32::from(POD_CIDR_BASE).wrapping_add(ordinal << 8))
    );
    let (os_image, kernel) = os_of(machine.image);
    let condition = |kind: &str, status: &str, reason: &str, message: &str| NodeCondition {
        type_: kind.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_heartbeat_time: Some(time(now)),
        last_transition_time: Some(time(now)),
    };
    Node {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(format!("sim://{member}/{name}")),
            pod_cidr: Some(pod_cidr.clone()),
            pod_cidrs: Some(vec![pod_cidr]),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(quantities([
                ("cpu", instance.vcpu.to_string()),
                ("memory", format_kibibytes(instance.memory_bytes())),
                ("pods", instance.pods.to_string()),
                ("ephemeral-storage", format!("{EPHEMERAL_KIB}Ki")),
            ])),
            allocatable: Some(quantities([
                ("cpu", format_cpu(instance.allocatable_millicpu())),
                (
                    "memory",
                    format_kibibytes(instance.allocatable_memory_bytes()),
                ),
                ("pods", instance.pods.to_string()),
                ("ephemeral-storage", format!("{}Ki", EPHEMERAL_KIB / 10 * 9)),
            ])),
            conditions: Some(vec![
                condition(
                    "MemoryPressure",
                    "False",
                    "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available",
                ),
                condition(
                    "DiskPressure",
                    "False",
                    "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure",
                ),
                condition(
                    "PIDPressure",
                    "False",
                    "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available",
                ),
                condition(
                    "Ready",
                    "True",
                    "KubeletReady",
                    "kubelet is posting ready status",
                ),
            ]),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".into(),
                    address: address.to_string(),
                },
                NodeAddress {
                    type_: "Hostname".into(),
                    address: name.clone(),
                },
            ]),
            daemon_endpoints: Some(NodeDaemonEndpoints {
                kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }),
            }),
            node_info: Some(NodeSystemInfo {
                architecture: arch.into(),
                boot_id: uuid_like(&format!("boot/{member}/{name}")),
                container_runtime_version: CONTAINER_RUNTIME.into(),
                kernel_version: kernel.into(),
                kube_proxy_version: version.clone(),
                kubelet_version: version,
                machine_id: hex_digest(&format!("machine/{member}/{name}"), 32),
                operating_system: "linux".into(),
                os_image: os_image.into(),
                system_uuid: uuid_like(&format!("system/{member}/{name}")),
                ..Default::default()
            }),
            ..Default::default()
        }),
    }
}

/// `node` running `image`: its image label and the OS it reports.
pub fn with_image(node: &Node, image: &str) -> Node {
    let mut out = node.clone();
    out.metadata
        .labels
        .get_or_insert_default()
        .insert(NODE_IMAGE_LABEL.into(), image.into());
    let (os_image, kernel) = os_of(image);
    if let Some(info) = out.status.as_mut().and_then(|s| s.node_info.as_mut()) {
        info.os_image = os_image.into();
        info.kernel_version = kernel.into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::node_allocatable;

    fn member() -> MemberSpec {
        MemberSpec {
            name: "member-1".into(),
            region: "eastus".into(),
            labels: Default::default(),
            kubernetes_version: "1.30.3".into(),
            node_pools: vec![
                NodePoolSpec {
                    name: "system".into(),
                    instance_type: "Standard_D4s_v5".into(),
                    count: 4,
                    node_image_version: "AKSUbuntu-2204gen2containerd-202501.12.0".into(),
                },
                NodePoolSpec {
                    name: "arm".into(),
                    instance_type: "Standard_E8ps_v5".into(),
                    count: 1,
                    node_image_version: "AzureLinux-3-gen2-202501.12.0".into(),
                },
            ],
            properties: Default::default(),
            maintenance_windows: vec![],
            stopped: false,
            upgrade: None,
        }
    }

    #[test]
    fn names_follow_aks() {
        let digits = pool_digits("member-1", "system");
        assert_eq!(digits.len(), 8);
        assert!(digits.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(
            node_name("member-1", "system", 0),
            format!("aks-system-{digits}-vmss000000")
        );
        assert_eq!(
            node_name("member-1", "system", 12),
            format!("aks-system-{digits}-vmss000012")
        );
        assert_ne!(pool_digits("member-2", "system"), digits);
        assert_eq!(git_version("v1.30.3"), "v1.30.3");
        assert_eq!(git_version("1.30.3"), "v1.30.3");
    }

    #[test]
    fn nodes_are_labelled_sized_and_spread_over_zones() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let nodes = nodes(&member(), now).unwrap();
        assert_eq!(nodes.len(), 5);
        let zone =
            |n: &Node| n.metadata.labels.as_ref().unwrap()["topology.kubernetes.io/zone"].clone();
        let zones: Vec<String> = nodes.iter().map(zone).collect();
        assert_eq!(
            zones,
            ["eastus-1", "eastus-2", "eastus-3", "eastus-1", "eastus-1"]
        );

        let first = &nodes[0];
        let name = first.metadata.name.clone().unwrap();
        let labels = first.metadata.labels.as_ref().unwrap();
        for (k, v) in [
            ("kubernetes.io/hostname", name.as_str()),
            ("kubernetes.io/os", "linux"),
            ("kubernetes.io/arch", "amd64"),
            ("node.kubernetes.io/instance-type", "Standard_D4s_v5"),
            ("topology.kubernetes.io/region", "eastus"),
            (AGENT_POOL_LABEL, "system"),
            (NODE_IMAGE_LABEL, "AKSUbuntu-2204gen2containerd-202501.12.0"),
            ("karpenter.sh/capacity-type", "on-demand"),
        ] {
            assert_eq!(labels.get(k).map(String::as_str), Some(v), "{k}");
        }
        let spec = first.spec.as_ref().unwrap();
        assert_eq!(
            spec.provider_id.as_deref(),
            Some(format!("sim://member-1/{name}").as_str())
        );
        let status = first.status.as_ref().unwrap();
        let capacity = status.capacity.as_ref().unwrap();
        assert_eq!(capacity["cpu"].0, "4");
        assert_eq!(capacity["memory"].0, "16777216Ki");
        assert_eq!(capacity["pods"].0, "64");
        let allocatable = status.allocatable.as_ref().unwrap();
        assert_eq!(allocatable["cpu"].0, "3920m");
        assert!(allocatable["memory"].0.ends_with("Ki"));
        assert!(allocatable.contains_key("ephemeral-storage"));
        let (alloc, pods) = node_allocatable(first);
        assert_eq!((alloc.millicpu, pods), (3920, 64));
        let info = status.node_info.as_ref().unwrap();
        assert_eq!(info.kubelet_version, "v1.30.3");
        assert_eq!(info.os_image, "Ubuntu 22.04.5 LTS");
        assert_eq!(info.container_runtime_version, CONTAINER_RUNTIME);
        assert_eq!(
            (info.architecture.as_str(), info.operating_system.as_str()),
            ("amd64", "linux")
        );
        let conditions: Vec<(String, String)> = status
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect();
        assert!(conditions.contains(&("Ready".into(), "True".into())));
        for kind in ["MemoryPressure", "DiskPressure", "PIDPressure"] {
            assert!(
                conditions.contains(&(kind.into(), "False".into())),
                "{kind}"
            );
        }
        let addresses = status.addresses.as_ref().unwrap();
        assert_eq!(addresses[0].address, "10.224.0.4");
        assert_eq!(addresses[1].address, name);

        let arm = &nodes[4];
        assert_eq!(
            arm.metadata.labels.as_ref().unwrap()["kubernetes.io/arch"],
            "arm64"
        );
        assert_eq!(
            arm.status
                .as_ref()
                .unwrap()
                .node_info
                .as_ref()
                .unwrap()
                .os_image,
            "Microsoft Azure Linux 3.0"
        );
        assert_eq!(
            arm.spec.as_ref().unwrap().pod_cidr.as_deref(),
            Some("10.244.4.0/24")
        );
        assert_eq!(
            arm.status.as_ref().unwrap().addresses.as_ref().unwrap()[0].address,
            "10.224.0.8"
        );

        let mut bad = member();
        bad.node_pools[1].instance_type = "Standard_Z1s_v5".into();
        assert_eq!(
            super::nodes(&bad, now).unwrap_err(),
            UnknownInstanceType {
                pool: "arm".into(),
                instance_type: "Standard_Z1s_v5".into()
            }
        );
    }

    #[test]
    fn reimaging_changes_the_image_label_and_os() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let n = &nodes(&member(), now).unwrap()[0];
        let updated = with_image(n, "AKSUbuntu-2404gen2containerd-202502.01.0");
        assert_eq!(
            updated.metadata.labels.as_ref().unwrap()[NODE_IMAGE_LABEL],
            "AKSUbuntu-2404gen2containerd-202502.01.0"
        );
        assert_eq!(
            updated.status.unwrap().node_info.unwrap().os_image,
            "Ubuntu 24.04.1 LTS"
        );
    }
}
