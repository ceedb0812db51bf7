//! The occurrences every schedule type produces.

use jiff::SignedDuration;
use serde_json::json;

use super::{starts, ts, window};

/// One schedule and the first occurrences it starts from an instant.
struct Case {
    /// What the case shows.
    name: &'static str,
    /// The `maintenanceWindow`.
    window: serde_json::Value,
    /// Where the search starts.
    from: &'static str,
    /// The expected starts, in order.
    starts: &'static [&'static str],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "daily",
            window: json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 6, "startTime": "22:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &[
                "2026-03-01T22:00:00Z",
                "2026-03-02T22:00:00Z",
                "2026-03-03T22:00:00Z",
            ],
        },
        Case {
            name: "every 3 days from startDate, nothing before it",
            window: json!({"schedule": {"daily": {"intervalDays": 3}}, "durationHours": 4, "startTime": "08:00", "startDate": "2026-03-02"}),
            from: "2026-02-01T00:00:00Z",
            starts: &[
                "2026-03-02T08:00:00Z",
                "2026-03-05T08:00:00Z",
                "2026-03-08T08:00:00Z",
            ],
        },
        Case {
            name: "every 7 days anchored at 1970-01-01, a Thursday",
            window: json!({"schedule": {"daily": {"intervalDays": 7}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &[
                "2026-03-05T00:00:00Z",
                "2026-03-12T00:00:00Z",
                "2026-03-19T00:00:00Z",
            ],
        },
        Case {
            name: "weekly Saturday 22:00 at -08:00 is Sunday 06:00Z",
            window: json!({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}}, "durationHours": 6, "startTime": "22:00", "utcOffset": "-08:00"}),
            from: "2026-11-25T00:00:00Z",
            starts: &[
                "2026-11-29T06:00:00Z",
                "2026-12-06T06:00:00Z",
                "2026-12-13T06:00:00Z",
            ],
        },
        Case {
            name: "every 2 weeks from the week of startDate (a Wednesday), its Monday skipped",
            window: json!({"schedule": {"weekly": {"intervalWeeks": 2, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "01:00", "startDate": "2026-03-04"}),
            from: "2026-01-01T00:00:00Z",
            starts: &[
                "2026-03-16T01:00:00Z",
                "2026-03-30T01:00:00Z",
                "2026-04-13T01:00:00Z",
            ],
        },
        Case {
            name: "every 4 weeks from the week of 1970-01-01",
            window: json!({"schedule": {"weekly": {"intervalWeeks": 4, "dayOfWeek": "Tuesday"}}, "durationHours": 4, "startTime": "12:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &[
                "2026-03-10T12:00:00Z",
                "2026-04-07T12:00:00Z",
                "2026-05-05T12:00:00Z",
            ],
        },
        Case {
            name: "every 2 weeks from a week before 1970, across the new year",
            window: json!({"schedule": {"weekly": {"intervalWeeks": 2, "dayOfWeek": "Sunday"}}, "durationHours": 4, "startTime": "00:00", "startDate": "1969-12-01"}),
            from: "1969-11-01T00:00:00Z",
            starts: &[
                "1969-12-07T00:00:00Z",
                "1969-12-21T00:00:00Z",
                "1970-01-04T00:00:00Z",
            ],
        },
        Case {
            name: "weekly Monday 02:00 at +14:00 is Sunday 12:00Z",
            window: json!({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "02:00", "utcOffset": "+14:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-01T12:00:00Z", "2026-03-08T12:00:00Z"],
        },
        Case {
            name: "daily 01:30 at +05:30 is 20:00Z the day before",
            window: json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:30", "utcOffset": "+05:30"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-01T20:00:00Z", "2026-03-02T20:00:00Z"],
        },
        Case {
            name: "day 31 falls on the last day of shorter months (2026 is not a leap year)",
            window: json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 31}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-01-01T00:00:00Z",
            starts: &[
                "2026-01-31T00:00:00Z",
                "2026-02-28T00:00:00Z",
                "2026-03-31T00:00:00Z",
                "2026-04-30T00:00:00Z",
                "2026-05-31T00:00:00Z",
            ],
        },
        Case {
            name: "day 31 in a leap February",
            window: json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 31}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2024-02-01T00:00:00Z",
            starts: &["2024-02-29T00:00:00Z", "2024-03-31T00:00:00Z"],
        },
        Case {
            name: "day 30: February's last day, then the 30th again",
            window: json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 30}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2024-01-31T00:00:00Z",
            starts: &["2024-02-29T00:00:00Z", "2024-03-30T00:00:00Z"],
        },
        Case {
            name: "every 2 months from startDate's month, its day before startDate skipped",
            window: json!({"schedule": {"absoluteMonthly": {"intervalMonths": 2, "dayOfMonth": 10}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-02-15"}),
            from: "2026-01-01T00:00:00Z",
            starts: &[
                "2026-04-10T00:00:00Z",
                "2026-06-10T00:00:00Z",
                "2026-08-10T00:00:00Z",
            ],
        },
        Case {
            name: "every 3 months from January 1970",
            window: json!({"schedule": {"absoluteMonthly": {"intervalMonths": 3, "dayOfMonth": 15}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-02-01T00:00:00Z",
            starts: &[
                "2026-04-15T00:00:00Z",
                "2026-07-15T00:00:00Z",
                "2026-10-15T00:00:00Z",
            ],
        },
        Case {
            name: "last Friday: January 2026 has five, February and March four",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Friday", "weekIndex": "Last"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-01-01T00:00:00Z",
            starts: &[
                "2026-01-30T00:00:00Z",
                "2026-02-27T00:00:00Z",
                "2026-03-27T00:00:00Z",
            ],
        },
        Case {
            name: "first Monday",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Monday", "weekIndex": "First"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-02T00:00:00Z", "2026-04-06T00:00:00Z"],
        },
        Case {
            name: "second Monday",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Monday", "weekIndex": "Second"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-09T00:00:00Z", "2026-04-13T00:00:00Z"],
        },
        Case {
            name: "third Monday",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Monday", "weekIndex": "Third"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-16T00:00:00Z", "2026-04-20T00:00:00Z"],
        },
        Case {
            name: "fourth Monday",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Monday", "weekIndex": "Fourth"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-23T00:00:00Z", "2026-04-27T00:00:00Z"],
        },
        Case {
            name: "last Monday: March 2026 has five, April four",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Monday", "weekIndex": "Last"}}, "durationHours": 4, "startTime": "00:00"}),
            from: "2026-03-01T00:00:00Z",
            starts: &["2026-03-30T00:00:00Z", "2026-04-27T00:00:00Z"],
        },
        Case {
            name: "every 2 months on the second Tuesday from startDate's month, its day before startDate skipped",
            window: json!({"schedule": {"relativeMonthly": {"intervalMonths": 2, "dayOfWeek": "Tuesday", "weekIndex": "Second"}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-01-20"}),
            from: "2025-12-01T00:00:00Z",
            starts: &["2026-03-10T00:00:00Z", "2026-05-12T00:00:00Z"],
        },
    ]
}

#[test]
fn every_schedule_starts_its_occurrences_on_the_expected_days() {
    for case in cases() {
        let window = window(case.window.clone());
        assert_eq!(
            starts(&window, case.from, case.starts.len()),
            case.starts,
            "{}",
            case.name
        );
    }
}

#[test]
fn every_occurrence_lasts_its_duration_and_is_open_from_its_start_to_before_its_end() {
    for case in cases() {
        let hours = case.window["durationHours"].as_i64().expect("hours");
        let window = window(case.window.clone());
        for start in case.starts.iter().map(|start| ts(start)) {
            let end = start + SignedDuration::from_hours(hours);
            let second = SignedDuration::from_secs(1);
            assert_eq!(
                window.occurrence_at(start),
                Some((start, end)),
                "{}",
                case.name
            );
            assert!(
                window.is_open(end - second),
                "{}: open before its end",
                case.name
            );
            assert!(!window.is_open(end), "{}: closed at its end", case.name);
            assert!(
                !window.is_open(start - second),
                "{}: closed before its start",
                case.name
            );
        }
    }
}
