//! Parsing of the window's text fields — `HH:mm` times, `±HH:mm` offsets and `YYYY-MM-DD`
//! dates — strictly in the API's formats. Errors are messages for a field error.

use std::ops::RangeInclusive;

use jiff::civil::{Date, Time};
use jiff::tz::Offset;

/// The largest UTC offset accepted, in minutes (14:00).
const MAX_OFFSET_MINUTES: i32 = 14 * 60;

/// An `HH:mm` time of day, 00:00 to 23:59.
pub(super) fn time(text: &str) -> Result<Time, String> {
    hours_minutes(text)
        .and_then(|(hours, minutes)| Time::new(hours, minutes, 0, 0).ok())
        .ok_or_else(|| format!("must be a time of day HH:mm (00:00 to 23:59), got {text:?}"))
}

/// A `±HH:mm` offset within ±14:00; `+00:00` when unset.
pub(super) fn offset(text: Option<&str>) -> Result<Offset, String> {
    let Some(text) = text else {
        return Ok(Offset::UTC);
    };
    let malformed = || format!("must be an offset ±HH:mm, got {text:?}");
    let (sign, rest) = if let Some(rest) = text.strip_prefix('+') {
        (1, rest)
    } else if let Some(rest) = text.strip_prefix('-') {
        (-1, rest)
    } else {
        return Err(malformed());
    };
    let (hours, minutes) = hours_minutes(rest)
        .filter(|&(hours, minutes)| hours < 24 && minutes < 60)
        .ok_or_else(malformed)?;
    let minutes = i32::from(hours) * 60 + i32::from(minutes);
    if minutes > MAX_OFFSET_MINUTES {
        return Err(format!("must be within ±14:00, got {text:?}"));
    }
    Offset::from_seconds(sign * minutes * 60).map_err(|e| e.to_string())
}

/// A `YYYY-MM-DD` calendar date.
pub(super) fn date(text: &str) -> Result<Date, String> {
    let parsed = || {
        if text.len() != 10 || text.as_bytes()[4] != b'-' || text.as_bytes()[7] != b'-' {
            return None;
        }
        let year = i16::try_from(number(text.get(..4)?)?).ok()?;
        let month = i8::try_from(number(text.get(5..7)?)?).ok()?;
        let day = i8::try_from(number(text.get(8..)?)?).ok()?;
        Date::new(year, month, day).ok()
    };
    parsed().ok_or_else(|| format!("must be a calendar date YYYY-MM-DD, got {text:?}"))
}

/// A whole number within `range`, as the `i64` the evaluation computes with.
pub(super) fn within(value: u32, range: RangeInclusive<u32>) -> Result<i64, String> {
    if range.contains(&value) {
        Ok(value.into())
    } else {
        Err(format!(
            "must be {} to {}, got {value}",
            range.start(),
            range.end()
        ))
    }
}

/// The two numbers of an `HH:mm` text (each exactly two digits), unchecked in range.
fn hours_minutes(text: &str) -> Option<(i8, i8)> {
    if text.len() != 5 || text.as_bytes()[2] != b':' {
        return None;
    }
    let hours = i8::try_from(number(text.get(..2)?)?).ok()?;
    let minutes = i8::try_from(number(text.get(3..)?)?).ok()?;
    Some((hours, minutes))
}

/// The value of a non-empty text made only of ASCII digits.
fn number(digits: &str) -> Option<u16> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
