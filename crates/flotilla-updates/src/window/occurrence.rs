//! Evaluating a window at an instant: whether it is open, the occurrence it is in, and when it
//! next opens.

use jiff::civil::{Date, Time};
use jiff::{SignedDuration, Span, Timestamp};

use super::Window;
use super::calendar::{instant, local_date};

/// How many years past the later of the given instant and `startDate`
/// [`Window::next_opening`] searches before it gives up.
pub const SEARCH_HORIZON_YEARS: i16 = 3;

impl Window {
    /// Whether the window is open at `at`: inside an occurrence and outside every blocked date.
    pub fn is_open(&self, at: Timestamp) -> bool {
        self.occurrence_at(at).is_some()
    }

    /// The occurrence `at` lies in, as `[start, end)`: `None` when the window is closed at
    /// `at`. An occurrence running into a blocked date ends at that date's local midnight.
    pub fn occurrence_at(&self, at: Timestamp) -> Option<(Timestamp, Timestamp)> {
        // Occurrences last at most a day, so one containing `at` started today or yesterday;
        // neither contains a blocked day's instant (see `occurrence_on`).
        let today = local_date(self.offset, at);
        [Some(today), today.yesterday().ok()]
            .into_iter()
            .flatten()
            .filter_map(|day| self.occurrence_on(day))
            .find(|&(start, end)| start <= at && at < end)
    }

    /// The start of the first occurrence starting at or after `after` (from inside an open
    /// occurrence, the next one's start). `None` when none starts within
    /// [`SEARCH_HORIZON_YEARS`] years past the later of `after` and `startDate`, which for a
    /// valid window happens only when `notAllowedDates` blocks that whole period.
    pub fn next_opening(&self, after: Timestamp) -> Option<Timestamp> {
        // An occurrence of an earlier local date starts before `after`'s local midnight.
        let mut day = local_date(self.offset, after).max(self.start_date.unwrap_or(Date::MIN));
        let horizon = day
            .checked_add(Span::new().years(SEARCH_HORIZON_YEARS))
            .unwrap_or(Date::MAX);
        loop {
            day = self.recurrence.next_on_or_after(day)?;
            if day > horizon {
                return None;
            }
            if let Some(span) = self.blocked.iter().find(|span| span.contains(day)) {
                day = span.last.tomorrow().ok()?;
                continue;
            }
            let start = self.start_on(day)?;
            if start >= after {
                return Some(start);
            }
            day = day.tomorrow().ok()?;
        }
    }

    /// The occurrence starting on local date `day`, its end cut at the next day's midnight
    /// when that day is blocked; `None` when no occurrence starts that day.
    fn occurrence_on(&self, day: Date) -> Option<(Timestamp, Timestamp)> {
        if self.start_date.is_some_and(|first| day < first)
            || self.blocked_on(day)
            || !self.recurrence.occurs_on(day)
        {
            return None;
        }
        let start = self.start_on(day)?;
        let end = start
            .checked_add(SignedDuration::from_hours(self.duration_hours))
            .ok()?;
        let next = day.tomorrow().ok()?;
        if self.blocked_on(next) {
            Some((
                start,
                end.min(instant(self.offset, next, Time::midnight())?),
            ))
        } else {
            Some((start, end))
        }
    }

    /// The instant an occurrence on local date `day` would start.
    fn start_on(&self, day: Date) -> Option<Timestamp> {
        instant(self.offset, day, self.start_time)
    }

    /// Whether local date `day` lies in a `notAllowedDates` span.
    fn blocked_on(&self, day: Date) -> bool {
        self.blocked.iter().any(|span| span.contains(day))
    }
}
