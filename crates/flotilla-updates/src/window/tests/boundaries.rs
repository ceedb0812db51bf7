//! Where windows open and close: midnight crossings, offsets, back-to-back windows, `startDate`,
//! `notAllowedDates`, and what `next_opening` returns from inside a window.

use jiff::SignedDuration;
use serde_json::json;

use super::{ts, window};

/// A weekly Saturday 22:00 window of 6 hours in `offset`.
fn saturday_night(offset: &str) -> super::Window {
    window(json!({
        "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
        "durationHours": 6, "startTime": "22:00", "utcOffset": offset,
    }))
}

#[test]
fn an_occurrence_crossing_midnight_is_open_the_next_morning() {
    let window = saturday_night("+00:00");
    // 2026-11-28 is a Saturday.
    assert!(!window.is_open(ts("2026-11-28T21:59:59Z")));
    assert!(window.is_open(ts("2026-11-28T22:00:00Z")));
    assert!(window.is_open(ts("2026-11-29T03:00:00Z")));
    assert_eq!(
        window.occurrence_at(ts("2026-11-29T03:00:00Z")),
        Some((ts("2026-11-28T22:00:00Z"), ts("2026-11-29T04:00:00Z")))
    );
    assert!(window.is_open(ts("2026-11-29T03:59:59.999Z")));
    assert!(!window.is_open(ts("2026-11-29T04:00:00Z")));
    assert!(!window.is_open(ts("2026-11-29T22:00:00Z")), "not on Sunday");
}

#[test]
fn a_negative_offset_moves_the_window_later_in_utc() {
    let window = saturday_night("-08:00");
    assert!(
        !window.is_open(ts("2026-11-28T22:00:00Z")),
        "22:00Z is 14:00 local"
    );
    assert!(!window.is_open(ts("2026-11-29T05:59:59Z")));
    assert!(window.is_open(ts("2026-11-29T06:00:00Z")));
    assert!(window.is_open(ts("2026-11-29T11:59:59Z")));
    assert!(!window.is_open(ts("2026-11-29T12:00:00Z")));
}

#[test]
fn a_positive_offset_moves_the_window_earlier_in_utc() {
    let window = saturday_night("+05:30");
    assert!(!window.is_open(ts("2026-11-28T16:29:59Z")));
    assert!(window.is_open(ts("2026-11-28T16:30:00Z")));
    assert!(window.is_open(ts("2026-11-28T22:29:59Z")));
    assert!(!window.is_open(ts("2026-11-28T22:30:00Z")));
}

#[test]
fn daily_windows_of_24_hours_are_open_continuously_and_switch_occurrence_at_the_start_time() {
    let window = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 24, "startTime": "22:00",
    }));
    let mut at = ts("2026-03-01T00:00:00Z");
    while at < ts("2026-03-08T00:00:00Z") {
        assert!(window.is_open(at), "open at {at}");
        at += SignedDuration::from_mins(30);
    }
    assert_eq!(
        window.occurrence_at(ts("2026-03-02T21:59:59Z")),
        Some((ts("2026-03-01T22:00:00Z"), ts("2026-03-02T22:00:00Z")))
    );
    assert_eq!(
        window.occurrence_at(ts("2026-03-02T22:00:00Z")),
        Some((ts("2026-03-02T22:00:00Z"), ts("2026-03-03T22:00:00Z")))
    );
    assert_eq!(
        window.next_opening(ts("2026-03-02T21:00:00Z")),
        Some(ts("2026-03-02T22:00:00Z"))
    );
}

#[test]
fn every_other_day_for_24_hours_alternates_open_and_closed_days() {
    let window = window(json!({
        "schedule": {"daily": {"intervalDays": 2}}, "durationHours": 24, "startTime": "00:00",
        "startDate": "2026-03-01",
    }));
    assert!(window.is_open(ts("2026-03-01T00:00:00Z")));
    assert!(window.is_open(ts("2026-03-01T23:59:59Z")));
    assert!(!window.is_open(ts("2026-03-02T00:00:00Z")));
    assert!(!window.is_open(ts("2026-03-02T23:59:59Z")));
    assert!(window.is_open(ts("2026-03-03T00:00:00Z")));
}

#[test]
fn start_date_excludes_earlier_occurrences_and_their_spill_over() {
    let window = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 6, "startTime": "22:00",
        "startDate": "2026-03-10",
    }));
    assert!(!window.is_open(ts("2026-03-08T23:00:00Z")));
    assert!(
        !window.is_open(ts("2026-03-10T01:00:00Z")),
        "the 9th's occurrence does not run into the 10th"
    );
    assert!(window.is_open(ts("2026-03-10T23:00:00Z")));
    assert_eq!(
        window.next_opening(ts("2026-01-01T00:00:00Z")),
        Some(ts("2026-03-10T22:00:00Z"))
    );
}

#[test]
fn not_allowed_dates_block_whole_local_days_including_the_end_day() {
    // The reference's example: with +02:00, 12-23..01-03 blocks 12-22T22:00Z to 01-03T22:00Z.
    let window = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 24, "startTime": "00:00",
        "utcOffset": "+02:00", "notAllowedDates": [{"start": "2025-12-23", "end": "2026-01-03"}],
    }));
    assert!(window.is_open(ts("2025-12-22T21:59:59Z")));
    assert!(!window.is_open(ts("2025-12-22T22:00:00Z")));
    assert!(!window.is_open(ts("2025-12-28T12:00:00Z")));
    assert!(!window.is_open(ts("2026-01-03T21:59:59Z")));
    assert!(window.is_open(ts("2026-01-03T22:00:00Z")));
    assert_eq!(
        window.next_opening(ts("2025-12-22T22:00:00Z")),
        Some(ts("2026-01-03T22:00:00Z"))
    );
}

#[test]
fn an_occurrence_running_into_a_blocked_day_is_cut_off_at_its_midnight() {
    let window = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 8, "startTime": "20:00",
        "utcOffset": "+02:00", "notAllowedDates": [{"start": "2025-12-23", "end": "2026-01-03"}],
    }));
    assert_eq!(
        window.occurrence_at(ts("2025-12-22T21:00:00Z")),
        Some((ts("2025-12-22T18:00:00Z"), ts("2025-12-22T22:00:00Z")))
    );
    assert!(!window.is_open(ts("2025-12-22T22:00:00Z")));
    // The 3rd's occurrence would start on a blocked day: the next is the 4th, 20:00 local.
    assert_eq!(
        window.next_opening(ts("2025-12-22T19:00:00Z")),
        Some(ts("2026-01-04T18:00:00Z"))
    );
    assert_eq!(
        window.occurrence_at(ts("2026-01-05T01:00:00Z")),
        Some((ts("2026-01-04T18:00:00Z"), ts("2026-01-05T02:00:00Z")))
    );
}

#[test]
fn next_opening_is_the_next_start_from_inside_a_window_and_the_start_itself_at_it() {
    let window = saturday_night("+00:00");
    assert_eq!(
        window.next_opening(ts("2026-11-28T22:00:00Z")),
        Some(ts("2026-11-28T22:00:00Z"))
    );
    assert_eq!(
        window.next_opening(ts("2026-11-28T22:00:00.000000001Z")),
        Some(ts("2026-12-05T22:00:00Z"))
    );
    assert_eq!(
        window.next_opening(ts("2026-11-29T01:00:00Z")),
        Some(ts("2026-12-05T22:00:00Z"))
    );
    assert_eq!(
        window.next_opening(ts("2026-11-25T08:00:00Z")),
        Some(ts("2026-11-28T22:00:00Z"))
    );
}

#[test]
fn next_opening_gives_up_past_its_horizon_but_counts_it_from_start_date() {
    let blocked = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "00:00",
        "notAllowedDates": [{"start": "2026-01-01", "end": "2029-12-31"}],
    }));
    assert_eq!(blocked.next_opening(ts("2026-01-01T00:00:00Z")), None);
    assert_eq!(
        blocked.next_opening(ts("2027-06-01T00:00:00Z")),
        Some(ts("2030-01-01T00:00:00Z"))
    );
    let later = window(json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "00:00",
        "startDate": "2036-05-01",
    }));
    assert_eq!(
        later.next_opening(ts("2026-01-01T00:00:00Z")),
        Some(ts("2036-05-01T00:00:00Z"))
    );
}
