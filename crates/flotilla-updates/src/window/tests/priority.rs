//! Ordering members by window.

use jiff::SignedDuration;
use serde_json::json;

use super::{ts, window};
use crate::run::WindowFacts;
use crate::window::WindowPriority;

#[test]
fn members_are_classified_by_how_soon_their_window_opens() {
    // Opens 2026-11-28T22:00Z (a Saturday) for 6 hours.
    let window = window(json!({
        "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
        "durationHours": 6, "startTime": "22:00",
    }));
    let opening = ts("2026-11-28T22:00:00Z");
    let before = |hours: i64, mins: i64| {
        opening - SignedDuration::from_hours(hours) - SignedDuration::from_mins(mins)
    };
    let cases = [
        (opening, WindowPriority::OpenNow),
        (ts("2026-11-29T03:59:59Z"), WindowPriority::OpenNow),
        (ts("2026-11-29T04:00:00Z"), WindowPriority::Closed),
        (before(0, 1), WindowPriority::OpensSoon),
        (before(3, 59), WindowPriority::OpensSoon),
        (before(4, 0), WindowPriority::OpensSoon),
        (before(4, 1), WindowPriority::Closed),
        (before(72, 0), WindowPriority::Closed),
    ];
    for (at, expected) in cases {
        assert_eq!(
            WindowFacts::of(Some(&window), at).priority(at),
            expected,
            "at {at}"
        );
    }
    assert_eq!(
        WindowFacts::of(None, opening).priority(opening),
        WindowPriority::NoWindow
    );
}

#[test]
fn priorities_sort_open_then_soon_then_no_window_then_closed() {
    let mut priorities = vec![
        WindowPriority::Closed,
        WindowPriority::NoWindow,
        WindowPriority::OpensSoon,
        WindowPriority::OpenNow,
    ];
    priorities.sort();
    assert_eq!(
        priorities,
        [
            WindowPriority::OpenNow,
            WindowPriority::OpensSoon,
            WindowPriority::NoWindow,
            WindowPriority::Closed,
        ]
    );
}
