//! The placement's status under RollingUpdate: Scheduled from the policy snapshot, each picked
//! cluster's chain from its binding, the placement-level roll-up with its reasons and
//! messages, unfilled slots, the observed resource index and the selected resources.

use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::status::{FailedResourcePlacement, NamespacedName, PlacementStatus};
use flotilla_api::placement::strategy::{ApplyStrategy, ApplyStrategyType, RolloutStrategy};
use flotilla_placement::status::{PlacementKind, reason};

use crate::fixtures::{
    BINDING_GEN, Case, LATEST, OLDER, chain, cluster, cond, cond_msg, decision, earlier, now,
    placement_conditions, resource, summary,
};

const CRP: &str = "ClusterResourcePlacement";

fn prefixed(type_: &str) -> String {
    format!("{CRP}{type_}")
}

#[test]
fn scheduling_not_decided_yet_gives_schedule_pending_only() {
    let mut stale_generation =
        Case::new(vec![decision("m1", true)]).binding("m1", LATEST, chain("", None));
    stale_generation.generation = 2;
    let mut unknown = Case::new(vec![decision("m1", true)]);
    unknown.snapshot.as_mut().unwrap().conditions =
        vec![cond("Scheduled", "Unknown", "Pending", 1)];
    let mut missing = Case::new(vec![decision("m1", true)]);
    missing.snapshot.as_mut().unwrap().conditions.clear();
    let mut none = Case::new(vec![]);
    none.snapshot = None;
    for (case, placement) in [
        ("stale", stale_generation),
        ("unknown", unknown),
        ("missing", missing),
        ("none", none),
    ] {
        let status = placement.run();
        let scheduled = prefixed("Scheduled");
        assert_eq!(
            placement_conditions(&status),
            [(scheduled.as_str(), "Unknown", reason::SCHEDULE_PENDING)],
            "{case}"
        );
        assert_eq!(
            status.conditions.as_ref().unwrap()[0].message,
            "Scheduling has not completed"
        );
        assert_eq!(status.placement_statuses, None, "{case}");
        assert_eq!(
            status.observed_resource_index.as_deref(),
            Some("2"),
            "{case}"
        );
        assert_eq!(
            status.selected_resources.as_ref().map(Vec::len),
            Some(2),
            "{case}"
        );
    }
}

#[test]
fn a_complete_rollout_is_true_all_along_in_order() {
    let status = Case::new(vec![
        decision("m1", true),
        decision("m2", true),
        decision("m3", false),
    ])
    .binding("m1", LATEST, chain("", None))
    .binding("m2", LATEST, chain("", None))
    .run();
    let names: Vec<String> = [
        "Scheduled",
        "RolloutStarted",
        "Overridden",
        "WorkSynchronized",
        "Applied",
        "Available",
    ]
    .iter()
    .map(|t| prefixed(t))
    .collect();
    let reasons = [
        "SchedulingPolicyFulfilled",
        reason::ROLLOUT_STARTED,
        reason::NO_OVERRIDE_SPECIFIED,
        reason::WORK_SYNCHRONIZED,
        reason::APPLY_SUCCEEDED,
        reason::RESOURCE_AVAILABLE,
    ];
    let expected: Vec<_> = names
        .iter()
        .zip(reasons)
        .map(|(n, r)| (n.as_str(), "True", r))
        .collect();
    assert_eq!(placement_conditions(&status), expected);
    let conditions = status.conditions.as_ref().unwrap();
    assert_eq!(
        conditions[4].message,
        "All 2 clusters have applied the resources"
    );
    assert_eq!(
        conditions[2].message,
        "No override rules are configured for the selected resources"
    );
    assert!(conditions.iter().all(|c| c.observed_generation == Some(1)));
    // PickAll: the rejected m3 is not a slot.
    assert_eq!(status.placement_statuses.as_ref().unwrap().len(), 2);
    let m1 = cluster(&status, "m1");
    assert_eq!(m1.observed_resource_index.as_deref(), Some("2"));
    let m1_conditions = m1.conditions.as_deref().unwrap();
    assert_eq!(
        summary(m1_conditions),
        [
            ("Scheduled", "True", reason::SCHEDULED),
            ("RolloutStarted", "True", "RolloutStarted"),
            ("Overridden", "True", "NoOverrideSpecified"),
            ("WorkSynchronized", "True", "AllWorkSynced"),
            ("Applied", "True", "AllWorkHaveBeenApplied"),
            ("Available", "True", "AllWorkAreAvailable"),
        ]
    );
    assert_eq!(m1_conditions[0].message, "picked m1");
    assert_eq!(status.observed_resource_index.as_deref(), Some("2"));
}

#[test]
fn a_failed_cluster_stops_the_chain_and_the_message_names_the_resource() {
    let mut failing = chain("Applied", Some("False"));
    failing.failed_placements = vec![FailedResourcePlacement {
        resource: resource("Deployment", "app", "web"),
        condition: cond_msg("Applied", "False", "ManifestApplyFailed", "409 conflict", 7),
    }];
    let status = Case::new(vec![
        decision("m1", true),
        decision("m2", true),
        decision("m3", true),
    ])
    .binding("m1", LATEST, chain("", None))
    .binding("m2", LATEST, chain("", None))
    .binding("m3", LATEST, failing)
    .run();
    let conditions = placement_conditions(&status);
    assert_eq!(conditions.len(), 5);
    let applied = prefixed("Applied");
    assert_eq!(
        conditions[4],
        (applied.as_str(), "False", reason::APPLY_FAILED)
    );
    assert_eq!(
        status.conditions.as_ref().unwrap()[4].message,
        "2 of 3 clusters have applied the resources; m3: Deployment app/web failed: 409 conflict"
    );
    let m3 = cluster(&status, "m3");
    assert_eq!(m3.conditions.as_ref().unwrap().len(), 5);
    assert_eq!(m3.failed_placements.as_ref().unwrap().len(), 1);
    assert_eq!(cluster(&status, "m1").failed_placements, None);
}

#[test]
fn unknown_wins_over_false_and_the_message_lists_failures_first() {
    // m1 failed to write its works; m2 has not reported; m3 is done.
    let status = Case::new(vec![
        decision("m1", true),
        decision("m2", true),
        decision("m3", true),
    ])
    .binding("m1", LATEST, chain("WorkSynchronized", Some("False")))
    .binding("m2", LATEST, chain("WorkSynchronized", None))
    .binding("m3", LATEST, chain("", None))
    .run();
    let last = status.conditions.as_ref().unwrap().last().unwrap().clone();
    assert_eq!(
        (
            last.type_.as_str(),
            last.status.as_str(),
            last.reason.as_str()
        ),
        (
            prefixed("WorkSynchronized").as_str(),
            "Unknown",
            reason::WORK_SYNCHRONIZED_UNKNOWN
        )
    );
    assert_eq!(
        last.message,
        "1 of 3 clusters has synchronized works; m1: WorkSynchronized is False here; m2: In the process of creating or updating the work object(s) in the hub cluster"
    );
    let m2 = cluster(&status, "m2").conditions.as_deref().unwrap();
    assert_eq!(
        summary(m2).last().unwrap(),
        &(
            "WorkSynchronized",
            "Unknown",
            reason::WORK_SYNCHRONIZED_UNKNOWN
        )
    );
}

#[test]
fn messages_name_at_most_three_lagging_clusters() {
    let names = ["m1", "m2", "m3", "m4", "m5"];
    let mut case = Case::new(names.iter().map(|n| decision(n, true)).collect());
    for name in names {
        case = case.binding(name, LATEST, chain("Available", Some("False")));
    }
    let status = case.run();
    assert_eq!(
        status.conditions.as_ref().unwrap().last().unwrap().message,
        "0 of 5 clusters have the resources available; m1: Available is False here; m2: Available is False here; m3: Available is False here; and 2 more"
    );
}

#[test]
fn a_binding_behind_the_latest_resources_shows_the_rollout_holding_it_back() {
    let mut held = chain("", None);
    held.conditions[0] = cond_msg(
        "RolloutStarted",
        "False",
        reason::ROLLOUT_NOT_STARTED_YET,
        "waiting: 1 of 2 clusters unavailable, maxUnavailable 1",
        BINDING_GEN,
    );
    let status = Case::new(vec![
        decision("m1", true),
        decision("m2", true),
        decision("m3", true),
    ])
    .binding("m1", OLDER, held)
    .binding("m2", OLDER, chain("", None))
    .binding("m3", LATEST, chain("", None))
    .run();
    let m1 = cluster(&status, "m1");
    assert_eq!(m1.observed_resource_index.as_deref(), Some("2"));
    let m1 = m1.conditions.as_deref().unwrap();
    assert_eq!(
        summary(m1)[1],
        ("RolloutStarted", "False", reason::ROLLOUT_NOT_STARTED_YET)
    );
    assert_eq!(
        m1[1].message,
        "waiting: 1 of 2 clusters unavailable, maxUnavailable 1"
    );
    assert_eq!(m1.len(), 2);
    let m2 = cluster(&status, "m2").conditions.as_deref().unwrap();
    assert_eq!(
        summary(m2)[1],
        ("RolloutStarted", "Unknown", reason::ROLLOUT_STARTED_UNKNOWN)
    );
    let rollout = prefixed("RolloutStarted");
    assert_eq!(
        placement_conditions(&status).last().unwrap(),
        &(rollout.as_str(), "Unknown", reason::ROLLOUT_STARTED_UNKNOWN)
    );
}

#[test]
fn a_picked_cluster_without_binding_is_still_deciding() {
    let mut deleting = Case::new(vec![decision("m1", true), decision("m2", true)])
        .binding("m1", LATEST, chain("", None))
        .binding("m2", LATEST, chain("", None));
    deleting.bindings[1].3 = true;
    let mut other_snapshot = Case::new(vec![decision("m1", true), decision("m2", true)])
        .binding("m1", LATEST, chain("", None))
        .binding("m2", LATEST, chain("", None));
    other_snapshot.bindings[1].0.scheduling_policy_snapshot_name = "crp-0".into();
    let missing = Case::new(vec![decision("m1", true), decision("m2", true)]).binding(
        "m1",
        LATEST,
        chain("", None),
    );
    for (case, placement) in [
        ("deleting", deleting),
        ("other snapshot", other_snapshot),
        ("missing", missing),
    ] {
        let status = placement.run();
        let m2 = cluster(&status, "m2").conditions.as_deref().unwrap();
        assert_eq!(
            summary(m2),
            [
                ("Scheduled", "True", reason::SCHEDULED),
                ("RolloutStarted", "Unknown", reason::ROLLOUT_STARTED_UNKNOWN)
            ],
            "{case}"
        );
        assert_eq!(
            cluster(&status, "m2").observed_resource_index,
            None,
            "{case}"
        );
    }
}

#[test]
fn overrides_in_play_are_listed_and_reported_as_succeeded() {
    let mut overridden = chain("", None);
    overridden.conditions[1] = cond(
        "Overridden",
        "True",
        reason::OVERRIDDEN_SUCCEEDED,
        BINDING_GEN,
    );
    let mut case = Case::new(vec![decision("m1", true), decision("m2", true)])
        .binding("m1", LATEST, overridden)
        .binding("m2", LATEST, chain("", None));
    case.bindings[0].0.cluster_resource_override_snapshots = vec!["cro-1".into()];
    case.bindings[0].0.resource_override_snapshots = vec![NamespacedName {
        name: "ro-1".into(),
        namespace: "app".into(),
    }];
    let status = case.run();
    let overridden = prefixed("Overridden");
    assert_eq!(
        placement_conditions(&status)[2],
        (overridden.as_str(), "True", reason::OVERRIDDEN_SUCCEEDED)
    );
    let m1 = cluster(&status, "m1");
    assert_eq!(
        m1.applicable_cluster_resource_overrides.as_deref(),
        Some(&["cro-1".to_string()][..])
    );
    assert_eq!(
        m1.applicable_resource_overrides.as_ref().map(Vec::len),
        Some(1)
    );
    assert_eq!(cluster(&status, "m2").applicable_resource_overrides, None);
}

#[test]
fn report_diff_ends_in_diff_reported_with_the_differences() {
    let mut reported = chain("Applied", None);
    reported.conditions.push(cond(
        "DiffReported",
        "True",
        reason::ALL_WORK_HAVE_DIFF_REPORTED,
        BINDING_GEN,
    ));
    reported.diffed_placements = vec![flotilla_api::placement::status::DiffedResourcePlacement {
        resource: resource("Deployment", "app", "web"),
        observation_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(earlier()),
        target_cluster_observed_generation: None,
        first_diffed_observed_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(earlier()),
        observed_diffs: None,
    }];
    let mut case = Case::new(vec![decision("m1", true)]).binding("m1", LATEST, reported);
    case.strategy = Some(RolloutStrategy {
        apply_strategy: Some(ApplyStrategy {
            type_: Some(ApplyStrategyType::ReportDiff),
            ..Default::default()
        }),
        ..Default::default()
    });
    let status = case.run();
    let diff = prefixed("DiffReported");
    assert_eq!(
        placement_conditions(&status)[4],
        (diff.as_str(), "True", reason::DIFF_REPORTING_COMPLETED)
    );
    assert_eq!(placement_conditions(&status).len(), 5);
    assert_eq!(
        status.conditions.as_ref().unwrap()[4].message,
        "The 1 cluster has reported configuration differences"
    );
    assert_eq!(
        cluster(&status, "m1")
            .diffed_placements
            .as_ref()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn unfilled_slots_get_scheduled_false() {
    let unfulfilled = |decisions| {
        let mut case = Case::new(decisions);
        case.snapshot.as_mut().unwrap().conditions =
            vec![cond("Scheduled", "False", "SchedulingPolicyUnfulfilled", 1)];
        case.binding("m1", LATEST, chain("", None))
    };
    let mut pick_n = unfulfilled(vec![decision("m1", true), decision("m2", false)]);
    pick_n.policy = Some(PlacementPolicy {
        placement_type: Some(PlacementType::PickN),
        number_of_clusters: Some(3),
        ..Default::default()
    });
    let mut pick_fixed = unfulfilled(vec![
        decision("m1", true),
        decision("m2", false),
        decision("m9", false),
    ]);
    pick_fixed.policy = Some(PlacementPolicy {
        placement_type: Some(PlacementType::PickFixed),
        cluster_names: Some(vec!["m1".into(), "m9".into(), "gone".into()]),
        ..Default::default()
    });
    let cases = [
        (
            pick_n,
            vec![
                (Some("m2"), "m2 is tainted".to_string()),
                (
                    None,
                    "no more clusters to pick: the policy asks for 3 and 1 could be picked"
                        .to_string(),
                ),
            ],
        ),
        (
            pick_fixed,
            vec![
                (Some("m9"), "m9 is tainted".to_string()),
                (
                    Some("gone"),
                    "cluster gone was not considered by the scheduler".to_string(),
                ),
            ],
        ),
    ];
    for (case, slots) in cases {
        let status = case.run();
        let scheduled = prefixed("Scheduled");
        assert_eq!(
            placement_conditions(&status)[0],
            (scheduled.as_str(), "False", "SchedulingPolicyUnfulfilled")
        );
        // The picked cluster still rolls up.
        assert_eq!(placement_conditions(&status).len(), 6);
        let statuses = status.placement_statuses.as_deref().unwrap();
        let unfilled: Vec<_> = statuses[1..]
            .iter()
            .map(|s| {
                let c = &s.conditions.as_ref().unwrap()[0];
                assert_eq!(
                    (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
                    ("Scheduled", "False", reason::SCHEDULE_FAILED)
                );
                (s.cluster_name.as_deref(), c.message.clone())
            })
            .collect();
        assert_eq!(unfilled, slots);
    }
}

#[test]
fn no_picked_cluster_leaves_scheduled_alone() {
    let mut case = Case::new(vec![decision("m2", false)]);
    case.previous = PlacementStatus {
        conditions: Some(vec![cond(
            &prefixed("Applied"),
            "True",
            reason::APPLY_SUCCEEDED,
            1,
        )]),
        ..Default::default()
    };
    let status = case.run();
    let scheduled = prefixed("Scheduled");
    assert_eq!(
        placement_conditions(&status),
        [(scheduled.as_str(), "True", "SchedulingPolicyFulfilled")]
    );
    assert_eq!(status.placement_statuses, None);
}

#[test]
fn transition_times_survive_and_other_controllers_conditions_stay() {
    let base = Case::new(vec![decision("m1", true)]).binding("m1", LATEST, chain("", None));
    let first = base.run();
    let synced = cond("ClusterResourcePlacementStatusSynced", "True", "Synced", 1);
    let mut previous = first.clone();
    let mut conditions = previous.conditions.take().unwrap();
    for c in &mut conditions {
        c.last_transition_time.0 = earlier();
    }
    conditions.insert(0, synced.clone());
    previous.conditions = Some(conditions);
    if let Some(statuses) = previous.placement_statuses.as_mut() {
        for c in statuses[0].conditions.as_mut().unwrap() {
            c.last_transition_time.0 = earlier();
        }
    }
    let mut again = Case::new(vec![decision("m1", true)]).binding(
        "m1",
        LATEST,
        chain("Available", Some("False")),
    );
    again.previous = previous;
    let status = again.run();
    let conditions = status.conditions.as_deref().unwrap();
    let times: Vec<_> = conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.last_transition_time.0))
        .collect();
    assert_eq!(times[4], (prefixed("Applied").as_str(), earlier()));
    assert_eq!(times[5], (prefixed("Available").as_str(), now()));
    assert_eq!(conditions.last().unwrap(), &synced);
    let m1 = cluster(&status, "m1").conditions.as_deref().unwrap();
    assert_eq!(
        (m1[4].last_transition_time.0, m1[5].last_transition_time.0),
        (earlier(), now())
    );
}

#[test]
fn a_resource_placement_uses_its_own_prefix() {
    let mut case = Case::new(vec![decision("m1", true)]).binding("m1", LATEST, chain("", None));
    case.kind = PlacementKind::ResourcePlacement;
    let status = case.run();
    let types: Vec<_> = placement_conditions(&status)
        .iter()
        .map(|c| c.0.to_string())
        .collect();
    assert_eq!(types[0], "ResourcePlacementScheduled");
    assert_eq!(types[5], "ResourcePlacementAvailable");
}
