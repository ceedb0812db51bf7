use super::*;

fn now() -> Timestamp {
    "2026-11-21T12:00:00Z".parse().unwrap()
}

fn pod(key: &str) -> PodFacts {
    PodFacts::new(key)
}

fn node(pods: Vec<PodFacts>) -> NodeFacts {
    NodeFacts {
        name: "aks-default-x7k2p".into(),
        claim: "default-x7k2p".into(),
        pool: Some("default".into()),
        initialized: true,
        deleting: false,
        queued: false,
        nominated: false,
        do_not_disrupt: false,
        consolidatable: true,
        drifted_since: None,
        pods,
        created: "2026-11-01T12:00:00Z".parse().unwrap(),
        lifetime: Some(SignedDuration::from_hours(720)),
        price: 0.2,
    }
}

#[test]
fn rejections_say_why() {
    let protected = PodFacts {
        do_not_disrupt: DoNotDisrupt::Always,
        ..pod("default/batch-1")
    };
    let expired_protection = PodFacts {
        do_not_disrupt: DoNotDisrupt::Until("2026-11-21T11:00:00Z".parse().unwrap()),
        ..pod("default/batch-2")
    };
    let blocked = PodFacts {
        pdb: PdbVerdict::Blocked("default/web".into()),
        ..pod("default/web-1")
    };
    let double = PodFacts {
        pdb: PdbVerdict::Multiple(vec!["default/a".into(), "default/b".into()]),
        ..pod("default/web-2")
    };
    let protected_daemon = PodFacts {
        daemon_set: true,
        ..protected.clone()
    };
    let blocked_daemon = PodFacts {
        daemon_set: true,
        ..blocked.clone()
    };
    let finished = PodFacts {
        terminal: true,
        ..protected.clone()
    };
    let cases: Vec<(NodeFacts, Class, bool, Option<&str>)> = vec![
        (
            node(vec![pod("default/web-0")]),
            Class::Graceful,
            false,
            None,
        ),
        (
            NodeFacts {
                queued: true,
                ..node(vec![])
            },
            Class::Graceful,
            false,
            Some("the node is already being disrupted"),
        ),
        (
            NodeFacts {
                pool: None,
                ..node(vec![])
            },
            Class::Graceful,
            false,
            Some("the node's NodePool no longer exists"),
        ),
        (
            NodeFacts {
                initialized: false,
                ..node(vec![])
            },
            Class::Graceful,
            false,
            Some("the node is not initialized"),
        ),
        (
            NodeFacts {
                deleting: true,
                ..node(vec![])
            },
            Class::Eventual,
            true,
            Some("the node is being deleted"),
        ),
        (
            NodeFacts {
                nominated: true,
                ..node(vec![])
            },
            Class::Graceful,
            false,
            Some("the node is nominated for a pending pod"),
        ),
        (
            NodeFacts {
                do_not_disrupt: true,
                ..node(vec![])
            },
            Class::Eventual,
            true,
            Some("the node has karpenter.sh/do-not-disrupt=true"),
        ),
        (
            node(vec![protected.clone()]),
            Class::Graceful,
            false,
            Some("pod default/batch-1 has karpenter.sh/do-not-disrupt"),
        ),
        (
            node(vec![protected.clone()]),
            Class::Eventual,
            false,
            Some("pod default/batch-1 has karpenter.sh/do-not-disrupt"),
        ),
        // Drift with a grace period: the period will force the pod out, so it does not block.
        (node(vec![protected.clone()]), Class::Eventual, true, None),
        (
            node(vec![protected]),
            Class::Graceful,
            true,
            Some("pod default/batch-1 has karpenter.sh/do-not-disrupt"),
        ),
        (node(vec![expired_protection]), Class::Graceful, false, None),
        (
            node(vec![protected_daemon]),
            Class::Graceful,
            false,
            Some("pod default/batch-1 has karpenter.sh/do-not-disrupt"),
        ),
        (
            node(vec![blocked]),
            Class::Graceful,
            false,
            Some(
                "pod default/web-1 is protected by PodDisruptionBudget default/web, which allows no disruption now",
            ),
        ),
        (
            node(vec![double]),
            Class::Graceful,
            false,
            Some(
                "pod default/web-2 is covered by more than one PodDisruptionBudget (default/a, default/b)",
            ),
        ),
        // DaemonSet pods are not evicted, so their budgets do not block.
        (node(vec![blocked_daemon]), Class::Graceful, false, None),
        (node(vec![finished]), Class::Graceful, false, None),
    ];
    for (i, (node, class, grace, expected)) in cases.into_iter().enumerate() {
        assert_eq!(
            rejection(&node, class, grace, now()).as_deref(),
            expected,
            "case {i}"
        );
    }
}

#[test]
fn do_not_disrupt_reads_true_or_a_duration_from_the_pod_start() {
    let start: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
    assert_eq!(DoNotDisrupt::read(None, Some(start)), Ok(DoNotDisrupt::No));
    assert_eq!(
        DoNotDisrupt::read(Some("true"), None),
        Ok(DoNotDisrupt::Always)
    );
    let until = DoNotDisrupt::read(Some("3h"), Some(start)).unwrap();
    assert_eq!(
        until,
        DoNotDisrupt::Until("2026-11-21T13:00:00Z".parse().unwrap())
    );
    assert!(until.active(now()));
    assert!(!until.active("2026-11-21T13:00:00Z".parse().unwrap()));
    assert_eq!(
        DoNotDisrupt::read(Some("yes"), Some(start)),
        Err(
            "karpenter.sh/do-not-disrupt=\"yes\" is neither \"true\" nor a duration; ignored"
                .into()
        )
    );
}

#[test]
fn costs_follow_karpenter() {
    let important = PodFacts {
        priority: 1 << 25,
        ..pod("a")
    };
    let cheap_to_delete = PodFacts {
        deletion_cost: -(1 << 28),
        ..pod("b")
    };
    let huge = PodFacts {
        priority: i32::MAX,
        ..pod("c")
    };
    assert_eq!(pod("x").eviction_cost(), 1.0);
    assert_eq!(important.eviction_cost(), 2.0);
    assert_eq!(cheap_to_delete.eviction_cost(), -1.0);
    assert_eq!(huge.eviction_cost(), 10.0);

    // 20 of 30 days used: a third of the lifetime remains.
    let n = node(vec![pod("a"), pod("b"), pod("c")]);
    let third = n.disruption_cost("2026-11-21T12:00:00Z".parse().unwrap());
    assert!((third - 1.0).abs() < 1e-9, "{third}");
    let empty = node(vec![PodFacts {
        daemon_set: true,
        ..pod("ds")
    }]);
    assert!(empty.is_empty());
    assert_eq!(empty.disruption_cost(now()), 0.0);

    // Price per unit of disruption: an expensive node with few pods goes first.
    let busy = NodeFacts {
        price: 0.4,
        ..node(vec![pod("a"), pod("b"), pod("c")])
    };
    let idle = NodeFacts {
        price: 0.2,
        ..node(vec![pod("a")])
    };
    assert_eq!(busy.consolidation_priority(), 0.1);
    assert_eq!(idle.consolidation_priority(), 0.1);
    let idle_big = NodeFacts {
        price: 0.4,
        ..node(vec![pod("a")])
    };
    assert!(idle_big.consolidation_priority() > busy.consolidation_priority());
}

#[test]
fn pod_facts_are_read_from_kubernetes_pods() {
    use crate::pdb::fixtures::{budget, deleting, int, labels, pod as k8s_pod};
    use k8s_openapi::api::core::v1::PodSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    let mut logs = k8s_pod("logs-x", "logs");
    logs.metadata.owner_references = Some(vec![OwnerReference {
        kind: "DaemonSet".into(),
        ..Default::default()
    }]);
    logs.metadata.annotations = Some(
        [
            (DO_NOT_DISRUPT_ANNOTATION.to_string(), "1h".to_string()),
            (DELETION_COST_ANNOTATION.to_string(), "-5".to_string()),
        ]
        .into(),
    );
    logs.status.as_mut().unwrap().start_time = Some(Time(now()));
    logs.spec = Some(PodSpec {
        priority: Some(1000),
        ..Default::default()
    });
    let logs = deleting(logs, "2026-11-21T12:01:00Z");
    let pods = [logs.clone(), k8s_pod("web-0", "web")];
    let budgets = Budgets::new(
        &[budget("logs", labels(&[("app", "logs")]), int(5), None)],
        &pods,
    );
    assert_eq!(
        PodFacts::from_pod(&logs, &budgets),
        (
            PodFacts {
                daemon_set: true,
                terminating: true,
                do_not_disrupt: DoNotDisrupt::Until("2026-11-21T13:00:00Z".parse().unwrap()),
                priority: 1000,
                deletion_cost: -5,
                ..pod("default/logs-x")
            },
            None
        )
    );

    let mut web = k8s_pod("web-0", "web");
    web.metadata.annotations =
        Some([(DO_NOT_DISRUPT_ANNOTATION.to_string(), "yes".to_string())].into());
    let blocking = Budgets::new(
        &[budget("web", labels(&[("app", "web")]), int(1), None)],
        &pods,
    );
    let (facts, warning) = PodFacts::from_pod(&web, &blocking);
    assert_eq!(facts.pdb, PdbVerdict::Blocked("default/web".into()));
    assert_eq!(facts.do_not_disrupt, DoNotDisrupt::No);
    assert_eq!(
        warning.as_deref(),
        Some("karpenter.sh/do-not-disrupt=\"yes\" is neither \"true\" nor a duration; ignored")
    );
}
