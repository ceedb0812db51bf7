//! Why a schedule does not parse, worded for the user who wrote it (the text follows
//! `spec.disruption.budgets[2].schedule: Invalid value: "…": `).

/// One of the five fields of a schedule, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CronField {
    /// Minutes, 0–59.
    Minute,
    /// Hours, 0–23.
    Hour,
    /// Days of the month, 1–31.
    DayOfMonth,
    /// Months, 1–12 or `JAN`–`DEC`.
    Month,
    /// Days of the week, 0–6 (Sunday is 0) or `SUN`–`SAT`.
    DayOfWeek,
}

impl CronField {
    /// The field's name in messages ("day of month").
    pub fn name(self) -> &'static str {
        match self {
            Self::Minute => "minute",
            Self::Hour => "hour",
            Self::DayOfMonth => "day of month",
            Self::Month => "month",
            Self::DayOfWeek => "day of week",
        }
    }

    /// The smallest and largest values the field allows.
    pub fn bounds(self) -> (u32, u32) {
        match self {
            Self::Minute => (0, 59),
            Self::Hour => (0, 23),
            Self::DayOfMonth => (1, 31),
            Self::Month => (1, 12),
            Self::DayOfWeek => (0, 6),
        }
    }

    /// The names the field accepts in place of numbers (lowercase), the first naming the
    /// field's minimum value.
    pub(super) fn names(self) -> &'static [&'static str] {
        match self {
            Self::Month => &[
                "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
            ],
            Self::DayOfWeek => &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
            Self::Minute | Self::Hour | Self::DayOfMonth => &[],
        }
    }
}

impl std::fmt::Display for CronField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with one item of a field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    /// An item between commas is empty (`1,,2`).
    #[error("empty list item")]
    EmptyItem,
    /// A range or step is missing a number (`-5`, `1-`, `*/`).
    #[error("missing a number")]
    MissingNumber,
    /// A value is neither a number nor one of the field's names.
    #[error("{text:?} is not {expected}")]
    NotAValue {
        /// The text in place of the value.
        text: String,
        /// What the field accepts ("a number", "a number or a name such as MON").
        expected: &'static str,
    },
    /// A number has too many digits to be a value or a step of any field.
    #[error("{text} is far too large")]
    TooLarge {
        /// The number as written.
        text: String,
    },
    /// A value is below the field's minimum.
    #[error("{value} is below the minimum {min}")]
    BelowMinimum {
        /// The value.
        value: u32,
        /// The field's minimum.
        min: u32,
    },
    /// A value is above the field's maximum.
    #[error("{value} is above the maximum {max}")]
    AboveMaximum {
        /// The value.
        value: u32,
        /// The field's maximum.
        max: u32,
    },
    /// A range ends before it starts (`5-1`).
    #[error("the range starts at {start}, after its end {end}")]
    ReversedRange {
        /// The first value.
        start: u32,
        /// The last value.
        end: u32,
    },
    /// A step is zero (`*/0`).
    #[error("the step must be a positive number")]
    ZeroStep,
    /// An item has more than one `-` (`1-2-3`).
    #[error("too many hyphens")]
    TooManyHyphens,
    /// An item has more than one `/` (`*/2/3`).
    #[error("too many slashes")]
    TooManySlashes,
}

/// Why a schedule does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    /// The schedule is empty or blank.
    #[error(
        "empty schedule: expected 5 fields (minute hour day-of-month month day-of-week) or a macro such as @daily"
    )]
    Empty,
    /// The schedule does not have exactly five fields.
    #[error("expected 5 fields (minute hour day-of-month month day-of-week), found {found}")]
    FieldCount {
        /// How many whitespace-separated fields there are.
        found: usize,
    },
    /// The schedule starts with `@` but is not a known macro.
    #[error(
        "unknown macro {text} (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)"
    )]
    UnknownMacro {
        /// The macro as written.
        text: String,
    },
    /// The schedule is `@every <duration>`, which is not a calendar schedule.
    #[error(
        "{text} is not supported: a schedule must name calendar times (5 fields or a macro such as @hourly)"
    )]
    Every {
        /// The schedule as written.
        text: String,
    },
    /// The schedule starts with a `TZ=` or `CRON_TZ=` time zone.
    #[error("time zone prefix {prefix} is not allowed: schedules are evaluated in UTC")]
    TimeZonePrefix {
        /// The prefix as written (`TZ=Europe/Paris`).
        prefix: String,
    },
    /// One item of one field is invalid.
    #[error("{field} {item:?}: {problem}")]
    Field {
        /// The field.
        field: CronField,
        /// The item (between commas) as written.
        item: String,
        /// What is wrong with it.
        problem: FieldProblem,
    },
}
