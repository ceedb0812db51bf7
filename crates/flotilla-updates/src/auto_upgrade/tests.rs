//! Profile evaluation: when a channel's release generates a run, what the run is, and what
//! the status says.

use flotilla_api::updates::auto_upgrade::{
    AutoUpgradeProfileSpec, AutoUpgradeProfileStatus, Channel, TriggerStatus,
};
use flotilla_api::updates::update_run::{NodeImageSelectionType, RunAction, UpgradeType};
use flotilla_api::updates::{KubernetesVersionSpec, NodeImageVersionSpec};
use proptest::prelude::*;

use super::{Evaluation, evaluate, failed_trigger, generate_update_run};
use crate::release::tests::{day, ga, image, lts, v};
use crate::release::{Catalog, MemberVersion, generated_run_name};

const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";

/// N is 1.31 from day 1; 1.32.0 reaches region x on day 30 and 1.32.1 on day 50.
fn releases() -> Vec<KubernetesVersionSpec> {
    vec![
        lts("1.27.15", &[("x", 1)]),
        ga("1.29.8", &[("x", 1)]),
        ga("1.30.10", &[("x", 1)]),
        ga("1.31.2", &[("x", 1)]),
        ga("1.31.4", &[("x", 20)]),
        ga("1.32.0", &[("x", 30), ("y", 35)]),
        ga("1.32.1", &[("y", 50)]),
    ]
}

fn images() -> Vec<NodeImageVersionSpec> {
    vec![
        image(UBUNTU, "202510.13.0", &[("x", 1)]),
        image(UBUNTU, "202511.02.0", &[("x", 40)]),
    ]
}

fn profile(channel: Channel) -> AutoUpgradeProfileSpec {
    AutoUpgradeProfileSpec {
        channel,
        update_strategy_name: Some("two-stages".into()),
        ..Default::default()
    }
}

/// Evaluates `spec` at day `d` over the test catalog and no members.
fn at(spec: &AutoUpgradeProfileSpec, status: &AutoUpgradeProfileStatus, d: i64) -> Evaluation {
    let (k, i) = (releases(), images());
    let catalog = Catalog::new(&k, &i);
    evaluate("rapid", spec, status, &catalog, [], day(d))
}

/// Evaluates day by day from `from` to `to`, feeding each status to the next, and returns
/// the names of the runs generated on the way with the day each came.
fn days(spec: &AutoUpgradeProfileSpec, from: i64, to: i64) -> (Vec<(i64, String)>, Evaluation) {
    let mut status = AutoUpgradeProfileStatus::default();
    let mut runs = Vec::new();
    let mut last = None;
    for d in from..=to {
        let e = at(spec, &status, d);
        if let Some(run) = &e.generate {
            runs.push((d, run.name.clone()));
        }
        status = e.status.clone();
        last = Some(e);
    }
    (runs, last.expect("at least one day"))
}

#[test]
fn a_new_profile_waits_for_the_next_release_then_generates_and_starts_a_run() {
    let spec = profile(Channel::Rapid);
    let first = at(&spec, &AutoUpgradeProfileStatus::default(), 10);
    assert_eq!(first.generate, None);
    assert_eq!(first.status.channel_versions, Some(vec!["1.31.2".into()]));
    assert!(
        first
            .status
            .message
            .as_deref()
            .unwrap()
            .contains("watching the Rapid channel, now at 1.31.2"),
        "{first:?}"
    );
    assert_eq!(first.recheck_at, Some(day(20)), "1.31.4 arrives on day 20");

    let (runs, last) = days(&spec, 10, 60);
    let expected =
        |version: &str| generated_run_name("rapid", Channel::Rapid, &[version.to_string()]);
    assert_eq!(
        runs,
        [
            (20, expected("1.31.4")),
            (30, expected("1.32.0")),
            (50, expected("1.32.1"))
        ]
    );
    let status = &last.status;
    assert_eq!(status.last_trigger_status, Some(TriggerStatus::Succeeded));
    assert_eq!(status.last_trigger_upgrade_versions, ["1.32.1"]);
    assert_eq!(
        status.last_triggered_run.as_deref(),
        Some(expected("1.32.1").as_str())
    );
    assert_eq!(
        status.last_triggered_at.as_ref().map(|t| t.0),
        Some(day(50))
    );
    assert!(
        status
            .message
            .as_deref()
            .unwrap()
            .contains("upgrades to it"),
        "{status:?}"
    );
    assert_eq!(last.recheck_at, None, "nothing else arrives");
}

#[test]
fn the_generated_run_is_a_started_full_run_on_the_profiles_strategy_and_selection() {
    let mut spec = profile(Channel::Rapid);
    spec.node_image_selection = Some(NodeImageSelectionType::Consistent);
    spec.catch_up = true;
    let run = at(&spec, &AutoUpgradeProfileStatus::default(), 10)
        .generate
        .expect("catch-up generates at once");
    assert_eq!(
        run.name,
        generated_run_name("rapid", Channel::Rapid, &["1.31.2".into()])
    );
    let update = &run.spec.managed_cluster_update;
    assert_eq!(update.upgrade.upgrade_type, UpgradeType::Full);
    assert_eq!(update.upgrade.kubernetes_version.as_deref(), Some("1.31.2"));
    assert_eq!(
        update
            .node_image_selection
            .as_ref()
            .map(|s| s.selection_type),
        Some(NodeImageSelectionType::Consistent)
    );
    assert_eq!(run.spec.state, Some(RunAction::Run));
    assert_eq!(run.spec.update_strategy_name.as_deref(), Some("two-stages"));
    assert_eq!(run.spec.auto_upgrade_profile_name.as_deref(), Some("rapid"));
}

#[test]
fn generate_update_run_builds_the_triggers_run_without_starting_it() {
    let (k, i) = (releases(), images());
    let catalog = Catalog::new(&k, &i);
    let spec = profile(Channel::Rapid);
    let generated = generate_update_run("rapid", &spec, &catalog, day(25)).expect("a target");
    assert_eq!(generated.spec.state, Some(RunAction::NotStarted));
    let triggered = {
        let watching = at(&spec, &AutoUpgradeProfileStatus::default(), 10).status;
        at(&spec, &watching, 25).generate.expect("1.31.4 is new")
    };
    assert_eq!(
        generated.name, triggered.name,
        "the same release, the same run"
    );
    assert_eq!(
        generated.spec.managed_cluster_update,
        triggered.spec.managed_cluster_update
    );
    let mut pinned = profile(Channel::TargetKubernetesVersion);
    pinned.target_kubernetes_version = Some("1.33".into());
    let refused = generate_update_run("pinned", &pinned, &catalog, day(25)).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "1.33 is not released yet: the newest GA minor is 1.31"
    );
}

#[test]
fn the_node_image_channel_generates_node_image_only_runs_with_the_latest_images() {
    let spec = profile(Channel::NodeImage);
    let (runs, last) = days(&spec, 10, 45);
    assert_eq!(runs.len(), 1, "only the day-40 image is new: {runs:?}");
    assert_eq!(runs[0].0, 40);
    assert_eq!(
        last.status.last_trigger_upgrade_versions,
        [format!("{UBUNTU}-202511.02.0")]
    );
    let run = at(&spec, &AutoUpgradeProfileStatus::default(), 40);
    assert_eq!(run.generate, None, "a first look only records the channel");
    let mut caught_up = spec.clone();
    caught_up.catch_up = true;
    let run = at(&caught_up, &AutoUpgradeProfileStatus::default(), 40)
        .generate
        .expect("catch-up");
    let update = &run.spec.managed_cluster_update;
    assert_eq!(update.upgrade.upgrade_type, UpgradeType::NodeImageOnly);
    assert_eq!(update.upgrade.kubernetes_version, None);
    assert_eq!(
        update
            .node_image_selection
            .as_ref()
            .map(|s| s.selection_type),
        Some(NodeImageSelectionType::Latest)
    );
}

#[test]
fn stable_follows_n_minus_one_and_ignores_patches_of_n() {
    let spec = profile(Channel::Stable);
    let (runs, _) = days(&spec, 10, 60);
    let expected =
        |version: &str| generated_run_name("rapid", Channel::Stable, &[version.to_string()]);
    // N−1 is 1.30 until 1.32.0 makes N 1.32 on day 30; then N−1 is 1.31 (1.31.4).
    assert_eq!(runs, [(30, expected("1.31.4"))]);
}

#[test]
fn a_disabled_profile_generates_nothing_and_without_catch_up_does_not_make_up_for_it() {
    let mut spec = profile(Channel::Rapid);
    spec.disabled = true;
    let mut status = AutoUpgradeProfileStatus::default();
    for d in 10..=35 {
        let e = at(&spec, &status, d);
        assert_eq!(e.generate, None, "day {d}");
        status = e.status;
    }
    assert!(
        status.message.as_deref().unwrap().starts_with("disabled"),
        "{status:?}"
    );
    assert_eq!(status.channel_versions, Some(vec!["1.32.0".into()]));
    spec.disabled = false;
    let enabled = at(&spec, &status, 36);
    assert_eq!(enabled.generate, None, "1.32.0 came while disabled");
    spec.catch_up = true;
    let caught_up = at(&spec, &status, 36);
    assert_eq!(
        caught_up.generate.map(|r| r.name),
        Some(generated_run_name(
            "rapid",
            Channel::Rapid,
            &["1.32.0".into()]
        ))
    );
}

#[test]
fn a_channel_without_a_target_says_why_and_keeps_its_last_trigger() {
    let mut spec = profile(Channel::TargetKubernetesVersion);
    spec.target_kubernetes_version = Some("1.28".into());
    let e = at(&spec, &AutoUpgradeProfileStatus::default(), 10);
    assert_eq!(e.generate, None);
    assert_eq!(e.status.channel_versions, None);
    let message = e.status.message.unwrap();
    assert!(
        message.contains("has no target") && message.contains("1.28"),
        "{message}"
    );
}

#[test]
fn a_failed_trigger_is_recorded_and_tried_again() {
    let spec = profile(Channel::Rapid);
    let watching = at(&spec, &AutoUpgradeProfileStatus::default(), 10).status;
    let triggered = at(&spec, &watching, 20);
    let run = triggered.generate.expect("1.31.4 is new");
    let failed = failed_trigger(
        &watching,
        &triggered.status,
        &run.name,
        "forbidden",
        day(20),
    );
    assert_eq!(failed.last_trigger_status, Some(TriggerStatus::Failed));
    assert_eq!(failed.last_trigger_error.as_deref(), Some("forbidden"));
    assert_eq!(failed.last_triggered_run, None);
    let again = at(&spec, &failed, 21);
    assert_eq!(again.generate.map(|r| r.name), Some(run.name));
}

#[test]
fn unsupported_members_are_listed_with_why() {
    let (k, i) = (releases(), images());
    let catalog = Catalog::new(&k, &i);
    let members = [
        MemberVersion {
            name: "old",
            version: v("1.28.3"),
            long_term_support: false,
        },
        MemberVersion {
            name: "lts",
            version: v("1.27.15"),
            long_term_support: true,
        },
        MemberVersion {
            name: "current",
            version: v("1.31.2"),
            long_term_support: false,
        },
    ];
    let e = evaluate(
        "rapid",
        &profile(Channel::Rapid),
        &AutoUpgradeProfileStatus::default(),
        &catalog,
        members,
        day(10),
    );
    assert_eq!(e.status.unsupported_members.len(), 1, "{:?}", e.status);
    assert!(
        e.status.unsupported_members[0]
            .starts_with("old: 1.28.3 is outside the support window 1.29 to 1.31"),
        "{:?}",
        e.status.unsupported_members
    );
}

proptest! {
    /// Evaluating again on the status an evaluation produced generates nothing new and
    /// settles (a third look changes nothing), and the same inputs always give the same run
    /// name.
    #[test]
    fn evaluation_is_idempotent(d in 1i64..70, catch_up in any::<bool>(), channel in 0usize..3) {
        let channel = [Channel::Rapid, Channel::Stable, Channel::NodeImage][channel];
        let mut spec = profile(channel);
        spec.catch_up = catch_up;
        let first = at(&spec, &AutoUpgradeProfileStatus::default(), d);
        let again = at(&spec, &first.status, d);
        prop_assert_eq!(&again.generate, &None);
        let third = at(&spec, &again.status, d);
        prop_assert_eq!(&third, &again);
        let twin = at(&spec, &AutoUpgradeProfileStatus::default(), d);
        prop_assert_eq!(first.generate.map(|r| r.name), twin.generate.map(|r| r.name));
    }
}
