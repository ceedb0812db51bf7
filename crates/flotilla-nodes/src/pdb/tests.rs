use super::fixtures::{
    at, budget, deleting, expression, in_phase, int, labels, pod, text, unready,
};
use super::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};

/// Counts as `(expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed)`.
fn counts(expected_pods: i32, current: i32, desired: i32, allowed: i32) -> Health {
    Health {
        expected_pods,
        current_healthy: current,
        desired_healthy: desired,
        disruptions_allowed: allowed,
    }
}

/// `n` Running, Ready pods `web-<i>` labelled `app=web`.
fn web(n: usize) -> Vec<Pod> {
    (0..n).map(|i| pod(&format!("web-{i}"), "web")).collect()
}

/// `pods` followed by `more`.
fn with(mut pods: Vec<Pod>, more: Vec<Pod>) -> Vec<Pod> {
    pods.extend(more);
    pods
}

fn assess(pdb: &PodDisruptionBudget, pods: &[Pod]) -> Result<Health, PdbError> {
    NamespacedPods::new(pods).assess(pdb).health
}

#[test]
fn counts_follow_the_disruption_controller() {
    let app = || labels(&[("app", "web")]);
    let cases: Vec<(&str, PodDisruptionBudget, Vec<Pod>, Health)> = vec![
        (
            "minAvailable as a count",
            budget("b", app(), int(2), None),
            web(3),
            counts(3, 3, 2, 1),
        ),
        (
            "minAvailable 50% of 3 rounds up to 2",
            budget("b", app(), text("50%"), None),
            web(3),
            counts(3, 3, 2, 1),
        ),
        (
            "minAvailable 50% of 5 rounds up to 3",
            budget("b", app(), text("50%"), None),
            web(5),
            counts(5, 5, 3, 2),
        ),
        (
            "minAvailable 100% allows nothing",
            budget("b", app(), text("100%"), None),
            web(3),
            counts(3, 3, 3, 0),
        ),
        (
            "maxUnavailable as a count",
            budget("b", app(), None, int(1)),
            web(3),
            counts(3, 3, 2, 1),
        ),
        (
            "maxUnavailable 34% of 3 rounds up to 2",
            budget("b", app(), None, text("34%")),
            web(3),
            counts(3, 3, 1, 2),
        ),
        (
            "maxUnavailable 10% of 3 rounds up to 1",
            budget("b", app(), None, text("10%")),
            web(3),
            counts(3, 3, 2, 1),
        ),
        (
            "maxUnavailable above the pods floors desiredHealthy at 0",
            budget("b", app(), None, int(5)),
            web(3),
            counts(3, 3, 0, 3),
        ),
        (
            "maxUnavailable 0 allows nothing",
            budget("b", app(), None, int(0)),
            web(3),
            counts(3, 3, 3, 0),
        ),
        (
            "maxUnavailable wins over minAvailable",
            budget("b", app(), int(3), int(1)),
            web(3),
            counts(3, 3, 2, 1),
        ),
        (
            "unready and pending pods are expected but not healthy",
            budget("b", app(), None, int(1)),
            with(
                web(2),
                vec![
                    unready(pod("web-u", "web")),
                    in_phase(pod("web-p", "web"), "Pending"),
                ],
            ),
            counts(4, 2, 3, 0),
        ),
        (
            "a terminating pod is not healthy but still expected",
            budget("b", app(), int(2), None),
            with(
                web(2),
                vec![deleting(pod("web-d", "web"), "2026-01-01T00:00:00Z")],
            ),
            counts(3, 2, 2, 0),
        ),
        (
            "a count of minAvailable expects every selected pod, finished or not",
            budget("b", app(), int(1), None),
            with(web(1), vec![in_phase(pod("web-s", "web"), "Succeeded")]),
            counts(2, 1, 1, 0),
        ),
        (
            "a percentage expects only pods that have not finished",
            budget("b", app(), text("50%"), None),
            with(web(2), vec![in_phase(pod("web-f", "web"), "Failed")]),
            counts(2, 2, 1, 1),
        ),
        (
            "neither field set: nothing expected, nothing allowed",
            budget("b", app(), None, None),
            web(3),
            counts(0, 3, 0, 0),
        ),
        (
            "no pods selected: nothing allowed even with minAvailable 0",
            budget("b", labels(&[("app", "db")]), int(0), None),
            web(3),
            counts(0, 0, 0, 0),
        ),
        (
            "an empty selector selects every pod of the namespace",
            budget("b", Some(LabelSelector::default()), int(1), None),
            with(web(2), vec![pod("db-0", "db")]),
            counts(3, 3, 1, 2),
        ),
        (
            "a null selector selects nothing",
            budget("b", None, int(0), None),
            web(3),
            counts(0, 0, 0, 0),
        ),
        (
            "matchExpressions In",
            budget("b", expression("app", "In", &["web", "db"]), int(0), None),
            with(web(2), vec![pod("db-0", "db"), pod("ui-0", "ui")]),
            counts(3, 3, 0, 3),
        ),
        (
            "matchExpressions NotIn",
            budget("b", expression("app", "NotIn", &["web"]), int(0), None),
            with(web(2), vec![pod("db-0", "db"), pod("ui-0", "ui")]),
            counts(2, 2, 0, 2),
        ),
        (
            "matchExpressions Exists",
            budget("b", expression("tier", "Exists", &[]), int(0), None),
            web(2),
            counts(0, 0, 0, 0),
        ),
        (
            "matchExpressions DoesNotExist",
            budget("b", expression("tier", "DoesNotExist", &[]), int(0), None),
            web(2),
            counts(2, 2, 0, 2),
        ),
    ];
    for (name, pdb, pods, expected) in cases {
        assert_eq!(assess(&pdb, &pods), Ok(expected), "{name}");
    }
}

#[test]
fn only_pods_of_the_budgets_namespace_are_selected() {
    let mut elsewhere = pod("web-x", "web");
    elsewhere.metadata.namespace = Some("other".into());
    let pods = with(web(2), vec![elsewhere]);
    let everything = budget("b", Some(LabelSelector::default()), int(1), None);
    let assessment = NamespacedPods::new(&pods).assess(&everything);
    assert_eq!(assessment.key, "default/b");
    let names: Vec<String> = assessment.selected.iter().map(|p| pod::key(p)).collect();
    assert_eq!(names, ["default/web-0", "default/web-1"]);
}

#[test]
fn malformed_budgets_are_errors_that_select_nothing() {
    let app = || labels(&[("app", "web")]);
    let value = |field: &'static str, value: &str| PdbError::Value {
        field,
        value: value.into(),
    };
    let cases = [
        (
            budget("b", app(), text("150%"), None),
            value("minAvailable", "\"150%\""),
        ),
        (
            budget("b", app(), text("five"), None),
            value("minAvailable", "\"five\""),
        ),
        (
            budget("b", app(), None, text("5")),
            value("maxUnavailable", "\"5\""),
        ),
        (
            budget("b", app(), None, text("-5%")),
            value("maxUnavailable", "\"-5%\""),
        ),
        (
            budget("b", app(), int(-1), None),
            value("minAvailable", "-1"),
        ),
    ];
    for (pdb, error) in cases {
        assert_eq!(assess(&pdb, &web(2)), Err(error));
    }
    let pods = web(2);
    for selector in [
        expression("app", "In", &[]),
        expression("app", "Near", &["web"]),
        labels(&[("app", "not a value")]),
    ] {
        let pdb = budget("b", selector.clone(), int(1), None);
        let assessment = NamespacedPods::new(&pods).assess(&pdb);
        assert!(
            matches!(assessment.health, Err(PdbError::Selector(_))),
            "{selector:?}"
        );
        assert!(assessment.selected.is_empty());
    }
    assert_eq!(
        value("minAvailable", "\"150%\"").to_string(),
        "spec.minAvailable \"150%\" is neither a non-negative count nor a percentage from 0% to 100%"
    );
}

fn condition(status: &PodDisruptionBudgetStatus) -> &Condition {
    &status.conditions.as_ref().unwrap()[0]
}

#[test]
fn status_reports_counts_and_the_disruption_allowed_condition() {
    let now = at("2026-03-01T10:00:00.5Z");
    let mut pdb = budget("web", labels(&[("app", "web")]), int(2), None);
    pdb.metadata.generation = Some(3);
    let pods = web(3);
    let status = status(&pdb, &NamespacedPods::new(&pods), now);
    assert_eq!(
        (
            status.expected_pods,
            status.current_healthy,
            status.desired_healthy,
            status.disruptions_allowed,
            status.observed_generation,
        ),
        (Some(3), Some(3), Some(2), Some(1), Some(3))
    );
    let allowed = condition(&status);
    assert_eq!(
        (
            allowed.type_.as_str(),
            allowed.status.as_str(),
            allowed.reason.as_str(),
            allowed.message.as_str(),
            allowed.observed_generation,
            allowed.last_transition_time.0,
        ),
        (
            "DisruptionAllowed",
            "True",
            "SufficientPods",
            "3 of 3 expected pods are healthy and 2 must be: 1 disruption is allowed",
            Some(3),
            at("2026-03-01T10:00:00Z"),
        )
    );

    // Stored and recomputed later: nothing changes, not even the transition time.
    pdb.status = Some(status.clone());
    let later = at("2026-03-01T10:05:00Z");
    assert_eq!(
        super::status(&pdb, &NamespacedPods::new(&pods), later),
        status
    );

    // One pod fewer: no disruption allowed, and the condition turns False now.
    let blocked = super::status(&pdb, &NamespacedPods::new(&pods[..2]), later);
    assert_eq!(blocked.disruptions_allowed, Some(0));
    let allowed = condition(&blocked);
    assert_eq!(
        (
            allowed.status.as_str(),
            allowed.reason.as_str(),
            allowed.message.as_str(),
            allowed.last_transition_time.clone(),
        ),
        (
            "False",
            "InsufficientPods",
            "2 of 2 expected pods are healthy and 2 must be: no disruption is allowed",
            Time(later),
        )
    );
}

#[test]
fn status_messages_explain_why_nothing_is_allowed() {
    let now = at("2026-03-01T10:00:00Z");
    let cases = [
        (
            budget("b", labels(&[("app", "web")]), None, None),
            "neither minAvailable nor maxUnavailable is set, so no disruption is allowed",
        ),
        (
            budget("b", labels(&[("app", "db")]), None, int(1)),
            "the budget selects no pods yet, so no disruption is allowed",
        ),
        (
            budget("b", labels(&[("app", "web")]), None, int(3)),
            "3 of 3 expected pods are healthy and 0 must be: 3 disruptions are allowed",
        ),
    ];
    for (pdb, message) in cases {
        let pods = web(3);
        let status = status(&pdb, &NamespacedPods::new(&pods), now);
        assert_eq!(condition(&status).message, message);
    }
}

#[test]
fn a_malformed_budget_fails_safe() {
    let now = at("2026-03-01T10:00:00Z");
    let mut pdb = budget("b", labels(&[("app", "web")]), None, text("lots"));
    pdb.metadata.generation = Some(2);
    pdb.status = Some(PodDisruptionBudgetStatus {
        current_healthy: Some(3),
        desired_healthy: Some(2),
        expected_pods: Some(3),
        disruptions_allowed: Some(1),
        observed_generation: Some(1),
        ..Default::default()
    });
    let pods = web(3);
    let status = status(&pdb, &NamespacedPods::new(&pods), now);
    assert_eq!(
        (
            status.current_healthy,
            status.disruptions_allowed,
            status.observed_generation
        ),
        (Some(3), Some(0), Some(1))
    );
    let failed = condition(&status);
    assert_eq!(
        (
            failed.status.as_str(),
            failed.reason.as_str(),
            failed.message.as_str()
        ),
        (
            "False",
            "SyncFailed",
            "spec.maxUnavailable \"lots\" is neither a non-negative count nor a percentage from 0% to 100%"
        )
    );
}
