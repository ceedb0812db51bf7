//! Injected time, so controllers and tests never read the wall clock directly.

use jiff::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// RFC 3339 with second precision, as Kubernetes serializes `metav1.Time`.
pub fn rfc3339(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A clock that runs `speed` times faster than real time from the moment it is created
/// (`flotilla up --clock-speed N`), so maintenance windows and waits play out quickly.
#[derive(Debug, Clone, Copy)]
pub struct ScaledClock {
    origin: Timestamp,
    started: std::time::Instant,
    speed: f64,
}

impl ScaledClock {
    /// A clock starting at the current wall time, advancing `speed`× real time.
    pub fn new(speed: f64) -> Self {
        Self {
            origin: Timestamp::now(),
            started: std::time::Instant::now(),
            speed,
        }
    }
}

impl Clock for ScaledClock {
    fn now(&self) -> Timestamp {
        let elapsed = self.started.elapsed().as_secs_f64() * self.speed;
        let nanos = (elapsed * 1e9) as i128;
        self.origin
            .checked_add(jiff::SignedDuration::from_nanos_i128(nanos))
            .unwrap_or(self.origin)
    }
}
