//! Arithmetic on local (civil) dates that the recurrences need: day, week and month counts,
//! and the conversion of a local date and time to an instant.

use flotilla_api::updates::maintenance::Weekday;
use jiff::civil::{self, Date, Time};
use jiff::tz::Offset;
use jiff::{Span, Timestamp};

/// A Monday, from which weeks are numbered (any Monday would do).
const MONDAY: Date = civil::date(1969, 12, 29);

/// The jiff weekday of an API weekday.
pub(super) fn weekday(day: Weekday) -> civil::Weekday {
    match day {
        Weekday::Monday => civil::Weekday::Monday,
        Weekday::Tuesday => civil::Weekday::Tuesday,
        Weekday::Wednesday => civil::Weekday::Wednesday,
        Weekday::Thursday => civil::Weekday::Thursday,
        Weekday::Friday => civil::Weekday::Friday,
        Weekday::Saturday => civil::Weekday::Saturday,
        Weekday::Sunday => civil::Weekday::Sunday,
    }
}

/// Whole days from `from` to `to`, negative when `to` is earlier.
pub(super) fn days_between(from: Date, to: Date) -> i64 {
    to.duration_since(from).as_hours() / 24
}

/// `date` moved by `days` days; `None` past either end of the calendar.
pub(super) fn add_days(date: Date, days: i64) -> Option<Date> {
    Span::new()
        .try_days(days)
        .and_then(|span| date.checked_add(span))
        .ok()
}

/// The first `day` on or after `date`.
pub(super) fn next_weekday(date: Date, day: civil::Weekday) -> Option<Date> {
    let ahead =
        (day.to_monday_zero_offset() - date.weekday().to_monday_zero_offset()).rem_euclid(7);
    add_days(date, ahead.into())
}

/// The number of the Monday-to-Sunday week containing `date`, counted from a fixed Monday.
pub(super) fn week_number(date: Date) -> i64 {
    days_between(MONDAY, date).div_euclid(7)
}

/// The number of `date`'s month, counted in months from year 0.
pub(super) fn month_number(date: Date) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month()) - 1
}

/// The first day of the month numbered `month` (see [`month_number`]); `None` past either end
/// of the calendar.
pub(super) fn first_of_month(month: i64) -> Option<Date> {
    let year = i16::try_from(month.div_euclid(12)).ok()?;
    let month = i8::try_from(month.rem_euclid(12) + 1).ok()?;
    Date::new(year, month, 1).ok()
}

/// The instant of local `date` at `time` in `offset`; `None` past either end of time.
pub(super) fn instant(offset: Offset, date: Date, time: Time) -> Option<Timestamp> {
    offset.to_timestamp(date.to_datetime(time)).ok()
}

/// The local date of `at` in `offset`.
pub(super) fn local_date(offset: Offset, at: Timestamp) -> Date {
    offset.to_datetime(at).date()
}
