//! Staged update runs (KubeFleet's `ClusterStagedUpdateRun` over a placement with the
//! External rollout strategy), as pure functions over the run's status:
//!
//! - [`init::initialize`] computes a run's stages from its strategy and the placement's
//!   scheduled clusters ([`assignment`]: one stage per cluster, ordered by sorting label then
//!   name) and lists the clusters to clean up in the deletion stage;
//! - [`execute::advance`] runs one pass: which clusters to bind to the run's resources
//!   (at most [`max_concurrency`] per stage in flight), which approval requests to create or
//!   accept, which bindings to delete, and the run's conditions;
//! - [`drift::changed`] says when the placement changed under a running run, which fails it.

pub mod assignment;
pub mod binding;
mod concurrency;
pub(crate) mod conditions;
pub mod drift;
pub mod execute;
pub mod init;
pub mod reason;
pub mod wait_time;

pub use concurrency::max_concurrency;

/// Whether an approval task comes before or after its stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskPosition {
    /// Before the stage's clusters start.
    Before,
    /// After they all succeeded.
    After,
}

impl TaskPosition {
    /// The `kubernetes-fleet.io/taskType` label value.
    pub fn label(self) -> &'static str {
        use flotilla_api::placement::approval_request::{AFTER_STAGE_TASK, BEFORE_STAGE_TASK};
        match self {
            TaskPosition::Before => BEFORE_STAGE_TASK,
            TaskPosition::After => AFTER_STAGE_TASK,
        }
    }
}

/// The name of the approval request of `run`'s task at `position` of `stage`:
/// `<run>-before-<stage>` or `<run>-after-<stage>`.
pub fn approval_request_name(run: &str, stage: &str, position: TaskPosition) -> String {
    let word = match position {
        TaskPosition::Before => "before",
        TaskPosition::After => "after",
    };
    format!("{run}-{word}-{stage}")
}
