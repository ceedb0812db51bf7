//! A configuration's status: open now, current and next occurrence, the `Valid` condition,
//! and when it next changes.

use flotilla_api::conditions::find;
use flotilla_api::updates::maintenance::{MaintenanceConfigurationStatus, VALID_CONDITION};
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::properties::{Generated, generated, instant};
use super::{spec, ts};
use crate::window::{Window, WindowStatus, window_status};

/// The status of the JSON window at generation 1, from no previous status.
fn at(window: Value, now: &str) -> WindowStatus {
    window_status(&spec(window), Some(1), None, ts(now))
}

/// The occurrence `[start, end)` as the status writes it.
fn span(start: &str, end: &str) -> Value {
    json!({"start": start, "end": end})
}

/// The time fields of a status as JSON: `open`, `currentWindow`, `nextWindow`.
fn times(status: &MaintenanceConfigurationStatus) -> (bool, Value, Value) {
    let value = serde_json::to_value(status).expect("serializes");
    (
        status.open,
        value.get("currentWindow").cloned().unwrap_or(Value::Null),
        value.get("nextWindow").cloned().unwrap_or(Value::Null),
    )
}

/// A weekly Saturday 22:00 window of 6 hours at UTC-08:00: Sunday 06:00 to 12:00 UTC.
fn saturday_night() -> Value {
    json!({
        "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
        "durationHours": 6, "startTime": "22:00", "utcOffset": "-08:00",
    })
}

#[test]
fn open_current_and_next_windows_with_the_next_change() {
    let daily_cut = json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 6, "startTime": "22:00",
        "notAllowedDates": [{"start": "2026-12-02", "end": "2026-12-02"}],
    });
    let back_to_back = json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 24, "startTime": "00:00",
    });
    // (window, now, open, current, next, next change)
    let cases = [
        // Closed: the next occurrence is next; the status changes when it opens.
        (
            saturday_night(),
            "2026-11-25T00:00:00Z",
            false,
            Value::Null,
            span("2026-11-29T06:00:00Z", "2026-11-29T12:00:00Z"),
            "2026-11-29T06:00:00Z",
        ),
        // At the very start: open, and next is the following week's.
        (
            saturday_night(),
            "2026-11-29T06:00:00Z",
            true,
            span("2026-11-29T06:00:00Z", "2026-11-29T12:00:00Z"),
            span("2026-12-06T06:00:00Z", "2026-12-06T12:00:00Z"),
            "2026-11-29T12:00:00Z",
        ),
        // Inside: the status changes when the occurrence ends.
        (
            saturday_night(),
            "2026-11-29T11:59:59Z",
            true,
            span("2026-11-29T06:00:00Z", "2026-11-29T12:00:00Z"),
            span("2026-12-06T06:00:00Z", "2026-12-06T12:00:00Z"),
            "2026-11-29T12:00:00Z",
        ),
        // At the end (half-open): closed.
        (
            saturday_night(),
            "2026-11-29T12:00:00Z",
            false,
            Value::Null,
            span("2026-12-06T06:00:00Z", "2026-12-06T12:00:00Z"),
            "2026-12-06T06:00:00Z",
        ),
        // An occurrence running into a blocked date is cut at its midnight; the next one is
        // after the blocked date.
        (
            daily_cut.clone(),
            "2026-12-01T23:00:00Z",
            true,
            span("2026-12-01T22:00:00Z", "2026-12-02T00:00:00Z"),
            span("2026-12-03T22:00:00Z", "2026-12-04T04:00:00Z"),
            "2026-12-02T00:00:00Z",
        ),
        // The occurrence before the blocked date is next, and cut short too.
        (
            daily_cut,
            "2026-12-01T12:00:00Z",
            false,
            Value::Null,
            span("2026-12-01T22:00:00Z", "2026-12-02T00:00:00Z"),
            "2026-12-01T22:00:00Z",
        ),
        // Back-to-back occurrences: the current one ends as the next one starts.
        (
            back_to_back,
            "2026-01-01T12:00:00Z",
            true,
            span("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"),
            span("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"),
            "2026-01-02T00:00:00Z",
        ),
    ];
    for (window, now, open, current, next, change) in cases {
        let evaluated = at(window.clone(), now);
        assert_eq!(
            times(&evaluated.status),
            (open, current, next),
            "{window} at {now}"
        );
        assert_eq!(evaluated.next_change, Some(ts(change)), "{window} at {now}");
    }
}

#[test]
fn without_a_next_opening_it_looks_again_at_the_next_local_midnight() {
    let blocked_for_good = json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00",
        "utcOffset": "+02:00",
        "notAllowedDates": [{"start": "2026-01-01", "end": "9999-12-31"}],
    });
    let evaluated = at(blocked_for_good, "2026-06-01T10:00:00Z");
    assert_eq!(times(&evaluated.status), (false, Value::Null, Value::Null));
    assert_eq!(evaluated.next_change, Some(ts("2026-06-01T22:00:00Z")));
    let valid = find(&evaluated.status.conditions, VALID_CONDITION).expect("Valid");
    assert_eq!(valid.status, "True");
}

#[test]
fn the_status_in_json() {
    let evaluated = at(saturday_night(), "2026-11-29T07:30:00Z");
    assert_eq!(
        serde_json::to_value(&evaluated.status).unwrap(),
        json!({
            "observedGeneration": 1,
            "schedule": "weekly on Saturday 22:00 for 6h, UTC-08:00",
            "open": true,
            "currentWindow": {"start": "2026-11-29T06:00:00Z", "end": "2026-11-29T12:00:00Z"},
            "nextWindow": {"start": "2026-12-06T06:00:00Z", "end": "2026-12-06T12:00:00Z"},
            "conditions": [{
                "type": "Valid",
                "status": "True",
                "reason": "MaintenanceWindowValid",
                "message": "the window opens weekly on Saturday 22:00 for 6h, UTC-08:00",
                "observedGeneration": 1,
                "lastTransitionTime": "2026-11-29T07:30:00Z",
            }],
        })
    );
}

#[test]
fn an_invalid_window_says_which_field_and_never_opens() {
    let cases = [
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 3, "startTime": "01:00"}),
            "InvalidDurationHours",
            "spec.maintenanceWindow.durationHours: must be 4 to 24, got 3",
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 1}, "weekly": {"intervalWeeks": 1, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "01:00"}),
            "InvalidSchedule",
            "spec.maintenanceWindow.schedule: exactly one of daily, weekly, absoluteMonthly and relativeMonthly must be set, found 2",
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "notAllowedDates": [{"start": "2026-12-24", "end": "2026-12-20"}]}),
            "InvalidNotAllowedDates",
            "spec.maintenanceWindow.notAllowedDates[0].end: must not be before start 2026-12-24",
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "utcOffset": "+15:00"}),
            "InvalidUtcOffset",
            r#"spec.maintenanceWindow.utcOffset: must be within ±14:00, got "+15:00""#,
        ),
    ];
    for (window, reason, message) in cases {
        let evaluated = at(window.clone(), "2026-06-01T01:30:00Z");
        assert_eq!(evaluated.next_change, None, "{window}");
        let status = &evaluated.status;
        assert_eq!(times(status), (false, Value::Null, Value::Null), "{window}");
        assert_eq!(status.schedule, None);
        assert_eq!(status.observed_generation, Some(1));
        let valid = find(&status.conditions, VALID_CONDITION).expect("Valid");
        assert_eq!(
            (valid.status.as_str(), valid.reason.as_str()),
            ("False", reason),
            "{window}"
        );
        assert_eq!(valid.message, message, "{window}");
    }
}

#[test]
fn the_valid_condition_moves_its_transition_time_only_when_it_flips() {
    let t0 = "2026-11-25T00:00:00Z";
    let first = at(saturday_night(), t0).status;
    let later = window_status(
        &spec(saturday_night()),
        Some(1),
        Some(&first),
        ts("2026-11-29T07:00:00Z"),
    )
    .status;
    let valid = |status: &MaintenanceConfigurationStatus| {
        find(&status.conditions, VALID_CONDITION)
            .expect("Valid")
            .clone()
    };
    assert!(later.open);
    assert_eq!(valid(&later).last_transition_time.0, ts(t0));
    let mut broken = saturday_night();
    broken["durationHours"] = json!(2);
    let invalid = window_status(
        &spec(broken),
        Some(2),
        Some(&later),
        ts("2026-11-29T08:00:00Z"),
    )
    .status;
    assert_eq!(
        valid(&invalid).last_transition_time.0,
        ts("2026-11-29T08:00:00Z")
    );
    assert_eq!(valid(&invalid).observed_generation, Some(2));
    assert_eq!(invalid.observed_generation, Some(2));
    assert_eq!(invalid.conditions.len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Over random valid windows and instants: the status agrees with the window, the next
    /// occurrence starts after now, the next change is after now and is the current end or the
    /// next start, and the status does not change before it.
    #[test]
    fn the_status_holds_until_its_next_change(
        generated in generated(3),
        t in instant(),
        fraction in 0.0f64..1.0,
    ) {
        let Generated { spec, .. } = generated;
        let window = Window::parse(&spec).expect("a valid window");
        let WindowStatus { status, next_change } = window_status(&spec, Some(1), None, t);
        let valid = find(&status.conditions, VALID_CONDITION).expect("Valid");
        prop_assert_eq!(valid.status.as_str(), "True");
        prop_assert_eq!(status.schedule.clone(), Some(window.to_string()));
        prop_assert_eq!(status.open, window.is_open(t));
        prop_assert_eq!(status.current_window.is_some(), status.open);
        let next_change = next_change.expect("a valid window changes again");
        prop_assert!(next_change > t, "next change {} not after {}", next_change, t);
        if let Some(current) = &status.current_window {
            prop_assert!(current.start.0 <= t && t < current.end.0);
            prop_assert_eq!(next_change, current.end.0);
        }
        let after = t + SignedDuration::from_nanos(1);
        prop_assert_eq!(
            status.next_window.as_ref().map(|next| next.start.0),
            window.next_opening(after)
        );
        if let Some(next) = &status.next_window {
            prop_assert!(next.start.0 > t && next.end.0 > next.start.0);
            prop_assert!(window.is_open(next.start.0));
            if !status.open {
                prop_assert_eq!(next_change, next.start.0);
            }
        }
        // Anywhere before the next change, the status is the same.
        let gap = next_change.duration_since(t).as_secs_f64();
        let s = t + SignedDuration::from_secs_f64(gap * fraction);
        let s: Timestamp = if s >= next_change { t } else { s };
        let again = window_status(&spec, Some(1), Some(&status), s).status;
        prop_assert_eq!(again, status);
    }
}
