//! `maxConcurrency` and `maxAllowedFailures` arithmetic: `"N"` or `"P%"` resolved against the
//! size of a stage or group when the run starts, as AKS Fleet Manager does. Concurrency
//! percentages round down, to at least 1; failure percentages round up (25% of 5 members
//! tolerates 2 failures), and may be 0.

use thiserror::Error;

/// The group-level concurrency default: members one at a time.
pub const GROUP_CONCURRENCY_DEFAULT: u32 = 1;

/// A count as written: a fixed number or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// `N`.
    Fixed(u32),
    /// `P%`, 0 to 100.
    Percent(u32),
}

/// A count that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{value:?} is not a whole number or a percentage between 0% and 100%")]
pub struct CountError {
    /// The text given.
    pub value: String,
}

impl Count {
    /// Parses `"N"` or `"P%"` (no sign, no leading zeros except `0` itself).
    pub fn parse(value: &str) -> Result<Count, CountError> {
        let error = || CountError {
            value: value.to_string(),
        };
        let (digits, percent) = match value.strip_suffix('%') {
            Some(digits) => (digits, true),
            None => (value, false),
        };
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if !canonical {
            return Err(error());
        }
        let n: u32 = digits.parse().map_err(|_| error())?;
        match percent {
            true if n > 100 => Err(error()),
            true => Ok(Count::Percent(n)),
            false => Ok(Count::Fixed(n)),
        }
    }

    /// The count for a segment of `size` members: a percentage rounds down.
    pub fn of(self, size: u32) -> u32 {
        self.rounded(size, 0)
    }

    /// The count for a segment of `size` members: a percentage rounds up.
    pub fn of_rounding_up(self, size: u32) -> u32 {
        self.rounded(size, 99)
    }

    /// The count for `size` members, a percentage's remainder raised by `up` hundredths.
    fn rounded(self, size: u32, up: u64) -> u32 {
        match self {
            Count::Fixed(n) => n,
            // At most 100% of a u32 fits u64 and comes back at most `size`.
            Count::Percent(p) => ((u64::from(size) * u64::from(p) + up) / 100) as u32,
        }
    }
}

/// How many members of a segment of `size` may update at once: `value` resolved (at least 1),
/// or `default` when unset.
pub fn concurrency(value: Option<&str>, size: u32, default: u32) -> Result<u32, CountError> {
    match value {
        None => Ok(default),
        Some(value) => Ok(Count::parse(value)?.of(size).max(1)),
    }
}

/// How many failures a segment of `size` members tolerates: `value` resolved (a percentage
/// rounds up), 0 when unset.
pub fn allowed_failures(value: Option<&str>, size: u32) -> Result<u32, CountError> {
    value.map_or(Ok(0), |value| Ok(Count::parse(value)?.of_rounding_up(size)))
}

#[cfg(test)]
mod tests;
