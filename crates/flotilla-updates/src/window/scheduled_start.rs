//! When a `ScheduledStart` gate completes: the next occurrence of its weekday and time.

use flotilla_api::updates::strategy::ScheduledStartConfiguration;
use jiff::{SignedDuration, Timestamp};

use super::WindowError;
use super::calendar::{instant, local_date, next_weekday, weekday};
use super::fields::{offset, time};

/// The first `startDay` at `startTime` (local to `utcOffset`) at or after `reached`, the
/// instant the run reached the gate: this week's slot until it has passed (reached exactly at
/// the slot, the gate completes at once), else next week's. Fails naming `startTime` or
/// `utcOffset` when one is malformed (or `startDay` past the end of the calendar).
pub fn next_scheduled_start(
    config: &ScheduledStartConfiguration,
    reached: Timestamp,
) -> Result<Timestamp, WindowError> {
    let start_time =
        time(&config.start_time).map_err(|message| WindowError::new("startTime", message))?;
    let offset = offset(config.utc_offset.as_deref())
        .map_err(|message| WindowError::new("utcOffset", message))?;
    let beyond = || WindowError::new("startDay", "the next one is past the end of the calendar");
    let day =
        next_weekday(local_date(offset, reached), weekday(config.start_day)).ok_or_else(beyond)?;
    let start = instant(offset, day, start_time).ok_or_else(beyond)?;
    if start >= reached {
        Ok(start)
    } else {
        start
            .checked_add(SignedDuration::from_hours(7 * 24))
            .map_err(|_| beyond())
    }
}
