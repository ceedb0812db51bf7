use super::*;
use crate::work::manifest::LAST_APPLIED_ANNOTATION;
use flotilla_apimachinery::patch::BuiltinStrategy;
use proptest::prelude::{Just, any, prop_assert, prop_assert_eq, prop_oneof, proptest};
use proptest::strategy::Strategy as _;
use serde_json::json;

fn owner() -> AppliedWorkOwner {
    AppliedWorkOwner {
        name: "crp-work".into(),
        uid: "aw-1".into(),
    }
}

fn ours() -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "AppliedWork",
           "name": "crp-work", "uid": "aw-1", "blockOwnerDeletion": true})
}

fn other_work() -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "AppliedWork",
           "name": "other-work", "uid": "aw-2"})
}

fn controller() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1"})
}

fn manifest() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "cfg", "namespace": "shop", "uid": "hub-uid",
                        "resourceVersion": "3", "annotations": {"team": "blue"}},
           "data": {"k": "v"}})
}

/// The manifest as it sits on the member, owned by `owners`, with data `data`.
fn live(owners: &[Value], data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "cfg", "namespace": "shop", "uid": "member-uid",
                        "resourceVersion": "42", "ownerReferences": owners,
                        "annotations": {"team": "blue",
                                        SPEC_HASH_ANNOTATION: spec_hash(&manifest())},
                        "managedFields": [{"manager": FIELD_MANAGER, "operation": "Apply"}]},
           "data": data})
}

fn strategy(type_: ApplyStrategyType) -> Strategy {
    Strategy {
        type_,
        ..Strategy::default()
    }
}

fn decide_with(strategy: Strategy, live: Option<&Value>) -> Decision {
    decide(&Input {
        manifest: &manifest(),
        live,
        strategy,
        owner: &owner(),
        lists: &BuiltinStrategy,
    })
}

/// The result and message of a `Fail`, or panics.
fn failure(decision: Decision) -> (ProcessingResult, String, Vec<PatchDetail>) {
    match decision {
        Decision::Fail(outcome) => (outcome.result, outcome.message, outcome.diffs),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn detail(path: &str, member: Option<&str>, hub: Option<&str>) -> PatchDetail {
    PatchDetail {
        path: path.to_owned(),
        value_in_member: member.map(str::to_owned),
        value_in_hub: hub.map(str::to_owned),
    }
}

#[test]
fn creates_missing_objects_with_the_agents_bookkeeping() {
    let Decision::Create {
        object,
        server_side: false,
    } = decide_with(Strategy::default(), None)
    else {
        panic!("expected a plain create");
    };
    let metadata = &object["metadata"];
    assert_eq!(metadata["ownerReferences"], json!([ours()]));
    assert_eq!(metadata["annotations"]["team"], "blue");
    assert_eq!(
        metadata["annotations"][SPEC_HASH_ANNOTATION],
        json!(spec_hash(&manifest()))
    );
    assert!(metadata.get("uid").is_none() && metadata.get("resourceVersion").is_none());
    let last_applied: Value = serde_json::from_str(
        metadata["annotations"][LAST_APPLIED_ANNOTATION]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last_applied["data"], json!({"k": "v"}));
    assert_eq!(last_applied["metadata"]["ownerReferences"], json!([ours()]));

    let Decision::Create {
        object,
        server_side: true,
    } = decide_with(strategy(ApplyStrategyType::ServerSideApply), None)
    else {
        panic!("expected a server-side create");
    };
    assert!(
        object["metadata"]["annotations"]
            .get(LAST_APPLIED_ANNOTATION)
            .is_none()
    );
}

#[test]
fn report_diff_reports_a_missing_object_whole() {
    let decision = decide_with(strategy(ApplyStrategyType::ReportDiff), None);
    let Decision::Skip { outcome, take_over } = decision else {
        panic!("expected a skip");
    };
    assert_eq!(outcome.result, ProcessingResult::FoundDiff);
    assert_eq!(
        outcome.diffs,
        vec![detail("/", None, Some("(the whole object)"))]
    );
    assert_eq!(take_over, None);
}

#[test]
fn applies_to_owned_objects_by_method() {
    let owned = live(&[ours()], json!({"k": "old"}));
    let cases = [
        (
            strategy(ApplyStrategyType::ClientSideApply),
            ApplyMethod::ThreeWayMerge,
        ),
        (
            strategy(ApplyStrategyType::ServerSideApply),
            // Only the agent manages the object: forced.
            ApplyMethod::ServerSideApply { force: true },
        ),
    ];
    for (strategy, method) in cases {
        let decision = decide_with(strategy, Some(&owned));
        let Decision::Apply { object, method: m } = decision else {
            panic!("expected an apply, got {decision:?}");
        };
        assert_eq!(m, method);
        assert_eq!(object["data"], json!({"k": "v"}));
        assert_eq!(object["metadata"]["ownerReferences"], json!([ours()]));
        assert!(object["metadata"].get("resourceVersion").is_none());
    }
}

#[test]
fn server_side_apply_forces_only_when_the_agent_alone_manages_or_asked() {
    let mut shared = live(&[ours()], json!({"k": "v"}));
    shared["metadata"]["managedFields"] = json!([
        {"manager": FIELD_MANAGER}, {"manager": "before-first-apply"}, {"manager": "kubectl"}
    ]);
    let ssa = strategy(ApplyStrategyType::ServerSideApply);
    let method = |strategy, live: &Value| match decide_with(strategy, Some(live)) {
        Decision::Apply { method, .. } => method,
        other => panic!("expected an apply, got {other:?}"),
    };
    assert_eq!(
        method(ssa, &shared),
        ApplyMethod::ServerSideApply { force: false }
    );
    let forced = Strategy {
        force_conflicts: true,
        ..ssa
    };
    assert_eq!(
        method(forced, &shared),
        ApplyMethod::ServerSideApply { force: true }
    );
    shared["metadata"]["managedFields"] =
        json!([{"manager": FIELD_MANAGER}, {"manager": "before-first-apply"}]);
    assert_eq!(
        method(ssa, &shared),
        ApplyMethod::ServerSideApply { force: true }
    );
}

#[test]
fn oversized_client_side_applies_fall_back_to_server_side_apply() {
    let mut big = manifest();
    big["data"]["k"] = json!("x".repeat(300 * 1024));
    let decision = decide(&Input {
        manifest: &big,
        live: Some(&live(&[ours()], json!({}))),
        strategy: Strategy::default(),
        owner: &owner(),
        lists: &BuiltinStrategy,
    });
    let Decision::Apply { object, method } = decision else {
        panic!("expected an apply");
    };
    assert_eq!(method, ApplyMethod::ServerSideApply { force: true });
    assert_eq!(
        object["metadata"]["annotations"][LAST_APPLIED_ANNOTATION],
        ""
    );
}

#[test]
fn takeover_rules() {
    let unowned = live(&[], json!({"k": "v"}));
    let co_owned = live(&[controller()], json!({"k": "v"}));
    let other_placement = live(&[other_work()], json!({"k": "v"}));
    let differing = live(&[], json!({"k": "member"}));
    let allow = |when_to_take_over| Strategy {
        when_to_take_over,
        allow_co_ownership: true,
        ..Strategy::default()
    };
    let deny = |when_to_take_over| Strategy {
        when_to_take_over,
        ..Strategy::default()
    };
    use WhenToTakeOver::{Always, IfNoDiff, Never};

    // Taken over and applied.
    for (strategy, live) in [
        (deny(Always), &unowned),
        (allow(Always), &co_owned),
        (deny(IfNoDiff), &unowned),
    ] {
        assert!(
            matches!(decide_with(strategy, Some(live)), Decision::Apply { .. }),
            "{strategy:?} {live}"
        );
    }

    let cases = [
        (
            deny(Always),
            &co_owned,
            ProcessingResult::FailedToTakeOver,
            "co-ownership",
        ),
        (
            deny(Always),
            &other_placement,
            ProcessingResult::FailedToTakeOver,
            "co-ownership",
        ),
        (
            allow(Always),
            &other_placement,
            ProcessingResult::FailedToTakeOver,
            "\"other-work\"",
        ),
        (
            deny(Never),
            &unowned,
            ProcessingResult::NotTakenOver,
            "Never",
        ),
        (
            allow(Never),
            &co_owned,
            ProcessingResult::NotTakenOver,
            "Never",
        ),
    ];
    for (strategy, live, result, mentions) in cases {
        let (got, message, diffs) = failure(decide_with(strategy, Some(live)));
        assert_eq!(got, result, "{strategy:?} {live}");
        assert!(message.contains(mentions), "{message}");
        assert!(diffs.is_empty());
    }

    let (result, _, diffs) = failure(decide_with(deny(IfNoDiff), Some(&differing)));
    assert_eq!(result, ProcessingResult::FailedToTakeOver);
    assert_eq!(diffs, vec![detail("/data/k", Some("member"), Some("v"))]);
}

#[test]
fn report_diff_takes_over_as_allowed_then_reports() {
    let report = |when_to_take_over| Strategy {
        type_: ApplyStrategyType::ReportDiff,
        when_to_take_over,
        ..Strategy::default()
    };
    let differing = live(&[], json!({"k": "member"}));
    let cases = [
        (
            report(WhenToTakeOver::Always),
            live(&[], json!({"k": "v"})),
            ProcessingResult::NoDiffFound,
            true,
        ),
        (
            report(WhenToTakeOver::Always),
            differing.clone(),
            ProcessingResult::FoundDiff,
            true,
        ),
        (
            report(WhenToTakeOver::Never),
            differing.clone(),
            ProcessingResult::FoundDiff,
            false,
        ),
        (
            report(WhenToTakeOver::Always),
            live(&[ours()], json!({"k": "v"})),
            ProcessingResult::NoDiffFound,
            false,
        ),
    ];
    for (strategy, live, result, takes_over) in cases {
        let Decision::Skip { outcome, take_over } = decide_with(strategy, Some(&live)) else {
            panic!("expected a skip");
        };
        assert_eq!(outcome.result, result, "{live}");
        assert_eq!(take_over.is_some(), takes_over, "{live}");
        if result == ProcessingResult::FoundDiff {
            assert_eq!(
                outcome.diffs,
                vec![detail("/data/k", Some("member"), Some("v"))]
            );
        }
    }
    let (result, _, diffs) = failure(decide_with(
        report(WhenToTakeOver::IfNoDiff),
        Some(&differing),
    ));
    assert_eq!(result, ProcessingResult::FailedToTakeOver);
    assert_eq!(diffs.len(), 1);
    let Decision::Skip { take_over, .. } =
        decide_with(report(WhenToTakeOver::Always), Some(&differing))
    else {
        panic!("expected a skip");
    };
    assert_eq!(take_over, Some(owner().owner_reference()));
}

#[test]
fn if_not_drifted_skips_member_changes_but_applies_hub_changes() {
    let if_not_drifted = Strategy {
        when_to_apply: WhenToApply::IfNotDrifted,
        ..Strategy::default()
    };
    // The member changed the object after the agent applied this manifest: drift.
    let drifted = live(&[ours()], json!({"k": "member"}));
    let Decision::Skip { outcome, take_over } = decide_with(if_not_drifted, Some(&drifted)) else {
        panic!("expected a skip");
    };
    assert_eq!(outcome.result, ProcessingResult::FoundDrifts);
    assert_eq!(
        outcome.drifts,
        vec![detail("/data/k", Some("member"), Some("v"))]
    );
    assert_eq!(take_over, None);
    assert_eq!(outcome.applied_condition().reason, "FoundDrifts");

    // The hub changed the manifest since: not drift, apply (optimistically locked).
    let mut outdated = drifted.clone();
    outdated["metadata"]["annotations"][SPEC_HASH_ANNOTATION] = json!("an older manifest");
    let Decision::Apply { object, .. } = decide_with(if_not_drifted, Some(&outdated)) else {
        panic!("expected an apply");
    };
    assert_eq!(object["metadata"]["resourceVersion"], "42");

    // No drift: apply, locked too.
    let clean = live(&[ours()], json!({"k": "v"}));
    let Decision::Apply { object, .. } = decide_with(if_not_drifted, Some(&clean)) else {
        panic!("expected an apply");
    };
    assert_eq!(object["metadata"]["resourceVersion"], "42");

    // Always applies over drift.
    assert!(matches!(
        decide_with(Strategy::default(), Some(&drifted)),
        Decision::Apply { .. }
    ));
}

#[test]
fn owned_objects_with_forbidden_co_owners_are_not_applied() {
    let co_owned = live(&[ours(), controller()], json!({"k": "v"}));
    let (result, message, _) = failure(decide_with(Strategy::default(), Some(&co_owned)));
    assert_eq!(result, ProcessingResult::FailedToApply);
    assert!(message.contains("co-ownership"));
    let allowed = Strategy {
        allow_co_ownership: true,
        ..Strategy::default()
    };
    assert!(matches!(
        decide_with(allowed, Some(&co_owned)),
        Decision::Apply { .. }
    ));
    let twice = live(&[ours(), other_work()], json!({"k": "v"}));
    let (result, message, _) = failure(decide_with(allowed, Some(&twice)));
    assert_eq!(result, ProcessingResult::FailedToApply);
    assert!(message.contains("\"other-work\""));
}

#[test]
fn applied_reports_post_apply_drift_only_in_full_comparison() {
    let mut written = live(&[ours()], json!({"k": "v"}));
    written["metadata"]["labels"] = json!({"added-by-member": "yes"});
    let (manifest, owner) = (manifest(), owner());
    let input = |comparison| Input {
        manifest: &manifest,
        live: None,
        strategy: Strategy {
            comparison,
            ..Strategy::default()
        },
        owner: &owner,
        lists: &BuiltinStrategy,
    };
    let partial = applied(&input(ComparisonOption::PartialComparison), &written);
    assert_eq!(partial.result, ProcessingResult::Applied);
    assert!(partial.drifts.is_empty());
    let full = applied(&input(ComparisonOption::FullComparison), &written);
    assert_eq!(full.result, ProcessingResult::Applied);
    assert_eq!(
        full.drifts,
        vec![detail(
            "/metadata/labels",
            Some(r#"{"added-by-member":"yes"}"#),
            None
        )]
    );
}

fn any_strategy() -> impl proptest::strategy::Strategy<Value = Strategy> {
    (
        prop_oneof![
            Just(ApplyStrategyType::ClientSideApply),
            Just(ApplyStrategyType::ServerSideApply),
            Just(ApplyStrategyType::ReportDiff)
        ],
        prop_oneof![
            Just(ComparisonOption::PartialComparison),
            Just(ComparisonOption::FullComparison)
        ],
        prop_oneof![Just(WhenToApply::Always), Just(WhenToApply::IfNotDrifted)],
        prop_oneof![
            Just(WhenToTakeOver::Always),
            Just(WhenToTakeOver::IfNoDiff),
            Just(WhenToTakeOver::Never)
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(type_, comparison, when_to_apply, when_to_take_over, allow_co_ownership, force)| {
                Strategy {
                    type_,
                    comparison,
                    when_to_apply,
                    when_to_take_over,
                    allow_co_ownership,
                    force_conflicts: force,
                }
            },
        )
}

proptest! {
    #[test]
    fn decisions_respect_the_strategy(
        strategy in any_strategy(),
        exists in any::<bool>(),
        owned_by_us in any::<bool>(),
        owned_by_others in any::<bool>(),
        placed_elsewhere in any::<bool>(),
        drifted in any::<bool>(),
    ) {
        let mut owners = Vec::new();
        if owned_by_us { owners.push(ours()); }
        if owned_by_others { owners.push(controller()); }
        if placed_elsewhere { owners.push(other_work()); }
        let object = live(&owners, json!({"k": if drifted { "member" } else { "v" }}));
        let decision = decide_with(strategy, exists.then_some(&object));
        let report_diff = strategy.type_ == ApplyStrategyType::ReportDiff;
        match &decision {
            Decision::Create { object, .. } | Decision::Apply { object, .. } => {
                prop_assert!(!report_diff);
                prop_assert_eq!(matches!(decision, Decision::Create { .. }), !exists);
                prop_assert_eq!(&object["metadata"]["ownerReferences"], &json!([ours()]));
                prop_assert_eq!(
                    &object["metadata"]["annotations"][SPEC_HASH_ANNOTATION],
                    &json!(spec_hash(&manifest()))
                );
                // Applying needs the object to be ours or taken over, and no forbidden owner.
                if exists {
                    prop_assert!(owned_by_us || strategy.when_to_take_over != WhenToTakeOver::Never);
                    prop_assert!(!placed_elsewhere);
                    prop_assert!(strategy.allow_co_ownership || !owned_by_others);
                }
            }
            Decision::Skip { outcome, take_over } => {
                prop_assert!(report_diff || outcome.result == ProcessingResult::FoundDrifts);
                if take_over.is_some() {
                    prop_assert!(exists && !owned_by_us);
                    prop_assert!(strategy.when_to_take_over != WhenToTakeOver::Never);
                }
            }
            Decision::Fail(outcome) => {
                prop_assert!(exists);
                prop_assert!(!outcome.result.is_applied() && !outcome.result.is_diff_reported());
            }
        }
    }
}
