//! Readiness judged from a binding's conditions for its current generation: Available or
//! DiffReported True is ready, a False condition is failed, resources whose availability
//! cannot be tracked are ready only after the unavailable period.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::binding::{ResourceBindingSpec, ResourceBindingStatus};
use flotilla_api::placement::{BindingState, ClusterResourceBinding};
use flotilla_placement::rollout::{Readiness, RolloutBinding};
use flotilla_placement::status::{ConditionType, reason};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::fixtures::now;

const GEN: i64 = 4;
const MINUTE: SignedDuration = SignedDuration::from_secs(60);

/// Condition `type_` with `status`, `reason`, observed for `generation`, turned `ago` before
/// now.
fn cond(type_: &str, status: &str, reason: &str, generation: i64, ago: i64) -> Condition {
    let mut out = Vec::new();
    let at = now() - SignedDuration::from_secs(ago);
    set_condition(
        &mut out,
        NewCondition {
            type_,
            status,
            reason,
            message: String::new(),
            observed_generation: Some(generation),
        },
        at,
    );
    out.remove(0)
}

fn applied(generation: i64) -> Condition {
    cond(
        "Applied",
        "True",
        reason::ALL_WORK_HAVE_BEEN_APPLIED,
        generation,
        300,
    )
}

fn at(seconds_from_now: i64) -> Timestamp {
    now() + SignedDuration::from_secs(seconds_from_now)
}

#[test]
fn judged_from_conditions_of_the_current_generation() {
    let available = |reason: &str, ago| cond("Available", "True", reason, GEN, ago);
    let cases: Vec<(&str, Vec<Condition>, Readiness)> = vec![
        ("nothing reported", vec![], Readiness::Pending),
        (
            "applied, availability unknown",
            vec![applied(GEN)],
            Readiness::Pending,
        ),
        (
            "available",
            vec![applied(GEN), available(reason::ALL_WORK_ARE_AVAILABLE, 0)],
            Readiness::Available,
        ),
        (
            "available for an older generation",
            vec![
                applied(GEN - 1),
                cond(
                    "Available",
                    "True",
                    reason::ALL_WORK_ARE_AVAILABLE,
                    GEN - 1,
                    900,
                ),
            ],
            Readiness::Pending,
        ),
        (
            "diff reported",
            vec![cond(
                "DiffReported",
                "True",
                reason::ALL_WORK_HAVE_DIFF_REPORTED,
                GEN,
                0,
            )],
            Readiness::DiffReported,
        ),
        (
            "apply failed",
            vec![cond(
                "Applied",
                "False",
                reason::NOT_ALL_WORK_HAVE_BEEN_APPLIED,
                GEN,
                0,
            )],
            Readiness::Failed {
                condition: ConditionType::Applied,
            },
        ),
        (
            "apply in progress is pending, not failed (KubeFleet counts it failed)",
            vec![cond("Applied", "False", reason::APPLY_IN_PROGRESS, GEN, 0)],
            Readiness::Pending,
        ),
        (
            "diff report in progress is pending, not failed",
            vec![cond(
                "DiffReported",
                "False",
                reason::DIFF_REPORT_IN_PROGRESS,
                GEN,
                0,
            )],
            Readiness::Pending,
        ),
        (
            "not available",
            vec![
                applied(GEN),
                cond(
                    "Available",
                    "False",
                    reason::NOT_ALL_WORK_ARE_AVAILABLE,
                    GEN,
                    0,
                ),
            ],
            Readiness::Failed {
                condition: ConditionType::Available,
            },
        ),
        (
            "override failed",
            vec![cond(
                "Overridden",
                "False",
                reason::OVERRIDDEN_FAILED,
                GEN,
                0,
            )],
            Readiness::Failed {
                condition: ConditionType::Overridden,
            },
        ),
        (
            "work sync failed",
            vec![cond(
                "WorkSynchronized",
                "False",
                reason::SYNC_WORK_FAILED,
                GEN,
                0,
            )],
            Readiness::Failed {
                condition: ConditionType::WorkSynchronized,
            },
        ),
        (
            "diff reporting failed",
            vec![cond(
                "DiffReported",
                "False",
                reason::NOT_ALL_WORK_HAVE_DIFF_REPORTED,
                GEN,
                0,
            )],
            Readiness::Failed {
                condition: ConditionType::DiffReported,
            },
        ),
        (
            "a False condition of an older generation does not count",
            vec![
                cond(
                    "Applied",
                    "False",
                    reason::NOT_ALL_WORK_HAVE_BEEN_APPLIED,
                    GEN - 1,
                    0,
                ),
                applied(GEN),
                available(reason::ALL_WORK_ARE_AVAILABLE, 0),
            ],
            Readiness::Available,
        ),
        (
            "a False condition wins over a True one",
            vec![
                cond("Overridden", "False", reason::OVERRIDDEN_FAILED, GEN, 0),
                available(reason::ALL_WORK_ARE_AVAILABLE, 0),
            ],
            Readiness::Failed {
                condition: ConditionType::Overridden,
            },
        ),
        (
            "untrackable, 10 s ago",
            vec![
                applied(GEN),
                available(reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE, 10),
            ],
            Readiness::Untracked { ready_at: at(50) },
        ),
        (
            "untrackable (Work reason), 59 s ago",
            vec![applied(GEN), available(reason::WORK_NOT_TRACKABLE, 59)],
            Readiness::Untracked { ready_at: at(1) },
        ),
        (
            "untrackable, exactly 60 s ago",
            vec![
                applied(GEN),
                available(reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE, 60),
            ],
            Readiness::Available,
        ),
        (
            "untrackable, 10 min ago",
            vec![
                applied(GEN),
                available(reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE, 600),
            ],
            Readiness::Available,
        ),
    ];
    for (case, conditions, expected) in cases {
        assert_eq!(
            Readiness::judge(&conditions, GEN, now(), MINUTE),
            expected,
            "{case}"
        );
    }
}

#[test]
fn only_available_and_diff_reported_are_ready_and_take_surge_slots_as_kubefleet_does() {
    let failed = Readiness::Failed {
        condition: ConditionType::Applied,
    };
    let cases = [
        (Readiness::Available, true, true),
        (Readiness::DiffReported, true, false),
        (Readiness::Untracked { ready_at: at(5) }, false, true),
        (failed, false, false),
        (Readiness::Pending, false, true),
    ];
    for (readiness, ready, surge) in cases {
        assert_eq!(readiness.is_ready(), ready, "{readiness:?}");
        assert_eq!(readiness.can_become_ready(), surge, "{readiness:?}");
        assert_eq!(readiness.is_failed(), readiness == failed, "{readiness:?}");
    }
}

#[test]
fn a_binding_view_reads_state_deletion_and_readiness() {
    let mut crb = ClusterResourceBinding::new(
        "crp-m1",
        ResourceBindingSpec {
            state: BindingState::Bound,
            resource_snapshot_name: "crp-1-snapshot".into(),
            resource_override_snapshots: vec![],
            cluster_resource_override_snapshots: vec![],
            scheduling_policy_snapshot_name: "crp-0".into(),
            target_cluster: "m1".into(),
            cluster_decision: Default::default(),
            apply_strategy: None,
            delete_strategy: None,
        },
    );
    crb.metadata.generation = Some(GEN);
    crb.status = Some(ResourceBindingStatus {
        conditions: vec![
            applied(GEN),
            cond(
                "Available",
                "True",
                reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE,
                GEN,
                30,
            ),
        ],
        ..Default::default()
    });
    let view = RolloutBinding::of(&crb, false, now(), MINUTE);
    assert_eq!(
        view,
        RolloutBinding {
            name: "crp-m1".into(),
            cluster: "m1".into(),
            state: BindingState::Bound,
            deleting: false,
            up_to_date: false,
            readiness: Readiness::Untracked { ready_at: at(30) },
        }
    );
    assert_eq!(
        RolloutBinding::of(&crb, true, at(30), MINUTE).readiness,
        Readiness::Available
    );
}
