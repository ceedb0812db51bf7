//! The Job controller: up to `parallelism` pods at a time until `completions` of them have
//! succeeded, then the `Complete` condition.

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;

use crate::actions::{Action, EventNote, Plan};
use crate::objects::{
    ObjectRef, controller_reference, count, name_of, namespace_of, nonzero, time, uid_of,
};
use crate::pod_state::{is_active, is_ready, phase};
use crate::pod_template::{PodName, stamp};
use crate::replicaset::BURST;

const COMPONENT: &str = "job-controller";

/// Whether the Job has a `Complete` or `Failed` condition that is True.
pub fn is_finished(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        })
}

/// One pass over a Job and the pods it controls.
pub fn reconcile(job: &Job, pods: &[&Pod], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let Some(spec) = &job.spec else { return plan };
    if job.metadata.deletion_timestamp.is_some() {
        return plan;
    }
    let old = job.status.clone().unwrap_or_default();
    let active: Vec<&Pod> = pods.iter().copied().filter(|p| is_active(p)).collect();
    let succeeded = pods.iter().filter(|p| phase(p) == "Succeeded").count();
    let failed = pods.iter().filter(|p| phase(p) == "Failed").count();
    let parallelism = usize::try_from(spec.parallelism.unwrap_or(1).max(0)).unwrap_or(0);
    let completions = spec
        .completions
        .map(|c| usize::try_from(c.max(0)).unwrap_or(0));
    let suspended = spec.suspend == Some(true);
    let finished = is_finished(job);
    let done = match completions {
        Some(c) => succeeded >= c,
        None => succeeded > 0 && active.is_empty(),
    };

    if !finished && !done && !suspended {
        let remaining = match completions {
            Some(c) => c - succeeded,
            // A work queue: once one pod succeeded, no new pods start.
            None if succeeded > 0 => 0,
            None => parallelism,
        };
        let wanted = parallelism.min(remaining);
        if active.len() < wanted {
            let uid = uid_of(job);
            let job_name = name_of(job);
            for _ in 0..(wanted - active.len()).min(BURST) {
                let pod = stamp(
                    &spec.template,
                    namespace_of(job),
                    PodName::Generate(format!("{job_name}-")),
                    controller_reference(job),
                    &[
                        ("batch.kubernetes.io/controller-uid", uid),
                        ("batch.kubernetes.io/job-name", job_name),
                        ("controller-uid", uid),
                        ("job-name", job_name),
                    ],
                );
                plan.push(Action::create_pod(&pod, job));
            }
        }
    }

    let mut status = JobStatus {
        active: nonzero(active.len()),
        succeeded: nonzero(succeeded),
        failed: nonzero(failed),
        ready: Some(count(active.iter().filter(|p| is_ready(p)).count())),
        terminating: Some(0),
        start_time: old
            .start_time
            .clone()
            .or_else(|| (!suspended).then(|| time(now))),
        completion_time: old.completion_time.clone(),
        conditions: old.conditions.clone(),
        uncounted_terminated_pods: Some(UncountedTerminatedPods::default()),
        ..Default::default()
    };
    if done && !finished {
        status.completion_time = Some(time(now));
        status
            .conditions
            .get_or_insert_default()
            .push(JobCondition {
                type_: "Complete".into(),
                status: "True".into(),
                reason: Some("CompletionsReached".into()),
                message: Some("Reached expected number of succeeded pods".into()),
                last_probe_time: Some(time(now)),
                last_transition_time: Some(time(now)),
            });
        plan.push(Action::Record(EventNote::normal(
            COMPONENT,
            ObjectRef::of(job),
            "Completed",
            "Job completed".into(),
        )));
    }
    if job.status.as_ref() != Some(&status) {
        plan.push(Action::write_status(job, &status));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{job, running_pod};
    use k8s_openapi::api::core::v1::PodStatus;

    fn now() -> Timestamp {
        "2026-01-01T00:01:00Z".parse().unwrap()
    }

    fn creates(plan: &Plan) -> usize {
        plan.actions
            .iter()
            .filter(|a| matches!(a, Action::CreatePod { .. }))
            .count()
    }

    fn succeeded(name: &str) -> Pod {
        let mut p = running_pod(name, "n1", "2026-01-01T00:00:00Z");
        p.status = Some(PodStatus {
            phase: Some("Succeeded".into()),
            ..Default::default()
        });
        p
    }

    fn status(plan: &Plan) -> JobStatus {
        plan.actions
            .iter()
            .find_map(|a| match a {
                Action::WriteStatus { status, .. } => {
                    Some(serde_json::from_value(status.clone()).unwrap())
                }
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn runs_parallelism_pods_until_completions_succeed() {
        let j = job("batch", Some(3), Some(2));
        let plan = reconcile(&j, &[], now());
        assert_eq!(creates(&plan), 2);
        let Action::CreatePod { pod, .. } = &plan.actions[0] else {
            panic!()
        };
        assert_eq!(pod["metadata"]["labels"]["job-name"], "batch");
        assert_eq!(status(&plan).start_time, Some(time(now())));

        let one = succeeded("batch-a");
        let running = running_pod("batch-b", "n1", "2026-01-01T00:00:30Z");
        // One of three done, one running: only one more may start.
        assert_eq!(creates(&reconcile(&j, &[&one, &running], now())), 1);
    }

    #[test]
    fn completes_once_enough_pods_succeeded() {
        let j = job("batch", Some(2), Some(1));
        let (a, b) = (succeeded("batch-a"), succeeded("batch-b"));
        let plan = reconcile(&j, &[&a, &b], now());
        assert_eq!(creates(&plan), 0);
        let s = status(&plan);
        assert_eq!(s.succeeded, Some(2));
        assert_eq!(s.active, None);
        assert_eq!(s.completion_time, Some(time(now())));
        let complete = &s.conditions.as_ref().unwrap()[0];
        assert_eq!(
            (complete.type_.as_str(), complete.status.as_str()),
            ("Complete", "True")
        );
        assert!(
            plan.actions
                .iter()
                .any(|a| matches!(a, Action::Record(n) if n.reason == "Completed"))
        );

        let mut finished = j.clone();
        finished.status = Some(s);
        assert!(is_finished(&finished));
        assert_eq!(reconcile(&finished, &[&a, &b], now()), Plan::default());
    }

    #[test]
    fn suspended_jobs_start_nothing() {
        let mut j = job("batch", Some(1), Some(1));
        j.spec.as_mut().unwrap().suspend = Some(true);
        let plan = reconcile(&j, &[], now());
        assert_eq!(creates(&plan), 0);
        assert_eq!(status(&plan).start_time, None);
    }
}
