//! What the accept loop does when accepting fails (out of file descriptors, most often): wait,
//! longer each time it fails again, and say so once, not once per failure. A loop that retried
//! at once spun a core and wrote a log line per try, gigabytes in a minute.

use std::time::Duration;

/// First wait after a failed accept.
const FIRST: Duration = Duration::from_millis(5);
/// Longest wait between tries.
const LONGEST: Duration = Duration::from_secs(1);

/// The state of a run of failed accepts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AcceptBackoff {
    failures: u64,
    delay: Duration,
}

/// What to do after a failed accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// How long to wait before accepting again.
    pub wait: Duration,
    /// Whether this failure starts a run (so it is the one to log).
    pub first: bool,
}

impl AcceptBackoff {
    /// Records a failed accept: the next wait doubles, up to one second.
    pub fn failed(&mut self) -> Retry {
        self.failures += 1;
        self.delay = if self.failures == 1 {
            FIRST
        } else {
            (self.delay * 2).min(LONGEST)
        };
        Retry {
            wait: self.delay,
            first: self.failures == 1,
        }
    }

    /// Records a successful accept; returns how many failures the run that it ends had
    /// (to log the recovery), or `None` if there was no run.
    pub fn succeeded(&mut self) -> Option<u64> {
        let failures = std::mem::take(&mut self.failures);
        self.delay = Duration::ZERO;
        (failures > 0).then_some(failures)
    }
}

/// Counts events and lets one through per interval: the first of a burst is logged with how
/// many were held back since the last one logged.
#[derive(Debug, Clone)]
pub struct Throttle {
    interval: Duration,
    last: Option<tokio::time::Instant>,
    held_back: u64,
}

impl Throttle {
    /// A throttle letting one event through per `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
            held_back: 0,
        }
    }

    /// An event at `now`: `Some(events held back since the last one let through)` when this
    /// one should be logged.
    pub fn event(&mut self, now: tokio::time::Instant) -> Option<u64> {
        match self.last {
            Some(last) if now < last + self.interval => {
                self.held_back += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.held_back))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_a_second_and_only_the_first_failure_is_logged() {
        let mut backoff = AcceptBackoff::default();
        let retries: Vec<Retry> = (0..12).map(|_| backoff.failed()).collect();
        let waits: Vec<u64> = retries.iter().map(|r| r.wait.as_millis() as u64).collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000]
        );
        assert_eq!(
            retries.iter().filter(|r| r.first).count(),
            1,
            "one log line per run of failures"
        );
        assert!(retries[0].first);
        assert_eq!(backoff.succeeded(), Some(12));
        assert_eq!(backoff.succeeded(), None, "no run, nothing to report");
        let again = backoff.failed();
        assert!(again.first && again.wait == FIRST, "a new run starts over");
    }

    #[test]
    fn a_throttle_lets_one_event_through_per_interval_and_counts_the_rest() {
        let start = tokio::time::Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut throttle = Throttle::new(Duration::from_secs(10));
        let logged: Vec<(u64, Option<u64>)> = [0, 1, 2, 9_999, 10_000, 10_001, 30_000]
            .into_iter()
            .map(|ms| (ms, throttle.event(at(ms))))
            .collect();
        assert_eq!(
            logged,
            [
                (0, Some(0)),
                (1, None),
                (2, None),
                (9_999, None),
                (10_000, Some(3)),
                (10_001, None),
                (30_000, Some(1)),
            ]
        );
    }
}
