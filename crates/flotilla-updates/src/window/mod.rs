//! Maintenance windows: when a member's `MaintenanceConfiguration` lets an update run start new
//! work on it, the order members are taken in by window, and when a `ScheduledStart` gate
//! opens. Everything here is a pure function of its inputs: time is passed in as a
//! [`Timestamp`](jiff::Timestamp), nothing reads a clock.
//!
//! [`Window::parse`] validates an API `maintenanceWindow` (or [`problems`] lists everything
//! wrong with one, for admission) and turns it into a [`Window`], which answers
//! [`Window::is_open`], [`Window::occurrence_at`] and [`Window::next_opening`]; its `Display` is
//! a short human summary for status messages. [`WindowPriority`] ranks a member for ordering
//! inside a group, and [`next_scheduled_start`] computes a `ScheduledStart` gate's time.
//! [`window_status`] is a `MaintenanceConfiguration`'s status at an instant (summary, open,
//! current and next occurrence, `Valid`) with the instant it next changes.
//!
//! # Semantics
//!
//! AKS documents the fields but leaves several points open (section 9 of the reference); the
//! decisions taken here:
//!
//! - **Local time.** Every date and time of the window is local to the static `utcOffset`
//!   (default `+00:00`, at most ±14:00); there is no daylight saving. An *occurrence* starts on
//!   a local date `D` at `startTime` and lasts `durationHours`, so it may cross midnight: a
//!   Saturday 22:00 window of 6 hours is still open on Sunday at 03:00. An occurrence is the
//!   half-open interval `[start, end)`.
//! - **Anchor.** Intervals count from `startDate`, or from 1970-01-01 when it is unset.
//!   - `daily`: `D` qualifies when the days from the anchor to `D` are a multiple of
//!     `intervalDays`.
//!   - `weekly`: `D` is a `dayOfWeek` in a week (Monday to Sunday) whose distance in weeks from
//!     the week containing the anchor is a multiple of `intervalWeeks`.
//!   - Monthly recurrences: `D` is in a month whose distance in months from the anchor's month
//!     is a multiple of `intervalMonths`.
//! - **`absoluteMonthly`** falls on `dayOfMonth`, or on the month's last day when the month is
//!   shorter (31 gives February 28 or 29 and April 30; never the next month's first days).
//! - **`relativeMonthly`**: `First` to `Fourth` are the first to fourth `dayOfWeek` of the
//!   month; `Last` is its last `dayOfWeek`, whether the month has four or five of them.
//! - **`startDate`**: no occurrence starts before `startDate` 00:00 local, and an occurrence of
//!   an earlier day does not spill over into it. The anchor's own week or month counts, so an
//!   occurrence of that week or month dated before `startDate` is simply skipped.
//! - **`notAllowedDates`**: each inclusive span blocks `[start 00:00, (end + 1) 00:00)` local
//!   (with `+02:00`, 12-23..01-03 blocks 12-22T22:00Z to 01-03T22:00Z, as AKS documents). The
//!   window is closed at any instant inside a blocked period: an occurrence whose start falls
//!   on a blocked date does not happen, and one that runs into a blocked date is cut off at
//!   its midnight ([`Window::occurrence_at`] reports the shortened end).
//! - **[`Window::next_opening`]** is the first start at *or after* the given instant: from
//!   inside an open occurrence it is the following occurrence's start, at exactly a start it
//!   is that start. The search looks [`SEARCH_HORIZON_YEARS`] years past the later of the
//!   instant and `startDate`; a valid schedule only finds nothing there when `notAllowedDates`
//!   blocks the whole horizon.
//! - **Priority**: a window opening within [`OPENS_SOON`] (4 hours, inclusive) is
//!   [`WindowPriority::OpensSoon`]; a window closed now and later than that is
//!   [`WindowPriority::Closed`], ordered after members with no window, as in AKS.
//! - **`ScheduledStart`**: [`next_scheduled_start`] is the first `startDay` `startTime` at *or
//!   after* the instant the gate is reached: this week's slot counts until it has passed, so a
//!   gate reached exactly at its slot completes at once; otherwise it waits up to a week.
//!
//! Evaluation is cheap: [`Window::is_open`] looks at two candidate days, and
//! [`Window::next_opening`] computes the next qualifying day directly, looping only over
//! blocked spans.

mod calendar;
mod describe;
mod fields;
mod occurrence;
mod priority;
mod recurrence;
mod scheduled_start;
mod status;
mod validate;

#[cfg(test)]
mod tests;

use jiff::civil::{Date, Time};
use jiff::tz::Offset;

pub use occurrence::SEARCH_HORIZON_YEARS;
pub use priority::{OPENS_SOON, WindowPriority};
pub use scheduled_start::next_scheduled_start;
pub use status::{WindowStatus, invalid_reason, window_status};
pub use validate::{WindowError, problems};

use recurrence::Recurrence;

/// A validated maintenance window in evaluated form: parsed times, dates and offset, with the
/// recurrence's anchor resolved. Built by [`Window::parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// On which local dates an occurrence starts (before `startDate` and blocked dates).
    recurrence: Recurrence,
    /// Local time of day an occurrence starts.
    start_time: Time,
    /// Length of an occurrence in hours (4 to 24).
    duration_hours: i64,
    /// The static offset of local time from UTC.
    offset: Offset,
    /// No occurrence starts before this local date.
    start_date: Option<Date>,
    /// Local date spans in which the window is closed.
    blocked: Vec<DateSpan>,
}

/// An inclusive span of local dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DateSpan {
    /// First date of the span.
    first: Date,
    /// Last date of the span (included).
    last: Date,
}

impl DateSpan {
    /// Whether `day` lies in the span.
    fn contains(self, day: Date) -> bool {
        self.first <= day && day <= self.last
    }
}
