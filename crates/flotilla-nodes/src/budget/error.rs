//! Why a budget cannot be evaluated, worded for the pool's status.

use flotilla_apimachinery::cron::CronError;

/// Why a budget cannot be evaluated. Any of these closes the pool to disruption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// `nodes` is neither a count nor a percentage.
    #[error(
        "nodes {nodes:?} is neither a count (\"5\") nor a percentage from 0% to 100% (\"20%\")"
    )]
    Nodes {
        /// The text of `nodes`.
        nodes: String,
    },
    /// `schedule` is not a cron schedule.
    #[error("schedule {schedule:?}: {error}")]
    Schedule {
        /// The text of `schedule`.
        schedule: String,
        /// Why it does not parse.
        error: CronError,
    },
    /// `duration` is not a duration.
    #[error("duration {duration:?} is not a duration such as 8h, 30m or 10h5m")]
    Duration {
        /// The text of `duration`.
        duration: String,
    },
    /// A schedule without a duration: the budget would never be active.
    #[error(
        "schedule {schedule:?} has no duration: set how long the budget stays active each time the schedule fires"
    )]
    ScheduleWithoutDuration {
        /// The text of `schedule`.
        schedule: String,
    },
    /// A duration without a schedule: nothing says when the budget starts.
    #[error("duration {duration:?} has no schedule: set when the budget becomes active")]
    DurationWithoutSchedule {
        /// The text of `duration`.
        duration: String,
    },
}
