use super::*;
use crate::pdb::fixtures::{at, budget, deleting, in_phase, int, labels, pod, text, unready};
use crate::pdb::{NamespacedPods, PdbError};
use k8s_openapi::api::core::v1::{PodSpec, Toleration as K8sToleration};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use proptest::prelude::*;

fn now() -> Timestamp {
    at("2026-05-01T12:00:00Z")
}

fn secs(n: i64) -> Timestamp {
    now() + SignedDuration::from_secs(n)
}

fn daemon(key: &str) -> DrainPod {
    DrainPod {
        daemon_set: true,
        ..DrainPod::new(key)
    }
}

fn critical(pod: DrainPod) -> DrainPod {
    DrainPod {
        critical: true,
        ..pod
    }
}

fn reasons(plan: &DrainPlan) -> Vec<(&str, &str)> {
    plan.waiting
        .iter()
        .map(|w| (w.key.as_str(), w.reason.as_str()))
        .collect()
}

#[test]
fn termination_time_adds_the_pools_grace_period() {
    let deleted = at("2026-05-01T12:00:00Z");
    let cases = [
        (None, None),
        (Some("1h"), Some("2026-05-01T13:00:00Z")),
        (Some("1h30m"), Some("2026-05-01T13:30:00Z")),
        (Some("90s"), Some("2026-05-01T12:01:30Z")),
        (Some("soon"), None),
    ];
    for (grace, expected) in cases {
        assert_eq!(
            termination_time(deleted, grace),
            expected.map(at),
            "{grace:?}"
        );
    }
}

#[test]
fn tiers_leave_in_order() {
    let all = [
        DrainPod::new("default/web"),
        daemon("kube-system/logs"),
        critical(DrainPod::new("kube-system/dns")),
        critical(daemon("kube-system/cni")),
    ];
    assert_eq!(
        all.iter().map(DrainPod::tier).collect::<Vec<_>>(),
        [
            Tier::NonCritical,
            Tier::NonCriticalDaemonSet,
            Tier::Critical,
            Tier::CriticalDaemonSet
        ]
    );
    for gone in 0..all.len() {
        let plan = drain(&all[gone..], &mut Budgets::default(), None, now());
        assert_eq!(plan.evict, [all[gone].key.clone()], "after {gone} tiers");
        assert_eq!(plan.waiting.len(), all.len() - gone - 1);
        assert!(!plan.drained && plan.force.is_empty() && plan.wake_at.is_none());
    }
    let plan = drain(&all, &mut Budgets::default(), None, now());
    assert_eq!(
        reasons(&plan),
        [
            (
                "kube-system/logs",
                "pod kube-system/logs is a non-critical DaemonSet pod and waits for 1 pod of \
                 earlier drain tiers to leave the node"
            ),
            (
                "kube-system/dns",
                "pod kube-system/dns is a critical pod and waits for 2 pods of earlier drain \
                 tiers to leave the node"
            ),
            (
                "kube-system/cni",
                "pod kube-system/cni is a critical DaemonSet pod and waits for 3 pods of \
                 earlier drain tiers to leave the node"
            ),
        ]
    );
}

#[test]
fn a_refused_eviction_waits_with_the_budgets_message() {
    let pods = [
        pod("web-0", "web"),
        pod("web-1", "web"),
        pod("web-2", "web"),
    ];
    let mut budgets = Budgets::new(
        &[budget("web", labels(&[("app", "web")]), int(2), None)],
        &pods,
    );
    let on_node = [
        DrainPod::new("default/web-0"),
        DrainPod::new("default/web-1"),
    ];
    let plan = drain(&on_node, &mut budgets, None, now());
    assert_eq!(plan.evict, ["default/web-0"]);
    assert_eq!(
        reasons(&plan),
        [(
            "default/web-1",
            "cannot evict pod default/web-1 as it would violate its disruption budget \
             default/web, which needs 2 healthy pods and has 3, 1 of them already being evicted"
        )]
    );
    assert!(!plan.drained);
}

#[test]
fn do_not_disrupt_waits_until_the_pod_is_forced() {
    let protected = DrainPod {
        do_not_disrupt: DoNotDisrupt::Always,
        ..DrainPod::new("default/batch")
    };
    let end = secs(60);
    let deadline = secs(30);
    let cases = [
        (None, now(), None, None),
        (Some(end), now(), None, Some(just_after(deadline))),
        (Some(end), deadline, None, Some(just_after(deadline))),
        (Some(end), just_after(deadline), Some(29), None),
        (Some(end), secs(90), Some(1), None),
    ];
    for (termination, when, forced_grace, wake) in cases {
        let plan = drain(
            std::slice::from_ref(&protected),
            &mut Budgets::default(),
            termination,
            when,
        );
        assert!(plan.evict.is_empty());
        assert_eq!(
            plan.force.first().map(|f| f.grace_seconds),
            forced_grace,
            "{when}"
        );
        assert_eq!(plan.waiting.len(), usize::from(forced_grace.is_none()));
        assert_eq!(plan.wake_at, wake, "{when}");
    }
    let waiting = |termination| {
        drain(
            std::slice::from_ref(&protected),
            &mut Budgets::default(),
            termination,
            now(),
        )
        .waiting[0]
            .reason
            .clone()
    };
    assert_eq!(
        waiting(None),
        "pod default/batch has karpenter.sh/do-not-disrupt=true; the node waits until the pod \
         finishes or the annotation is removed"
    );
    assert_eq!(
        waiting(Some(end)),
        "pod default/batch has karpenter.sh/do-not-disrupt=true; it will be forced after \
         2026-05-01T12:00:30Z, when the node's termination grace period runs out"
    );
}

#[test]
fn a_do_not_disrupt_duration_ends_by_itself() {
    let until = secs(600);
    let protected = DrainPod {
        do_not_disrupt: DoNotDisrupt::Until(until),
        ..DrainPod::new("default/batch")
    };
    let plan = drain(
        std::slice::from_ref(&protected),
        &mut Budgets::default(),
        None,
        now(),
    );
    assert_eq!(
        reasons(&plan),
        [(
            "default/batch",
            "pod default/batch has karpenter.sh/do-not-disrupt until 2026-05-01T12:10:00Z"
        )]
    );
    assert_eq!(plan.wake_at, Some(until));
    let later = drain(&[protected], &mut Budgets::default(), None, until);
    assert_eq!(later.evict, ["default/batch"]);
}

#[test]
fn forcing_ignores_tiers_and_budgets() {
    let pods = [pod("web-0", "web")];
    let mut budgets = Budgets::new(
        &[budget("web", labels(&[("app", "web")]), None, int(0))],
        &pods,
    );
    let on_node = [
        DrainPod::new("default/web-0"),
        DrainPod {
            grace_seconds: 120,
            ..critical(daemon("kube-system/cni"))
        },
    ];
    let plan = drain(&on_node, &mut budgets, Some(secs(60)), now());
    assert_eq!(
        plan.force,
        [Forced {
            key: "kube-system/cni".into(),
            grace_seconds: 60
        }]
    );
    assert_eq!(
        reasons(&plan),
        [(
            "default/web-0",
            "cannot evict pod default/web-0 as it would violate its disruption budget \
             default/web, which needs 1 healthy pods and has 1; it will be forced after \
             2026-05-01T12:00:30Z, when the node's termination grace period runs out"
        )]
    );
    assert_eq!(plan.wake_at, Some(just_after(secs(30))));

    let plan = drain(&on_node, &mut budgets, Some(secs(60)), secs(31));
    assert_eq!(plan.force.len(), 2);
    assert!(plan.evict.is_empty() && plan.waiting.is_empty() && !plan.drained);
}

#[test]
fn the_node_is_drained_when_only_pods_it_need_not_wait_for_remain() {
    let leftovers = [
        DrainPod {
            mirror: true,
            ..critical(DrainPod::new("kube-system/kube-proxy"))
        },
        DrainPod {
            tolerates_disrupted_taint: true,
            ..daemon("kube-system/logs")
        },
        DrainPod {
            terminal: true,
            do_not_disrupt: DoNotDisrupt::Always,
            ..DrainPod::new("default/job-1")
        },
        DrainPod {
            deletion_timestamp: Some(secs(-61)),
            ..DrainPod::new("default/stuck")
        },
    ];
    let plan = drain(&leftovers, &mut Budgets::default(), Some(secs(10)), now());
    assert_eq!(
        plan,
        DrainPlan {
            drained: true,
            ..DrainPlan::default()
        }
    );

    let terminating = DrainPod {
        deletion_timestamp: Some(secs(-30)),
        ..DrainPod::new("default/web-0")
    };
    let mut with_terminating = leftovers.to_vec();
    with_terminating.push(terminating);
    let plan = drain(
        &with_terminating,
        &mut Budgets::default(),
        Some(secs(10)),
        now(),
    );
    assert!(!plan.drained && plan.evict.is_empty() && plan.force.is_empty());
    assert_eq!(
        reasons(&plan),
        [(
            "default/web-0",
            "pod default/web-0 is terminating; the node waits for it until 2026-05-01T12:00:30Z"
        )]
    );
    assert_eq!(plan.wake_at, Some(just_after(secs(30))));
}

#[test]
fn drain_pods_are_read_from_kubernetes_pods() {
    let mut p = pod("cni-x", "cni");
    p.metadata.owner_references = Some(vec![OwnerReference {
        kind: "DaemonSet".into(),
        ..Default::default()
    }]);
    p.metadata.annotations = Some([(DO_NOT_DISRUPT.to_string(), "10m".to_string())].into());
    p.status.as_mut().unwrap().start_time = Some(Time(now()));
    p.spec = Some(PodSpec {
        priority_class_name: Some("system-node-critical".into()),
        termination_grace_period_seconds: Some(45),
        tolerations: Some(vec![K8sToleration {
            key: Some(DISRUPTED_TAINT.into()),
            operator: Some("Exists".into()),
            effect: Some("NoSchedule".into()),
            ..Default::default()
        }]),
        ..Default::default()
    });
    let p = deleting(p, "2026-05-01T12:01:00Z");
    assert_eq!(
        DrainPod::from_pod(&p),
        (
            DrainPod {
                key: "default/cni-x".into(),
                daemon_set: true,
                mirror: false,
                terminal: false,
                critical: true,
                tolerates_disrupted_taint: true,
                do_not_disrupt: DoNotDisrupt::Until(secs(600)),
                grace_seconds: 45,
                deletion_timestamp: Some(secs(60)),
            },
            None
        )
    );

    let mut mirror = in_phase(pod("etcd", "etcd"), "Succeeded");
    mirror.metadata.annotations = Some(
        [
            ("kubernetes.io/config.mirror".to_string(), "abc".to_string()),
            (DO_NOT_DISRUPT.to_string(), "forever".to_string()),
        ]
        .into(),
    );
    mirror.spec = Some(PodSpec {
        tolerations: Some(vec![K8sToleration {
            key: Some(DISRUPTED_TAINT.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            ..Default::default()
        }]),
        ..Default::default()
    });
    let (read, warning) = DrainPod::from_pod(&mirror);
    assert_eq!(
        read,
        DrainPod {
            mirror: true,
            terminal: true,
            ..DrainPod::new("default/etcd")
        }
    );
    assert_eq!(
        warning.as_deref(),
        Some("karpenter.sh/do-not-disrupt=\"forever\" is neither \"true\" nor a duration; ignored")
    );
}

const DO_NOT_DISRUPT: &str = flotilla_api::nodes::DO_NOT_DISRUPT_ANNOTATION;

/// One random pod on the node: its label, phase, readiness, deletion, owners and protections.
#[derive(Debug, Clone)]
struct RandomPod {
    app: u8,
    phase: &'static str,
    ready: bool,
    deleted_secs_ago: Option<i64>,
    daemon_set: bool,
    critical: bool,
    mirror: bool,
    tolerates: bool,
    do_not_disrupt: Option<&'static str>,
    grace: i64,
}

fn random_pod() -> impl Strategy<Value = RandomPod> {
    (
        (
            0u8..3,
            prop::sample::select(vec![
                "Running",
                "Running",
                "Running",
                "Pending",
                "Succeeded",
            ]),
            prop::bool::weighted(0.8),
            prop::option::weighted(0.15, 0i64..120),
        ),
        (
            prop::bool::weighted(0.25),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.05),
            prop::bool::weighted(0.1),
            prop::option::weighted(0.2, prop::sample::select(vec!["true", "1m", "1h"])),
            0i64..200,
        ),
    )
        .prop_map(
            |(
                (app, phase, ready, deleted_secs_ago),
                (daemon_set, critical, mirror, tolerates, do_not_disrupt, grace),
            )| RandomPod {
                app,
                phase,
                ready,
                deleted_secs_ago,
                daemon_set,
                critical,
                mirror,
                tolerates,
                do_not_disrupt,
                grace,
            },
        )
}

impl RandomPod {
    fn build(&self, index: usize) -> Pod {
        let mut p = in_phase(
            pod(&format!("p{index}"), &format!("app{}", self.app)),
            self.phase,
        );
        if !self.ready {
            p = unready(p);
        }
        if let Some(ago) = self.deleted_secs_ago {
            p.metadata.deletion_timestamp = Some(Time(secs(-ago)));
        }
        let mut owners = Vec::new();
        if self.daemon_set {
            owners.push(OwnerReference {
                kind: "DaemonSet".into(),
                ..Default::default()
            });
        }
        if self.mirror {
            owners.push(OwnerReference {
                kind: "Node".into(),
                ..Default::default()
            });
        }
        p.metadata.owner_references = Some(owners);
        p.metadata.annotations = self
            .do_not_disrupt
            .map(|value| [(DO_NOT_DISRUPT.to_string(), value.to_string())].into());
        p.status.as_mut().unwrap().start_time = Some(Time(secs(-300)));
        p.spec = Some(PodSpec {
            priority_class_name: self.critical.then(|| "system-cluster-critical".into()),
            termination_grace_period_seconds: Some(self.grace),
            tolerations: self.tolerates.then(|| {
                vec![K8sToleration {
                    operator: Some("Exists".into()),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        });
        p
    }
}

/// A random budget over one of the apps (or, rarely, every pod of the namespace).
fn random_budget() -> impl Strategy<Value = (Option<u8>, bool, Option<u8>, bool)> {
    (
        prop::option::weighted(0.9, 0u8..3),
        any::<bool>(),
        prop::option::weighted(0.95, 0u8..6),
        any::<bool>(),
    )
}

proptest! {
    #[test]
    fn drains_never_overrun_a_budget(
        spec in prop::collection::vec(random_pod(), 0..12),
        spec_budgets in prop::collection::vec(random_budget(), 0..4),
        termination in prop::option::of(-60i64..240),
    ) {
        let pods: Vec<Pod> = spec.iter().enumerate().map(|(i, p)| p.build(i)).collect();
        let pdbs: Vec<PodDisruptionBudget> = spec_budgets
            .iter()
            .enumerate()
            .map(|(i, (app, percent, value, max))| {
                let selector = match app {
                    Some(app) => labels(&[("app", &format!("app{app}"))]),
                    None => labels(&[]),
                };
                let limit = value.and_then(|v| if *percent { text(&format!("{}%", v * 20)) } else { int(i32::from(v)) });
                if *max {
                    budget(&format!("b{i}"), selector, None, limit)
                } else {
                    budget(&format!("b{i}"), selector, limit, None)
                }
            })
            .collect();
        let on_node: Vec<DrainPod> = pods.iter().map(|p| DrainPod::from_pod(p).0).collect();
        let mut budgets = Budgets::new(&pdbs, &pods);
        let end = termination.map(secs);
        let plan = drain(&on_node, &mut budgets, end, now());

        // Every pod the node waits for is in exactly one list; no other pod is in any.
        let mut listed: Vec<&str> = plan.evict.iter().map(String::as_str)
            .chain(plan.force.iter().map(|f| f.key.as_str()))
            .chain(plan.waiting.iter().map(|w| w.key.as_str()))
            .collect();
        listed.sort_unstable();
        let mut holding: Vec<&str> = on_node.iter().filter(|p| p.holds_node(now())).map(|p| p.key.as_str()).collect();
        holding.sort_unstable();
        prop_assert_eq!(&listed, &holding);
        prop_assert_eq!(plan.drained, holding.is_empty());

        // Evictions of healthy pods stay within every budget.
        let namespaced = NamespacedPods::new(&pods);
        for pdb in &pdbs {
            let assessment = namespaced.assess(pdb);
            let allowed = assessment.health.as_ref().map_or(0, |h| h.disruptions_allowed);
            let evicted_healthy = assessment
                .selected
                .iter()
                .filter(|p| crate::pdb::is_healthy(p))
                .filter(|p| plan.evict.contains(&crate::pod::key(p)))
                .count();
            prop_assert!(
                i32::try_from(evicted_healthy).unwrap() <= allowed,
                "{} evicted {} healthy pods, allows {}", assessment.key, evicted_healthy, allowed
            );
            if let Err(PdbError::Value { .. }) = assessment.health {
                prop_assert_eq!(evicted_healthy, 0);
            }
        }

        // Pods are forced only after their deadline, and the next wake-up is in the future.
        for forced in &plan.force {
            let pod = on_node.iter().find(|p| p.key == forced.key).unwrap();
            let end = end.unwrap();
            prop_assert!(now() > end - SignedDuration::from_secs(pod.grace_seconds));
            prop_assert!(forced.grace_seconds >= 1);
        }
        if let Some(wake) = plan.wake_at {
            prop_assert!(wake > now());
        }
    }
}
