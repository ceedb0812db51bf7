//! The condition types and reasons of staged update runs, their stages, clusters and tasks,
//! and of approval requests: KubeFleet's, so tooling written for KubeFleet reads them.

/// Run condition: the run's stages were computed.
pub const INITIALIZED: &str = "Initialized";
/// Run and stage condition: work is under way.
pub const PROGRESSING: &str = "Progressing";
/// Run, stage and cluster condition: finished (True) or failed (False).
pub const SUCCEEDED: &str = "Succeeded";
/// Cluster condition: the cluster's binding was moved to the run's resources.
pub const STARTED: &str = "Started";
/// Task condition: the approval request exists.
pub const APPROVAL_REQUEST_CREATED: &str = "ApprovalRequestCreated";
/// Task condition: the approval request was approved (and the approval accepted).
pub const APPROVAL_REQUEST_APPROVED: &str = "ApprovalRequestApproved";
/// Task condition: the TimedWait is over.
pub const WAIT_TIME_ELAPSED: &str = "WaitTimeElapsed";

/// Initialized True.
pub const UPDATE_RUN_INITIALIZED: &str = "UpdateRunInitializedSuccessfully";
/// Initialized Unknown: something the run needs does not exist yet (looked at again).
pub const UPDATE_RUN_INITIALIZING: &str = "UpdateRunInitializing";
/// Initialized False.
pub const UPDATE_RUN_INITIALIZE_FAILED: &str = "UpdateRunInitializedFailed";
/// Progressing True: clusters are updating.
pub const UPDATE_RUN_PROGRESSING: &str = "UpdateRunProgressing";
/// Progressing False: an after- or before-stage task holds the run.
pub const UPDATE_RUN_WAITING: &str = "UpdateRunWaiting";
/// Progressing False: a cluster has been updating for longer than the stuck threshold.
pub const UPDATE_RUN_STUCK: &str = "UpdateRunStuck";
/// Progressing False: `spec.state` is `Initialize`, so the run has not started.
pub const UPDATE_RUN_NOT_STARTED: &str = "UpdateRunNotStarted";
/// Progressing True: `spec.state` is `Stop` and clusters in flight are finishing.
pub const UPDATE_RUN_STOPPING: &str = "UpdateRunStopping";
/// Progressing False: `spec.state` is `Stop` and nothing is in flight.
pub const UPDATE_RUN_STOPPED: &str = "UpdateRunStopped";
/// Progressing False: the run's status is too large for the hub to take in one write.
pub const UPDATE_RUN_STATUS_TOO_LARGE: &str = "UpdateRunStatusTooLarge";
/// Succeeded False (and Progressing False).
pub const UPDATE_RUN_FAILED: &str = "UpdateRunFailed";
/// Succeeded True (and Progressing False).
pub const UPDATE_RUN_SUCCEEDED: &str = "UpdateRunSucceeded";

/// Stage Progressing True.
pub const STAGE_UPDATING_STARTED: &str = "StageUpdatingStarted";
/// Stage Progressing False: clusters done, after-stage tasks pending.
pub const STAGE_UPDATING_WAITING: &str = "StageUpdatingWaiting";
/// Stage Succeeded False.
pub const STAGE_UPDATING_FAILED: &str = "StageUpdatingFailed";
/// Stage Succeeded True (and Progressing False).
pub const STAGE_UPDATING_SUCCEEDED: &str = "StageUpdatingSucceeded";

/// Cluster Started True.
pub const CLUSTER_UPDATING_STARTED: &str = "ClusterUpdatingStarted";
/// Cluster Succeeded False.
pub const CLUSTER_UPDATING_FAILED: &str = "ClusterUpdatingFailed";
/// Cluster Succeeded True.
pub const CLUSTER_UPDATING_SUCCEEDED: &str = "ClusterUpdatingSucceeded";

/// After-stage ApprovalRequestCreated True.
pub const AFTER_STAGE_APPROVAL_CREATED: &str = "AfterStageTaskApprovalRequestCreated";
/// After-stage ApprovalRequestApproved True.
pub const AFTER_STAGE_APPROVAL_APPROVED: &str = "AfterStageTaskApprovalRequestApproved";
/// Before-stage ApprovalRequestCreated True.
pub const BEFORE_STAGE_APPROVAL_CREATED: &str = "BeforeStageTaskApprovalRequestCreated";
/// Before-stage ApprovalRequestApproved True.
pub const BEFORE_STAGE_APPROVAL_APPROVED: &str = "BeforeStageTaskApprovalRequestApproved";
/// WaitTimeElapsed True.
pub const AFTER_STAGE_WAIT_ELAPSED: &str = "AfterStageTaskWaitTimeElapsed";

/// The approval request's ApprovalAccepted True.
pub const APPROVAL_ACCEPTED: &str = "ApprovalRequestApprovalAccepted";
