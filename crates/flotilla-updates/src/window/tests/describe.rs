//! Window summaries.

use serde_json::json;

use super::window;

#[test]
fn summaries_name_the_recurrence_time_length_and_offset() {
    let cases = [
        (
            json!({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}}, "durationHours": 6, "startTime": "22:00", "utcOffset": "-08:00"}),
            "weekly on Saturday 22:00 for 6h, UTC-08:00",
        ),
        (
            json!({"schedule": {"weekly": {"intervalWeeks": 2, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "01:30", "utcOffset": "+05:30", "startDate": "2026-03-04", "notAllowedDates": [{"start": "2026-12-24", "end": "2026-12-26"}]}),
            "every 2 weeks on Monday 01:30 for 4h, UTC+05:30, from 2026-03-04, except 1 date span",
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 24, "startTime": "00:00"}),
            "daily 00:00 for 24h, UTC+00:00",
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 3}}, "durationHours": 8, "startTime": "23:05", "notAllowedDates": [{"start": "2026-12-24", "end": "2026-12-26"}, {"start": "2027-01-01", "end": "2027-01-01"}]}),
            "every 3 days 23:05 for 8h, UTC+00:00, except 2 date spans",
        ),
        (
            json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 31}}, "durationHours": 5, "startTime": "03:00"}),
            "monthly on day 31 03:00 for 5h, UTC+00:00",
        ),
        (
            json!({"schedule": {"relativeMonthly": {"intervalMonths": 3, "dayOfWeek": "Friday", "weekIndex": "Last"}}, "durationHours": 4, "startTime": "18:00", "utcOffset": "-03:30"}),
            "every 3 months on the last Friday 18:00 for 4h, UTC-03:30",
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(window(spec).to_string(), expected);
    }
}
