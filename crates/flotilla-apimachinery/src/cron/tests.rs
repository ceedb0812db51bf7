use super::*;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn schedule(text: &str) -> Schedule {
    Schedule::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

// 2024-01-01 is a Monday, so 2024-01-05/06/07/08 are Friday, Saturday, Sunday, Monday; 2024 is
// a leap year and 2023 is not.
#[test]
fn next_after_known_instants() {
    for (text, from, expected) in [
        // Weekdays at 09:00: Friday's firing is not "after" itself; the next is Monday.
        (
            "0 9 * * 1-5",
            "2024-01-05T08:59:59Z",
            "2024-01-05T09:00:00Z",
        ),
        (
            "0 9 * * 1-5",
            "2024-01-05T09:00:00Z",
            "2024-01-08T09:00:00Z",
        ),
        (
            "0 9 * * MON-FRI",
            "2024-01-06T12:00:00Z",
            "2024-01-08T09:00:00Z",
        ),
        (
            "0 9 * * 1-5",
            "2024-01-05T08:59:59.999Z",
            "2024-01-05T09:00:00Z",
        ),
        // Saturday midnight.
        ("0 0 * * 6", "2024-01-01T00:00:00Z", "2024-01-06T00:00:00Z"),
        ("0 0 * * 6", "2024-01-06T00:00:00Z", "2024-01-13T00:00:00Z"),
        (
            "0 0 * * sat",
            "2024-01-05T23:59:00Z",
            "2024-01-06T00:00:00Z",
        ),
        // Macros across day, month and year ends, in leap and common years.
        ("@daily", "2024-02-28T23:59:30Z", "2024-02-29T00:00:00Z"),
        ("@midnight", "2023-02-28T12:00:00Z", "2023-03-01T00:00:00Z"),
        ("@hourly", "2024-12-31T23:00:00Z", "2025-01-01T00:00:00Z"),
        ("@monthly", "2024-01-31T00:00:01Z", "2024-02-01T00:00:00Z"),
        ("@yearly", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"),
        ("@annually", "2023-12-31T23:59:59Z", "2024-01-01T00:00:00Z"),
        ("@weekly", "2024-01-05T12:00:00Z", "2024-01-07T00:00:00Z"),
        // Month ends and leap days.
        ("0 0 29 2 *", "2024-03-01T00:00:00Z", "2028-02-29T00:00:00Z"),
        ("0 0 31 * *", "2024-01-31T00:00:00Z", "2024-03-31T00:00:00Z"),
        (
            "59 23 31 12 *",
            "2024-06-01T00:00:00Z",
            "2024-12-31T23:59:00Z",
        ),
        // Both day fields restricted: either matches (Friday the 5th, then Saturday the 13th).
        ("0 0 13 * 5", "2024-01-01T00:00:00Z", "2024-01-05T00:00:00Z"),
        ("0 0 13 * 5", "2024-01-12T00:00:00Z", "2024-01-13T00:00:00Z"),
        // A stepped `*` is restricted: odd days or Mondays (the 8th is an even Monday).
        (
            "0 0 */2 * 1",
            "2024-01-01T00:00:00Z",
            "2024-01-03T00:00:00Z",
        ),
        (
            "0 0 */2 * 1",
            "2024-01-07T00:00:00Z",
            "2024-01-08T00:00:00Z",
        ),
        // An unrestricted day field (`*`, `?`, `*/1`, or a list with `*`): both must match.
        ("0 0 13 * *", "2024-01-01T00:00:00Z", "2024-01-13T00:00:00Z"),
        (
            "0 0 ? * MON",
            "2024-01-02T00:00:00Z",
            "2024-01-08T00:00:00Z",
        ),
        (
            "0 0 */1 * 1",
            "2024-01-01T00:00:00Z",
            "2024-01-08T00:00:00Z",
        ),
        (
            "0 0 *,1 * 1",
            "2024-01-01T00:00:00Z",
            "2024-01-08T00:00:00Z",
        ),
        ("0 0 13 * ?", "2024-01-13T00:00:00Z", "2024-02-13T00:00:00Z"),
        // Steps, lists, names in any case.
        (
            "*/15 9-17 * * MON-FRI",
            "2024-01-05T17:50:00Z",
            "2024-01-08T09:00:00Z",
        ),
        (
            "*/15 9-17 * * MON-FRI",
            "2024-01-05T17:29:00Z",
            "2024-01-05T17:30:00Z",
        ),
        (
            "5/20 * * * *",
            "2024-01-01T00:45:00Z",
            "2024-01-01T01:05:00Z",
        ),
        (
            "10-50/20 * * * *",
            "2024-01-01T00:31:00Z",
            "2024-01-01T00:50:00Z",
        ),
        (
            "0 12 * JAN,jul Sun",
            "2024-01-31T12:00:00Z",
            "2024-07-07T12:00:00Z",
        ),
        (
            "0 0 1 feb-mar/1 *",
            "2024-02-01T00:00:00Z",
            "2024-03-01T00:00:00Z",
        ),
        (
            "  0   9 * * 1-5  ",
            "2024-01-06T00:00:00Z",
            "2024-01-08T09:00:00Z",
        ),
    ] {
        assert_eq!(
            schedule(text).next_after(at(from)),
            Some(at(expected)),
            "{text} after {from}"
        );
    }
}

#[test]
fn schedules_that_never_fire_within_five_years() {
    for text in ["0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
        assert_eq!(
            schedule(text).next_after(at("2024-01-01T00:00:00Z")),
            None,
            "{text}"
        );
    }
    // The last leap day before 2104 is 2096: eight years later, beyond the search.
    assert_eq!(
        schedule("0 0 29 2 *").next_after(at("2096-03-01T00:00:00Z")),
        None
    );
    assert_eq!(schedule("* * * * *").next_after(Timestamp::MAX), None);
}

#[test]
fn fires_at_whole_matching_minutes_only() {
    let weekdays = schedule("0 9 * * 1-5");
    assert!(weekdays.fires_at(at("2024-01-05T09:00:00Z")));
    assert!(!weekdays.fires_at(at("2024-01-05T09:00:01Z")));
    assert!(!weekdays.fires_at(at("2024-01-05T09:01:00Z")));
    assert!(!weekdays.fires_at(at("2024-01-06T09:00:00Z")));
    let odd_months = schedule("* * * */2 *");
    assert!(odd_months.fires_at(at("2008-07-31T23:59:00Z")));
    assert!(!odd_months.fires_at(at("2008-08-01T00:00:00Z")));
}

#[test]
fn errors_name_the_field_the_text_and_the_reason() {
    for (text, message) in [
        (
            "",
            "empty schedule: expected 5 fields (minute hour day-of-month month day-of-week) or a macro such as @daily",
        ),
        (
            "0 9 * *",
            "expected 5 fields (minute hour day-of-month month day-of-week), found 4",
        ),
        (
            "0 0 9 * * 1-5",
            "expected 5 fields (minute hour day-of-month month day-of-week), found 6",
        ),
        (
            "@fortnightly",
            "unknown macro @fortnightly (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)",
        ),
        (
            "@DAILY",
            "unknown macro @DAILY (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)",
        ),
        (
            "@every 1h",
            "@every 1h is not supported: a schedule must name calendar times (5 fields or a macro such as @hourly)",
        ),
        (
            "TZ=Europe/Paris 0 9 * * 1-5",
            "time zone prefix TZ=Europe/Paris is not allowed: schedules are evaluated in UTC",
        ),
        (
            "CRON_TZ=UTC @daily",
            "time zone prefix CRON_TZ=UTC is not allowed: schedules are evaluated in UTC",
        ),
        ("60 * * * *", "minute \"60\": 60 is above the maximum 59"),
        ("0 24 * * *", "hour \"24\": 24 is above the maximum 23"),
        ("0 0 0 * *", "day of month \"0\": 0 is below the minimum 1"),
        ("0 0 * 0-13 *", "month \"0-13\": 0 is below the minimum 1"),
        (
            "0 9 * * 1-7",
            "day of week \"1-7\": 7 is above the maximum 6",
        ),
        ("0 0 * * 7", "day of week \"7\": 7 is above the maximum 6"),
        ("1,,2 * * * *", "minute \"\": empty list item"),
        (
            "5-1 * * * *",
            "minute \"5-1\": the range starts at 5, after its end 1",
        ),
        (
            "*/0 * * * *",
            "minute \"*/0\": the step must be a positive number",
        ),
        ("1-2-3 * * * *", "minute \"1-2-3\": too many hyphens"),
        ("*/2/3 * * * *", "minute \"*/2/3\": too many slashes"),
        ("*-5 * * * *", "minute \"*-5\": \"*\" is not a number"),
        ("-1 * * * *", "minute \"-1\": missing a number"),
        ("*/ * * * *", "minute \"*/\": missing a number"),
        (
            "99999999999 * * * *",
            "minute \"99999999999\": 99999999999 is far too large",
        ),
        (
            "0 0 * FOO *",
            "month \"FOO\": \"FOO\" is not a number or a month such as JAN",
        ),
        (
            "0 0 * * monday",
            "day of week \"monday\": \"monday\" is not a number or a day such as MON",
        ),
        (
            "0 0 * * 1.5",
            "day of week \"1.5\": \"1.5\" is not a number or a day such as MON",
        ),
    ] {
        assert_eq!(
            Schedule::parse(text).map(|_| ()).map_err(|e| e.to_string()),
            Err(message.to_string()),
            "{text:?}"
        );
    }
}

#[test]
fn macros_equal_their_fields() {
    for (name, fields) in [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 JAN ?"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * SUN"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 ? * *"),
        ("@hourly", "0 * * * *"),
    ] {
        assert_eq!(schedule(name), schedule(fields), "{name}");
    }
}

/// One generated field: its text, the values it allows, and whether it is unrestricted,
/// worked out independently of the parser.
#[derive(Debug, Clone)]
struct FieldCase {
    text: String,
    values: BTreeSet<u32>,
    unrestricted: bool,
}

/// A value of `field` written as a number or, sometimes, as its name in a random case.
fn value_text(field: CronField, value: u32, as_name: bool) -> String {
    let (min, _) = field.bounds();
    match field.names().get((value - min) as usize) {
        Some(name) if as_name => name.to_ascii_uppercase(),
        _ => value.to_string(),
    }
}

/// One item of `field`: `*`/`?`, a value, a range, or a stepped form of those.
fn item_case(field: CronField) -> impl Strategy<Value = FieldCase> {
    let (min, max) = field.bounds();
    let stars: &'static [&'static str] = match field {
        CronField::DayOfMonth | CronField::DayOfWeek => &["*", "?"],
        _ => &["*"],
    };
    let case = |text: String, values: BTreeSet<u32>, unrestricted| FieldCase {
        text,
        values,
        unrestricted,
    };
    prop_oneof![
        prop::sample::select(stars).prop_map(move |star| case(
            star.to_string(),
            (min..=max).collect(),
            true
        )),
        (prop::sample::select(stars), 1..=(max - min + 2)).prop_map(move |(star, step)| case(
            format!("{star}/{step}"),
            (min..=max).step_by(step as usize).collect(),
            step == 1
        )),
        (min..=max, any::<bool>()).prop_map(move |(value, as_name)| case(
            value_text(field, value, as_name),
            BTreeSet::from([value]),
            false
        )),
        (min..=max, min..=max, 1..=7u32, any::<bool>()).prop_map(move |(a, b, step, named)| {
            let (start, end) = (a.min(b), a.max(b));
            let range = format!(
                "{}-{}",
                value_text(field, start, named),
                value_text(field, end, named)
            );
            let text = if step == 1 {
                range
            } else {
                format!("{range}/{step}")
            };
            case(text, (start..=end).step_by(step as usize).collect(), false)
        }),
        (min..=max, 1..=7u32).prop_map(move |(start, step)| case(
            format!("{start}/{step}"),
            (start..=max).step_by(step as usize).collect(),
            false
        )),
    ]
}

/// A field: a list of one to three items.
fn field_case(field: CronField) -> impl Strategy<Value = FieldCase> {
    prop::collection::vec(item_case(field), 1..=3).prop_map(|items| FieldCase {
        text: items
            .iter()
            .map(|item| item.text.as_str())
            .collect::<Vec<_>>()
            .join(","),
        values: items.iter().flat_map(|item| item.values.clone()).collect(),
        unrestricted: items.iter().any(|item| item.unrestricted),
    })
}

/// A generated schedule: its five fields in order.
fn schedule_case() -> impl Strategy<Value = [FieldCase; 5]> {
    (
        field_case(CronField::Minute),
        field_case(CronField::Hour),
        field_case(CronField::DayOfMonth),
        field_case(CronField::Month),
        field_case(CronField::DayOfWeek),
    )
        .prop_map(|(minute, hour, dom, month, dow)| [minute, hour, dom, month, dow])
}

/// Whether `field` allows `value`.
fn has(field: &FieldCase, value: i8) -> bool {
    field.values.contains(&(value as u32))
}

/// Whether the generated schedule fires on `date`, by the definition.
fn brute_day(fields: &[FieldCase; 5], date: Date) -> bool {
    let [_, _, dom, month, dow] = fields;
    let by_month = has(dom, date.day());
    let by_week = has(dow, date.weekday().to_sunday_zero_offset());
    let day = if dom.unrestricted || dow.unrestricted {
        by_month && by_week
    } else {
        by_month || by_week
    };
    day && has(month, date.month())
}

/// Whether the generated schedule fires at the whole minute `time`, by the definition.
fn brute_fires(fields: &[FieldCase; 5], time: jiff::civil::DateTime) -> bool {
    brute_day(fields, time.date()) && has(&fields[1], time.hour()) && has(&fields[0], time.minute())
}

/// The first whole minute strictly after `t` and before `t` plus `days` days at which the
/// generated schedule fires, trying every minute of every firing day.
fn brute_next(fields: &[FieldCase; 5], t: Timestamp, days: i64) -> Option<Timestamp> {
    let start = Offset::UTC.to_datetime(t).date();
    (0..days)
        .filter_map(|n| start.checked_add(jiff::Span::new().days(n)).ok())
        .filter(|date| brute_day(fields, *date))
        .flat_map(|date| (0..24 * 60).map(move |m| date.at((m / 60) as i8, (m % 60) as i8, 0, 0)))
        .filter(|time| brute_fires(fields, *time))
        .map(|time| Offset::UTC.to_timestamp(time).expect("in range"))
        .find(|&time| time > t)
}

proptest! {
    #[test]
    fn next_after_is_the_first_firing_minute_after(
        fields in schedule_case(),
        second in 978_307_200i64..3_786_912_000, // 2001 to 2090
        nanos in prop_oneof![Just(0i32), 0..1_000_000_000i32],
    ) {
        let text = fields.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" ");
        let schedule = Schedule::parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let t = Timestamp::new(second, nanos).expect("in range");
        let next = schedule.next_after(t);
        const DAYS: i64 = 4 * 365;
        match brute_next(&fields, t, DAYS) {
            Some(expected) => prop_assert_eq!(next, Some(expected), "{} after {}", text, t),
            None => if let Some(next) = next {
                prop_assert!(next.duration_since(t) >= SignedDuration::from_hours(24 * (DAYS - 1)), "{} after {}: {}", text, t, next);
                prop_assert!(schedule.fires_at(next));
            },
        }
        if let Some(next) = next {
            prop_assert!(next > t);
            prop_assert!(schedule.fires_at(next));
            prop_assert!(brute_fires(&fields, Offset::UTC.to_datetime(next)));
        }
    }

    #[test]
    fn fires_at_agrees_with_the_definition(
        fields in schedule_case(),
        minute in 16_666_666i64..63_000_000, // whole minutes, 2001 to 2089
    ) {
        let text = fields.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" ");
        let schedule = Schedule::parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let t = Timestamp::from_second(minute * 60).expect("in range");
        prop_assert_eq!(schedule.fires_at(t), brute_fires(&fields, Offset::UTC.to_datetime(t)), "{} at {}", text, t);
    }
}
