//! Tests of window evaluation: schedules, boundaries, validation, priority, `ScheduledStart`
//! gates, summaries, configuration status and properties.

mod boundaries;
mod describe;
mod priority;
mod properties;
mod scheduled_start;
mod schedules;
mod status;
mod validation;

use flotilla_api::updates::maintenance::MaintenanceWindow;
use jiff::Timestamp;
use serde_json::Value;

use super::Window;

/// The API window written as JSON (as in a manifest).
fn spec(json: Value) -> MaintenanceWindow {
    serde_json::from_value(json).expect("a maintenanceWindow")
}

/// The evaluated window of a valid JSON window.
fn window(json: Value) -> Window {
    Window::parse(&spec(json)).expect("a valid window")
}

/// An RFC 3339 instant.
fn ts(text: &str) -> Timestamp {
    text.parse().expect("an RFC 3339 instant")
}

/// The starts of the first `count` occurrences starting at or after `from`.
fn starts(window: &Window, from: &str, count: usize) -> Vec<String> {
    let mut from = ts(from);
    (0..count)
        .map(|_| {
            let start = window.next_opening(from).expect("an opening");
            from = start + jiff::SignedDuration::from_secs(1);
            start.to_string()
        })
        .collect()
}
