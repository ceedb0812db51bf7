//! The events a placement's status change is worth, as KubeFleet's placement controller
//! records them: a Normal event when a condition of the rollout chain turns True for the
//! placement's generation (`PlacementScheduled`, `PlacementRolloutStarted`,
//! `PlacementOverriddenSucceeded`, `PlacementWorkSynchronized`, `PlacementApplied`,
//! `PlacementAvailable`, `PlacementDiffReported`), `PlacementRolloutCompleted` when the whole
//! chain is True, and (beyond KubeFleet, which only logs them) a Warning when scheduling,
//! overriding, synchronizing, applying or availability fails, naming the reason and message.

use flotilla_api::placement::PlacementStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::{ConditionType, PlacementKind};

/// One event to record on the placement.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementEvent {
    /// A Warning (else Normal).
    pub warning: bool,
    /// The reason, in PascalCase.
    pub reason: &'static str,
    /// What happened, for people.
    pub note: String,
}

/// The chain of placement-level condition types, in order.
const CHAIN: [ConditionType; 7] = [
    ConditionType::Scheduled,
    ConditionType::RolloutStarted,
    ConditionType::Overridden,
    ConditionType::WorkSynchronized,
    ConditionType::Applied,
    ConditionType::Available,
    ConditionType::DiffReported,
];

/// The reason recorded when `type_` turns True, and its note.
fn succeeded(type_: ConditionType) -> (&'static str, &'static str) {
    match type_ {
        ConditionType::Scheduled => ("PlacementScheduled", "Placement has been scheduled"),
        ConditionType::RolloutStarted => (
            "PlacementRolloutStarted",
            "Started rolling out the latest resources",
        ),
        ConditionType::Overridden => (
            "PlacementOverriddenSucceeded",
            "Placement has been successfully overridden",
        ),
        ConditionType::WorkSynchronized => (
            "PlacementWorkSynchronized",
            "Work(s) have been created or updated successfully for the selected cluster(s)",
        ),
        ConditionType::Applied => (
            "PlacementApplied",
            "Resources have been applied to the selected cluster(s)",
        ),
        ConditionType::Available => (
            "PlacementAvailable",
            "Resources are available on the selected cluster(s)",
        ),
        ConditionType::DiffReported => (
            "PlacementDiffReported",
            "Differences have been reported for the selected cluster(s)",
        ),
    }
}

/// The reason recorded when `type_` turns False, if its failure is worth a Warning (a
/// rollout held back by its strategy is not a failure).
fn failed(type_: ConditionType) -> Option<&'static str> {
    match type_ {
        ConditionType::Scheduled => Some("PlacementSchedulingFailed"),
        ConditionType::Overridden => Some("PlacementOverrideFailed"),
        ConditionType::WorkSynchronized => Some("PlacementWorkSynchronizationFailed"),
        ConditionType::Applied => Some("PlacementApplyFailed"),
        ConditionType::Available => Some("PlacementAvailabilityFailed"),
        ConditionType::RolloutStarted | ConditionType::DiffReported => None,
    }
}

fn find<'a>(status: &'a PlacementStatus, type_: &str) -> Option<&'a Condition> {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
}

/// Whether `condition` is True for `generation`.
fn true_for(condition: Option<&Condition>, generation: i64) -> bool {
    condition.is_some_and(|c| c.status == "True" && c.observed_generation == Some(generation))
}

/// Whether the rollout is complete: every chain condition the status carries is True for
/// `generation`, and it reached availability (or reported its differences).
fn completed(kind: PlacementKind, status: &PlacementStatus, generation: i64) -> bool {
    let present: Vec<ConditionType> = CHAIN
        .into_iter()
        .filter(|t| find(status, &kind.condition_type(*t)).is_some())
        .collect();
    let ends = [ConditionType::Available, ConditionType::DiffReported];
    present.iter().any(|t| ends.contains(t))
        && present
            .iter()
            .all(|t| true_for(find(status, &kind.condition_type(*t)), generation))
}

/// The events the change from `before` to `after` (a placement of `kind` at `generation`)
/// is worth, in the chain's order.
pub fn transitions(
    kind: PlacementKind,
    before: &PlacementStatus,
    after: &PlacementStatus,
    generation: i64,
) -> Vec<PlacementEvent> {
    let mut events = Vec::new();
    for type_ in CHAIN {
        let name = kind.condition_type(type_);
        let (old, new) = (find(before, &name), find(after, &name));
        if true_for(new, generation) && !true_for(old, generation) {
            let (reason, note) = succeeded(type_);
            events.push(PlacementEvent {
                warning: false,
                reason,
                note: note.to_string(),
            });
        }
        let newly_false = new.is_some_and(|n| {
            n.status == "False" && old.is_none_or(|o| o.status != "False" || o.reason != n.reason)
        });
        if let (true, Some(reason), Some(new)) = (newly_false, failed(type_), new) {
            events.push(PlacementEvent {
                warning: true,
                reason,
                note: format!("{}: {}", new.reason, new.message),
            });
        }
    }
    if completed(kind, after, generation) && !completed(kind, before, generation) {
        events.push(PlacementEvent {
            warning: false,
            reason: "PlacementRolloutCompleted",
            note: "Placement has finished the rollout process and reached the desired status"
                .into(),
        });
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    const CRP: PlacementKind = PlacementKind::ClusterResourcePlacement;

    fn status(conditions: &[(ConditionType, &str, &str, i64)]) -> PlacementStatus {
        PlacementStatus {
            conditions: Some(
                conditions
                    .iter()
                    .map(|(t, s, reason, generation)| Condition {
                        type_: CRP.condition_type(*t),
                        status: s.to_string(),
                        reason: reason.to_string(),
                        message: format!("{reason} message"),
                        observed_generation: Some(*generation),
                        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
                    })
                    .collect(),
            ),
            ..PlacementStatus::default()
        }
    }

    fn reasons(events: &[PlacementEvent]) -> Vec<&str> {
        events.iter().map(|e| e.reason).collect()
    }

    use ConditionType::*;

    #[test]
    fn conditions_turning_true_and_a_finished_rollout_are_recorded_once() {
        let none = status(&[]);
        let scheduled = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (RolloutStarted, "Unknown", "Pending", 1),
        ]);
        let all = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (RolloutStarted, "True", "RolloutStarted", 1),
            (Overridden, "True", "NoOverride", 1),
            (WorkSynchronized, "True", "Synced", 1),
            (Applied, "True", "Applied", 1),
            (Available, "True", "Available", 1),
        ]);
        assert_eq!(
            reasons(&transitions(CRP, &none, &scheduled, 1)),
            ["PlacementScheduled"]
        );
        assert_eq!(
            reasons(&transitions(CRP, &scheduled, &all, 1)),
            [
                "PlacementRolloutStarted",
                "PlacementOverriddenSucceeded",
                "PlacementWorkSynchronized",
                "PlacementApplied",
                "PlacementAvailable",
                "PlacementRolloutCompleted"
            ]
        );
        assert!(
            transitions(CRP, &all, &all, 1).is_empty(),
            "nothing changed"
        );
        // A new generation observed True again is a new rollout.
        let next = status(&[
            (Scheduled, "True", "Scheduled", 2),
            (RolloutStarted, "True", "RolloutStarted", 2),
            (Overridden, "True", "NoOverride", 2),
            (WorkSynchronized, "True", "Synced", 2),
            (Applied, "True", "Applied", 2),
            (Available, "True", "Available", 2),
        ]);
        assert_eq!(transitions(CRP, &all, &next, 2).len(), 7);
    }

    #[test]
    fn failures_are_warnings_naming_the_reason_once_per_reason() {
        let applying = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (Applied, "Unknown", "ApplyPending", 1),
        ]);
        let failed = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (Applied, "False", "ApplyFailed", 1),
        ]);
        let events = transitions(CRP, &applying, &failed, 1);
        assert_eq!(reasons(&events), ["PlacementApplyFailed"]);
        assert!(events[0].warning);
        assert_eq!(events[0].note, "ApplyFailed: ApplyFailed message");
        assert!(transitions(CRP, &failed, &failed, 1).is_empty());
        let other = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (Applied, "False", "NotTakenOver", 1),
        ]);
        assert_eq!(
            reasons(&transitions(CRP, &failed, &other, 1)),
            ["PlacementApplyFailed"]
        );
        // A rollout held back by its strategy is no failure.
        let held = status(&[
            (Scheduled, "True", "Scheduled", 1),
            (RolloutStarted, "False", "RolloutNotStartedYet", 1),
        ]);
        assert!(transitions(CRP, &applying, &held, 1).is_empty());
    }
}
