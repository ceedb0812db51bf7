//! The recurrence of a window: on which local dates an occurrence starts, before `startDate`
//! and `notAllowedDates` are applied. Each schedule computes its next date directly, without
//! walking the calendar day by day.

use flotilla_api::updates::maintenance::WeekIndex;
use jiff::civil::{self, Date};

use super::calendar::{
    add_days, days_between, first_of_month, month_number, next_weekday, week_number,
};

/// A schedule with its interval anchor resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recurrence {
    /// Every `interval` days from `anchor`.
    Daily {
        /// Days between occurrences.
        interval: i64,
        /// A date with an occurrence.
        anchor: Date,
    },
    /// On `day` every `interval` weeks from the week numbered `anchor_week`.
    Weekly {
        /// Weeks between occurrences.
        interval: i64,
        /// The weekday of the occurrences.
        day: civil::Weekday,
        /// The number of a week with an occurrence (see `calendar::week_number`).
        anchor_week: i64,
    },
    /// On day `day` (or the month's last day) every `interval` months from `anchor_month`.
    AbsoluteMonthly {
        /// Months between occurrences.
        interval: i64,
        /// Day of the month, 1 to 31.
        day: i8,
        /// The number of a month with an occurrence (see `calendar::month_number`).
        anchor_month: i64,
    },
    /// On the `week` `day` every `interval` months from `anchor_month`.
    RelativeMonthly {
        /// Months between occurrences.
        interval: i64,
        /// The weekday of the occurrences.
        day: civil::Weekday,
        /// Which `day` of the month.
        week: WeekIndex,
        /// The number of a month with an occurrence (see `calendar::month_number`).
        anchor_month: i64,
    },
}

impl Recurrence {
    /// Whether an occurrence starts on `date`.
    pub(super) fn occurs_on(&self, date: Date) -> bool {
        self.next_on_or_after(date) == Some(date)
    }

    /// The first date on or after `from` with an occurrence; `None` past the end of the
    /// calendar.
    pub(super) fn next_on_or_after(&self, from: Date) -> Option<Date> {
        match *self {
            Recurrence::Daily { interval, anchor } => {
                let past = days_between(anchor, from).rem_euclid(interval);
                add_days(from, (interval - past) % interval)
            }
            Recurrence::Weekly {
                interval,
                day,
                anchor_week,
            } => {
                let candidate = next_weekday(from, day)?;
                let past = (week_number(candidate) - anchor_week).rem_euclid(interval);
                add_days(candidate, 7 * ((interval - past) % interval))
            }
            Recurrence::AbsoluteMonthly {
                interval,
                day,
                anchor_month,
            } => next_in_months(from, interval, anchor_month, |first| {
                first
                    .with()
                    .day(day.min(first.days_in_month()))
                    .build()
                    .ok()
            }),
            Recurrence::RelativeMonthly {
                interval,
                day,
                week,
                anchor_month,
            } => {
                let nth = match week {
                    WeekIndex::First => 1,
                    WeekIndex::Second => 2,
                    WeekIndex::Third => 3,
                    WeekIndex::Fourth => 4,
                    WeekIndex::Last => -1,
                };
                next_in_months(from, interval, anchor_month, |first| {
                    first.nth_weekday_of_month(nth, day).ok()
                })
            }
        }
    }
}

/// The first date on or after `from` that `date_in` picks in a month every `interval` months
/// from `anchor_month`; `date_in` receives the month's first day.
fn next_in_months(
    from: Date,
    interval: i64,
    anchor_month: i64,
    date_in: impl Fn(Date) -> Option<Date>,
) -> Option<Date> {
    let month = month_number(from);
    let first = month + (interval - (month - anchor_month).rem_euclid(interval)) % interval;
    let date = date_in(first_of_month(first)?)?;
    if date >= from {
        Some(date)
    } else {
        date_in(first_of_month(first + interval)?)
    }
}
