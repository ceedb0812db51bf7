//! Laying strategies over fleets.

use flotilla_updates::run::init::{PlanError, implicit_strategy, plan};
use serde_json::json;

use crate::harness::{members, strategy};

#[test]
fn groups_take_members_by_group_label_or_selector() {
    let mut fleet = members(&[("x", "a"), ("y", "b"), ("z", "none")]);
    fleet[2].labels.insert("env".into(), "prod".into());
    let s = strategy(json!({"stages": [
        {"name": "one", "groups": [{"name": "a"}, {"name": "b", "maxConcurrency": "100%"}]},
        {"name": "two", "memberSelector": {"byLabel": "env=prod"}}
    ]}));
    let stages = plan(&s, &fleet).unwrap();
    let names = |i: usize, j: usize| -> Vec<String> {
        stages[i].groups[j]
            .members
            .iter()
            .map(|m| m.name.clone())
            .collect()
    };
    assert_eq!(names(0, 0), ["x"]);
    assert_eq!(names(0, 1), ["y"]);
    assert_eq!(
        stages[1].groups[0].name, "two",
        "the implicit group is named after its stage"
    );
    assert_eq!(names(1, 0), ["z"]);
    assert_eq!(stages[0].max_concurrency, 50, "the stage default");
    assert_eq!(stages[0].groups[1].max_concurrency, 1, "100% of one member");
}

#[test]
fn selectors_take_aks_set_based_operators() {
    let mut fleet = members(&[("p1", "g"), ("p2", "g"), ("s1", "g"), ("d1", "g")]);
    for (member, env, canary) in [
        (0, "prod", false),
        (1, "prod", true),
        (2, "staging", false),
        (3, "dev", false),
    ] {
        fleet[member].labels.insert("env".into(), env.into());
        if canary {
            fleet[member].labels.insert("canary".into(), "true".into());
        }
    }
    let s = strategy(json!({"stages": [
        {"name": "canaries", "memberSelector": {"byLabel": "canary,env in (prod)"}},
        {"name": "early", "memberSelector": {"byLabel": "env!=prod,!canary"}},
        {"name": "prod", "memberSelector": {"byLabel": "env notin (staging, dev),!canary"}}
    ]}));
    let stages = plan(&s, &fleet).unwrap();
    let names = |i: usize| -> Vec<String> {
        stages[i].groups[0]
            .members
            .iter()
            .map(|m| m.name.clone())
            .collect()
    };
    assert_eq!(names(0), ["p2"]);
    assert_eq!(names(1), ["d1", "s1"]);
    assert_eq!(names(2), ["p1"]);
}

#[test]
fn no_strategy_means_every_member_one_by_one() {
    let stages = plan(&implicit_strategy(), &members(&[("b", "g"), ("a", "h")])).unwrap();
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0].groups.len(), 1);
    let names: Vec<_> = stages[0].groups[0]
        .members
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(stages[0].groups[0].max_concurrency, 1);
}

#[test]
fn bad_layouts_fail_with_the_reason() {
    let mut fleet = members(&[("x", "a")]);
    fleet[0].labels.insert("env".into(), "prod".into());
    let two = strategy(json!({"stages": [{"name": "s", "groups": [
        {"name": "a"}, {"name": "p", "memberSelector": {"byLabel": "env=prod"}}]}]}));
    assert_eq!(
        plan(&two, &fleet).unwrap_err().to_string(),
        "member x is selected by group a and by group p; a member may be in one group only"
    );
    let wide = strategy(
        json!({"stages": [{"name": "s", "groups": [{"name": "a", "maxConcurrency": "3"}]}]}),
    );
    assert_eq!(
        plan(&wide, &fleet).unwrap_err(),
        PlanError::GroupConcurrency {
            group: "a".into(),
            value: 3,
            limit: "the group's size (1)".into()
        }
    );
    let nobody = strategy(json!({"stages": [{"name": "s", "groups": [{"name": "q"}]}]}));
    assert_eq!(plan(&nobody, &fleet).unwrap_err(), PlanError::Empty);
    let selector = strategy(json!({"stages": [{"name": "s", "groups": [
        {"name": "p", "memberSelector": {"byLabel": "tier<3"}}]}]}));
    assert_eq!(
        plan(&selector, &fleet).unwrap_err().to_string(),
        "memberSelector.byLabel of p: \"tier\": only =, !=, in, notin, exists (key) and does-not-exist (!key) are supported"
    );
    let repeated = strategy(json!({"stages": [
        {"name": "s", "groups": [{"name": "a"}]},
        {"name": "t", "groups": [{"name": "a"}]}]}));
    assert_eq!(
        plan(&repeated, &fleet).unwrap_err().to_string(),
        "group a is in stage s and in stage t; a group may appear only once"
    );
}
