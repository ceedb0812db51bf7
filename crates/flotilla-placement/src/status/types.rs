//! The condition types of a placement's rollout, in KubeFleet's order, and the prefix the
//! placement-level conditions carry.

use super::reason;
use crate::scheduler::ScheduledCondition;

/// One condition type of the rollout chain. Bindings carry the types without `Scheduled`;
/// per-cluster placement statuses carry them all; placements carry them prefixed (see
/// [`PlacementKind::condition_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConditionType {
    /// The scheduler picked the cluster (placement: the policy is fulfilled).
    Scheduled,
    /// The rollout strategy let the latest resources go to the cluster.
    RolloutStarted,
    /// The override rules were applied to the resources.
    Overridden,
    /// The Works carry the resources.
    WorkSynchronized,
    /// The member applied the resources.
    Applied,
    /// The applied resources are available.
    Available,
    /// The member reported the differences (ReportDiff instead of `Applied` and `Available`).
    DiffReported,
}

impl ConditionType {
    /// The unprefixed type name, as bindings and per-cluster statuses carry it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "Scheduled",
            Self::RolloutStarted => "RolloutStarted",
            Self::Overridden => "Overridden",
            Self::WorkSynchronized => "WorkSynchronized",
            Self::Applied => "Applied",
            Self::Available => "Available",
            Self::DiffReported => "DiffReported",
        }
    }

    /// The reason and message of this type while it is Unknown (KubeFleet's per-cluster
    /// wording).
    pub const fn pending(self) -> (&'static str, &'static str) {
        match self {
            Self::Scheduled => (reason::SCHEDULE_PENDING, "Scheduling has not completed"),
            Self::RolloutStarted => (
                reason::ROLLOUT_STARTED_UNKNOWN,
                "In the process of deciding whether to roll out the latest resources or not",
            ),
            Self::Overridden => (
                reason::OVERRIDDEN_PENDING,
                "In the process of overriding the selected resources if there is any override defined",
            ),
            Self::WorkSynchronized => (
                reason::WORK_SYNCHRONIZED_UNKNOWN,
                "In the process of creating or updating the work object(s) in the hub cluster",
            ),
            Self::Applied => (
                reason::APPLY_PENDING,
                "In the process of applying the resources on the member cluster",
            ),
            Self::Available => (
                reason::RESOURCE_AVAILABLE_UNKNOWN,
                "The availability of the selected resources is unknown yet",
            ),
            Self::DiffReported => (
                reason::DIFF_REPORTING_PENDING,
                "Diff reporting has just started; its status is not yet to be known",
            ),
        }
    }

    /// The placement-level reasons of this type when it is Unknown, False and True.
    pub const fn placement_reasons(self) -> [&'static str; 3] {
        match self {
            Self::Scheduled => [
                reason::SCHEDULE_PENDING,
                ScheduledCondition::UNFULFILLED,
                ScheduledCondition::FULFILLED,
            ],
            Self::RolloutStarted => [
                reason::ROLLOUT_STARTED_UNKNOWN,
                reason::ROLLOUT_NOT_STARTED_YET,
                reason::ROLLOUT_STARTED,
            ],
            Self::Overridden => [
                reason::OVERRIDDEN_PENDING,
                reason::OVERRIDDEN_FAILED,
                reason::OVERRIDDEN_SUCCEEDED,
            ],
            Self::WorkSynchronized => [
                reason::WORK_SYNCHRONIZED_UNKNOWN,
                reason::WORK_NOT_SYNCHRONIZED_YET,
                reason::WORK_SYNCHRONIZED,
            ],
            Self::Applied => [
                reason::APPLY_PENDING,
                reason::APPLY_FAILED,
                reason::APPLY_SUCCEEDED,
            ],
            Self::Available => [
                reason::RESOURCE_AVAILABLE_UNKNOWN,
                reason::RESOURCE_NOT_AVAILABLE_YET,
                reason::RESOURCE_AVAILABLE,
            ],
            Self::DiffReported => [
                reason::DIFF_REPORTING_PENDING,
                reason::DIFF_REPORTING_INCOMPLETE_OR_FAILED,
                reason::DIFF_REPORTING_COMPLETED,
            ],
        }
    }

    /// What a cluster for which this type is True has done, after "has" / "have" (for
    /// placement messages such as "2 of 3 clusters have applied the resources").
    pub const fn achievement(self) -> &'static str {
        match self {
            Self::Scheduled => "been scheduled",
            Self::RolloutStarted => "started rolling out the latest resources",
            Self::Overridden => "the override rules applied",
            Self::WorkSynchronized => "synchronized works",
            Self::Applied => "applied the resources",
            Self::Available => "the resources available",
            Self::DiffReported => "reported configuration differences",
        }
    }

    /// The chain after `Scheduled` for an apply strategy: `ReportDiff` ends in `DiffReported`,
    /// every other strategy in `Applied` then `Available`.
    pub const fn resource_chain(report_diff: bool) -> &'static [ConditionType] {
        if report_diff {
            &[
                Self::RolloutStarted,
                Self::Overridden,
                Self::WorkSynchronized,
                Self::DiffReported,
            ]
        } else {
            &[
                Self::RolloutStarted,
                Self::Overridden,
                Self::WorkSynchronized,
                Self::Applied,
                Self::Available,
            ]
        }
    }

    /// Every type after `Scheduled`: what a status owner removes when a type is not set.
    pub const RESOURCE_TYPES: [ConditionType; 6] = [
        Self::RolloutStarted,
        Self::Overridden,
        Self::WorkSynchronized,
        Self::Applied,
        Self::Available,
        Self::DiffReported,
    ];
}

/// Which kind of placement a status is for: it decides the prefix of the placement-level
/// condition types, so the namespaced `ResourcePlacement` shares this code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlacementKind {
    /// `ClusterResourcePlacement`: conditions `ClusterResourcePlacementScheduled`, ….
    ClusterResourcePlacement,
    /// `ResourcePlacement`: conditions `ResourcePlacementScheduled`, ….
    ResourcePlacement,
}

impl PlacementKind {
    /// The prefix of the placement-level condition types.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::ClusterResourcePlacement => "ClusterResourcePlacement",
            Self::ResourcePlacement => "ResourcePlacement",
        }
    }

    /// The placement-level name of `type_`, e.g. `ClusterResourcePlacementApplied`.
    pub fn condition_type(self, type_: ConditionType) -> String {
        format!("{}{}", self.prefix(), type_.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_types_are_prefixed_by_kind() {
        let cases = [
            (
                PlacementKind::ClusterResourcePlacement,
                ConditionType::Scheduled,
                "ClusterResourcePlacementScheduled",
            ),
            (
                PlacementKind::ResourcePlacement,
                ConditionType::WorkSynchronized,
                "ResourcePlacementWorkSynchronized",
            ),
            (
                PlacementKind::ClusterResourcePlacement,
                ConditionType::DiffReported,
                "ClusterResourcePlacementDiffReported",
            ),
        ];
        for (kind, type_, expected) in cases {
            assert_eq!(kind.condition_type(type_), expected);
        }
    }

    #[test]
    fn report_diff_replaces_applied_and_available() {
        let names = |diff| {
            ConditionType::resource_chain(diff)
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(false),
            [
                "RolloutStarted",
                "Overridden",
                "WorkSynchronized",
                "Applied",
                "Available"
            ]
        );
        assert_eq!(
            names(true),
            [
                "RolloutStarted",
                "Overridden",
                "WorkSynchronized",
                "DiffReported"
            ]
        );
    }
}
