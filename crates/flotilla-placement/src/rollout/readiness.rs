//! Whether a binding's resources count as ready on its cluster, judged from the conditions
//! the work generator keeps on the binding (KubeFleet's `isBindingReady` and
//! `HasBindingFailed`). Only conditions observed for the binding's current generation count:
//! after the rollout moves a binding to new resources, its old conditions say nothing.

use flotilla_api::conditions::find;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::status::{ConditionType, reason};

/// The readiness of one binding at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// `Available` is True: the resources are available (or, when their availability cannot be
    /// tracked, have been for `unavailablePeriodSeconds`).
    Available,
    /// `DiffReported` is True: a ReportDiff placement changes nothing on the member, so the
    /// binding is ready once the differences are reported, and it takes no surge slot.
    DiffReported,
    /// `Available` is True only because availability cannot be tracked, and turned True less
    /// than `unavailablePeriodSeconds` ago: ready at `ready_at`.
    Untracked {
        /// When the unavailable period ends.
        ready_at: Timestamp,
    },
    /// A condition the work generator sets is False: overriding, writing the Works, applying
    /// or reporting failed, or the resources are not available. Such a binding is already
    /// unavailable, so the rollout may update it at any time, and it takes no surge slot.
    Failed {
        /// The first False condition, in rollout order.
        condition: ConditionType,
    },
    /// Nothing is known yet for the binding's generation.
    Pending,
}

/// The conditions whose False status means the binding failed (KubeFleet's
/// `HasBindingFailed`: every type after RolloutStarted).
const FAILURE_TYPES: [ConditionType; 5] = [
    ConditionType::Overridden,
    ConditionType::WorkSynchronized,
    ConditionType::Applied,
    ConditionType::Available,
    ConditionType::DiffReported,
];

impl Readiness {
    /// Judges a binding with `conditions` at `generation` at `now`; resources whose
    /// availability cannot be tracked count as available `unavailable_period` after their
    /// `Available` condition turned True. A False condition wins over a True one.
    pub fn judge(
        conditions: &[Condition],
        generation: i64,
        now: Timestamp,
        unavailable_period: SignedDuration,
    ) -> Readiness {
        let current = |type_: ConditionType| {
            find(conditions, type_.as_str()).filter(|c| c.observed_generation == Some(generation))
        };
        let has =
            |type_: ConditionType, status: &str| current(type_).is_some_and(|c| c.status == status);
        let failed = |type_: ConditionType| {
            current(type_).is_some_and(|c| c.status == "False" && !is_in_progress(&c.reason))
        };
        if let Some(&condition) = FAILURE_TYPES.iter().find(|t| failed(**t)) {
            return Readiness::Failed { condition };
        }
        if has(ConditionType::DiffReported, "True") {
            return Readiness::DiffReported;
        }
        let Some(available) = current(ConditionType::Available).filter(|c| c.status == "True")
        else {
            return Readiness::Pending;
        };
        if !is_untrackable(&available.reason) {
            return Readiness::Available;
        }
        let ready_at = available
            .last_transition_time
            .0
            .saturating_add(unavailable_period)
            .unwrap_or(Timestamp::MAX);
        if now >= ready_at {
            Readiness::Available
        } else {
            Readiness::Untracked { ready_at }
        }
    }

    /// Whether the binding counts as ready now.
    pub fn is_ready(self) -> bool {
        matches!(self, Readiness::Available | Readiness::DiffReported)
    }

    /// Whether the binding failed.
    pub fn is_failed(self) -> bool {
        matches!(self, Readiness::Failed { .. })
    }

    /// Whether the binding may become ready without the rollout touching it, and so takes a
    /// slot of `N + maxSurge` (KubeFleet's "can be ready": neither failed nor ReportDiff).
    pub fn can_become_ready(self) -> bool {
        !matches!(self, Readiness::Failed { .. } | Readiness::DiffReported)
    }
}

/// Whether a False condition's reason says the member has not reported for the generation
/// yet, rather than that something failed. KubeFleet counts these as failed too, which frees
/// the binding's surge slot while its cluster is still being brought up, so a placement moving
/// to new clusters can briefly hold more than `N + maxSurge`; here they stay Pending.
fn is_in_progress(reason: &str) -> bool {
    reason == reason::APPLY_IN_PROGRESS || reason == reason::DIFF_REPORT_IN_PROGRESS
}

/// Whether an `Available` reason says that availability cannot be tracked (the binding's
/// reason, or the Work's, which older work generators copied).
fn is_untrackable(reason: &str) -> bool {
    reason == reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE
        || reason == reason::WORK_NOT_TRACKABLE
}
