//! Service addresses: a cluster IP from the service CIDR `10.0.0.0/16` (10.0.0.1 is the
//! `kubernetes` service), node ports from 30000–32767 for NodePort and LoadBalancer services,
//! and a load-balancer ingress IP from the member's public range for LoadBalancer services.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{
    LoadBalancerIngress, LoadBalancerStatus, Service, ServicePort, ServiceSpec, ServiceStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::actions::{Action, Plan};
use crate::ids::fnv1a32;
use crate::objects::{name_of, namespace_of};

/// The service CIDR's first address, the `kubernetes` service's cluster IP.
pub const KUBERNETES_SERVICE_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
/// Addresses in the service CIDR (a /16).
const SERVICE_CIDR_SIZE: u32 = 1 << 16;
/// The node port range.
const NODE_PORTS: std::ops::RangeInclusive<i32> = 30000..=32767;

fn service_type(svc: &Service) -> &str {
    svc.spec
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("ClusterIP")
}

fn has_cluster_ip(svc: &Service) -> bool {
    svc.spec
        .as_ref()
        .and_then(|s| s.cluster_ip.as_deref())
        .is_some_and(|ip| !ip.is_empty())
}

/// The `kubernetes` service in `default` that every cluster has: the API server at the first
/// address of the service CIDR.
pub fn kubernetes_service() -> Service {
    let ip = KUBERNETES_SERVICE_IP.to_string();
    Service {
        metadata: ObjectMeta {
            name: Some("kubernetes".into()),
            namespace: Some("default".into()),
            labels: Some(
                [("component", "apiserver"), ("provider", "kubernetes")]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            cluster_ip: Some(ip.clone()),
            cluster_ips: Some(vec![ip]),
            ip_families: Some(vec!["IPv4".into()]),
            ip_family_policy: Some("SingleStack".into()),
            internal_traffic_policy: Some("Cluster".into()),
            session_affinity: Some("None".into()),
            ports: Some(vec![ServicePort {
                name: Some("https".into()),
                port: 443,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::Int(443)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

/// The member's public load-balancer range: `20.<a>.<b>.0/24` from a hash of its name.
fn public_prefix(member: &str) -> [u8; 2] {
    let h = fnv1a32(member.as_bytes()).to_be_bytes();
    [h[0], h[1]]
}

/// Allocates what every service still lacks; each service gets at most one update (spec)
/// and one status write.
pub fn allocate(services: &[Service], member: &str) -> Plan {
    let mut plan = Plan::default();
    let mut cluster_ips: BTreeSet<String> = services
        .iter()
        .filter_map(|s| s.spec.as_ref()?.cluster_ip.clone())
        .collect();
    let mut node_ports: BTreeSet<i32> = services
        .iter()
        .filter_map(|s| s.spec.as_ref()?.ports.as_ref())
        .flatten()
        .filter_map(|p| p.node_port)
        .collect();
    let ingress_ip = |s: &Service| -> Option<String> {
        s.status
            .as_ref()?
            .load_balancer
            .as_ref()?
            .ingress
            .as_ref()?
            .first()?
            .ip
            .clone()
    };
    let mut public: BTreeSet<String> = services.iter().filter_map(ingress_ip).collect();
    let [a, b] = public_prefix(member);
    let mut sorted: Vec<&Service> = services
        .iter()
        .filter(|s| s.metadata.deletion_timestamp.is_none())
        .collect();
    sorted.sort_by(|x, y| {
        (
            &x.metadata.creation_timestamp,
            namespace_of(*x),
            name_of(*x),
        )
            .cmp(&(
                &y.metadata.creation_timestamp,
                namespace_of(*y),
                name_of(*y),
            ))
    });
    for svc in sorted {
        let kind = service_type(svc);
        let mut updated = svc.clone();
        let spec = updated.spec.get_or_insert_default();
        if kind != "ExternalName" && !has_cluster_ip(svc) {
            let free = (1..SERVICE_CIDR_SIZE - 1)
                .map(|i| Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 0)) + i).to_string())
                .find(|ip| !cluster_ips.contains(ip));
            if let Some(ip) = free {
                cluster_ips.insert(ip.clone());
                spec.cluster_ip = Some(ip.clone());
                spec.cluster_ips = Some(vec![ip]);
                spec.ip_families = Some(vec!["IPv4".into()]);
                spec.ip_family_policy = Some("SingleStack".into());
            }
        }
        if kind == "NodePort" || kind == "LoadBalancer" {
            for port in spec.ports.iter_mut().flatten() {
                if port.node_port.is_none()
                    && let Some(p) = NODE_PORTS.clone().find(|p| !node_ports.contains(p))
                {
                    node_ports.insert(p);
                    port.node_port = Some(p);
                }
            }
        }
        if updated.spec != svc.spec {
            updated.status = None;
            plan.push(Action::update(&updated));
        }
        if kind == "LoadBalancer" && ingress_ip(svc).is_none() {
            let free = (4..=254u8)
                .map(|d| Ipv4Addr::new(20, a, b, d).to_string())
                .find(|ip| !public.contains(ip));
            if let Some(ip) = free {
                public.insert(ip.clone());
                let status = ServiceStatus {
                    load_balancer: Some(LoadBalancerStatus {
                        ingress: Some(vec![LoadBalancerIngress {
                            ip: Some(ip),
                            ip_mode: Some("VIP".into()),
                            ..Default::default()
                        }]),
                    }),
                    conditions: None,
                };
                plan.push(Action::write_status(svc, &status));
            }
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::written_status;

    fn service(name: &str, kind: &str, cluster_ip: Option<&str>) -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                uid: Some(format!("uid-{name}")),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                type_: Some(kind.into()),
                cluster_ip: cluster_ip.map(String::from),
                ports: Some(vec![ServicePort {
                    port: 80,
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn updated(plan: &Plan) -> Vec<Service> {
        plan.actions
            .iter()
            .filter_map(|a| match a {
                Action::Update(v) => Some(serde_json::from_value(v.clone()).unwrap()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn cluster_ips_are_unique_and_skip_taken_ones() {
        let services = vec![
            service("kubernetes", "ClusterIP", Some("10.0.0.1")),
            service("taken", "ClusterIP", Some("10.0.0.2")),
            service("a", "ClusterIP", None),
            service("b", "ClusterIP", None),
            service("headless", "ClusterIP", Some("None")),
            service("external", "ExternalName", None),
        ];
        let got = updated(&allocate(&services, "m1"));
        let ips: Vec<(String, String)> = got
            .iter()
            .map(|s| {
                let spec = s.spec.as_ref().unwrap();
                assert_eq!(
                    spec.cluster_ips,
                    Some(vec![spec.cluster_ip.clone().unwrap()])
                );
                (
                    s.metadata.name.clone().unwrap(),
                    spec.cluster_ip.clone().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            ips,
            vec![
                ("a".into(), "10.0.0.3".into()),
                ("b".into(), "10.0.0.4".into())
            ]
        );
    }

    #[test]
    fn load_balancers_get_node_ports_and_an_ingress_ip() {
        let mut lb = service("web", "LoadBalancer", Some("10.0.0.9"));
        lb.spec
            .as_mut()
            .unwrap()
            .ports
            .as_mut()
            .unwrap()
            .push(ServicePort {
                port: 443,
                node_port: Some(30000),
                ..Default::default()
            });
        let plan = allocate(&[lb], "m1");
        let svc = &updated(&plan)[0];
        let ports: Vec<Option<i32>> = svc
            .spec
            .as_ref()
            .unwrap()
            .ports
            .as_ref()
            .unwrap()
            .iter()
            .map(|p| p.node_port)
            .collect();
        assert_eq!(ports, vec![Some(30001), Some(30000)]);
        let status = written_status(&plan).unwrap();
        let ip = status["loadBalancer"]["ingress"][0]["ip"].as_str().unwrap();
        let [a, b] = public_prefix("m1");
        assert_eq!(ip, format!("20.{a}.{b}.4"));
    }

    #[test]
    fn complete_services_need_nothing() {
        let svc = service("a", "ClusterIP", Some("10.0.0.5"));
        assert_eq!(
            allocate(&[svc, kubernetes_service()], "m1"),
            Plan::default()
        );
        let k = kubernetes_service();
        assert_eq!(k.spec.unwrap().cluster_ip.as_deref(), Some("10.0.0.1"));
    }
}
