//! Waiting for a condition in tests without sleeping a fixed time: poll until the probe
//! answers, fail naming what was awaited when the deadline passes.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `probe` every 100 ms until it returns `Some`, for at most `secs` seconds; panics
/// naming `what` if it never does.
pub fn eventually<T>(what: &str, secs: u64, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs} s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// [`eventually`] for async probes: polls every 50 ms for at most `secs` seconds.
pub async fn eventually_async<T, F, Fut>(what: &str, secs: u64, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs} s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_first_answer() {
        let mut calls = 0;
        let got = eventually("three calls", 5, || {
            calls += 1;
            (calls == 3).then_some(calls)
        });
        assert_eq!(got, 3);
    }

    #[test]
    #[should_panic(expected = "waiting for never")]
    fn fails_naming_what_it_awaited() {
        eventually::<()>("never", 0, || None);
    }

    #[tokio::test]
    async fn async_probes_are_awaited() {
        let mut calls = 0;
        let got = eventually_async("two calls", 5, || {
            calls += 1;
            let n = calls;
            async move { (n == 2).then_some(n) }
        })
        .await;
        assert_eq!(got, 2);
    }
}
