//! The DaemonSet controller: one pod per node the pod template fits (node selector, required
//! node affinity, taints against the template's tolerations plus the ones the controller
//! adds), pinned to its node by node affinity and placed by the scheduler; outdated pods
//! replaced within `maxUnavailable` (default 1).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetStatus};
use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodSpec, PodTemplateSpec, Toleration,
};

use crate::actions::{Action, Plan};
use crate::node_fit::misfit;
use crate::objects::{controller_reference, count, name_of, namespace_of, nonzero, scaled_value};
use crate::pod_state::{available_at, is_active, is_available, is_ready, phase};
use crate::pod_template::{PodName, stamp, template_hash};
use crate::statefulset::REVISION_LABEL;

/// The label carrying the DaemonSet generation a pod was made from.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// The tolerations the DaemonSet controller adds to every daemon pod
/// (`util.AddOrUpdateDaemonPodTolerations`), so daemons run on cordoned and pressured nodes.
pub fn daemon_tolerations(host_network: bool) -> Vec<Toleration> {
    let exists = |key: &str, effect: &str| Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Default::default()
    };
    let mut out = vec![
        exists("node.kubernetes.io/not-ready", "NoExecute"),
        exists("node.kubernetes.io/unreachable", "NoExecute"),
        exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
        exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
        exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
        exists("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        out.push(exists(
            "node.kubernetes.io/network-unavailable",
            "NoSchedule",
        ));
    }
    out
}

/// The pod spec a daemon pod gets: the template's, with the daemon tolerations added.
fn daemon_spec(template: &PodTemplateSpec) -> PodSpec {
    let mut spec = template.spec.clone().unwrap_or_default();
    let host_network = spec.host_network == Some(true);
    let tolerations = spec.tolerations.get_or_insert_default();
    for t in daemon_tolerations(host_network) {
        if !tolerations.contains(&t) {
            tolerations.push(t);
        }
    }
    spec
}

/// The node a daemon pod is for: its `nodeName`, else its node-affinity pin.
pub fn target_node(pod: &Pod) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    if let Some(n) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(n);
    }
    spec.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms
        .iter()
        .flat_map(|t| t.match_fields.iter().flatten())
        .find(|r| r.key == "metadata.name" && r.operator == "In")
        .and_then(|r| r.values.as_ref()?.first())
        .map(String::as_str)
}

/// Pins a daemon pod to `node` (`ReplaceDaemonSetPodNodeNameNodeAffinity`).
fn pin(spec: &mut PodSpec, node: &str) {
    let term = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: Some(vec![node.into()]),
        }]),
    };
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![term],
    });
}

/// One pass over a DaemonSet, the pods it controls, and the cluster's nodes.
pub fn reconcile(ds: &DaemonSet, pods: &[&Pod], nodes: &[Node], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let spec = &ds.spec;
    if ds.metadata.deletion_timestamp.is_some() {
        return plan;
    }
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let hash = template_hash(&spec.template);
    let generation = ds.metadata.generation.unwrap_or(1).to_string();
    let wanted_spec = daemon_spec(&spec.template);
    let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    let mut unplaced = Vec::new();
    for pod in pods
        .iter()
        .copied()
        .filter(|p| is_active(p) || phase(p) == "Failed")
    {
        match target_node(pod) {
            Some(node) => by_node.entry(node).or_default().push(pod),
            None => unplaced.push(pod),
        }
    }
    let rolling = spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .is_none_or(|t| t == "RollingUpdate");

    let mut desired = 0;
    let mut scheduled = 0;
    let mut misscheduled = 0;
    let mut ready = 0;
    let mut available = 0;
    let mut updated = 0;
    let mut outdated: Vec<(&Pod, bool)> = Vec::new();
    let mut sorted_nodes: Vec<&Node> = nodes.iter().collect();
    sorted_nodes.sort_by_key(|n| name_of(*n));
    for node in &sorted_nodes {
        let node_name = name_of(*node);
        let mut here = by_node.remove(node_name).unwrap_or_default();
        here.sort_by(|a, b| {
            (&a.metadata.creation_timestamp, name_of(*a))
                .cmp(&(&b.metadata.creation_timestamp, name_of(*b)))
        });
        let should_run = misfit(&wanted_spec, node).is_none();
        let (failed, running): (Vec<&Pod>, Vec<&Pod>) =
            here.into_iter().partition(|p| phase(p) == "Failed");
        for p in failed {
            plan.push(Action::delete_pod(p, ds));
        }
        if !should_run {
            if !running.is_empty() {
                misscheduled += 1;
            }
            for p in running {
                plan.push(Action::delete_pod(p, ds));
            }
            continue;
        }
        desired += 1;
        let Some((keep, extra)) = running.split_first() else {
            let mut pod = stamp(
                &spec.template,
                namespace_of(ds),
                PodName::Generate(format!("{}-", name_of(ds))),
                controller_reference(ds),
                &[
                    (REVISION_LABEL, &hash),
                    (TEMPLATE_GENERATION_LABEL, &generation),
                ],
            );
            let mut pod_spec = wanted_spec.clone();
            pin(&mut pod_spec, node_name);
            pod.spec = Some(pod_spec);
            plan.push(Action::create_pod(&pod, ds));
            continue;
        };
        for p in extra {
            plan.push(Action::delete_pod(*p, ds));
        }
        scheduled += 1;
        let is_current = keep
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(REVISION_LABEL))
            == Some(&hash);
        if is_current {
            updated += 1;
        }
        if is_ready(keep) {
            ready += 1;
        }
        let up = is_available(keep, min_ready, now);
        if up {
            available += 1;
        } else if let Some(at) = available_at(keep, min_ready, now) {
            plan.wake(at);
        }
        if !is_current {
            outdated.push((keep, up));
        }
    }
    // Pods for nodes that no longer exist, or never pinned to one.
    for p in by_node.into_values().flatten().chain(unplaced) {
        plan.push(Action::delete_pod(p, ds));
    }

    if rolling {
        let max_unavailable = scaled_value(
            spec.update_strategy
                .as_ref()
                .and_then(|s| s.rolling_update.as_ref())
                .and_then(|r| r.max_unavailable.as_ref()),
            "1",
            count(desired),
            true,
        )
        .max(1);
        let unavailable = count(desired) - count(available);
        // Outdated pods that are down anyway go first and cost nothing.
        outdated.sort_by_key(|(_, up)| *up);
        let mut budget = max_unavailable - unavailable;
        for (p, up) in outdated {
            if up {
                if budget <= 0 {
                    break;
                }
                budget -= 1;
            }
            plan.push(Action::delete_pod(p, ds));
        }
    }

    let status = DaemonSetStatus {
        observed_generation: ds.metadata.generation,
        desired_number_scheduled: count(desired),
        current_number_scheduled: count(scheduled),
        number_misscheduled: count(misscheduled),
        number_ready: count(ready),
        number_available: nonzero(available),
        number_unavailable: nonzero(desired - available),
        updated_number_scheduled: nonzero(updated),
        collision_count: ds.status.as_ref().and_then(|s| s.collision_count),
        conditions: ds.status.as_ref().and_then(|s| s.conditions.clone()),
    };
    if ds.status.as_ref() != Some(&status) {
        plan.push(Action::write_status(ds, &status));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{created_pods, daemon_set, node, running_pod, written_status};
    use k8s_openapi::api::core::v1::Taint;

    fn now() -> Timestamp {
        "2026-01-01T00:01:00Z".parse().unwrap()
    }

    fn created_for(plan: &Plan) -> Vec<String> {
        created_pods(plan)
            .into_iter()
            .filter_map(|pod| {
                let p: Pod = serde_json::from_value(pod.clone()).unwrap();
                target_node(&p).map(String::from)
            })
            .collect()
    }

    fn deleted(plan: &Plan) -> Vec<String> {
        plan.actions
            .iter()
            .filter_map(|a| match a {
                Action::DeletePod { pod, .. } => Some(pod.name.clone()),
                _ => None,
            })
            .collect()
    }

    fn daemon(ds: &DaemonSet, name: &str, on: &str) -> Pod {
        let mut p = running_pod(name, on, "2026-01-01T00:00:00Z");
        p.metadata
            .labels
            .get_or_insert_default()
            .insert(REVISION_LABEL.into(), template_hash(&ds.spec.template));
        p
    }

    #[test]
    fn one_pod_per_fitting_node_including_cordoned_ones() {
        let ds = daemon_set("agent", None);
        let mut cordoned = node("n2", "2", "4Gi", 110);
        cordoned.spec.get_or_insert_default().unschedulable = Some(true);
        let mut tainted = node("n3", "2", "4Gi", 110);
        tainted.spec.get_or_insert_default().taints = Some(vec![Taint {
            key: "dedicated".into(),
            value: Some("gpu".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        let nodes = vec![node("n1", "2", "4Gi", 110), cordoned, tainted];
        let plan = reconcile(&ds, &[], &nodes, now());
        assert_eq!(created_for(&plan), vec!["n1", "n2"]);
        let Action::CreatePod { pod, .. } = &plan.actions[0] else {
            panic!()
        };
        assert_eq!(pod["metadata"]["generateName"], "agent-");
        let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
        assert!(tolerations.len() >= 6);
    }

    #[test]
    fn node_selector_limits_nodes_and_misscheduled_pods_go() {
        let mut ds = daemon_set("agent", None);
        ds.spec.template.spec.as_mut().unwrap().node_selector =
            Some([("kubernetes.io/hostname".to_string(), "n1".to_string())].into());
        let nodes = vec![node("n1", "2", "4Gi", 110), node("n2", "2", "4Gi", 110)];
        let stray = daemon(&ds, "agent-b", "n2");
        let plan = reconcile(&ds, &[&stray], &nodes, now());
        assert_eq!(created_for(&plan), vec!["n1"]);
        assert_eq!(deleted(&plan), vec!["agent-b"]);
        let status = written_status(&plan).unwrap();
        assert_eq!(status["desiredNumberScheduled"], 1);
        assert_eq!(status["numberMisscheduled"], 1);
        assert_eq!(status["currentNumberScheduled"], 0);
    }

    #[test]
    fn status_counts_ready_and_updated_daemons() {
        let ds = daemon_set("agent", None);
        let nodes = vec![node("n1", "2", "4Gi", 110), node("n2", "2", "4Gi", 110)];
        let a = daemon(&ds, "agent-a", "n1");
        let b = daemon(&ds, "agent-b", "n2");
        let plan = reconcile(&ds, &[&a, &b], &nodes, now());
        let Some(Action::WriteStatus { status, .. }) = plan.actions.first() else {
            panic!("{plan:?}")
        };
        assert_eq!(status["desiredNumberScheduled"], 2);
        assert_eq!(status["currentNumberScheduled"], 2);
        assert_eq!(status["numberReady"], 2);
        assert_eq!(status["numberAvailable"], 2);
        assert_eq!(status["updatedNumberScheduled"], 2);
        assert_eq!(status["numberMisscheduled"], 0);
        assert!(status.get("numberUnavailable").is_none());
    }

    #[test]
    fn outdated_daemons_roll_one_at_a_time() {
        let ds = daemon_set("agent", None);
        let nodes = vec![node("n1", "2", "4Gi", 110), node("n2", "2", "4Gi", 110)];
        let mut a = daemon(&ds, "agent-a", "n1");
        let mut b = daemon(&ds, "agent-b", "n2");
        for p in [&mut a, &mut b] {
            p.metadata
                .labels
                .as_mut()
                .unwrap()
                .insert(REVISION_LABEL.into(), "old".into());
        }
        let plan = reconcile(&ds, &[&a, &b], &nodes, now());
        assert_eq!(deleted(&plan), vec!["agent-a"]);
    }
}
