//! When a budget is active: always without a schedule, otherwise for `duration` after each
//! time its schedule fires.

use flotilla_api::nodes::Budget;
use flotilla_apimachinery::cron::Schedule;
use flotilla_apimachinery::go_duration;
use jiff::Timestamp;

use super::BudgetError;

/// Whether `budget` is active at `now`.
///
/// Without a schedule and a duration it always is. With both it is active in
/// `[hit, hit + duration)` for every time `hit` the schedule fires (UTC), so overlapping
/// windows join up: Karpenter's test, the first firing strictly after `now − duration` is
/// not after `now`. Only one of the two, a schedule that is not cron or a duration that is
/// not a duration is an error; Karpenter's API rejects a lone schedule and would never
/// activate it, and saying so beats a budget that silently never applies.
pub fn budget_active(budget: &Budget, now: Timestamp) -> Result<bool, BudgetError> {
    let (schedule, duration) = match (&budget.schedule, &budget.duration) {
        (None, None) => return Ok(true),
        (Some(schedule), None) => {
            return Err(BudgetError::ScheduleWithoutDuration {
                schedule: schedule.clone(),
            });
        }
        (None, Some(duration)) => {
            return Err(BudgetError::DurationWithoutSchedule {
                duration: duration.clone(),
            });
        }
        (Some(schedule), Some(duration)) => (schedule, duration),
    };
    let parsed = Schedule::parse(schedule).map_err(|error| BudgetError::Schedule {
        schedule: schedule.clone(),
        error,
    })?;
    let length = go_duration::parse(duration).ok_or_else(|| BudgetError::Duration {
        duration: duration.clone(),
    })?;
    let window_start = now.checked_sub(length).unwrap_or(Timestamp::MIN);
    Ok(parsed
        .next_after(window_start)
        .is_some_and(|hit| hit <= now))
}
