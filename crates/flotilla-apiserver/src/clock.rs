//! Injected time, so controllers and tests never read the wall clock directly.
//!
//! A [`Clock`] both tells the time and sleeps until a moment *on that clock*: with
//! [`ScaledClock`] simulated minutes pass in real seconds, and with [`ManualClock`] nothing
//! happens until a test advances it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

/// A source of the current time that can also wait for a future moment.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Timestamp;

    /// Resolves once `now() >= deadline` (at once if it already is).
    fn sleep_until(&self, deadline: Timestamp) -> BoxFuture<'static, ()>;
}

/// Extra conveniences over any clock.
pub trait ClockExt: Clock {
    /// Resolves after `d` has passed on this clock.
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        let deadline = self
            .now()
            .checked_add(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
            .unwrap_or(Timestamp::MAX);
        self.sleep_until(deadline)
    }
}

impl<C: Clock + ?Sized> ClockExt for C {}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn sleep_until(&self, deadline: Timestamp) -> BoxFuture<'static, ()> {
        let wait = real_wait(deadline.duration_since(Timestamp::now()), 1.0);
        Box::pin(tokio::time::sleep(wait))
    }
}

/// RFC 3339 with second precision, as Kubernetes serializes `metav1.Time`.
pub fn rfc3339(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// How long to really wait for `simulated` to pass on a clock running `speed`× real time.
fn real_wait(simulated: SignedDuration, speed: f64) -> Duration {
    if simulated.is_negative() || simulated.is_zero() {
        return Duration::ZERO;
    }
    let secs = simulated.as_secs_f64() / speed;
    // Cap at a year so absurd deadlines do not overflow tokio's timer.
    Duration::from_secs_f64(secs.min(365.0 * 86_400.0))
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
            .checked_add(SignedDuration::from_nanos_i128(nanos))
            .unwrap_or(self.origin)
    }

    fn sleep_until(&self, deadline: Timestamp) -> BoxFuture<'static, ()> {
        let wait = real_wait(deadline.duration_since(self.now()), self.speed);
        Box::pin(tokio::time::sleep(wait))
    }
}

/// A clock that moves only when told to: tests set or advance it and every sleeper whose
/// deadline has come wakes up.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
    ticks: watch::Sender<Timestamp>,
}

impl ManualClock {
    /// A manual clock reading `start`.
    pub fn new(start: Timestamp) -> Self {
        let (ticks, _) = watch::channel(start);
        Self {
            now: Arc::new(Mutex::new(start)),
            ticks,
        }
    }

    /// Moves the clock forward by `d` and wakes the sleepers that are due.
    pub fn advance(&self, d: Duration) {
        let next = {
            let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
            *now = now
                .checked_add(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
                .unwrap_or(Timestamp::MAX);
            *now
        };
        self.ticks.send_replace(next);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sleep_until(&self, deadline: Timestamp) -> BoxFuture<'static, ()> {
        let mut ticks = self.ticks.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock; if it is gone, nothing will ever wake us.
            if ticks.wait_for(|now| *now >= deadline).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn manual_clock_wakes_sleepers_only_when_due() {
        let start: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let clock = ManualClock::new(start);
        let mut sleeper = tokio::spawn(clock.sleep(Duration::from_secs(60)));
        clock.advance(Duration::from_secs(59));
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut sleeper)
                .await
                .is_err(),
            "woke before its deadline"
        );
        clock.advance(Duration::from_secs(1));
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("did not wake at its deadline")
            .unwrap();
        assert_eq!(clock.now(), "2026-01-01T00:01:00Z".parse().unwrap());
    }

    #[tokio::test]
    async fn past_deadlines_resolve_at_once() {
        let clock = ManualClock::new(Timestamp::UNIX_EPOCH);
        tokio::time::timeout(
            Duration::from_secs(1),
            clock.sleep_until(Timestamp::UNIX_EPOCH),
        )
        .await
        .unwrap();
        let scaled = ScaledClock::new(1000.0);
        let t = std::time::Instant::now();
        scaled.sleep(Duration::from_secs(10)).await;
        assert!(t.elapsed() < Duration::from_secs(2));
    }
}

/// Items released when their deadline comes *on a clock*: a controller schedules "look at this
/// object again at T" (a heartbeat window running out, a wait ending) and reads the due items
/// from [`Deadlines::new`]'s stream, e.g. into kube-rs' `Controller::reconcile_on`. Real-time
/// requeues would ignore `--clock-speed` and manual test clocks; these do not.
#[derive(Debug)]
pub struct Deadlines<T> {
    tx: tokio::sync::mpsc::UnboundedSender<(Timestamp, T)>,
}

impl<T> Clone for Deadlines<T> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<T: Send + 'static> Deadlines<T> {
    /// A queue on `clock` and the stream of its due items. The queue's task ends when every
    /// `Deadlines` handle and the stream are dropped.
    pub fn new(clock: Arc<dyn Clock>) -> (Self, impl futures::Stream<Item = T> + Send + 'static) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Timestamp, T)>();
        let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut pending: std::collections::BTreeMap<(Timestamp, u64), T> = Default::default();
            let mut seq = 0u64;
            loop {
                let next = pending.keys().next().map(|(at, _)| *at);
                let due = async {
                    match next {
                        Some(at) => clock.sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    item = rx.recv() => match item {
                        Some((at, item)) => {
                            seq += 1;
                            pending.insert((at, seq), item);
                        }
                        None => return,
                    },
                    () = due => {
                        let now = clock.now();
                        while let Some(entry) = pending.first_entry() {
                            if entry.key().0 > now {
                                break;
                            }
                            if out_tx.send(entry.remove()).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        (
            Self { tx },
            tokio_stream::wrappers::UnboundedReceiverStream::new(out_rx),
        )
    }

    /// Releases `item` once the clock reaches `at` (at once if it already has).
    pub fn schedule(&self, at: Timestamp, item: T) {
        // The task only stops when the stream is gone, and then nobody is listening anyway.
        let _ = self.tx.send((at, item));
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn items_come_out_in_deadline_order_when_due() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let clock = ManualClock::new(t0);
        let (queue, stream) = Deadlines::new(Arc::new(clock.clone()));
        let mut stream = Box::pin(stream);
        let at = |s: i64| t0.checked_add(SignedDuration::from_secs(s)).unwrap();
        queue.schedule(at(20), "b");
        queue.schedule(at(10), "a");
        queue.schedule(at(30), "c");
        macro_rules! next {
            ($s:expr) => {
                tokio::time::timeout(Duration::from_millis(200), $s.next())
            };
        }
        assert!(next!(stream).await.is_err(), "released early");
        clock.advance(Duration::from_secs(25));
        assert_eq!(next!(stream).await.unwrap(), Some("a"));
        assert_eq!(next!(stream).await.unwrap(), Some("b"));
        assert!(next!(stream).await.is_err(), "c released early");
        queue.schedule(at(0), "past");
        assert_eq!(next!(stream).await.unwrap(), Some("past"));
    }
}
