//! Properties of window evaluation over random valid windows, checked against a direct model
//! of the documented semantics.

use flotilla_api::updates::maintenance::{
    AbsoluteMonthlySchedule, DailySchedule, DateSpan, MaintenanceWindow, RelativeMonthlySchedule,
    Schedule, WeekIndex, Weekday, WeeklySchedule,
};
use jiff::civil::{self, Date, Time};
use jiff::tz::Offset;
use jiff::{SignedDuration, Span, Timestamp, ToSpan};
use proptest::prelude::*;

use crate::window::Window;

/// The weekdays, in API form.
const WEEKDAYS: [Weekday; 7] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
    Weekday::Saturday,
    Weekday::Sunday,
];

/// The week indexes, in API form.
const WEEK_INDEXES: [WeekIndex; 5] = [
    WeekIndex::First,
    WeekIndex::Second,
    WeekIndex::Third,
    WeekIndex::Fourth,
    WeekIndex::Last,
];

/// A window as generated: the API form and its offset.
#[derive(Clone, Debug)]
pub(super) struct Generated {
    /// The `maintenanceWindow`.
    pub(super) spec: MaintenanceWindow,
    /// Its `utcOffset`.
    pub(super) offset: Offset,
}

fn weekday() -> impl Strategy<Value = Weekday> {
    (0..7usize).prop_map(|i| WEEKDAYS[i])
}

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        (1u32..=7).prop_map(|interval_days| Schedule {
            daily: Some(DailySchedule { interval_days }),
            ..Schedule::default()
        }),
        (1u32..=4, weekday()).prop_map(|(interval_weeks, day_of_week)| Schedule {
            weekly: Some(WeeklySchedule {
                interval_weeks,
                day_of_week
            }),
            ..Schedule::default()
        }),
        (1u32..=6, 1u32..=31).prop_map(|(interval_months, day_of_month)| Schedule {
            absolute_monthly: Some(AbsoluteMonthlySchedule {
                interval_months,
                day_of_month
            }),
            ..Schedule::default()
        }),
        (1u32..=6, weekday(), 0..5usize).prop_map(|(interval_months, day_of_week, week)| {
            Schedule {
                relative_monthly: Some(RelativeMonthlySchedule {
                    interval_months,
                    day_of_week,
                    week_index: WEEK_INDEXES[week],
                }),
                ..Schedule::default()
            }
        }),
    ]
}

/// A date from 2020 to 2029.
fn date() -> impl Strategy<Value = Date> {
    (0i64..3650).prop_map(|days| civil::date(2020, 1, 1) + days.days())
}

/// A valid window with up to `max_spans` `notAllowedDates` spans.
pub(super) fn generated(max_spans: usize) -> impl Strategy<Value = Generated> {
    let spans = prop::collection::vec((date(), 0i64..60), 0..=max_spans);
    (
        schedule(),
        4u32..=24,
        (0i8..24, 0i8..60),
        -840i32..=840,
        prop::option::of(date()),
        spans,
    )
        .prop_map(
            |(schedule, duration_hours, (hour, minute), minutes, start, spans)| {
                let sign = if minutes < 0 { '-' } else { '+' };
                let abs = minutes.abs();
                Generated {
                    spec: MaintenanceWindow {
                        schedule,
                        duration_hours,
                        start_time: format!("{hour:02}:{minute:02}"),
                        utc_offset: Some(format!("{sign}{:02}:{:02}", abs / 60, abs % 60)),
                        start_date: start.map(|date| date.to_string()),
                        not_allowed_dates: spans
                            .into_iter()
                            .map(|(start, days)| DateSpan {
                                start: start.to_string(),
                                end: (start + days.days()).to_string(),
                            })
                            .collect(),
                    },
                    offset: Offset::from_seconds(minutes * 60).expect("within ±14:00"),
                }
            },
        )
}

/// An instant from 2019 to 2034.
pub(super) fn instant() -> impl Strategy<Value = Timestamp> {
    (1_546_300_800i64..2_051_222_400)
        .prop_map(|second| Timestamp::from_second(second).expect("in range"))
}

/// The model: whether the documented semantics start an occurrence on local date `day`,
/// ignoring `notAllowedDates`.
fn model_occurs_on(spec: &MaintenanceWindow, day: Date) -> bool {
    let start_date = spec
        .start_date
        .as_deref()
        .map(|text| text.parse::<Date>().expect("a date"));
    if start_date.is_some_and(|first| day < first) {
        return false;
    }
    let anchor = start_date.unwrap_or(civil::date(1970, 1, 1));
    let days = |from: Date, to: Date| to.since(from).expect("days").get_days();
    let monday = |date: Date| date - Span::new().days(date.weekday().to_monday_zero_offset());
    let months = i32::from(day.year()) * 12 + i32::from(day.month())
        - (i32::from(anchor.year()) * 12 + i32::from(anchor.month()));
    let name = |day: Weekday| format!("{day:?}");
    let schedule = &spec.schedule;
    if let Some(daily) = &schedule.daily {
        days(anchor, day) % daily.interval_days as i32 == 0
    } else if let Some(weekly) = &schedule.weekly {
        name(weekly.day_of_week) == format!("{:?}", day.weekday())
            && (days(monday(anchor), monday(day)) / 7) % weekly.interval_weeks as i32 == 0
    } else if let Some(monthly) = &schedule.absolute_monthly {
        months % monthly.interval_months as i32 == 0
            && i32::from(day.day())
                == (monthly.day_of_month as i32).min(i32::from(day.days_in_month()))
    } else if let Some(monthly) = &schedule.relative_monthly {
        let nth = i32::from(day.day() - 1) / 7;
        months % monthly.interval_months as i32 == 0
            && name(monthly.day_of_week) == format!("{:?}", day.weekday())
            && match monthly.week_index {
                WeekIndex::First => nth == 0,
                WeekIndex::Second => nth == 1,
                WeekIndex::Third => nth == 2,
                WeekIndex::Fourth => nth == 3,
                WeekIndex::Last => day.day() + 7 > day.days_in_month(),
            }
    } else {
        unreachable!("generated schedules set one recurrence")
    }
}

/// Whether local date `day` is in one of the window's `notAllowedDates` spans.
fn model_blocked(spec: &MaintenanceWindow, day: Date) -> bool {
    spec.not_allowed_dates.iter().any(|span| {
        span.start.parse::<Date>().expect("a date") <= day
            && day <= span.end.parse::<Date>().expect("a date")
    })
}

/// The window's `startTime`.
fn start_time(spec: &MaintenanceWindow) -> Time {
    spec.start_time.parse().expect("a time")
}

/// The window's length.
fn duration(spec: &MaintenanceWindow) -> SignedDuration {
    SignedDuration::from_hours(spec.duration_hours.into())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Without blocked dates: `next_opening(t)` is a start of the model at or after `t`, opens a
    /// full-length occurrence, and no occurrence starts between `t` and it.
    #[test]
    fn next_opening_is_the_first_start_at_or_after(generated in generated(0), t in instant()) {
        let Generated { spec, offset } = generated;
        let window = Window::parse(&spec).expect("a valid window");
        let start = window.next_opening(t).expect("a valid schedule opens again");
        prop_assert!(start >= t);
        let local = offset.to_datetime(start);
        prop_assert_eq!(local.time(), start_time(&spec));
        prop_assert!(model_occurs_on(&spec, local.date()), "starts on {}", local.date());
        prop_assert_eq!(window.occurrence_at(start), Some((start, start + duration(&spec))));
        // Every occurrence lasts at least 4 hours, so one starting in [t, start) would contain
        // an instant of this 4-hour grid.
        let mut at = t;
        if let Some(first) = spec.start_date.as_deref() {
            let first: Date = first.parse().expect("a date");
            let before = offset.to_timestamp(first.yesterday().expect("a date").to_datetime(Time::midnight())).expect("in range");
            at = at.max(before);
        }
        while at < start {
            if let Some((open, _)) = window.occurrence_at(at) {
                prop_assert!(open < t, "{} opens between {} and {}", open, t, start);
            }
            at += SignedDuration::from_hours(4);
        }
    }

    /// The window opens exactly on the model's days, at `startTime`, for `durationHours`.
    #[test]
    fn occurrences_start_on_the_model_days(generated in generated(0), day in date(), later in 0i64..1500) {
        let Generated { spec, offset } = generated;
        let window = Window::parse(&spec).expect("a valid window");
        let day = day + later.days();
        let start = offset.to_timestamp(day.to_datetime(start_time(&spec))).expect("in range");
        if model_occurs_on(&spec, day) {
            prop_assert_eq!(window.next_opening(start), Some(start));
            prop_assert_eq!(window.occurrence_at(start), Some((start, start + duration(&spec))));
        } else {
            prop_assert_ne!(window.next_opening(start), Some(start));
            prop_assert!(window.occurrence_at(start).is_none_or(|(open, _)| open < start));
        }
    }

    /// With blocked dates: the window is never open on a blocked local date, its occurrences
    /// contain the instant and last at most `durationHours`, and it next opens on an allowed
    /// model day.
    #[test]
    fn blocked_dates_keep_the_window_closed(generated in generated(3), t in instant()) {
        let Generated { spec, offset } = generated;
        let window = Window::parse(&spec).expect("a valid window");
        let occurrence = window.occurrence_at(t);
        prop_assert_eq!(window.is_open(t), occurrence.is_some());
        if let Some((open, close)) = occurrence {
            prop_assert!(!model_blocked(&spec, offset.to_datetime(t).date()));
            prop_assert!(open <= t && t < close);
            prop_assert!(close.duration_since(open) <= duration(&spec));
            prop_assert!(model_occurs_on(&spec, offset.to_datetime(open).date()));
            prop_assert!(!model_blocked(&spec, offset.to_datetime(open).date()));
        }
        if let Some(start) = window.next_opening(t) {
            prop_assert!(start >= t);
            let day = offset.to_datetime(start).date();
            prop_assert!(model_occurs_on(&spec, day) && !model_blocked(&spec, day));
            prop_assert!(window.is_open(start));
        }
    }
}
