//! Schedule text to [`Schedule`]: macros, the five fields, and the items of each field.

use super::{CronError, CronField, FieldProblem, Schedule, ValueSet};

/// The macros robfig's standard parser accepts (matched exactly, as robfig does), and the
/// five fields each stands for.
const MACROS: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// `text` as a schedule.
pub(super) fn schedule(text: &str) -> Result<Schedule, CronError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CronError::Empty);
    }
    if text.starts_with("TZ=") || text.starts_with("CRON_TZ=") {
        let prefix = text.split_whitespace().next().unwrap_or(text);
        return Err(CronError::TimeZonePrefix {
            prefix: prefix.to_string(),
        });
    }
    let fields = if text.starts_with('@') {
        expand_macro(text)?
    } else {
        text
    };
    let fields: Vec<&str> = fields.split_whitespace().collect();
    let [minutes, hours, days_of_month, months, days_of_week] = fields[..] else {
        return Err(CronError::FieldCount {
            found: fields.len(),
        });
    };
    Ok(Schedule {
        minutes: field(CronField::Minute, minutes)?,
        hours: field(CronField::Hour, hours)?,
        days_of_month: field(CronField::DayOfMonth, days_of_month)?,
        months: field(CronField::Month, months)?,
        days_of_week: field(CronField::DayOfWeek, days_of_week)?,
    })
}

/// The five fields a macro stands for.
fn expand_macro(text: &str) -> Result<&'static str, CronError> {
    if let Some((_, fields)) = MACROS.iter().find(|(name, _)| *name == text) {
        return Ok(fields);
    }
    let text = text.to_string();
    Err(if text.starts_with("@every") {
        CronError::Every { text }
    } else {
        CronError::UnknownMacro { text }
    })
}

/// One field: the union of its comma-separated items; unrestricted if any item is.
fn field(field: CronField, text: &str) -> Result<ValueSet, CronError> {
    text.split(',').try_fold(
        ValueSet {
            bits: 0,
            unrestricted: false,
        },
        |set, text| {
            let item = item(field, text).map_err(|problem| CronError::Field {
                field,
                item: text.to_string(),
                problem,
            })?;
            Ok(ValueSet {
                bits: set.bits | item.bits,
                unrestricted: set.unrestricted || item.unrestricted,
            })
        },
    )
}

/// One item: `*`, `?`, `a` or `a-b`, optionally followed by `/step`. `a/step` runs from `a`
/// to the field's maximum. A `*` or `?` is unrestricted unless its step is above 1.
fn item(field: CronField, text: &str) -> Result<ValueSet, FieldProblem> {
    if text.is_empty() {
        return Err(FieldProblem::EmptyItem);
    }
    let (min, max) = field.bounds();
    let (range, step) = match text.split_once('/') {
        None => (text, None),
        Some((_, step)) if step.contains('/') => return Err(FieldProblem::TooManySlashes),
        Some((range, step)) => (range, Some(number(step)?)),
    };
    let (start, end, star) = if range == "*" || range == "?" {
        (min, max, true)
    } else {
        match range.split_once('-') {
            None => {
                let start = value(field, range)?;
                (start, if step.is_some() { max } else { start }, false)
            }
            Some((_, end)) if end.contains('-') => return Err(FieldProblem::TooManyHyphens),
            Some((start, end)) => (value(field, start)?, value(field, end)?, false),
        }
    };
    if start > end {
        return Err(FieldProblem::ReversedRange { start, end });
    }
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(FieldProblem::ZeroStep);
    }
    let bits = (start..=end)
        .step_by(step as usize)
        .fold(0u64, |bits, value| bits | 1 << value);
    Ok(ValueSet {
        bits,
        unrestricted: star && step == 1,
    })
}

/// A value of `field`: a number within its bounds or one of its names.
fn value(field: CronField, text: &str) -> Result<u32, FieldProblem> {
    let names = field.names();
    let (min, max) = field.bounds();
    if let Some(index) = names
        .iter()
        .position(|name| name.eq_ignore_ascii_case(text))
    {
        return Ok(min + index as u32);
    }
    let value = number(text).map_err(|problem| match problem {
        FieldProblem::NotAValue { text, .. } if !names.is_empty() => FieldProblem::NotAValue {
            text,
            expected: match field {
                CronField::Month => "a number or a month such as JAN",
                _ => "a number or a day such as MON",
            },
        },
        problem => problem,
    })?;
    if value < min {
        return Err(FieldProblem::BelowMinimum { value, min });
    }
    if value > max {
        return Err(FieldProblem::AboveMaximum { value, max });
    }
    Ok(value)
}

/// A non-negative decimal number.
fn number(text: &str) -> Result<u32, FieldProblem> {
    if text.is_empty() {
        return Err(FieldProblem::MissingNumber);
    }
    let not_a_number = || FieldProblem::NotAValue {
        text: text.to_string(),
        expected: "a number",
    };
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_a_number());
    }
    text.parse().map_err(|_| FieldProblem::TooLarge {
        text: text.to_string(),
    })
}
