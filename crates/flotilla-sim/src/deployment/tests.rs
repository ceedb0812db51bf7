use super::*;
use crate::objects::fixtures::{deployment, t0};
use k8s_openapi::api::apps::v1::{DeploymentStrategy, ReplicaSetStatus, RollingUpdateDeployment};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

fn owned_rs(
    d: &Deployment,
    name: &str,
    spec: i32,
    available: i32,
    revision: i64,
    hash: &str,
) -> ReplicaSet {
    let mut rs = new_replica_set(d, hash, name, spec, revision, &bounds(d));
    rs.metadata.uid = Some(format!("uid-{name}"));
    rs.metadata.generation = Some(1);
    rs.metadata.creation_timestamp = Some(time(t0() + jiff::SignedDuration::from_secs(revision)));
    rs.status = Some(ReplicaSetStatus {
        replicas: spec.max(available),
        ready_replicas: Some(available),
        available_replicas: Some(available),
        observed_generation: Some(1),
        ..Default::default()
    });
    rs
}

fn rolling(d: &mut Deployment, surge: IntOrString, unavailable: IntOrString) {
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(surge),
            max_unavailable: Some(unavailable),
        }),
    });
}

fn status(plan: &Plan) -> DeploymentStatus {
    plan.actions
        .iter()
        .find_map(|a| match a {
            Action::WriteStatus { status, .. } => {
                Some(serde_json::from_value(status.clone()).unwrap())
            }
            _ => None,
        })
        .expect("a status write")
}

fn scaled(plan: &Plan) -> Vec<(String, i32)> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Update(v) if v["kind"] == "ReplicaSet" => Some((
                v["metadata"]["name"].as_str().unwrap().to_string(),
                v["spec"]["replicas"].as_i64().unwrap() as i32,
            )),
            _ => None,
        })
        .collect()
}

fn conditions(s: &DeploymentStatus) -> Vec<(String, String, String)> {
    s.conditions
        .iter()
        .flatten()
        .map(|c| {
            (
                c.type_.clone().unwrap(),
                c.reason.clone().unwrap(),
                c.message.clone().unwrap(),
            )
        })
        .collect()
}

#[test]
fn bounds_resolve_percentages_like_kubernetes() {
    let mut d = deployment("web", 10, "1");
    assert_eq!(
        bounds(&d),
        Bounds {
            replicas: 10,
            rolling: true,
            max_surge: 3,
            max_unavailable: 2
        }
    );
    rolling(&mut d, IntOrString::Int(0), IntOrString::Int(0));
    assert_eq!(
        bounds(&d).max_unavailable,
        1,
        "0 and 0 would never progress"
    );
    rolling(
        &mut d,
        IntOrString::String("0%".into()),
        IntOrString::Int(20),
    );
    assert_eq!(bounds(&d).max_unavailable, 10, "capped at replicas");
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    assert_eq!(
        bounds(&d),
        Bounds {
            replicas: 10,
            rolling: false,
            max_surge: 0,
            max_unavailable: 0
        }
    );
}

#[test]
fn new_replica_set_growth_is_capped_by_surge() {
    let b = Bounds {
        replicas: 4,
        rolling: true,
        max_surge: 1,
        max_unavailable: 1,
    };
    // (all pods, new RS now) → new RS target.
    let cases = [
        ((0, 0), 4),
        ((4, 0), 1),
        ((5, 1), 1),
        ((4, 2), 3),
        ((3, 3), 4),
        ((6, 0), 0),
    ];
    for ((all, current), want) in cases {
        assert_eq!(
            new_replicas(&b, all, current),
            want,
            "all={all} current={current}"
        );
    }
}

#[test]
fn a_new_deployment_creates_its_replica_set_and_reports_progress() {
    let d = deployment("web", 3, "100m");
    let plan = reconcile(&d, &[], t0());
    let hash = template_hash(&d.spec.template);
    let rs = plan
        .actions
        .iter()
        .find_map(|a| match a {
            Action::Create(v) => Some(serde_json::from_value::<ReplicaSet>(v.clone()).unwrap()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        rs.metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    assert_eq!(rs.spec.replicas, Some(3));
    assert_eq!(
        rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH],
        hash
    );
    assert_eq!(
        rs.spec.selector.match_labels.as_ref().unwrap()[POD_TEMPLATE_HASH],
        hash
    );
    let template_labels = rs
        .spec
        .template
        .as_ref()
        .unwrap()
        .metadata
        .as_ref()
        .unwrap()
        .labels
        .clone()
        .unwrap();
    assert_eq!(template_labels[POD_TEMPLATE_HASH], hash);
    assert_eq!(template_labels["app"], "web");
    assert_eq!(rs.metadata.annotations.as_ref().unwrap()[REVISION], "1");
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.uid.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Deployment", "uid-web", Some(true), Some(true))
    );
    assert!(plan.actions.iter().any(|a| matches!(a, Action::Record(n)
        if n.reason == "ScalingReplicaSet" && n.message == format!("Scaled up replica set web-{hash} to 3"))));
    assert!(plan.actions.iter().any(|a| matches!(a, Action::Update(v)
        if v["kind"] == "Deployment" && v["metadata"]["annotations"][REVISION] == "1")));
    let s = status(&plan);
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.unavailable_replicas, Some(3));
    assert_eq!(
        conditions(&s),
        vec![
            (
                "Progressing".into(),
                "NewReplicaSetCreated".into(),
                format!("Created new replica set \"web-{hash}\"")
            ),
            (
                "Available".into(),
                "MinimumReplicasUnavailable".into(),
                "Deployment does not have minimum availability.".into()
            ),
        ]
    );
}

#[test]
fn rolling_update_scales_old_sets_down_only_as_availability_allows() {
    let mut d = deployment("web", 4, "100m");
    rolling(&mut d, IntOrString::Int(1), IntOrString::Int(1));
    let hash = template_hash(&d.spec.template);
    let new_name = format!("web-{hash}");
    let old = owned_rs(&d, "web-old", 4, 4, 1, "old");
    // The new set was just created with 1 pod (surge 1): old may lose 1 (4+1-3-1).
    let new = owned_rs(&d, &new_name, 1, 0, 2, &hash);
    assert_eq!(
        scaled(&reconcile(&d, &[&old, &new], t0())),
        vec![("web-old".into(), 3)]
    );
    // Old scaled to 3, new not available yet: nothing may go, nothing may grow.
    let old3 = owned_rs(&d, "web-old", 3, 3, 1, "old");
    assert_eq!(
        scaled(&reconcile(&d, &[&old3, &new], t0())),
        vec![(new_name.clone(), 2)]
    );
    // New pods available: old shrinks again.
    let new2 = owned_rs(&d, &new_name, 2, 2, 2, &hash);
    assert_eq!(
        scaled(&reconcile(&d, &[&old3, &new2], t0())),
        vec![("web-old".into(), 1)]
    );
    // A set that has not acted on its latest spec yet holds the roll-down back.
    let mut lagging = old3.clone();
    lagging.metadata.generation = Some(2);
    assert_eq!(scaled(&reconcile(&d, &[&lagging, &new2], t0())), vec![]);
}

#[test]
fn min_ready_seconds_follow_the_deployment() {
    let mut d = deployment("web", 1, "100m");
    let hash = template_hash(&d.spec.template);
    let rs = owned_rs(&d, &format!("web-{hash}"), 1, 1, 1, &hash);
    d.spec.min_ready_seconds = Some(30);
    let plan = reconcile(&d, &[&rs], t0());
    let updated = plan.actions.iter().find_map(|a| match a {
        Action::Update(v) if v["kind"] == "ReplicaSet" => {
            Some(v["spec"]["minReadySeconds"].clone())
        }
        _ => None,
    });
    assert_eq!(updated, Some(serde_json::json!(30)));

    // A paused Deployment keeps its ReplicaSet current but does not scale it.
    d.spec.paused = Some(true);
    d.spec.replicas = Some(5);
    let plan = reconcile(&d, &[&rs], t0());
    let updates: Vec<(serde_json::Value, serde_json::Value)> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Update(v) if v["kind"] == "ReplicaSet" => Some((
                v["spec"]["minReadySeconds"].clone(),
                v["spec"]["replicas"].clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(updates, vec![(serde_json::json!(30), serde_json::json!(1))]);
    assert!(!plan.actions.iter().any(|a| matches!(a, Action::Record(_))));
}

#[test]
fn unhealthy_old_pods_go_first() {
    let mut d = deployment("web", 4, "100m");
    rolling(&mut d, IntOrString::Int(0), IntOrString::Int(1));
    let hash = template_hash(&d.spec.template);
    let new = owned_rs(&d, &format!("web-{hash}"), 0, 0, 3, &hash);
    let a = owned_rs(&d, "web-a", 2, 0, 1, "a");
    let b = owned_rs(&d, "web-b", 2, 2, 2, "b");
    // allPods 4, minAvailable 3, newUnavailable 0 → 1 may go; a's unhealthy pods are free,
    // but only 1 fits the budget, and then 2 available ≤ 3 stops further scale-down.
    assert_eq!(
        scaled(&reconcile(&d, &[&new, &a, &b], t0())),
        vec![("web-a".into(), 1)]
    );
}

#[test]
fn recreate_waits_for_old_pods_to_go() {
    let mut d = deployment("web", 2, "100m");
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    let old = owned_rs(&d, "web-old", 2, 2, 1, "old");
    let plan = reconcile(&d, &[&old], t0());
    assert_eq!(scaled(&plan), vec![("web-old".into(), 0)]);
    assert!(!plan.actions.iter().any(|a| matches!(a, Action::Create(_))));
    let mut emptied = owned_rs(&d, "web-old", 0, 0, 1, "old");
    emptied.status.as_mut().unwrap().replicas = 0;
    let plan = reconcile(&d, &[&emptied], t0());
    let created = plan.actions.iter().find_map(|a| match a {
        Action::Create(v) => Some(v["spec"]["replicas"].clone()),
        _ => None,
    });
    assert_eq!(created, Some(serde_json::json!(2)));
}

#[test]
fn a_complete_rollout_reports_success_and_prunes_history() {
    let mut d = deployment("web", 2, "100m");
    d.spec.revision_history_limit = Some(1);
    d.metadata.annotations = Some([(REVISION.to_string(), "3".to_string())].into());
    let hash = template_hash(&d.spec.template);
    let new = owned_rs(&d, &format!("web-{hash}"), 2, 2, 3, &hash);
    let mut oldest = owned_rs(&d, "web-1", 0, 0, 1, "one");
    oldest.status.as_mut().unwrap().replicas = 0;
    let mut older = owned_rs(&d, "web-2", 0, 0, 2, "two");
    older.status.as_mut().unwrap().replicas = 0;
    let plan = reconcile(&d, &[&new, &oldest, &older], t0());
    let s = status(&plan);
    assert_eq!(
        (
            s.replicas,
            s.updated_replicas,
            s.ready_replicas,
            s.available_replicas,
            s.unavailable_replicas
        ),
        (Some(2), Some(2), Some(2), Some(2), None)
    );
    assert_eq!(
        conditions(&s),
        vec![
            (
                "Available".into(),
                "MinimumReplicasAvailable".into(),
                "Deployment has minimum availability.".into()
            ),
            (
                "Progressing".into(),
                "NewReplicaSetAvailable".into(),
                format!("ReplicaSet \"web-{hash}\" has successfully progressed.")
            ),
        ]
    );
    let deleted: Vec<String> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Delete(r) => Some(r.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, vec!["web-1"]);
    let mut settled = d.clone();
    settled.status = Some(s);
    let again = reconcile(&settled, &[&new, &older], t0());
    assert!(
        !again
            .actions
            .iter()
            .any(|a| matches!(a, Action::WriteStatus { .. })),
        "{again:?}"
    );
}

#[test]
fn conditions_keep_their_transition_time_while_status_holds() {
    let t1 = t0() + jiff::SignedDuration::from_secs(60);
    let mut list = vec![condition("Available", "False", "A", "a".into(), t0())];
    set_condition(
        &mut list,
        condition("Available", "False", "A", "changed".into(), t1),
    );
    assert_eq!(
        list[0].message.as_deref(),
        Some("a"),
        "same status and reason: unchanged"
    );
    set_condition(
        &mut list,
        condition("Available", "False", "B", "b".into(), t1),
    );
    assert_eq!(list[0].last_transition_time, Some(time(t0())));
    assert_eq!(list[0].last_update_time, Some(time(t1)));
    list.push(condition("Progressing", "True", "P", "p".into(), t0()));
    set_condition(
        &mut list,
        condition("Available", "True", "C", "c".into(), t1),
    );
    assert_eq!(
        list[1].type_.as_deref(),
        Some("Available"),
        "a replaced condition moves last"
    );
    assert_eq!(list[1].last_transition_time, Some(time(t1)));
}
