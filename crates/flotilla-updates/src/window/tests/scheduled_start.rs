//! When `ScheduledStart` gates complete.

use flotilla_api::updates::maintenance::Weekday;
use flotilla_api::updates::strategy::ScheduledStartConfiguration;

use super::ts;
use crate::window::next_scheduled_start;

/// A gate at `day` `time` in `offset` (`None`: the default `+00:00`).
fn gate(day: Weekday, time: &str, offset: Option<&str>) -> ScheduledStartConfiguration {
    ScheduledStartConfiguration {
        start_day: day,
        start_time: time.to_string(),
        utc_offset: offset.map(str::to_string),
    }
}

#[test]
fn the_gate_completes_at_the_next_slot_at_or_after_it_is_reached() {
    // 2026-03-02 is a Monday.
    let cases = [
        (
            "same day, earlier",
            gate(Weekday::Monday, "09:00", None),
            "2026-03-02T08:00:00Z",
            "2026-03-02T09:00:00Z",
        ),
        (
            "exactly at the slot",
            gate(Weekday::Monday, "09:00", None),
            "2026-03-02T09:00:00Z",
            "2026-03-02T09:00:00Z",
        ),
        (
            "a second past the slot",
            gate(Weekday::Monday, "09:00", None),
            "2026-03-02T09:00:01Z",
            "2026-03-09T09:00:00Z",
        ),
        (
            "same day, later",
            gate(Weekday::Monday, "09:00", None),
            "2026-03-02T23:00:00Z",
            "2026-03-09T09:00:00Z",
        ),
        (
            "the day before",
            gate(Weekday::Monday, "09:00", Some("+00:00")),
            "2026-03-01T10:00:00Z",
            "2026-03-02T09:00:00Z",
        ),
        (
            "later in the week",
            gate(Weekday::Friday, "00:00", None),
            "2026-03-02T09:00:00Z",
            "2026-03-06T00:00:00Z",
        ),
        (
            "earlier in the week",
            gate(Weekday::Sunday, "12:00", None),
            "2026-03-02T09:00:00Z",
            "2026-03-08T12:00:00Z",
        ),
        (
            "+05:30, still ahead locally",
            gate(Weekday::Monday, "09:00", Some("+05:30")),
            "2026-03-02T03:00:00Z",
            "2026-03-02T03:30:00Z",
        ),
        (
            "+05:30, passed locally",
            gate(Weekday::Monday, "09:00", Some("+05:30")),
            "2026-03-02T04:00:00Z",
            "2026-03-09T03:30:00Z",
        ),
        (
            "-08:00, still Sunday locally",
            gate(Weekday::Monday, "01:00", Some("-08:00")),
            "2026-03-02T05:00:00Z",
            "2026-03-02T09:00:00Z",
        ),
        (
            "+14:00, Monday locally is Sunday in UTC",
            gate(Weekday::Monday, "02:00", Some("+14:00")),
            "2026-03-01T11:00:00Z",
            "2026-03-01T12:00:00Z",
        ),
        (
            "+14:00, just passed",
            gate(Weekday::Monday, "02:00", Some("+14:00")),
            "2026-03-01T12:00:01Z",
            "2026-03-08T12:00:00Z",
        ),
    ];
    for (name, config, reached, expected) in cases {
        assert_eq!(
            next_scheduled_start(&config, ts(reached)),
            Ok(ts(expected)),
            "{name}"
        );
    }
}

#[test]
fn a_malformed_time_or_offset_is_named() {
    let at = ts("2026-03-02T00:00:00Z");
    let error = next_scheduled_start(&gate(Weekday::Monday, "24:00", None), at).unwrap_err();
    assert_eq!(error.field, "startTime");
    let error =
        next_scheduled_start(&gate(Weekday::Monday, "09:00", Some("-14:30")), at).unwrap_err();
    assert_eq!(error.field, "utcOffset");
}
