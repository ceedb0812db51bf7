//! A `MaintenanceConfiguration`'s status: the window's summary, whether it is open, the
//! current and next occurrences and the `Valid` condition at an instant, with the instant the
//! status next changes, so a controller writes it only when it changes and looks again then.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::updates::maintenance::{
    MaintenanceConfigurationStatus, MaintenanceWindow, VALID_CONDITION, WINDOW_VALID_REASON,
    WindowOccurrence,
};
use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as MetaTime;

use super::calendar::{instant, local_date};
use super::{Window, WindowError};

/// The status of a configuration and when to compute it again.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowStatus {
    /// The status to write.
    pub status: MaintenanceConfigurationStatus,
    /// When the status next changes (after `now`): the end of the current occurrence while
    /// the window is open, else the start of the next one. When no next opening lies within
    /// the search horizon, the next local midnight, when the horizon moves on a day. `None`
    /// for an invalid window: only a new spec changes its status.
    pub next_change: Option<Timestamp>,
}

/// The status of a configuration whose spec at `generation` has `window`, at `now`. The `Valid`
/// condition keeps its transition time from `before` while its status is unchanged.
///
/// `nextWindow` is the first occurrence starting strictly after `now` (at the very start of an
/// occurrence, that occurrence is `currentWindow` and the following one is next); both windows
/// end early where a `notAllowedDates` span cuts them off, as [`Window::occurrence_at`] says.
pub fn window_status(
    window: &MaintenanceWindow,
    generation: Option<i64>,
    before: Option<&MaintenanceConfigurationStatus>,
    now: Timestamp,
) -> WindowStatus {
    let (mut status, next_change, valid) = match Window::parse(window) {
        Ok(window) => {
            let (status, next_change) = window.status_at(now);
            let message = format!("{window}");
            (status, next_change, Ok(message))
        }
        Err(error) => (MaintenanceConfigurationStatus::default(), None, Err(error)),
    };
    let reason = match &valid {
        Ok(_) => WINDOW_VALID_REASON.to_string(),
        Err(error) => invalid_reason(error),
    };
    let condition = NewCondition {
        type_: VALID_CONDITION,
        status: if valid.is_ok() { "True" } else { "False" },
        reason: &reason,
        message: match valid {
            Ok(schedule) => format!("the window opens {schedule}"),
            Err(error) => format!("spec.maintenanceWindow.{error}"),
        },
        observed_generation: generation,
    };
    status.conditions = before.map(|s| s.conditions.clone()).unwrap_or_default();
    set_condition(&mut status.conditions, condition, now);
    status.observed_generation = generation;
    WindowStatus {
        status,
        next_change,
    }
}

/// The reason of `Valid=False` for `error`: `Invalid` and the top-level field in UpperCamel
/// case: `InvalidSchedule`, `InvalidDurationHours`, `InvalidStartTime`, `InvalidUtcOffset`,
/// `InvalidStartDate` or `InvalidNotAllowedDates`.
pub fn invalid_reason(error: &WindowError) -> String {
    let field = error
        .field
        .split(['.', '['])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric);
    let mut reason = String::from("Invalid");
    let mut first = true;
    for c in field {
        reason.push(if first { c.to_ascii_uppercase() } else { c });
        first = false;
    }
    reason
}

impl Window {
    /// The status fields that depend on time (all but the generation and conditions), at
    /// `now`, and when they next change.
    fn status_at(&self, now: Timestamp) -> (MaintenanceConfigurationStatus, Option<Timestamp>) {
        let current = self.occurrence_at(now);
        let next = now
            .checked_add(SignedDuration::from_nanos(1))
            .ok()
            .and_then(|after| self.next_opening(after))
            .and_then(|start| self.occurrence_at(start).filter(|o| o.0 == start));
        let next_change = match (current, next) {
            (Some((_, end)), _) => Some(end),
            (None, Some((start, _))) => Some(start),
            (None, None) => local_date(self.offset, now)
                .tomorrow()
                .ok()
                .and_then(|day| instant(self.offset, day, Time::midnight())),
        };
        let occurrence = |(start, end): (Timestamp, Timestamp)| WindowOccurrence {
            start: MetaTime(start),
            end: MetaTime(end),
        };
        let status = MaintenanceConfigurationStatus {
            schedule: Some(self.to_string()),
            open: current.is_some(),
            current_window: current.map(occurrence),
            next_window: next.map(occurrence),
            ..MaintenanceConfigurationStatus::default()
        };
        (status, next_change)
    }
}
