use super::super::fixtures::{budget, deleting, in_phase, int, labels, pod, text, unready};
use super::*;

fn app(value: &str) -> Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> {
    labels(&[("app", value)])
}

#[test]
fn evictions_use_up_the_budget() {
    let pods: Vec<Pod> = (0..4).map(|i| pod(&format!("web-{i}"), "web")).collect();
    let mut budgets = Budgets::new(&[budget("web", app("web"), None, int(2))], &pods);
    assert_eq!(budgets.verdict("default/web-0"), PdbVerdict::Free);
    assert_eq!(budgets.try_evict("default/web-0"), Ok(()));
    assert_eq!(budgets.try_evict("default/web-1"), Ok(()));
    assert_eq!(
        budgets.try_evict("default/web-2"),
        Err(
            "cannot evict pod default/web-2 as it would violate its disruption budget \
             default/web, which needs 2 healthy pods and has 4, 2 of them already being evicted"
                .into()
        )
    );
    assert_eq!(
        budgets.verdict("default/web-3"),
        PdbVerdict::Blocked("default/web".into())
    );
    // A pod the budgets were not built with is selected by none.
    assert_eq!(budgets.try_evict("default/ghost"), Ok(()));
}

#[test]
fn a_budget_with_nothing_to_spare_refuses_at_once() {
    let pods = [pod("web-0", "web"), pod("web-1", "web")];
    let mut budgets = Budgets::new(&[budget("web", app("web"), text("100%"), None)], &pods);
    assert_eq!(
        budgets.try_evict("default/web-0"),
        Err(
            "cannot evict pod default/web-0 as it would violate its disruption budget \
             default/web, which needs 2 healthy pods and has 2"
                .into()
        )
    );
}

#[test]
fn pods_under_two_budgets_are_refused() {
    let pods = [pod("web-0", "web")];
    let pdbs = [
        budget("a", app("web"), None, int(1)),
        budget("b", labels(&[]), None, int(1)),
    ];
    let mut budgets = Budgets::new(&pdbs, &pods);
    assert_eq!(
        budgets.verdict("default/web-0"),
        PdbVerdict::Multiple(vec!["default/a".into(), "default/b".into()])
    );
    assert_eq!(
        budgets.try_evict("default/web-0"),
        Err(
            "cannot evict pod default/web-0: it is selected by more than one \
             PodDisruptionBudget (default/a, default/b), which the eviction API does not support"
                .into()
        )
    );
}

#[test]
fn which_pods_the_eviction_api_lets_through() {
    let blocked = |policy: Option<&str>| {
        let mut pdb = budget("web", app("web"), None, int(0));
        pdb.spec.as_mut().unwrap().unhealthy_pod_eviction_policy = policy.map(String::from);
        pdb
    };
    let healthy_budget = budget("web", app("web"), None, int(1));
    let cases = [
        (
            "a pod no budget selects",
            blocked(None),
            pod("db-0", "db"),
            true,
        ),
        (
            "a ready pod of a full budget",
            blocked(None),
            pod("web-0", "web"),
            false,
        ),
        (
            "a pending pod",
            blocked(None),
            in_phase(pod("web-0", "web"), "Pending"),
            true,
        ),
        (
            "a finished pod",
            blocked(None),
            in_phase(pod("web-0", "web"), "Succeeded"),
            true,
        ),
        (
            "a pod being deleted",
            blocked(None),
            deleting(pod("web-0", "web"), "2026-01-01T00:00:00Z"),
            true,
        ),
        (
            "an unready pod of a budget that is not healthy",
            blocked(None),
            unready(pod("web-0", "web")),
            false,
        ),
        (
            "an unready pod under AlwaysAllow",
            blocked(Some("AlwaysAllow")),
            unready(pod("web-0", "web")),
            true,
        ),
        (
            "an unready pod of a healthy budget",
            healthy_budget,
            unready(pod("web-0", "web")),
            true,
        ),
    ];
    for (name, pdb, subject, allowed) in cases {
        let others = [pod("web-a", "web"), pod("web-b", "web")];
        let mut all = vec![subject.clone()];
        all.extend(others.iter().cloned());
        let mut budgets = Budgets::new(&[pdb], &all);
        let key = pod::key(&subject);
        assert_eq!(budgets.verdict(&key) == PdbVerdict::Free, allowed, "{name}");
        assert_eq!(budgets.try_evict(&key).is_ok(), allowed, "{name}");
    }
}

#[test]
fn unready_pods_do_not_use_up_a_healthy_budget() {
    // 3 ready and 1 unready under maxUnavailable 2: desired 2, healthy 3, one disruption.
    let mut pods: Vec<Pod> = (0..3).map(|i| pod(&format!("web-{i}"), "web")).collect();
    pods.push(unready(pod("web-u", "web")));
    let mut budgets = Budgets::new(&[budget("web", app("web"), None, int(2))], &pods);
    assert_eq!(budgets.try_evict("default/web-u"), Ok(()));
    assert_eq!(budgets.try_evict("default/web-0"), Ok(()));
    assert!(budgets.try_evict("default/web-1").is_err());
}

#[test]
fn a_malformed_budget_refuses_its_pods() {
    let pods = [pod("web-0", "web")];
    let mut budgets = Budgets::new(&[budget("web", app("web"), text("half"), None)], &pods);
    assert_eq!(
        budgets.verdict("default/web-0"),
        PdbVerdict::Blocked("default/web".into())
    );
    assert_eq!(
        budgets.try_evict("default/web-0"),
        Err(
            "cannot evict pod default/web-0: its PodDisruptionBudget default/web cannot be \
             evaluated (spec.minAvailable \"half\" is neither a non-negative count nor a \
             percentage from 0% to 100%), so it allows no disruption"
                .into()
        )
    );
}
