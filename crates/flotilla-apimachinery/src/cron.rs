//! Cron schedules as Kubernetes CronJobs and Karpenter disruption budgets read them: the
//! semantics of robfig/cron v3 `ParseStandard`, always in UTC.
//!
//! A schedule is five whitespace-separated fields (minute, hour, day of month, month, day of
//! week) or one of the macros `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
//! `@midnight` and `@hourly`. Each field is a comma-separated list of items: `*` or `?` (every
//! value), `a`, `a-b`, `*/n`, `a-b/n` or `a/n` (from `a` to the field's maximum, every `n`th).
//! Months take `JAN`–`DEC` and days of week `SUN`–`SAT`, case-insensitively; days of week are
//! 0–6 with Sunday 0 (robfig rejects 7).
//!
//! Days follow Vixie cron: when the day-of-month or the day-of-week field is unrestricted (an
//! item `*` or `?` without a step above 1), a day fires when both fields match; when both are
//! restricted, a day fires when either matches (`0 0 13 * 5` fires on every 13th and every
//! Friday).
//!
//! Deliberately not accepted, each with its own error:
//! - `@every <duration>`: it is not a calendar schedule (robfig's `Next(t)` is `t` plus the
//!   interval, so "is a window open now" would not depend on the clock), and Karpenter's CRD
//!   pattern for budget schedules rejects it.
//! - a `TZ=` or `CRON_TZ=` prefix: Karpenter prepends `TZ=UTC` itself, so a user prefix makes
//!   robfig see six fields; budgets are always evaluated in UTC.
//! - empty list items (`1,,2`) and ranges that start with `*` (`*-5`), which robfig silently
//!   ignores: they are typos, and saying so beats guessing.

mod error;
mod parse;
#[cfg(test)]
mod tests;

pub use error::{CronError, CronField, FieldProblem};

use jiff::civil::Date;
use jiff::tz::Offset;
use jiff::{SignedDuration, Timestamp};

/// How many years past the start `next_after` searches before concluding that a schedule
/// never fires (robfig's limit too): `0 0 30 2 *` and `0 0 31 4 *` return `None`.
const SEARCH_YEARS: i16 = 5;

/// The values one field allows, one bit per value, and whether the field was written
/// unrestricted (which decides how days of month and days of week combine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ValueSet {
    bits: u64,
    unrestricted: bool,
}

impl ValueSet {
    /// Whether `value` is in the set.
    fn contains(self, value: i8) -> bool {
        self.at_or_after(value) == Some(value)
    }

    /// The smallest value in the set that is `from` or more.
    fn at_or_after(self, from: i8) -> Option<i8> {
        let from = u32::try_from(from).ok()?;
        let later = self.bits.checked_shr(from)?;
        (later != 0).then(|| (from + later.trailing_zeros()) as i8)
    }
}

/// A parsed cron schedule: which minutes (UTC) it fires at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minutes: ValueSet,
    hours: ValueSet,
    days_of_month: ValueSet,
    months: ValueSet,
    days_of_week: ValueSet,
}

impl std::str::FromStr for Schedule {
    type Err = CronError;

    fn from_str(text: &str) -> Result<Self, CronError> {
        Self::parse(text)
    }
}

impl Schedule {
    /// `text` as a schedule (five fields or a macro), or why it is not one.
    pub fn parse(text: &str) -> Result<Self, CronError> {
        parse::schedule(text)
    }

    /// Whether the schedule fires at `t`: `t` is a whole minute (UTC) whose minute, hour,
    /// month and day all match.
    pub fn fires_at(&self, t: Timestamp) -> bool {
        let time = Offset::UTC.to_datetime(t);
        time.second() == 0
            && time.subsec_nanosecond() == 0
            && self.minutes.contains(time.minute())
            && self.hours.contains(time.hour())
            && self.months.contains(time.month())
            && self.day_matches(time.date())
    }

    /// The first instant strictly after `t` at which the schedule fires (a whole minute in
    /// UTC), or `None` if it does not fire within five years of `t` (or before the end of
    /// representable time).
    ///
    /// The search skips whole months, days and hours that cannot match and jumps to the next
    /// allowed hour and minute directly, so it costs at most a few thousand steps.
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        let start = Offset::UTC.to_datetime(t);
        let first = (start.date().at(start.hour(), start.minute(), 0, 0))
            .checked_add(SignedDuration::from_mins(1))
            .ok()?;
        let last_year = first.year().checked_add(SEARCH_YEARS)?;
        let (mut date, mut hour, mut minute) = (first.date(), first.hour(), first.minute());
        while date.year() <= last_year {
            if !self.months.contains(date.month()) {
                (date, hour, minute) = (date.last_of_month().tomorrow().ok()?, 0, 0);
                continue;
            }
            let Some(next_hour) = self
                .day_matches(date)
                .then(|| self.hours.at_or_after(hour))
                .flatten()
            else {
                (date, hour, minute) = (date.tomorrow().ok()?, 0, 0);
                continue;
            };
            if next_hour != hour {
                (hour, minute) = (next_hour, 0);
            }
            match self.minutes.at_or_after(minute) {
                Some(next_minute) => {
                    return Offset::UTC
                        .to_timestamp(date.at(hour, next_minute, 0, 0))
                        .ok();
                }
                None => (hour, minute) = (hour + 1, 0),
            }
        }
        None
    }

    /// Whether `date` is a firing day: both day fields match when either is unrestricted,
    /// otherwise either one does (Vixie cron's rule, which robfig follows).
    fn day_matches(&self, date: Date) -> bool {
        let by_month = self.days_of_month.contains(date.day());
        let by_week = self
            .days_of_week
            .contains(date.weekday().to_sunday_zero_offset());
        if self.days_of_month.unrestricted || self.days_of_week.unrestricted {
            by_month && by_week
        } else {
            by_month || by_week
        }
    }
}
