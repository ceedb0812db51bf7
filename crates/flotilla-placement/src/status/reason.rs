//! KubeFleet's condition reasons (`pkg/utils/condition`), under the names KubeFleet gives
//! them, so tooling that matches on reasons works unchanged.

// Placement level (prefixed types) and, for RolloutStarted, bindings.

/// Scheduled Unknown: the scheduler has not decided for the current generation yet.
pub const SCHEDULE_PENDING: &str = "SchedulePending";
/// RolloutStarted Unknown: the rollout has not decided about the latest resources yet.
pub const ROLLOUT_STARTED_UNKNOWN: &str = "RolloutStartedUnknown";
/// RolloutStarted Unknown under the External strategy: an update run drives the rollout and
/// the clusters do not (yet) agree on one resource snapshot.
pub const ROLLOUT_CONTROLLED_BY_EXTERNAL_CONTROLLER: &str = "RolloutControlledByExternalController";
/// RolloutStarted False: the rollout strategy holds the latest resources back.
pub const ROLLOUT_NOT_STARTED_YET: &str = "RolloutNotStartedYet";
/// RolloutStarted True.
pub const ROLLOUT_STARTED: &str = "RolloutStarted";
/// Overridden Unknown.
pub const OVERRIDDEN_PENDING: &str = "OverriddenPending";
/// Overridden True with no override rule in play.
pub const NO_OVERRIDE_SPECIFIED: &str = "NoOverrideSpecified";
/// Overridden False.
pub const OVERRIDDEN_FAILED: &str = "OverriddenFailed";
/// Overridden True with override rules applied.
pub const OVERRIDDEN_SUCCEEDED: &str = "OverriddenSucceeded";
/// WorkSynchronized Unknown.
pub const WORK_SYNCHRONIZED_UNKNOWN: &str = "WorkSynchronizedUnknown";
/// WorkSynchronized False (placement level; bindings use it for Works not yet written).
pub const WORK_NOT_SYNCHRONIZED_YET: &str = "WorkNotSynchronizedYet";
/// WorkSynchronized True (placement level).
pub const WORK_SYNCHRONIZED: &str = "WorkSynchronized";
/// Applied Unknown.
pub const APPLY_PENDING: &str = "ApplyPending";
/// Applied False.
pub const APPLY_FAILED: &str = "ApplyFailed";
/// Applied True.
pub const APPLY_SUCCEEDED: &str = "ApplySucceeded";
/// Available Unknown.
pub const RESOURCE_AVAILABLE_UNKNOWN: &str = "ResourceAvailableUnknown";
/// Available False.
pub const RESOURCE_NOT_AVAILABLE_YET: &str = "ResourceNotAvailableYet";
/// Available True.
pub const RESOURCE_AVAILABLE: &str = "ResourceAvailable";
/// DiffReported Unknown.
pub const DIFF_REPORTING_PENDING: &str = "DiffReportingPending";
/// DiffReported False.
pub const DIFF_REPORTING_INCOMPLETE_OR_FAILED: &str = "DiffReportingIncompleteOrFailed";
/// DiffReported True.
pub const DIFF_REPORTING_COMPLETED: &str = "DiffReportingCompleted";

// Per cluster.

/// Scheduled True on a picked cluster.
pub const SCHEDULED: &str = "Scheduled";
/// Scheduled False on a slot the scheduler could not fill.
pub const SCHEDULE_FAILED: &str = "ScheduleFailed";

// Bindings (copied into per-cluster statuses).

/// WorkSynchronized True.
pub const ALL_WORK_SYNCED: &str = "AllWorkSynced";
/// WorkSynchronized False: writing the Works failed.
pub const SYNC_WORK_FAILED: &str = "SyncWorkFailed";
/// Applied False: a Work has not been applied for its current generation yet.
pub const APPLY_IN_PROGRESS: &str = "ApplyInProgress";
/// DiffReported False: a Work has not reported differences for its current generation yet.
pub const DIFF_REPORT_IN_PROGRESS: &str = "DiffReportInProgress";
/// Applied False: a Work failed to apply.
pub const NOT_ALL_WORK_HAVE_BEEN_APPLIED: &str = "NotAllWorkHaveBeenApplied";
/// Applied True.
pub const ALL_WORK_HAVE_BEEN_APPLIED: &str = "AllWorkHaveBeenApplied";
/// Available False.
pub const NOT_ALL_WORK_ARE_AVAILABLE: &str = "NotAllWorkAreAvailable";
/// Available True, but some resources' availability cannot be tracked: the rollout waits
/// `unavailablePeriodSeconds` before it counts the binding as ready.
pub const NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE: &str = "NotAllWorkAreAvailabilityTrackable";
/// Available True.
pub const ALL_WORK_ARE_AVAILABLE: &str = "AllWorkAreAvailable";
/// DiffReported True.
pub const ALL_WORK_HAVE_DIFF_REPORTED: &str = "AllWorkHaveDiffReported";
/// DiffReported False: a Work failed to report differences.
pub const NOT_ALL_WORK_HAVE_DIFF_REPORTED: &str = "NotAllWorkHaveDiffReported";
/// Available True when the placement selected no resources at all.
pub const NO_RESOURCES_SELECTED: &str = "NoResourcesSelected";

// Works (set by the member agent).

/// A Work's Available True when some manifests' availability cannot be tracked.
pub const WORK_NOT_TRACKABLE: &str = "WorkNotTrackable";
