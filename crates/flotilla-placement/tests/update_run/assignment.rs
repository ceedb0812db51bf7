//! Stage assignment and ordering.

use flotilla_api::placement::staged_update_strategy::StageConfig;
use flotilla_placement::update_run::assignment::{AssignError, assign};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::fixtures::*;

fn names(stages: &[Vec<String>]) -> Vec<Vec<&str>> {
    stages
        .iter()
        .map(|s| s.iter().map(String::as_str).collect())
        .collect()
}

#[test]
fn the_seed_clusters_fall_in_their_stages_in_sorted_order() {
    let clusters = seed_clusters();
    let stages = assign(&seed_strategy().stages, &labels(&clusters)).expect("assigned");
    assert_eq!(
        names(&stages),
        vec![
            vec!["member-cluster-02"],
            vec!["member-cluster-01", "member-cluster-03"],
            vec!["member-cluster-05", "member-cluster-04"],
        ]
    );
}

#[test]
fn sorting_is_numeric_then_by_name_and_unsorted_stages_go_by_name() {
    let clusters = vec![
        cluster("c", &[("environment", "prod"), ("order", "10")]),
        cluster("a", &[("environment", "prod"), ("order", "9")]),
        cluster("b", &[("environment", "prod"), ("order", "10")]),
        cluster("z", &[("environment", "test")]),
        cluster("y", &[("environment", "test")]),
    ];
    let strategy = [
        sorted(stage("prod", "prod"), "order"),
        stage("test", "test"),
    ];
    let stages = assign(&strategy, &labels(&clusters)).expect("assigned");
    assert_eq!(names(&stages), vec![vec!["a", "b", "c"], vec!["y", "z"]]);
}

#[test]
fn an_unset_selector_selects_none_and_an_empty_one_selects_all() {
    let clusters = vec![cluster("a", &[]), cluster("b", &[("x", "y")])];
    let none = StageConfig {
        name: "none".into(),
        ..Default::default()
    };
    let all = StageConfig {
        name: "all".into(),
        label_selector: Some(LabelSelector::default()),
        ..Default::default()
    };
    let stages = assign(&[none, all], &labels(&clusters)).expect("assigned");
    assert_eq!(names(&stages), vec![vec![], vec!["a", "b"]]);
}

#[test]
fn misfits_are_errors_that_name_the_cluster() {
    let both = vec![cluster("a", &[("environment", "prod")])];
    let everything = StageConfig {
        name: "everything".into(),
        label_selector: Some(LabelSelector::default()),
        ..Default::default()
    };
    let cases: Vec<(Vec<StageConfig>, Vec<Cluster>, AssignError, &str)> = vec![
        (
            vec![stage("prod", "prod"), everything],
            both.clone(),
            AssignError::InTwoStages {
                cluster: "a".into(),
                first: "prod".into(),
                second: "everything".into(),
            },
            "cluster a is selected by two stages, prod and everything",
        ),
        (
            vec![stage("test", "test")],
            both.clone(),
            AssignError::InNoStage {
                cluster: "a".into(),
            },
            "cluster a is scheduled but no stage selects it",
        ),
        (
            vec![sorted(stage("prod", "prod"), "order")],
            both.clone(),
            AssignError::SortingLabelMissing {
                cluster: "a".into(),
                stage: "prod".into(),
                key: "order".into(),
            },
            "cluster a in stage prod has no label order",
        ),
        (
            vec![sorted(stage("prod", "prod"), "order")],
            vec![cluster("a", &[("environment", "prod"), ("order", "first")])],
            AssignError::SortingLabelNotInteger {
                cluster: "a".into(),
                stage: "prod".into(),
                key: "order".into(),
                value: "first".into(),
            },
            "has label order=\"first\", which is not an integer",
        ),
    ];
    for (stages, clusters, want, text) in cases {
        let got = assign(&stages, &labels(&clusters)).expect_err("misfit");
        assert_eq!(got, want);
        assert!(got.to_string().contains(text), "{got}");
    }
}
