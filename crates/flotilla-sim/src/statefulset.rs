//! The StatefulSet controller: pods `<name>-<ordinal>` created in order (each once its
//! predecessors are running and ready, unless `podManagementPolicy: Parallel`), removed from
//! the highest ordinal down, and replaced one at a time from the highest ordinal on a template
//! change (`RollingUpdate`, honouring `partition`).

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;

use crate::actions::{Action, Plan};
use crate::objects::{controller_reference, count, name_of, namespace_of, nonzero};
use crate::pod_state::{available_at, is_available, is_ready, is_terminal};
use crate::pod_template::{PodName, stamp, template_hash};

/// The label naming a pod's revision (`<statefulset>-<hash>`).
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// The label carrying a StatefulSet pod's own name.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label carrying a StatefulSet pod's ordinal.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// The ordinal of a pod of StatefulSet `set` (`web-3` → 3).
pub fn ordinal(set: &str, pod: &str) -> Option<i32> {
    let digits = pod.strip_prefix(set)?.strip_prefix('-')?;
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    digits.parse().ok()
}

fn revision_of(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}

/// One pass over a StatefulSet and the pods it controls.
pub fn reconcile(set: &StatefulSet, pods: &[&Pod], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let spec = &set.spec;
    if set.metadata.deletion_timestamp.is_some() {
        return plan;
    }
    let name = name_of(set);
    let replicas = spec.replicas.unwrap_or(1).max(0);
    let start = spec
        .ordinals
        .as_ref()
        .and_then(|o| o.start)
        .unwrap_or(0)
        .max(0);
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let parallel = spec.pod_management_policy.as_deref() == Some("Parallel");
    let update_revision = format!("{name}-{}", template_hash(&spec.template));
    let current_revision = set
        .status
        .as_ref()
        .and_then(|s| s.current_revision.clone())
        .unwrap_or_else(|| update_revision.clone());
    let mut members: Vec<(i32, &Pod)> = pods
        .iter()
        .filter_map(|p| ordinal(name, name_of(*p)).map(|o| (o, *p)))
        .collect();
    members.sort_by_key(|(o, _)| *o);
    let wanted = |o: i32| o >= start && o < start + replicas;
    let healthy = |p: &Pod| is_ready(p) && is_available(p, min_ready, now);

    // Replicas: create missing ordinals in order (all at once when Parallel), replace
    // finished pods.
    let mut blocked = false;
    for o in start..start + replicas {
        if blocked {
            break;
        }
        match members.iter().find(|(x, _)| *x == o).map(|(_, p)| *p) {
            None => {
                let pod_name = format!("{name}-{o}");
                let index = o.to_string();
                let mut pod = stamp(
                    &spec.template,
                    namespace_of(set),
                    PodName::Fixed(pod_name.clone()),
                    controller_reference(set),
                    &[
                        (REVISION_LABEL, &update_revision),
                        (POD_NAME_LABEL, &pod_name),
                        (POD_INDEX_LABEL, &index),
                    ],
                );
                if let Some(pod_spec) = pod.spec.as_mut() {
                    pod_spec.hostname = Some(pod_name.clone());
                    pod_spec.subdomain = spec.service_name.clone();
                }
                plan.push(Action::create_pod(&pod, set));
                blocked = !parallel;
            }
            Some(p) if is_terminal(p) || p.metadata.deletion_timestamp.is_some() => {
                if p.metadata.deletion_timestamp.is_none() {
                    plan.push(Action::delete_pod(p, set));
                }
                blocked = !parallel;
            }
            Some(p) => blocked = !parallel && !healthy(p),
        }
    }

    // Scale down: condemned pods go from the highest ordinal, one at a time once the rest
    // are healthy (all at once when Parallel).
    let condemned: Vec<&Pod> = members
        .iter()
        .rev()
        .filter(|(o, p)| !wanted(*o) && p.metadata.deletion_timestamp.is_none())
        .map(|(_, p)| *p)
        .collect();
    let all_wanted_healthy = (start..start + replicas).all(|o| {
        members
            .iter()
            .find(|(x, _)| *x == o)
            .is_some_and(|(_, p)| healthy(p))
    });
    if parallel {
        for p in &condemned {
            plan.push(Action::delete_pod(*p, set));
        }
    } else if let Some(p) = condemned.first()
        && !blocked
        && all_wanted_healthy
    {
        plan.push(Action::delete_pod(*p, set));
    }

    // Rolling update: once everything wanted is healthy, replace the highest outdated pod at
    // or above the partition.
    let rolling = spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .is_none_or(|t| t == "RollingUpdate");
    let partition = spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .unwrap_or(0);
    if rolling && condemned.is_empty() && all_wanted_healthy {
        let outdated = members.iter().rev().find(|(o, p)| {
            wanted(*o)
                && *o - start >= partition
                && revision_of(p) != Some(update_revision.as_str())
        });
        if let Some((_, p)) = outdated {
            plan.push(Action::delete_pod(*p, set));
        }
    }

    // Status: every created pod counts; revisions from the pods' labels.
    let live: Vec<&Pod> = members
        .iter()
        .map(|(_, p)| *p)
        .filter(|p| !is_terminal(p))
        .collect();
    let settled: Vec<&&Pod> = live
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    let ready = live.iter().filter(|p| is_ready(p)).count();
    let updated = settled
        .iter()
        .filter(|p| revision_of(p) == Some(update_revision.as_str()))
        .count();
    let mut status = StatefulSetStatus {
        observed_generation: set.metadata.generation,
        replicas: count(live.len()),
        ready_replicas: nonzero(ready),
        available_replicas: Some(count(
            live.iter()
                .filter(|p| is_available(p, min_ready, now))
                .count(),
        )),
        current_replicas: nonzero(
            settled
                .iter()
                .filter(|p| revision_of(p) == Some(current_revision.as_str()))
                .count(),
        ),
        updated_replicas: nonzero(updated),
        current_revision: Some(current_revision),
        update_revision: Some(update_revision.clone()),
        collision_count: Some(0),
        conditions: set.status.as_ref().and_then(|s| s.conditions.clone()),
    };
    if rolling && updated == live.len() && ready == live.len() {
        status.current_replicas = nonzero(updated);
        status.current_revision = Some(update_revision);
    }
    if set.status.as_ref() != Some(&status) {
        plan.push(Action::write_status(set, &status));
    }
    for p in &live {
        if let Some(at) = available_at(p, min_ready, now) {
            plan.wake(at);
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{created_pods, running_pod, stateful_set, written_status};

    fn now() -> Timestamp {
        "2026-01-01T00:01:00Z".parse().unwrap()
    }

    fn created(plan: &Plan) -> Vec<String> {
        created_pods(plan)
            .into_iter()
            .map(|pod| pod["metadata"]["name"].as_str().unwrap().to_string())
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

    fn member(set: &StatefulSet, o: i32, ready: bool) -> Pod {
        let mut p = running_pod(&format!("db-{o}"), "n1", "2026-01-01T00:00:00Z");
        let hash = format!("db-{}", template_hash(&set.spec.template));
        p.metadata
            .labels
            .get_or_insert_default()
            .insert(REVISION_LABEL.into(), hash);
        if !ready {
            p.status.as_mut().unwrap().conditions = None;
        }
        p
    }

    #[test]
    fn ordinals_parse_strictly() {
        assert_eq!(ordinal("web", "web-0"), Some(0));
        assert_eq!(ordinal("web", "web-12"), Some(12));
        assert_eq!(ordinal("web", "web-012"), None);
        assert_eq!(ordinal("web", "web-x"), None);
        assert_eq!(ordinal("web", "webby-1"), None);
        assert_eq!(ordinal("web", "web-"), None);
    }

    #[test]
    fn pods_come_up_one_at_a_time_in_order() {
        let set = stateful_set("db", 3, None);
        let plan = reconcile(&set, &[], now());
        assert_eq!(created(&plan), vec!["db-0"]);
        let Action::CreatePod { pod, .. } = &plan.actions[0] else {
            panic!()
        };
        assert_eq!(pod["spec"]["hostname"], "db-0");
        assert_eq!(pod["spec"]["subdomain"], "db");
        assert_eq!(pod["metadata"]["labels"][POD_NAME_LABEL], "db-0");
        assert_eq!(pod["metadata"]["labels"][POD_INDEX_LABEL], "0");
        let zero_starting = member(&set, 0, false);
        assert_eq!(
            created(&reconcile(&set, &[&zero_starting], now())),
            Vec::<String>::new()
        );
        let zero = member(&set, 0, true);
        assert_eq!(created(&reconcile(&set, &[&zero], now())), vec!["db-1"]);
        let parallel = stateful_set("db", 3, Some("Parallel"));
        assert_eq!(
            created(&reconcile(&parallel, &[], now())),
            vec!["db-0", "db-1", "db-2"]
        );
    }

    #[test]
    fn scale_down_removes_the_highest_ordinal_first() {
        let set = stateful_set("db", 1, None);
        let pods: Vec<Pod> = (0..3).map(|o| member(&set, o, true)).collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        assert_eq!(deleted(&reconcile(&set, &refs, now())), vec!["db-2"]);
    }

    #[test]
    fn template_changes_replace_the_highest_outdated_pod() {
        let set = stateful_set("db", 2, None);
        let mut pods: Vec<Pod> = (0..2).map(|o| member(&set, o, true)).collect();
        for p in &mut pods {
            p.metadata
                .labels
                .as_mut()
                .unwrap()
                .insert(REVISION_LABEL.into(), "db-old".into());
        }
        let refs: Vec<&Pod> = pods.iter().collect();
        let plan = reconcile(&set, &refs, now());
        assert_eq!(deleted(&plan), vec!["db-1"]);
    }

    #[test]
    fn status_reports_revisions_and_counts() {
        let set = stateful_set("db", 2, None);
        let pods: Vec<Pod> = (0..2).map(|o| member(&set, o, true)).collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        let plan = reconcile(&set, &refs, now());
        let status = written_status(&plan).unwrap();
        let revision = format!("db-{}", template_hash(&set.spec.template));
        assert_eq!(status["replicas"], 2);
        assert_eq!(status["readyReplicas"], 2);
        assert_eq!(status["availableReplicas"], 2);
        assert_eq!(status["currentReplicas"], 2);
        assert_eq!(status["updatedReplicas"], 2);
        assert_eq!(status["currentRevision"], revision.as_str());
        assert_eq!(status["updateRevision"], revision.as_str());
    }
}
