//! The timing of leader election (kube's `leaseDuration`, `renewDeadline`, `retryPeriod`),
//! validated so that a leader always stops before another replica may take over.

use std::time::Duration;

/// How long a lease lasts, how long its holder may fail to renew it before it gives up, and
/// how often candidates and the holder try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseConfig {
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
}

/// Why a [`LeaseConfig`] is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigError {
    /// The lease duration is not a positive whole number of seconds (a Lease stores seconds).
    LeaseDuration,
    /// The renew deadline is zero or not shorter than the lease duration: a leader that
    /// failed to renew would still run its controllers after another replica took over.
    RenewDeadline,
    /// The retry period is zero or not shorter than the renew deadline: the leader would not
    /// try to renew before it must give up.
    RetryPeriod,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::LeaseDuration => {
                "--lease-duration must be a positive whole number of seconds (a Lease stores seconds)"
            }
            Self::RenewDeadline => {
                "--renew-deadline must be positive and shorter than --lease-duration"
            }
            Self::RetryPeriod => "--retry-period must be positive and shorter than --renew-deadline",
        })
    }
}

impl std::error::Error for ConfigError {}

impl Default for LeaseConfig {
    /// kube's (and client-go's) defaults: 15 s lease, 10 s renew deadline, 2 s retry period.
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl LeaseConfig {
    /// A validated configuration: the lease lasts whole seconds, and
    /// `0 < retry_period < renew_deadline < lease_duration`.
    pub fn new(
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Result<Self, ConfigError> {
        let whole_seconds = lease_duration.subsec_nanos() == 0
            && (1..=i32::MAX as u64).contains(&lease_duration.as_secs());
        if !whole_seconds {
            return Err(ConfigError::LeaseDuration);
        }
        if renew_deadline.is_zero() || renew_deadline >= lease_duration {
            return Err(ConfigError::RenewDeadline);
        }
        if retry_period.is_zero() || retry_period >= renew_deadline {
            return Err(ConfigError::RetryPeriod);
        }
        Ok(Self {
            lease_duration,
            renew_deadline,
            retry_period,
        })
    }

    /// The lease duration as the Lease's `leaseDurationSeconds`.
    pub fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    /// How long after its last successful renewal a leader keeps leading.
    pub fn renew_deadline(&self) -> Duration {
        self.renew_deadline
    }

    /// How often candidates try to acquire and the leader renews.
    pub fn retry_period(&self) -> Duration {
        self.retry_period
    }
}

/// Parses a duration flag: a number of seconds (`15`, `1.5`) or a number with a unit
/// (`500ms`, `15s`, `2m`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" => 60.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ms, s or m)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 15s, 500ms, 2m)"))?;
    Duration::try_from_secs_f64(value * scale).map_err(|_| format!("{text:?} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// A case: name, lease duration, renew deadline, retry period (seconds), verdict.
    type Case = (&'static str, f64, f64, f64, Result<(), ConfigError>);

    #[test]
    fn validation() {
        let cases: &[Case] = &[
            ("kube's defaults", 15.0, 10.0, 2.0, Ok(())),
            ("short", 3.0, 2.0, 0.5, Ok(())),
            (
                "fractional lease",
                2.5,
                2.0,
                0.5,
                Err(ConfigError::LeaseDuration),
            ),
            ("zero lease", 0.0, 0.0, 0.0, Err(ConfigError::LeaseDuration)),
            (
                "renew = lease",
                10.0,
                10.0,
                2.0,
                Err(ConfigError::RenewDeadline),
            ),
            (
                "renew > lease",
                10.0,
                12.0,
                2.0,
                Err(ConfigError::RenewDeadline),
            ),
            (
                "zero renew",
                10.0,
                0.0,
                0.0,
                Err(ConfigError::RenewDeadline),
            ),
            (
                "retry = renew",
                15.0,
                10.0,
                10.0,
                Err(ConfigError::RetryPeriod),
            ),
            ("zero retry", 15.0, 10.0, 0.0, Err(ConfigError::RetryPeriod)),
        ];
        for (name, lease, renew, retry, expected) in cases {
            let got = LeaseConfig::new(secs(*lease), secs(*renew), secs(*retry)).map(|_| ());
            assert_eq!(&got, expected, "{name}");
        }
        let defaults = LeaseConfig::default();
        assert_eq!(
            LeaseConfig::new(secs(15.0), secs(10.0), secs(2.0)),
            Ok(defaults)
        );
        assert_eq!(defaults.lease_duration_seconds(), 15);
    }

    #[test]
    fn durations() {
        let cases: &[(&str, Option<f64>)] = &[
            ("15", Some(15.0)),
            ("1.5", Some(1.5)),
            ("15s", Some(15.0)),
            ("500ms", Some(0.5)),
            ("2m", Some(120.0)),
            (" 3s ", Some(3.0)),
            ("", None),
            ("s", None),
            ("3h", None),
            ("-1", None),
            ("1.2.3", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text).ok(), expected.map(secs), "{text:?}");
        }
    }
}
