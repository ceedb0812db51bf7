//! Whole-cluster behaviour: every controller's plan applied to an in-memory cluster, pass after
//! pass, with the clock moved to each wake-up the controllers ask for.

use super::*;
use crate::objects::fixtures::{World, daemon_set, deployment, job, node, stateful_set, t0};
use crate::pod_state::{condition, is_ready, phase};
use crate::pod_template::POD_TEMPLATE_HASH;
use k8s_openapi::api::apps::v1::{DeploymentStrategy, RollingUpdateDeployment};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;

fn three_nodes() -> Vec<Node> {
    (1..=3)
        .map(|i| node(&format!("n{i}"), "2", "8Gi", 110))
        .collect()
}

fn deployment_status(w: &World) -> k8s_openapi::api::apps::v1::DeploymentStatus {
    w.state.deployments[0].status.clone().unwrap_or_default()
}

fn condition_of(w: &World, kind: &str) -> (String, String) {
    let status = deployment_status(w);
    let c = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_.as_deref() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind} condition"));
    (c.status.unwrap_or_default(), c.reason.unwrap_or_default())
}

#[test]
fn a_deployment_becomes_available_after_the_readiness_delay() {
    let mut w = World::new(three_nodes());
    w.add(&deployment("web", 3, "500m"));
    w.settle();
    assert_eq!(w.state.replica_sets.len(), 1);
    let rs = &w.state.replica_sets[0];
    let hash = rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH].clone();
    assert_eq!(
        rs.metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    assert_eq!(w.state.pods.len(), 3);
    let nodes: std::collections::BTreeSet<&str> = w
        .state
        .pods
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.as_deref().unwrap())
        .collect();
    assert_eq!(nodes.len(), 3, "least-allocated spreads the replicas");
    assert!(w.state.pods.iter().all(|p| !is_ready(p)));
    assert_eq!(
        condition_of(&w, "Available"),
        ("False".into(), "MinimumReplicasUnavailable".into())
    );
    assert_eq!(
        w.last.wake_at,
        Some(t0() + jiff::SignedDuration::from_secs(5))
    );

    w.run();
    assert!(w.state.pods.iter().all(is_ready));
    let status = deployment_status(&w);
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.ready_replicas,
            status.available_replicas,
            status.unavailable_replicas,
            status.observed_generation
        ),
        (Some(3), Some(3), Some(3), Some(3), None, Some(1))
    );
    let kinds: Vec<String> = status
        .conditions
        .unwrap()
        .iter()
        .map(|c| c.type_.clone().unwrap())
        .collect();
    assert_eq!(kinds, ["Available", "Progressing"]);
    assert_eq!(
        condition_of(&w, "Available"),
        ("True".into(), "MinimumReplicasAvailable".into())
    );
    assert_eq!(
        condition_of(&w, "Progressing"),
        ("True".into(), "NewReplicaSetAvailable".into())
    );
    let reasons: Vec<&str> = w.events.iter().map(|e| e.reason.as_str()).collect();
    assert!(reasons.contains(&"ScalingReplicaSet"));
    assert_eq!(
        reasons.iter().filter(|r| **r == "SuccessfulCreate").count(),
        3
    );
    assert_eq!(reasons.iter().filter(|r| **r == "Scheduled").count(), 3);
}

#[test]
fn an_unfittable_deployment_stays_pending_and_says_why() {
    let mut w = World::new(three_nodes());
    w.add(&deployment("huge", 1, "1000"));
    w.run();
    let pod = &w.state.pods[0];
    assert_eq!(phase(pod), "Pending");
    let scheduled = condition(pod, "PodScheduled").unwrap();
    assert_eq!(
        (
            scheduled.status.as_str(),
            scheduled.reason.as_deref(),
            scheduled.message.as_deref()
        ),
        (
            "False",
            Some("Unschedulable"),
            Some("0/3 nodes are available: 3 Insufficient cpu.")
        )
    );
    assert_eq!(
        condition_of(&w, "Available"),
        ("False".into(), "MinimumReplicasUnavailable".into())
    );
    let failed: Vec<&str> = w
        .events
        .iter()
        .filter(|e| e.reason == "FailedScheduling")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(
        failed,
        ["0/3 nodes are available: 3 Insufficient cpu."],
        "recorded once"
    );
}

#[test]
fn scaling_down_deletes_pods_and_deleting_the_owner_takes_everything() {
    let mut w = World::new(three_nodes());
    w.add(&deployment("web", 3, "100m"));
    w.run();
    w.edit(|s| &mut s.deployments, "web", |d| d.spec.replicas = Some(1));
    w.run();
    assert_eq!(w.state.pods.len(), 1);
    assert_eq!(deployment_status(&w).available_replicas, Some(1));
    assert!(
        w.events
            .iter()
            .any(|e| e.message.contains("Scaled down replica set"))
    );
    w.delete_deployment("web");
    assert!(w.state.replica_sets.is_empty() && w.state.pods.is_empty());
}

#[test]
fn stateful_set_pods_come_up_in_order() {
    let mut w = World::new(three_nodes());
    w.add(&stateful_set("db", 3, None));
    let mut order: Vec<String> = Vec::new();
    w.run_checking(&mut |w| {
        for p in &w.state.pods {
            let name = p.metadata.name.clone().unwrap();
            if !order.contains(&name) {
                // A pod appears only once every lower ordinal is ready.
                for earlier in &w.state.pods {
                    let e = earlier.metadata.name.as_deref().unwrap();
                    if e < name.as_str() && !order.contains(&name) {
                        assert!(is_ready(earlier), "{name} created before {e} was ready");
                    }
                }
                order.push(name);
            }
        }
    });
    assert_eq!(order, ["db-0", "db-1", "db-2"]);
    let status = w.state.stateful_sets[0].status.clone().unwrap();
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.current_replicas,
            status.updated_replicas,
            status.available_replicas
        ),
        (3, Some(3), Some(3), Some(3), Some(3))
    );
    assert_eq!(status.current_revision, status.update_revision);
}

#[test]
fn a_daemon_set_runs_one_pod_per_node() {
    let mut w = World::new(three_nodes());
    w.add(&daemon_set("agent", None));
    w.run();
    let mut nodes: Vec<&str> = w
        .state
        .pods
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.as_deref().unwrap())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["n1", "n2", "n3"]);
    let status = w.state.daemon_sets[0].status.clone().unwrap();
    assert_eq!(
        (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_ready,
            status.number_available,
            status.updated_number_scheduled
        ),
        (3, 3, 3, Some(3), Some(3))
    );
}

#[test]
fn a_job_runs_to_completion() {
    let mut w = World::new(three_nodes());
    w.add(&job("batch", Some(3), Some(2)));
    let mut most_active = 0;
    w.run_checking(&mut |w| {
        let active = w
            .state
            .pods
            .iter()
            .filter(|p| phase(p) != "Succeeded")
            .count();
        most_active = most_active.max(active);
    });
    assert_eq!(most_active, 2, "parallelism bounds the running pods");
    let status = w.state.jobs[0].status.clone().unwrap();
    assert_eq!(status.succeeded, Some(3));
    assert_eq!(status.active, None);
    let complete = status.conditions.unwrap();
    assert_eq!(
        (complete[0].type_.as_str(), complete[0].status.as_str()),
        ("Complete", "True")
    );
    assert_eq!(
        w.state
            .pods
            .iter()
            .filter(|p| phase(p) == "Succeeded")
            .count(),
        3
    );
}

fn intstr(v: u8) -> IntOrString {
    if v.is_multiple_of(2) {
        IntOrString::Int(i32::from(v / 2))
    } else {
        IntOrString::String(format!("{}%", v / 2 * 10))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A template change rolls out without dropping below `replicas - maxUnavailable`
    /// available pods or going above `replicas + maxSurge` pods, and ends fully updated.
    #[test]
    fn rolling_updates_respect_their_bounds(
        replicas in 1i32..6,
        surge in 0u8..8,
        unavailable in 0u8..8,
        new_replicas in 1i32..6,
    ) {
        let mut w = World::new(vec![node("n1", "64", "64Gi", 110), node("n2", "64", "64Gi", 110)]);
        let mut d = deployment("web", replicas, "100m");
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(intstr(surge)),
                max_unavailable: Some(intstr(unavailable)),
            }),
        });
        w.add(&d);
        w.run();
        prop_assert_eq!(deployment_status(&w).available_replicas, Some(replicas));
        w.edit(|s| &mut s.deployments, "web", |d| {
            d.spec.replicas = Some(new_replicas);
            d.spec.template.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.28".into());
        });
        let wanted = new_replicas;
        let strategy = crate::objects::scaled_value;
        let max_surge = strategy(Some(&intstr(surge)), "25%", wanted, true);
        let mut max_unavailable = strategy(Some(&intstr(unavailable)), "25%", wanted, false);
        if max_surge == 0 && max_unavailable == 0 {
            max_unavailable = 1;
        }
        let ceiling = wanted.max(replicas) + max_surge;
        let floor = (wanted.min(replicas) - max_unavailable).max(0);
        let mut violations = Vec::new();
        w.run_checking(&mut |w| {
            let active = w.state.pods.len() as i32;
            let available = w.state.pods.iter().filter(|p| is_ready(p)).count() as i32;
            if active > ceiling || available < floor {
                violations.push((active, available));
            }
        });
        prop_assert!(violations.is_empty(), "pods/available outside [{floor}, {ceiling}]: {violations:?}");
        let status = deployment_status(&w);
        prop_assert_eq!(
            (status.replicas, status.updated_replicas, status.available_replicas),
            (Some(wanted), Some(wanted), Some(wanted))
        );
        prop_assert_eq!(condition_of(&w, "Progressing").1, "NewReplicaSetAvailable");
        prop_assert_eq!(condition_of(&w, "Available").0, "True");
        let live_sets = w.state.replica_sets.iter().filter(|rs| rs.spec.replicas != Some(0)).count();
        prop_assert_eq!(live_sets, 1);
        prop_assert_eq!(w.state.replica_sets.len(), 2, "the old revision is kept as history");
    }

    /// Whatever happens, a settled cluster asks for nothing more: every controller is
    /// idempotent.
    #[test]
    fn settled_clusters_are_quiet(replicas in 0i32..5, sets in 0i32..4, completions in 1i32..4) {
        let mut w = World::new(three_nodes());
        w.add(&deployment("web", replicas, "100m"));
        w.add(&stateful_set("db", sets, Some("Parallel")));
        w.add(&daemon_set("agent", Some(1)));
        w.add(&job("batch", Some(completions), Some(2)));
        w.run();
        prop_assert_eq!(w.step(), 0);
        let later = w.now + jiff::SignedDuration::from_secs(3600);
        prop_assert_eq!(plan(&w.state, w.settings(), &mut Default::default(), later).actions, vec![]);
    }
}
