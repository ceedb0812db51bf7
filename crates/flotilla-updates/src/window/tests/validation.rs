//! What `problems` and `Window::parse` reject, naming the field.

use serde_json::json;

use super::spec;
use crate::window::{Window, problems};

/// A valid window the cases spoil one field of.
fn valid() -> serde_json::Value {
    json!({
        "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
        "durationHours": 6, "startTime": "22:00", "utcOffset": "-08:00",
        "startDate": "2026-01-01",
        "notAllowedDates": [{"start": "2026-12-24", "end": "2026-12-26"}],
    })
}

/// The fields `problems` names for `valid()` with `change` applied.
fn fields(change: impl FnOnce(&mut serde_json::Value)) -> Vec<String> {
    let mut json = valid();
    change(&mut json);
    problems(&spec(json))
        .into_iter()
        .map(|(field, _)| field)
        .collect()
}

#[test]
fn a_valid_window_has_no_problems_and_parses() {
    assert_eq!(fields(|_| {}), Vec::<String>::new());
    assert_eq!(
        fields(|w| {
            w["utcOffset"] = json!("+14:00");
        }),
        Vec::<String>::new()
    );
    assert_eq!(
        fields(|w| {
            w["utcOffset"] = json!("-14:00");
        }),
        Vec::<String>::new()
    );
    let bare = json!({
        "schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "00:00",
    });
    assert!(Window::parse(&spec(bare)).is_ok());
}

#[test]
fn each_problem_names_its_field() {
    type Change = fn(&mut serde_json::Value);
    let cases: Vec<(&str, Change, &[&str])> = vec![
        (
            "offset past +14:00",
            |w| w["utcOffset"] = json!("+15:00"),
            &["utcOffset"],
        ),
        (
            "offset past -14:00",
            |w| w["utcOffset"] = json!("-14:01"),
            &["utcOffset"],
        ),
        (
            "offset without sign",
            |w| w["utcOffset"] = json!("02:00"),
            &["utcOffset"],
        ),
        (
            "offset with bad minutes",
            |w| w["utcOffset"] = json!("+02:60"),
            &["utcOffset"],
        ),
        (
            "two recurrences",
            |w| w["schedule"]["daily"] = json!({"intervalDays": 1}),
            &["schedule"],
        ),
        (
            "no recurrence",
            |w| w["schedule"] = json!({}),
            &["schedule"],
        ),
        (
            "duration too short",
            |w| w["durationHours"] = json!(3),
            &["durationHours"],
        ),
        (
            "duration too long",
            |w| w["durationHours"] = json!(25),
            &["durationHours"],
        ),
        (
            "time 24:00",
            |w| w["startTime"] = json!("24:00"),
            &["startTime"],
        ),
        (
            "time without leading zero",
            |w| w["startTime"] = json!("9:00"),
            &["startTime"],
        ),
        (
            "not a date",
            |w| w["startDate"] = json!("2026-13-01"),
            &["startDate"],
        ),
        (
            "February 30",
            |w| w["startDate"] = json!("2026-02-30"),
            &["startDate"],
        ),
        (
            "date with non-ASCII",
            |w| w["startDate"] = json!("2026-01-0é"),
            &["startDate"],
        ),
        (
            "span ending before it starts",
            |w| w["notAllowedDates"][0]["end"] = json!("2026-12-23"),
            &["notAllowedDates[0].end"],
        ),
        (
            "span with a bad start",
            |w| w["notAllowedDates"][0]["start"] = json!("2026/12/24"),
            &["notAllowedDates[0].start"],
        ),
        (
            "daily interval 0",
            |w| w["schedule"] = json!({"daily": {"intervalDays": 0}}),
            &["schedule.daily.intervalDays"],
        ),
        (
            "daily interval 8",
            |w| w["schedule"] = json!({"daily": {"intervalDays": 8}}),
            &["schedule.daily.intervalDays"],
        ),
        (
            "weekly interval 5",
            |w| w["schedule"]["weekly"]["intervalWeeks"] = json!(5),
            &["schedule.weekly.intervalWeeks"],
        ),
        (
            "absolute monthly out of range",
            |w| w["schedule"] = json!({"absoluteMonthly": {"intervalMonths": 7, "dayOfMonth": 32}}),
            &[
                "schedule.absoluteMonthly.intervalMonths",
                "schedule.absoluteMonthly.dayOfMonth",
            ],
        ),
        (
            "relative monthly interval 0",
            |w| w["schedule"] = json!({"relativeMonthly": {"intervalMonths": 0, "dayOfWeek": "Monday", "weekIndex": "Last"}}),
            &["schedule.relativeMonthly.intervalMonths"],
        ),
    ];
    for (name, change, expected) in cases {
        assert_eq!(fields(change), expected, "{name}");
    }
}

#[test]
fn every_problem_is_listed_in_field_order_and_parse_reports_the_first() {
    let mut json = valid();
    json["schedule"]["daily"] = json!({"intervalDays": 1});
    json["durationHours"] = json!(3);
    json["startTime"] = json!("22:0");
    json["utcOffset"] = json!("+15:00");
    json["startDate"] = json!("2026-1-1");
    json["notAllowedDates"] = json!([
        {"start": "2026-12-24", "end": "2026-12-26"},
        {"start": "2026-12-31", "end": "2026-12-30"},
    ]);
    let window = spec(json);
    let listed = problems(&window);
    let fields: Vec<&str> = listed.iter().map(|(field, _)| field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "schedule",
            "durationHours",
            "startTime",
            "utcOffset",
            "startDate",
            "notAllowedDates[1].end"
        ]
    );
    assert_eq!(listed[3].1, "must be within ±14:00, got \"+15:00\"");
    assert_eq!(listed[5].1, "must not be before start 2026-12-31");
    let error = Window::parse(&window).unwrap_err();
    assert_eq!((error.field, error.message), listed[0].clone());
}
