//! A window's short human summary, for status messages, e.g.
//! `weekly on Saturday 22:00 for 6h, UTC-08:00`.

use std::fmt;

use flotilla_api::updates::maintenance::WeekIndex;
use jiff::civil;

use super::Window;
use super::recurrence::Recurrence;

impl fmt::Display for Window {
    /// The recurrence, start time, length and offset, then the `startDate` and how many
    /// `notAllowedDates` spans there are when set: `every 2 weeks on Monday 01:30 for 4h,
    /// UTC+05:30, from 2026-03-04, except 1 date span`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.recurrence {
            Recurrence::Daily { interval: 1, .. } => write!(f, "daily")?,
            Recurrence::Daily { interval, .. } => write!(f, "every {interval} days")?,
            Recurrence::Weekly { interval, day, .. } => {
                write!(f, "{} on {}", every(interval, "week"), day_name(day))?
            }
            Recurrence::AbsoluteMonthly { interval, day, .. } => {
                write!(f, "{} on day {day}", every(interval, "month"))?
            }
            Recurrence::RelativeMonthly {
                interval,
                day,
                week,
                ..
            } => write!(
                f,
                "{} on the {} {}",
                every(interval, "month"),
                week_name(week),
                day_name(day)
            )?,
        }
        let offset = self.offset.seconds();
        let sign = if offset < 0 { '-' } else { '+' };
        let minutes = offset.unsigned_abs() / 60;
        write!(
            f,
            " {:02}:{:02} for {}h, UTC{sign}{:02}:{:02}",
            self.start_time.hour(),
            self.start_time.minute(),
            self.duration_hours,
            minutes / 60,
            minutes % 60
        )?;
        if let Some(start_date) = self.start_date {
            write!(f, ", from {start_date}")?;
        }
        match self.blocked.len() {
            0 => Ok(()),
            1 => write!(f, ", except 1 date span"),
            spans => write!(f, ", except {spans} date spans"),
        }
    }
}

/// `weekly` (`monthly`) for an interval of 1, else `every N weeks` (`months`).
fn every(interval: i64, unit: &str) -> String {
    if interval == 1 {
        format!("{unit}ly")
    } else {
        format!("every {interval} {unit}s")
    }
}

/// The English name of `day`.
fn day_name(day: civil::Weekday) -> &'static str {
    match day {
        civil::Weekday::Monday => "Monday",
        civil::Weekday::Tuesday => "Tuesday",
        civil::Weekday::Wednesday => "Wednesday",
        civil::Weekday::Thursday => "Thursday",
        civil::Weekday::Friday => "Friday",
        civil::Weekday::Saturday => "Saturday",
        civil::Weekday::Sunday => "Sunday",
    }
}

/// The ordinal word of `week`.
fn week_name(week: WeekIndex) -> &'static str {
    match week {
        WeekIndex::First => "first",
        WeekIndex::Second => "second",
        WeekIndex::Third => "third",
        WeekIndex::Fourth => "fourth",
        WeekIndex::Last => "last",
    }
}
