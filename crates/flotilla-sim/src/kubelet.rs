//! The kubelet of every simulated node: a pod bound to the node starts creating its
//! containers at once, is Running and Ready a readiness delay after it was scheduled, and (for
//! Job pods) succeeds after running for the job duration. Pod IPs come from the node's
//! `podCIDR`.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, HostIP, Node, Pod, PodCondition, PodIP, PodStatus,
};

use crate::actions::{Action, Plan};
use crate::ids::hex_digest;
use crate::objects::{name_of, time, uid_of};
use crate::pod_state::{condition, is_terminal, phase};

/// How long simulated containers take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// From scheduling to Running and Ready.
    pub readiness_delay: SignedDuration,
    /// How long a Job's pod runs before it succeeds.
    pub job_duration: SignedDuration,
}

/// The node's `InternalIP`.
pub fn internal_ip(node: &Node) -> Option<&str> {
    node.status
        .as_ref()?
        .addresses
        .as_ref()?
        .iter()
        .find(|a| a.type_ == "InternalIP")
        .map(|a| a.address.as_str())
}

/// The usable pod addresses of a `podCIDR` (`10.244.3.0/24` → 10.244.3.2 ..= 10.244.3.254):
/// the network, gateway (`.1`) and broadcast addresses are skipped.
fn pod_addresses(cidr: &str) -> impl Iterator<Item = Ipv4Addr> {
    let parsed = cidr.split_once('/').and_then(|(ip, bits)| {
        let base: Ipv4Addr = ip.parse().ok()?;
        let bits: u32 = bits.parse().ok().filter(|b| (8..=30).contains(b))?;
        Some((u32::from(base), 1u32 << (32 - bits)))
    });
    let (base, size) = parsed.unwrap_or((0, 0));
    (2..size.saturating_sub(1)).map(move |i| Ipv4Addr::from(base + i))
}

/// Whether a Job controls the pod (its pod runs to completion).
fn runs_to_completion(pod: &Pod) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.kind == "Job")
}

/// One pass of `node`'s kubelet over the pods bound to it.
pub fn sync_node(node: &Node, pods: &[&Pod], now: Timestamp, timing: &Timing) -> Plan {
    let mut plan = Plan::default();
    let host_ip = internal_ip(node).unwrap_or_default().to_string();
    let mut used: BTreeSet<String> = pods
        .iter()
        .filter(|p| !is_terminal(p))
        .filter_map(|p| p.status.as_ref()?.pod_ip.clone())
        .collect();
    let cidr = node
        .spec
        .as_ref()
        .and_then(|s| s.pod_cidr.clone())
        .unwrap_or_default();
    let mut sorted: Vec<&Pod> = pods.to_vec();
    sorted.sort_by_key(|p| name_of(*p));
    for pod in sorted {
        if is_terminal(pod) || pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let scheduled = condition(pod, "PodScheduled")
            .filter(|c| c.status == "True")
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0);
        let Some(scheduled) = scheduled else {
            plan.push(Action::write_status(pod, &starting(pod, &host_ip, now)));
            plan.wake(deadline(now, timing.readiness_delay));
            continue;
        };
        let ready_at = deadline(scheduled, timing.readiness_delay);
        match phase(pod) {
            "Pending" if now >= ready_at => {
                let ip = if pod.spec.as_ref().and_then(|s| s.host_network) == Some(true) {
                    host_ip.clone()
                } else {
                    let free = pod_addresses(&cidr)
                        .map(|a| a.to_string())
                        .find(|a| !used.contains(a));
                    let ip = free.unwrap_or_default();
                    used.insert(ip.clone());
                    ip
                };
                plan.push(Action::write_status(pod, &running(pod, &host_ip, &ip, now)));
                if runs_to_completion(pod) {
                    plan.wake(deadline(now, timing.job_duration));
                }
            }
            "Pending" => plan.wake(ready_at),
            "Running" if runs_to_completion(pod) => {
                let started = condition(pod, "Ready")
                    .and_then(|c| c.last_transition_time.as_ref())
                    .map_or(now, |t| t.0);
                let done_at = deadline(started, timing.job_duration);
                if now >= done_at {
                    plan.push(Action::write_status(pod, &succeeded(pod, now)));
                } else {
                    plan.wake(done_at);
                }
            }
            _ => {}
        }
    }
    plan
}

fn deadline(from: Timestamp, delay: SignedDuration) -> Timestamp {
    from.checked_add(delay).unwrap_or(Timestamp::MAX)
}

/// A condition keeping its `lastTransitionTime` if its status did not change.
fn pod_condition(
    pod: &Pod,
    kind: &str,
    status: bool,
    reason: Option<&str>,
    message: Option<String>,
    now: Timestamp,
) -> PodCondition {
    let status = if status { "True" } else { "False" };
    let since = condition(pod, kind)
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| time(now));
    PodCondition {
        type_: kind.into(),
        status: status.into(),
        reason: reason.map(String::from),
        message,
        last_transition_time: Some(since),
        ..Default::default()
    }
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec.as_ref().map_or(&[], |s| s.containers.as_slice())
}

fn init_containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default()
}

/// The container runtime's ID of one container of the pod.
fn container_id(pod: &Pod, container: &Container) -> String {
    format!(
        "containerd://{}",
        hex_digest(&format!("{}/{}", uid_of(pod), container.name), 64)
    )
}

/// The digest reference the runtime reports for an image (`nginx:1.27` → `nginx@sha256:…`).
fn image_id(image: &str) -> String {
    let repository = match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    };
    format!("{repository}@sha256:{}", hex_digest(image, 64))
}

fn container_status(
    pod: &Pod,
    c: &Container,
    state: ContainerState,
    ready: bool,
    started: bool,
    with_ids: bool,
) -> ContainerStatus {
    let image = c.image.clone().unwrap_or_default();
    ContainerStatus {
        name: c.name.clone(),
        image_id: if with_ids {
            image_id(&image)
        } else {
            String::new()
        },
        container_id: with_ids.then(|| container_id(pod, c)),
        image,
        ready,
        started: Some(started),
        restart_count: 0,
        state: Some(state),
        ..Default::default()
    }
}

fn names(cs: &[Container]) -> String {
    cs.iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Kubernetes' QoS class: Guaranteed when every container's requests equal its limits for
/// CPU and memory, BestEffort when nothing is requested or limited, else Burstable.
fn qos_class(pod: &Pod) -> &'static str {
    let all: Vec<&Container> = containers(pod).iter().chain(init_containers(pod)).collect();
    let resources = |c: &Container| c.resources.clone().unwrap_or_default();
    let nothing = all.iter().all(|c| {
        let r = resources(c);
        r.requests.unwrap_or_default().is_empty() && r.limits.unwrap_or_default().is_empty()
    });
    if nothing {
        return "BestEffort";
    }
    let guaranteed = all.iter().all(|c| {
        let r = resources(c);
        let limits = r.limits.unwrap_or_default();
        let requests = r.requests.unwrap_or_default();
        ["cpu", "memory"].iter().all(|k| {
            limits
                .get(*k)
                .is_some_and(|l| requests.get(*k).is_none_or(|q| q == l))
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Sets the pod's and its node's addresses (an empty address is left unset).
fn set_addresses(status: &mut PodStatus, pod_ip: &str, host_ip: &str) {
    if !pod_ip.is_empty() {
        status.pod_ip = Some(pod_ip.to_string());
        status.pod_ips = Some(vec![PodIP {
            ip: pod_ip.to_string(),
        }]);
    }
    if !host_ip.is_empty() {
        status.host_ip = Some(host_ip.to_string());
        status.host_ips = Some(vec![HostIP {
            ip: host_ip.to_string(),
        }]);
    }
}

/// The status of a pod whose containers are being created.
fn starting(pod: &Pod, host_ip: &str, now: Timestamp) -> PodStatus {
    let inits = init_containers(pod);
    let unready = Some(format!(
        "containers with unready status: [{}]",
        names(containers(pod))
    ));
    let initialized = if inits.is_empty() {
        pod_condition(pod, "Initialized", true, None, None, now)
    } else {
        pod_condition(
            pod,
            "Initialized",
            false,
            Some("ContainersNotInitialized"),
            Some(format!(
                "containers with incomplete status: [{}]",
                names(inits)
            )),
            now,
        )
    };
    let waiting = |reason: &str| ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message: None,
        }),
        ..Default::default()
    };
    let mut status = PodStatus {
        phase: Some("Pending".into()),
        conditions: Some(vec![
            pod_condition(pod, "PodReadyToStartContainers", false, None, None, now),
            initialized,
            pod_condition(
                pod,
                "Ready",
                false,
                Some("ContainersNotReady"),
                unready.clone(),
                now,
            ),
            pod_condition(
                pod,
                "ContainersReady",
                false,
                Some("ContainersNotReady"),
                unready,
                now,
            ),
            pod_condition(pod, "PodScheduled", true, None, None, now),
        ]),
        start_time: Some(time(now)),
        container_statuses: Some(
            containers(pod)
                .iter()
                .map(|c| {
                    container_status(pod, c, waiting("ContainerCreating"), false, false, false)
                })
                .collect(),
        ),
        init_container_statuses: (!inits.is_empty()).then(|| {
            inits
                .iter()
                .map(|c| container_status(pod, c, waiting("PodInitializing"), false, false, false))
                .collect()
        }),
        qos_class: Some(qos_class(pod).into()),
        ..Default::default()
    };
    set_addresses(&mut status, "", host_ip);
    status
}

fn completed(
    pod: &Pod,
    c: &Container,
    started: Option<jiff::Timestamp>,
    now: Timestamp,
) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: 0,
            reason: Some("Completed".into()),
            started_at: started.map(time),
            finished_at: Some(time(now)),
            container_id: Some(container_id(pod, c)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The status of a pod whose containers are all running and ready.
fn running(pod: &Pod, host_ip: &str, pod_ip: &str, now: Timestamp) -> PodStatus {
    let start_time = pod.status.as_ref().and_then(|s| s.start_time.clone());
    let inits = init_containers(pod);
    let mut status = PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![
            pod_condition(pod, "PodReadyToStartContainers", true, None, None, now),
            pod_condition(pod, "Initialized", true, None, None, now),
            pod_condition(pod, "Ready", true, None, None, now),
            pod_condition(pod, "ContainersReady", true, None, None, now),
            pod_condition(pod, "PodScheduled", true, None, None, now),
        ]),
        start_time: start_time.or_else(|| Some(time(now))),
        container_statuses: Some(
            containers(pod)
                .iter()
                .map(|c| {
                    let state = ContainerState {
                        running: Some(ContainerStateRunning {
                            started_at: Some(time(now)),
                        }),
                        ..Default::default()
                    };
                    container_status(pod, c, state, true, true, true)
                })
                .collect(),
        ),
        init_container_statuses: (!inits.is_empty()).then(|| {
            inits
                .iter()
                .map(|c| {
                    container_status(pod, c, completed(pod, c, Some(now), now), true, false, true)
                })
                .collect()
        }),
        qos_class: Some(qos_class(pod).into()),
        ..Default::default()
    };
    set_addresses(&mut status, pod_ip, host_ip);
    status
}

/// The status of a Job pod whose containers all exited successfully.
fn succeeded(pod: &Pod, now: Timestamp) -> PodStatus {
    let mut status = pod.status.clone().unwrap_or_default();
    let done = Some("PodCompleted");
    status.phase = Some("Succeeded".into());
    status.conditions = Some(vec![
        pod_condition(pod, "PodReadyToStartContainers", false, None, None, now),
        pod_condition(pod, "Initialized", true, done, None, now),
        pod_condition(pod, "Ready", false, done, None, now),
        pod_condition(pod, "ContainersReady", false, done, None, now),
        pod_condition(pod, "PodScheduled", true, None, None, now),
    ]);
    let started = condition(pod, "Ready")
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0);
    status.container_statuses = Some(
        containers(pod)
            .iter()
            .map(|c| container_status(pod, c, completed(pod, c, started, now), false, false, true))
            .collect(),
    );
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{node, pod_json};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn timing() -> Timing {
        Timing {
            readiness_delay: SignedDuration::from_secs(5),
            job_duration: SignedDuration::from_secs(10),
        }
    }

    fn bound(name: &str) -> Pod {
        let mut p: Pod = serde_json::from_value(pod_json(name)).unwrap();
        p.spec.as_mut().unwrap().node_name = Some("n1".into());
        p
    }

    fn apply(pod: &mut Pod, plan: &Plan) {
        for a in &plan.actions {
            if let Action::WriteStatus { target, status } = a
                && target.name == name_of(pod)
            {
                pod.status = Some(serde_json::from_value(status.clone()).unwrap());
            }
        }
    }

    #[test]
    fn a_bound_pod_gets_ready_after_the_delay() {
        let n = node("n1", "2", "4Gi", 110);
        let mut pod = bound("web-a");
        let t0 = t("2026-01-01T00:00:00Z");
        let plan = sync_node(&n, &[&pod], t0, &timing());
        assert_eq!(plan.wake_at, Some(t("2026-01-01T00:00:05Z")));
        apply(&mut pod, &plan);
        assert_eq!(phase(&pod), "Pending");
        let s = pod.status.clone().unwrap();
        assert_eq!(s.host_ip.as_deref(), Some("10.224.0.4"));
        let cs = &s.container_statuses.unwrap()[0];
        assert_eq!(
            cs.state
                .as_ref()
                .unwrap()
                .waiting
                .as_ref()
                .unwrap()
                .reason
                .as_deref(),
            Some("ContainerCreating")
        );
        assert_eq!(condition(&pod, "Ready").unwrap().status, "False");

        // Not yet: nothing to write, wake at the deadline.
        let early = sync_node(&n, &[&pod], t("2026-01-01T00:00:04Z"), &timing());
        assert!(early.actions.is_empty());
        assert_eq!(early.wake_at, Some(t("2026-01-01T00:00:05Z")));

        let plan = sync_node(&n, &[&pod], t("2026-01-01T00:00:05Z"), &timing());
        apply(&mut pod, &plan);
        assert_eq!(phase(&pod), "Running");
        for kind in ["Ready", "ContainersReady", "Initialized", "PodScheduled"] {
            assert_eq!(condition(&pod, kind).unwrap().status, "True", "{kind}");
        }
        let s = pod.status.clone().unwrap();
        assert_eq!(s.pod_ip.as_deref(), Some("10.244.0.2"));
        let cs = &s.container_statuses.unwrap()[0];
        assert!(cs.ready && cs.started == Some(true));
        assert!(
            cs.container_id
                .as_ref()
                .unwrap()
                .starts_with("containerd://")
        );
        assert_eq!(
            cs.state
                .as_ref()
                .unwrap()
                .running
                .as_ref()
                .unwrap()
                .started_at,
            Some(time(t("2026-01-01T00:00:05Z")))
        );
        assert_eq!(s.qos_class.as_deref(), Some("BestEffort"));
        assert_eq!(
            condition(&pod, "PodScheduled")
                .unwrap()
                .last_transition_time,
            Some(time(t0))
        );
        // Settled: nothing more.
        assert_eq!(
            sync_node(&n, &[&pod], t("2026-01-01T01:00:00Z"), &timing()),
            Plan::default()
        );
    }

    #[test]
    fn pod_ips_are_unique_on_a_node() {
        let n = node("n1", "2", "4Gi", 110);
        let t0 = t("2026-01-01T00:00:00Z");
        let mut pods: Vec<Pod> = (0..3).map(|i| bound(&format!("p{i}"))).collect();
        for now in [t0, t("2026-01-01T00:00:05Z")] {
            let refs: Vec<&Pod> = pods.iter().collect();
            let plan = sync_node(&n, &refs, now, &timing());
            for p in pods.iter_mut() {
                apply(p, &plan);
            }
        }
        let ips: BTreeSet<String> = pods
            .iter()
            .map(|p| p.status.as_ref().unwrap().pod_ip.clone().unwrap())
            .collect();
        assert_eq!(ips.len(), 3, "{ips:?}");
    }

    #[test]
    fn job_pods_succeed_after_running() {
        let n = node("n1", "2", "4Gi", 110);
        let mut pod = bound("batch-a");
        pod.metadata.owner_references = Some(vec![OwnerReference {
            kind: "Job".into(),
            controller: Some(true),
            ..Default::default()
        }]);
        let t0 = t("2026-01-01T00:00:00Z");
        let plan = sync_node(&n, &[&pod], t0, &timing());
        apply(&mut pod, &plan);
        let plan = sync_node(&n, &[&pod], t("2026-01-01T00:00:05Z"), &timing());
        assert_eq!(plan.wake_at, Some(t("2026-01-01T00:00:15Z")));
        apply(&mut pod, &plan);
        assert_eq!(phase(&pod), "Running");
        assert_eq!(
            sync_node(&n, &[&pod], t("2026-01-01T00:00:14Z"), &timing()).wake_at,
            Some(t("2026-01-01T00:00:15Z"))
        );
        let plan = sync_node(&n, &[&pod], t("2026-01-01T00:00:15Z"), &timing());
        apply(&mut pod, &plan);
        assert_eq!(phase(&pod), "Succeeded");
        let cs = &pod
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        let done = cs.state.as_ref().unwrap().terminated.as_ref().unwrap();
        assert_eq!(
            (done.exit_code, done.reason.as_deref()),
            (0, Some("Completed"))
        );
        assert_eq!(
            condition(&pod, "Ready").unwrap().reason.as_deref(),
            Some("PodCompleted")
        );
    }

    #[test]
    fn addresses_skip_network_gateway_and_broadcast() {
        let all: Vec<Ipv4Addr> = pod_addresses("10.244.3.0/24").collect();
        assert_eq!(all.first(), Some(&Ipv4Addr::new(10, 244, 3, 2)));
        assert_eq!(all.last(), Some(&Ipv4Addr::new(10, 244, 3, 254)));
        assert_eq!(all.len(), 253);
        assert_eq!(pod_addresses("bogus").count(), 0);
        assert_eq!(image_id("nginx:1.27").split('@').next(), Some("nginx"));
        assert_eq!(
            image_id("registry:5000/app").split('@').next(),
            Some("registry:5000/app")
        );
    }
}
