use super::*;
use crate::work::identifier::identify;
use crate::work::outcome::ProcessingResult;
use flotilla_api::placement::status::PatchDetail;
use flotilla_api::placement::strategy::ApplyStrategyType;
use serde_json::json;

fn t(minute: u32) -> Timestamp {
    format!("2026-03-01T10:{minute:02}:00Z").parse().unwrap()
}

fn id(ordinal: i32, kind: &str, name: &str) -> WorkResourceIdentifier {
    let api_version = if kind == "Deployment" {
        "apps/v1"
    } else {
        "v1"
    };
    let mut id = identify(
        0,
        &json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "ns"}}),
    )
    .unwrap();
    id.ordinal = ordinal;
    id
}

fn result(
    identifier: WorkResourceIdentifier,
    outcome: Outcome,
    availability: Option<Availability>,
) -> ManifestResult {
    ManifestResult {
        identifier,
        outcome,
        availability,
        live_generation: Some(4),
        live_uid: Some("uid".into()),
    }
}

fn applied(ordinal: i32, availability: Availability) -> ManifestResult {
    result(
        id(ordinal, "ConfigMap", &format!("c{ordinal}")),
        Outcome::new(ProcessingResult::Applied, "ok"),
        Some(availability),
    )
}

/// (type, status, reason, observedGeneration) of each condition.
fn summary(conditions: &[Condition]) -> Vec<(&str, &str, &str, Option<i64>)> {
    conditions
        .iter()
        .map(|c| {
            (
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_str(),
                c.observed_generation,
            )
        })
        .collect()
}

fn find<'a>(conditions: &'a [Condition], type_: &str) -> &'a Condition {
    conditions.iter().find(|c| c.type_ == type_).unwrap()
}

fn drift(path: &str) -> PatchDetail {
    PatchDetail {
        path: path.into(),
        value_in_member: Some("m".into()),
        value_in_hub: Some("h".into()),
    }
}

#[test]
fn all_applied_and_available() {
    let results = [
        applied(1, Availability::Available),
        applied(0, Availability::Available),
    ];
    let status = work_status(
        &WorkStatus::default(),
        7,
        Strategy::default(),
        &results,
        t(0),
    );
    assert_eq!(
        summary(&status.conditions),
        vec![
            ("Applied", "True", "AllManifestsApplied", Some(7)),
            ("Available", "True", "AllManifestsAvailable", Some(7)),
        ]
    );
    let ordinals: Vec<i32> = status
        .manifest_conditions
        .iter()
        .map(|m| m.identifier.ordinal)
        .collect();
    assert_eq!(ordinals, vec![0, 1]);
    assert_eq!(
        summary(&status.manifest_conditions[0].conditions),
        vec![
            ("Applied", "True", "Applied", Some(4)),
            ("Available", "True", "Available", Some(4)),
        ]
    );
    assert!(status.manifest_conditions[0].drift_details.is_none());
    assert_eq!(
        applied_resources(&[], &results)
            .iter()
            .map(|r| (r.identifier.ordinal, r.uid.as_str()))
            .collect::<Vec<_>>(),
        vec![(0, "uid"), (1, "uid")]
    );
}

#[test]
fn availability_roll_up() {
    let cases = [
        (
            vec![Availability::Available, Availability::NotTrackable],
            (
                "True",
                "WorkNotTrackable",
                "Some of the applied manifests cannot be tracked for availability",
            ),
        ),
        (
            vec![
                Availability::NotYetAvailable("0/1 replicas available".into()),
                Availability::NotTrackable,
            ],
            (
                "False",
                "SomeManifestsAreNotAvailable",
                "Some manifests are not available (1 of 2 manifests are available)",
            ),
        ),
    ];
    for (availabilities, (status_, reason, message)) in cases {
        let results: Vec<ManifestResult> = availabilities
            .into_iter()
            .enumerate()
            .map(|(i, a)| applied(i32::try_from(i).unwrap(), a))
            .collect();
        let status = work_status(
            &WorkStatus::default(),
            1,
            Strategy::default(),
            &results,
            t(0),
        );
        let available = find(&status.conditions, "Available");
        assert_eq!(
            (
                available.status.as_str(),
                available.reason.as_str(),
                available.message.as_str()
            ),
            (status_, reason, message)
        );
    }
}

#[test]
fn failures_hold_back_availability() {
    let previous = work_status(
        &WorkStatus::default(),
        1,
        Strategy::default(),
        &[applied(0, Availability::Available)],
        t(0),
    );
    let failed = result(
        id(0, "ConfigMap", "c0"),
        Outcome {
            drifts: vec![drift("/data/k")],
            ..Outcome::new(ProcessingResult::FoundDrifts, "drifted")
        },
        Some(Availability::Available),
    );
    let results = [failed, applied(1, Availability::Available)];
    let status = work_status(&previous, 2, Strategy::default(), &results, t(5));
    assert_eq!(
        summary(&status.conditions),
        vec![("Applied", "False", "SomeManifestsAreNotApplied", Some(2))]
    );
    assert_eq!(
        find(&status.conditions, "Applied").message,
        "Failed to apply all manifests (1 of 2 manifests are applied)"
    );
    let entry = &status.manifest_conditions[0];
    assert_eq!(
        summary(&entry.conditions),
        vec![("Applied", "False", "FoundDrifts", Some(4))]
    );
    let details = entry.drift_details.as_ref().unwrap();
    assert_eq!(details.observed_drifts, vec![drift("/data/k")]);
    assert_eq!(details.observed_in_member_cluster_generation, 4);
    assert_eq!(details.first_drifted_observed_time, Some(Time(t(5))));
    assert_eq!(applied_resources(&[], &results).len(), 1);
}

#[test]
fn times_carry_over_by_object_not_ordinal() {
    let first = result(
        id(0, "ConfigMap", "cfg"),
        Outcome {
            drifts: vec![drift("/data/a")],
            ..Outcome::new(ProcessingResult::FoundDrifts, "drifted")
        },
        None,
    );
    let before = work_status(
        &WorkStatus::default(),
        1,
        Strategy::default(),
        &[first],
        t(0),
    );

    // A manifest was inserted before it: same object, new ordinal, still drifted.
    let moved = result(
        id(1, "ConfigMap", "cfg"),
        Outcome {
            drifts: vec![drift("/data/b")],
            ..Outcome::new(ProcessingResult::FoundDrifts, "drifted")
        },
        None,
    );
    let results = [applied(0, Availability::Available), moved];
    let after = work_status(&before, 2, Strategy::default(), &results, t(10));
    let entry = &after.manifest_conditions[1];
    assert_eq!(entry.identifier.ordinal, 1);
    let applied_condition = find(&entry.conditions, "Applied");
    assert_eq!(applied_condition.last_transition_time, Time(t(0)));
    let details = entry.drift_details.as_ref().unwrap();
    assert_eq!(details.first_drifted_observed_time, Some(Time(t(0))));
    assert_eq!(details.observation_time, Some(Time(t(10))));
    assert_eq!(details.observed_drifts, vec![drift("/data/b")]);
    // The Work's Applied condition stayed False: its transition time stays too.
    assert_eq!(
        find(&after.conditions, "Applied").last_transition_time,
        Time(t(0))
    );

    // Fixed: the status flips, so the transition time moves; the drift details go.
    let fixed = [
        applied(0, Availability::Available),
        result(
            id(1, "ConfigMap", "cfg"),
            Outcome::new(ProcessingResult::Applied, "ok"),
            Some(Availability::Available),
        ),
    ];
    let later = work_status(&after, 2, Strategy::default(), &fixed, t(20));
    let entry = &later.manifest_conditions[1];
    assert_eq!(
        find(&entry.conditions, "Applied").last_transition_time,
        Time(t(20))
    );
    assert!(entry.drift_details.is_none());
}

#[test]
fn report_diff_status() {
    let report_diff = Strategy {
        type_: ApplyStrategyType::ReportDiff,
        ..Strategy::default()
    };
    let previous = work_status(
        &WorkStatus::default(),
        1,
        Strategy::default(),
        &[applied(0, Availability::Available)],
        t(0),
    );
    let found = ManifestResult {
        live_generation: None,
        ..result(
            id(0, "ConfigMap", "c0"),
            Outcome {
                diffs: vec![drift("/")],
                ..Outcome::new(ProcessingResult::FoundDiff, "missing")
            },
            None,
        )
    };
    let status = work_status(
        &previous,
        2,
        report_diff,
        std::slice::from_ref(&found),
        t(1),
    );
    assert_eq!(
        summary(&status.conditions),
        vec![("DiffReported", "True", "AllManifestsDiffReported", Some(2))]
    );
    let entry = &status.manifest_conditions[0];
    assert_eq!(
        summary(&entry.conditions),
        vec![("DiffReported", "True", "FoundDiff", None)]
    );
    let details = entry.diff_details.as_ref().unwrap();
    assert_eq!(details.observed_in_member_cluster_generation, None);
    assert_eq!(details.observed_diffs, vec![drift("/")]);

    let blocked = result(
        id(1, "ConfigMap", "c1"),
        Outcome::new(ProcessingResult::FailedToTakeOver, "owned elsewhere"),
        None,
    );
    let status = work_status(&previous, 2, report_diff, &[found, blocked], t(1));
    let reported = find(&status.conditions, "DiffReported");
    assert_eq!(
        (
            reported.status.as_str(),
            reported.reason.as_str(),
            reported.message.as_str()
        ),
        (
            "False",
            "SomeManifestsHaveNotReportedDiff",
            "Failed to report diff on all manifests (1 of 2 manifests have reported diff)"
        )
    );
    assert_eq!(
        find(&status.manifest_conditions[1].conditions, "DiffReported").reason,
        "FailedToReportDiff"
    );
}

#[test]
fn rejected_manifests_are_reported_by_ordinal() {
    let manifests = [json!({"apiVersion": "v1", "kind": "ConfigMap"}), json!(42)];
    let results: Vec<ManifestResult> = manifests
        .iter()
        .enumerate()
        .map(|(i, m)| ManifestResult::rejected(&identify(i, m).unwrap_err()))
        .collect();
    let status = work_status(
        &WorkStatus::default(),
        1,
        Strategy::default(),
        &results,
        t(0),
    );
    assert_eq!(
        summary(&status.conditions),
        vec![("Applied", "False", "SomeManifestsAreNotApplied", Some(1))]
    );
    let reasons: Vec<&str> = status
        .manifest_conditions
        .iter()
        .map(|m| find(&m.conditions, "Applied").reason.as_str())
        .collect();
    assert_eq!(reasons, vec!["DecodingErred", "DecodingErred"]);
    assert_eq!(status.manifest_conditions[1].identifier.ordinal, 1);
    assert!(applied_resources(&[], &results).is_empty());
}

#[test]
fn an_empty_work_is_applied_and_available() {
    let status = work_status(&WorkStatus::default(), 3, Strategy::default(), &[], t(0));
    assert_eq!(
        summary(&status.conditions),
        vec![
            ("Applied", "True", "AllManifestsApplied", Some(3)),
            ("Available", "True", "AllManifestsAvailable", Some(3)),
        ]
    );
}

#[test]
fn objects_not_applied_this_time_stay_recorded() {
    let recorded = |id: WorkResourceIdentifier, uid: &str| AppliedResourceMeta {
        identifier: id,
        uid: uid.into(),
    };
    let drifted = Outcome::new(ProcessingResult::FoundDrifts, "drifted");
    let results = vec![
        applied(0, Availability::Available),
        // Applied before (under another version and ordinal), drifted now: still recorded.
        result(id(1, "ConfigMap", "drifted"), drifted.clone(), None),
        // Never applied: not recorded.
        result(id(2, "ConfigMap", "refused"), drifted, None),
    ];
    let mut before = id(5, "ConfigMap", "drifted");
    before.version = "v1beta1".into();
    let previous = vec![recorded(before, "old-uid")];
    assert_eq!(
        applied_resources(&previous, &results),
        vec![
            recorded(id(0, "ConfigMap", "c0"), "uid"),
            recorded(id(1, "ConfigMap", "drifted"), "old-uid"),
        ]
    );
}

#[test]
fn a_work_not_recorded_on_the_member_says_why_and_forgets_its_manifests() {
    let previous = work_status(
        &WorkStatus::default(),
        1,
        Strategy::default(),
        &[applied(0, Availability::Available)],
        t(0),
    );
    let status = unrecorded(&previous, 2, Strategy::default(), "no CRD".into(), t(5));
    assert_eq!(
        summary(&status.conditions),
        [("Applied", "False", NOT_RECORDED, Some(2))]
    );
    assert_eq!(find(&status.conditions, "Applied").message, "no CRD");
    assert!(status.manifest_conditions.is_empty());
    // Still failing later: the transition time stays.
    let later = unrecorded(&status, 2, Strategy::default(), "no CRD".into(), t(9));
    assert_eq!(later, status);
    // Under ReportDiff the failure is DiffReported's.
    let report_diff = Strategy {
        type_: ApplyStrategyType::ReportDiff,
        ..Strategy::default()
    };
    let diff = unrecorded(&previous, 2, report_diff, "no CRD".into(), t(5));
    assert_eq!(
        summary(&diff.conditions),
        [("DiffReported", "False", NOT_RECORDED, Some(2))]
    );
}
