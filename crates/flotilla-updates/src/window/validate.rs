//! Validation of an API `maintenanceWindow` and its conversion to a [`Window`]. Field paths are
//! relative to the window (`utcOffset`, `notAllowedDates[1].end`), so admission can prefix
//! them with `spec.maintenanceWindow.`.

use flotilla_api::updates::maintenance::{DateSpan as NotAllowed, MaintenanceWindow, Schedule};
use jiff::civil::{self, Date};

use super::calendar::{month_number, week_number, weekday};
use super::fields::{date, offset, time, within};
use super::recurrence::Recurrence;
use super::{DateSpan, Window};

/// The interval anchor when `startDate` is unset.
const DEFAULT_ANCHOR: Date = civil::date(1970, 1, 1);

/// A problem with a maintenance window (or a `ScheduledStart` configuration): the path of the
/// field, relative to the window, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct WindowError {
    /// Path of the offending field, e.g. `notAllowedDates[1].end`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl WindowError {
    /// A problem with `field`.
    pub(super) fn new(field: impl Into<String>, message: impl Into<String>) -> WindowError {
        WindowError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl Window {
    /// Validates `window` and converts it to its evaluated form; the error is the first
    /// problem [`problems`] would list.
    pub fn parse(window: &MaintenanceWindow) -> Result<Window, WindowError> {
        evaluate(window).map_err(|problems| {
            problems
                .into_iter()
                .next()
                .expect("evaluation fails only with a problem")
        })
    }
}

/// Every problem of `window`, as `(field path, message)` pairs with paths relative to the
/// window, in field order; empty when [`Window::parse`] accepts it. Admission turns these into
/// field errors under `spec.maintenanceWindow.`.
pub fn problems(window: &MaintenanceWindow) -> Vec<(String, String)> {
    evaluate(window)
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|problem| (problem.field, problem.message))
        .collect()
}

/// Collects the problems met while parsing fields.
#[derive(Default)]
struct Problems(Vec<WindowError>);

impl Problems {
    /// The value of `field`, or `None` after recording its problem.
    fn check<T>(&mut self, field: impl Into<String>, parsed: Result<T, String>) -> Option<T> {
        parsed
            .map_err(|message| self.0.push(WindowError::new(field, message)))
            .ok()
    }
}

/// The window `window` describes, or all its problems (at least one) in field order.
fn evaluate(window: &MaintenanceWindow) -> Result<Window, Vec<WindowError>> {
    let mut problems = Problems::default();
    // The recurrence needs the anchor first; an invalid startDate is reported in its turn.
    let anchor = window
        .start_date
        .as_deref()
        .and_then(|text| date(text).ok())
        .unwrap_or(DEFAULT_ANCHOR);
    let recurrence = recurrence(&window.schedule, anchor, &mut problems);
    let duration_hours = problems.check("durationHours", within(window.duration_hours, 4..=24));
    let start_time = problems.check("startTime", time(&window.start_time));
    let offset = problems.check("utcOffset", offset(window.utc_offset.as_deref()));
    let start_date = match window.start_date.as_deref() {
        None => Some(None),
        Some(text) => problems.check("startDate", date(text)).map(Some),
    };
    let blocked = blocked(&window.not_allowed_dates, &mut problems);
    match (
        recurrence,
        duration_hours,
        start_time,
        offset,
        start_date,
        blocked,
    ) {
        (
            Some(recurrence),
            Some(duration_hours),
            Some(start_time),
            Some(offset),
            Some(start_date),
            Some(blocked),
        ) if problems.0.is_empty() => Ok(Window {
            recurrence,
            start_time,
            duration_hours,
            offset,
            start_date,
            blocked,
        }),
        _ => Err(problems.0),
    }
}

/// The spans of `notAllowedDates`; `None` after recording problems.
fn blocked(spans: &[NotAllowed], problems: &mut Problems) -> Option<Vec<DateSpan>> {
    let checked: Vec<Option<DateSpan>> = spans
        .iter()
        .enumerate()
        .map(|(i, span)| {
            let field = |name: &str| format!("notAllowedDates[{i}].{name}");
            let first = problems.check(field("start"), date(&span.start));
            let last = problems.check(field("end"), date(&span.end));
            let (first, last) = first.zip(last)?;
            let ordered = if last < first {
                Err(format!("must not be before start {}", span.start))
            } else {
                Ok(DateSpan { first, last })
            };
            problems.check(field("end"), ordered)
        })
        .collect();
    checked.into_iter().collect()
}

/// The one recurrence `schedule` sets, anchored at `anchor`; `None` after recording problems.
fn recurrence(schedule: &Schedule, anchor: Date, problems: &mut Problems) -> Option<Recurrence> {
    let set = [
        schedule.daily.is_some(),
        schedule.weekly.is_some(),
        schedule.absolute_monthly.is_some(),
        schedule.relative_monthly.is_some(),
    ];
    let count = set.iter().filter(|&&set| set).count();
    let one = problems.check(
        "schedule",
        if count == 1 {
            Ok(())
        } else {
            Err(format!(
                "exactly one of daily, weekly, absoluteMonthly and relativeMonthly must be set, found {count}"
            ))
        },
    );
    let mut found = None;
    if let Some(daily) = &schedule.daily {
        found = problems
            .check(
                "schedule.daily.intervalDays",
                within(daily.interval_days, 1..=7),
            )
            .map(|interval| Recurrence::Daily { interval, anchor });
    }
    if let Some(weekly) = &schedule.weekly {
        found = problems
            .check(
                "schedule.weekly.intervalWeeks",
                within(weekly.interval_weeks, 1..=4),
            )
            .map(|interval| Recurrence::Weekly {
                interval,
                day: weekday(weekly.day_of_week),
                anchor_week: week_number(anchor),
            });
    }
    if let Some(monthly) = &schedule.absolute_monthly {
        let interval = problems.check(
            "schedule.absoluteMonthly.intervalMonths",
            within(monthly.interval_months, 1..=6),
        );
        let day = problems.check(
            "schedule.absoluteMonthly.dayOfMonth",
            within(monthly.day_of_month, 1..=31),
        );
        found = interval
            .zip(day)
            .map(|(interval, day)| Recurrence::AbsoluteMonthly {
                interval,
                day: i8::try_from(day).expect("a day of the month is 1 to 31"),
                anchor_month: month_number(anchor),
            });
    }
    if let Some(monthly) = &schedule.relative_monthly {
        found = problems
            .check(
                "schedule.relativeMonthly.intervalMonths",
                within(monthly.interval_months, 1..=6),
            )
            .map(|interval| Recurrence::RelativeMonthly {
                interval,
                day: weekday(monthly.day_of_week),
                week: monthly.week_index,
                anchor_month: month_number(anchor),
            });
    }
    one.and(found)
}
