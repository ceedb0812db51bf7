//! A binding's conditions and resource lists from overriding, writing and applying its Works.

use flotilla_api::placement::binding::ResourceBindingStatus;
use flotilla_api::placement::status::{EnvelopeIdentifier, EnvelopeType, PatchDetail};
use flotilla_api::placement::work::{DiffDetails, DriftDetails, WorkStatus};
use flotilla_placement::status::{
    BindingWorks, OverrideOutcome, PLACEMENT_LIST_LIMIT, WorkSync, WorkView, binding_status, reason,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::fixtures::{cond, cond_msg, earlier, manifest, now, resource, summary, work_status};

const GEN: i64 = 5;
const WORK_GEN: i64 = 2;

fn view<'a>(name: &'a str, status: &'a WorkStatus) -> WorkView<'a> {
    WorkView {
        name,
        generation: WORK_GEN,
        up_to_date: true,
        deleting: false,
        status,
        envelope: None,
    }
}

fn roll_up(
    overrides: OverrideOutcome<'_>,
    sync: WorkSync<'_>,
    report_diff: bool,
) -> ResourceBindingStatus {
    binding_status(&BindingWorks {
        generation: GEN,
        report_diff,
        overrides,
        sync,
        previous: &ResourceBindingStatus::default(),
        now: now(),
    })
}

fn applied(status: &str, reason: &str) -> flotilla_api::placement::work::ManifestCondition {
    manifest(
        "Deployment",
        "app",
        "web",
        vec![cond_msg(
            "Applied",
            status,
            reason,
            "409 conflict on spec.replicas",
            7,
        )],
    )
}

/// A Work applied and available (or untrackable) for its generation.
fn healthy(available_reason: &str) -> WorkStatus {
    work_status(
        vec![
            cond("Applied", "True", "AllManifestsApplied", WORK_GEN),
            cond("Available", "True", available_reason, WORK_GEN),
        ],
        vec![applied("True", "Applied")],
    )
}

#[test]
fn the_chain_stops_at_the_first_condition_that_is_not_true() {
    let stale = work_status(
        vec![cond("Applied", "True", "AllManifestsApplied", WORK_GEN - 1)],
        vec![],
    );
    let unavailable = work_status(
        vec![
            cond("Applied", "True", "AllManifestsApplied", WORK_GEN),
            cond(
                "Available",
                "False",
                "SomeManifestsAreNotAvailable",
                WORK_GEN,
            ),
        ],
        vec![],
    );
    let available = healthy("AllManifestsAvailable");
    let untrackable = healthy(reason::WORK_NOT_TRACKABLE);
    let failed = work_status(
        vec![cond(
            "Applied",
            "False",
            "SomeManifestsAreNotApplied",
            WORK_GEN,
        )],
        vec![applied("False", "ManifestApplyFailed")],
    );
    let mut behind = view("crp-work", &available);
    behind.up_to_date = false;
    let (good, bad, late, dark, free) = (
        [view("crp-work", &available), view("crp-1", &available)],
        [view("crp-work", &available), view("crp-1", &failed)],
        [view("crp-work", &stale), view("crp-1", &failed)],
        [view("crp-work", &unavailable)],
        [view("crp-work", &available), view("crp-1", &untrackable)],
    );
    let t = |type_, reason| (type_, "True", reason);
    let f = |type_, reason| (type_, "False", reason);
    let none = t("Overridden", reason::NO_OVERRIDE_SPECIFIED);
    let synced = t("WorkSynchronized", reason::ALL_WORK_SYNCED);
    let applied_ok = t("Applied", reason::ALL_WORK_HAVE_BEEN_APPLIED);
    let cases = [
        (
            "override failed",
            OverrideOutcome::Failed("bad patch"),
            WorkSync::Written(&good),
            vec![f("Overridden", reason::OVERRIDDEN_FAILED)],
        ),
        (
            "writing failed",
            OverrideOutcome::Applied,
            WorkSync::Failed("quota"),
            vec![
                t("Overridden", reason::OVERRIDDEN_SUCCEEDED),
                f("WorkSynchronized", reason::SYNC_WORK_FAILED),
            ],
        ),
        (
            "a work behind",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(std::slice::from_ref(&behind)),
            vec![
                none,
                f("WorkSynchronized", reason::WORK_NOT_SYNCHRONIZED_YET),
            ],
        ),
        (
            "a work not applied for its generation",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&late),
            vec![none, synced, f("Applied", reason::APPLY_IN_PROGRESS)],
        ),
        (
            "a work failed to apply",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&bad),
            vec![
                none,
                synced,
                f("Applied", reason::NOT_ALL_WORK_HAVE_BEEN_APPLIED),
            ],
        ),
        (
            "a work not available",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&dark),
            vec![
                none,
                synced,
                applied_ok,
                f("Available", reason::NOT_ALL_WORK_ARE_AVAILABLE),
            ],
        ),
        (
            "a work untrackable",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&free),
            vec![
                none,
                synced,
                applied_ok,
                t("Available", reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE),
            ],
        ),
        (
            "all available",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&good),
            vec![
                none,
                synced,
                applied_ok,
                t("Available", reason::ALL_WORK_ARE_AVAILABLE),
            ],
        ),
        (
            "nothing selected",
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&[]),
            vec![
                none,
                synced,
                applied_ok,
                t("Available", reason::NO_RESOURCES_SELECTED),
            ],
        ),
    ];
    for (case, overrides, sync, expected) in cases {
        let status = roll_up(overrides, sync, false);
        assert_eq!(summary(&status.conditions), expected, "{case}");
        assert!(
            status
                .conditions
                .iter()
                .all(|c| c.observed_generation == Some(GEN)),
            "{case}"
        );
    }
}

#[test]
fn messages_name_the_work_and_the_first_failed_resource() {
    let failed = work_status(
        vec![cond(
            "Applied",
            "False",
            "SomeManifestsAreNotApplied",
            WORK_GEN,
        )],
        vec![
            applied("False", "ManifestApplyFailed"),
            manifest(
                "ConfigMap",
                "app",
                "cfg",
                vec![cond("Applied", "False", "ManifestApplyFailed", 1)],
            ),
        ],
    );
    let works = [view("crp-work", &failed)];
    let status = roll_up(
        OverrideOutcome::Failed("bad patch"),
        WorkSync::Written(&works),
        false,
    );
    assert_eq!(
        status.conditions[0].message,
        "Failed to apply the override rules on the resources: bad patch"
    );
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Failed("quota exceeded"),
        false,
    );
    assert_eq!(
        status.conditions[1].message,
        "Failed to synchronize the work to the latest: quota exceeded"
    );
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&works),
        false,
    );
    assert_eq!(
        status.conditions[2].message,
        "Work crp-work has failed to apply: Deployment app/web: ManifestApplyFailed: 409 conflict on spec.replicas (and 1 more)"
    );
    let fresh = work_status(vec![], vec![]);
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&[view("crp-work", &fresh)]),
        false,
    );
    assert_eq!(
        status.conditions[2].message,
        "Work crp-work has not been applied for its generation 2 yet"
    );
}

/// A Work whose manifest has drift and differences.
fn with_details(mut status: WorkStatus) -> WorkStatus {
    let patch = PatchDetail {
        path: "/spec/replicas".into(),
        value_in_member: Some("5".into()),
        value_in_hub: Some("3".into()),
    };
    status.manifest_conditions[0].drift_details = Some(DriftDetails {
        observation_time: Some(Time(earlier())),
        observed_in_member_cluster_generation: 7,
        first_drifted_observed_time: None,
        observed_drifts: vec![patch.clone()],
    });
    status.manifest_conditions[0].diff_details = Some(DiffDetails {
        observation_time: None,
        observed_in_member_cluster_generation: Some(7),
        first_diffed_observed_time: Some(Time(earlier())),
        observed_diffs: vec![patch],
    });
    status
}

#[test]
fn resources_are_listed_once_the_step_reporting_them_has_finished() {
    let available = with_details(healthy("AllManifestsAvailable"));
    let failed = with_details(work_status(
        vec![cond(
            "Applied",
            "False",
            "SomeManifestsAreNotApplied",
            WORK_GEN,
        )],
        vec![applied("False", "ManifestApplyFailed")],
    ));
    let unavailable = with_details(work_status(
        vec![
            cond("Applied", "True", "AllManifestsApplied", WORK_GEN),
            cond(
                "Available",
                "False",
                "SomeManifestsAreNotAvailable",
                WORK_GEN,
            ),
        ],
        vec![manifest(
            "Deployment",
            "app",
            "web",
            vec![
                cond("Applied", "True", "Applied", 7),
                cond_msg(
                    "Available",
                    "False",
                    "ManifestNotAvailableYet",
                    "1 of 3 replicas ready",
                    7,
                ),
            ],
        )],
    ));
    let pending = with_details(work_status(vec![], vec![applied("True", "Applied")]));
    let diffs = with_details(work_status(
        vec![cond(
            "DiffReported",
            "True",
            "AllManifestsDiffReported",
            WORK_GEN,
        )],
        vec![manifest("Deployment", "app", "web", vec![])],
    ));
    // (work, report diff, failed, drifted, diffed)
    let cases = [
        ("available", &available, false, 0, 1, 0),
        ("apply failed", &failed, false, 1, 1, 1),
        ("not available", &unavailable, false, 1, 1, 0),
        ("not applied yet", &pending, false, 0, 0, 0),
        ("diff reported", &diffs, true, 0, 0, 1),
        ("diff not reported yet", &pending, true, 0, 0, 0),
    ];
    for (case, work, report_diff, failed, drifted, diffed) in cases {
        let works = [view("crp-work", work)];
        let status = roll_up(
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&works),
            report_diff,
        );
        let counts = (
            status.failed_placements.len(),
            status.drifted_placements.len(),
            status.diffed_placements.len(),
        );
        assert_eq!(counts, (failed, drifted, diffed), "{case}");
    }

    let works = [view("crp-work", &unavailable)];
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&works),
        false,
    );
    let failure = &status.failed_placements[0];
    assert_eq!(failure.resource, resource("Deployment", "app", "web"));
    assert_eq!(failure.condition.reason, "ManifestNotAvailableYet");
    let drift = &status.drifted_placements[0];
    assert_eq!(drift.first_drifted_observed_time, Time(earlier()));
    assert_eq!(drift.target_cluster_observed_generation, 7);
    assert_eq!(
        drift.observed_drifts.as_ref().unwrap()[0].path,
        "/spec/replicas"
    );
    let works = [view("crp-work", &diffs)];
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&works),
        true,
    );
    assert_eq!(status.diffed_placements[0].observation_time, Time(now()));
    assert_eq!(
        status.diffed_placements[0].first_diffed_observed_time,
        Time(earlier())
    );
}

#[test]
fn lists_keep_at_most_a_hundred_and_name_the_envelope() {
    let many: Vec<_> = (0..150)
        .map(|i| {
            manifest(
                "ConfigMap",
                "app",
                &format!("cfg-{i}"),
                vec![cond("Applied", "False", "ManifestApplyFailed", 1)],
            )
        })
        .collect();
    let failed = work_status(
        vec![cond(
            "Applied",
            "False",
            "SomeManifestsAreNotApplied",
            WORK_GEN,
        )],
        many,
    );
    let envelope = EnvelopeIdentifier {
        name: "bundle".into(),
        namespace: Some("app".into()),
        type_: Some(EnvelopeType::ResourceEnvelope),
    };
    let mut work = view("crp-envelope-bundle", &failed);
    work.envelope = Some(&envelope);
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&[work]),
        false,
    );
    assert_eq!(status.failed_placements.len(), PLACEMENT_LIST_LIMIT);
    assert_eq!(status.failed_placements[99].resource.name, "cfg-99");
    assert_eq!(
        status.failed_placements[0].resource.envelope.as_ref(),
        Some(&envelope)
    );
}

#[test]
fn works_being_deleted_are_ignored() {
    let available = healthy("AllManifestsAvailable");
    let failed = work_status(
        vec![cond(
            "Applied",
            "False",
            "SomeManifestsAreNotApplied",
            WORK_GEN,
        )],
        vec![],
    );
    let mut leaving = view("crp-old", &failed);
    leaving.deleting = true;
    leaving.up_to_date = false;
    let works = [view("crp-work", &available), leaving];
    let status = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&works),
        false,
    );
    assert_eq!(
        status.conditions.last().unwrap().reason,
        reason::ALL_WORK_ARE_AVAILABLE
    );
}

#[test]
fn report_diff_ends_the_chain_in_diff_reported() {
    let reported = work_status(
        vec![cond(
            "DiffReported",
            "True",
            "AllManifestsDiffReported",
            WORK_GEN,
        )],
        vec![],
    );
    let failed = work_status(
        vec![cond_msg(
            "DiffReported",
            "False",
            "SomeManifestsHaveNotReportedDiff",
            "timeout",
            WORK_GEN,
        )],
        vec![],
    );
    let pending = work_status(
        vec![cond(
            "DiffReported",
            "True",
            "AllManifestsDiffReported",
            WORK_GEN - 1,
        )],
        vec![],
    );
    let cases = [
        (&reported, "True", reason::ALL_WORK_HAVE_DIFF_REPORTED),
        (&failed, "False", reason::NOT_ALL_WORK_HAVE_DIFF_REPORTED),
        (&pending, "False", reason::DIFF_REPORT_IN_PROGRESS),
    ];
    for (work, status, why) in cases {
        let works = [view("crp-work", work)];
        let out = roll_up(
            OverrideOutcome::NoneSpecified,
            WorkSync::Written(&works),
            true,
        );
        let last = out.conditions.last().unwrap();
        assert_eq!(
            (
                last.type_.as_str(),
                last.status.as_str(),
                last.reason.as_str()
            ),
            ("DiffReported", status, why)
        );
        assert_eq!(out.conditions.len(), 3);
    }
    let works = [view("crp-work", &failed)];
    let out = roll_up(
        OverrideOutcome::NoneSpecified,
        WorkSync::Written(&works),
        true,
    );
    assert_eq!(
        out.conditions[2].message,
        "Work crp-work has failed to report diff: timeout"
    );
}

#[test]
fn rollout_started_is_kept_and_transition_times_move_only_on_change() {
    let available = healthy("AllManifestsAvailable");
    let works = [view("crp-work", &available)];
    let previous = ResourceBindingStatus {
        conditions: vec![
            cond("RolloutStarted", "True", reason::ROLLOUT_STARTED, GEN),
            cond("Overridden", "True", reason::NO_OVERRIDE_SPECIFIED, GEN),
            cond("WorkSynchronized", "True", reason::ALL_WORK_SYNCED, GEN),
            cond("Applied", "True", reason::ALL_WORK_HAVE_BEEN_APPLIED, GEN),
            cond("Available", "True", reason::ALL_WORK_ARE_AVAILABLE, GEN - 1),
        ],
        ..Default::default()
    };
    let input = |sync| BindingWorks {
        generation: GEN,
        report_diff: false,
        overrides: OverrideOutcome::NoneSpecified,
        sync,
        previous: &previous,
        now: now(),
    };
    let status = binding_status(&input(WorkSync::Written(&works)));
    let times: Vec<_> = status
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.last_transition_time.0))
        .collect();
    assert_eq!(
        times,
        [
            ("RolloutStarted", earlier()),
            ("Overridden", earlier()),
            ("WorkSynchronized", earlier()),
            ("Applied", earlier()),
            ("Available", now()),
        ]
    );
    let status = binding_status(&input(WorkSync::Failed("quota")));
    assert_eq!(
        summary(&status.conditions),
        [
            ("RolloutStarted", "True", reason::ROLLOUT_STARTED),
            ("Overridden", "True", reason::NO_OVERRIDE_SPECIFIED),
            ("WorkSynchronized", "False", reason::SYNC_WORK_FAILED),
        ]
    );
    assert_eq!(status.conditions[2].last_transition_time.0, now());
}
