//! Whether a connection is doing anything: the requests it has in flight (a response counts
//! until its last byte is sent, so an open watch keeps its connection busy) and since when it
//! has had none. A connection idle for too long, including one that never finished sending a
//! request's headers, is closed, as Go's HTTP server (and so kube-apiserver) closes idle
//! connections.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use http_body::{Frame, SizeHint};
use tokio::sync::watch;
use tokio::time::Instant;

/// One connection's requests in flight, and since when it has had none.
#[derive(Debug, Clone)]
pub struct Activity {
    state: watch::Sender<State>,
}

#[derive(Debug, Clone, Copy)]
struct State {
    in_flight: usize,
    idle_since: Instant,
}

/// One request in flight; dropping it (with its response body) ends the request.
#[derive(Debug)]
pub struct InFlight {
    state: watch::Sender<State>,
}

impl Activity {
    /// A connection that has just opened: idle, with nothing in flight.
    pub fn new() -> Self {
        let (state, _) = watch::channel(State {
            in_flight: 0,
            idle_since: Instant::now(),
        });
        Self { state }
    }

    /// Marks one request as started.
    pub fn begin(&self) -> InFlight {
        self.state.send_modify(|s| s.in_flight += 1);
        InFlight {
            state: self.state.clone(),
        }
    }

    /// Resolves once the connection has had nothing in flight for `limit`.
    pub async fn idle_for(&self, limit: Duration) {
        let mut changes = self.state.subscribe();
        loop {
            let state = *changes.borrow_and_update();
            if state.in_flight > 0 {
                // The sender lives in `self`, so the channel stays open while this runs.
                let _ = changes.changed().await;
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep_until(state.idle_since + limit) => return,
                _ = changes.changed() => {}
            }
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.state.send_modify(|s| {
            s.in_flight -= 1;
            if s.in_flight == 0 {
                s.idle_since = Instant::now();
            }
        });
    }
}

/// A response body that holds its request's [`InFlight`] until it has been sent (or dropped).
/// Its size and end are the inner body's, so `content-length` is kept.
#[derive(Debug)]
pub struct Tracked {
    inner: Body,
    _in_flight: InFlight,
}

impl Tracked {
    /// `inner`, counted as in flight until it is done.
    pub fn new(inner: Body, in_flight: InFlight) -> Self {
        Self {
            inner,
            _in_flight: in_flight,
        }
    }
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_time_counts_only_while_nothing_is_in_flight() {
        let activity = Activity::new();
        let limit = Duration::from_secs(10);
        let request = activity.begin();
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(
            tokio::time::timeout(Duration::from_secs(30), activity.idle_for(limit))
                .await
                .is_err(),
            "a connection with a request in flight is never idle"
        );
        let started = Instant::now();
        drop(request);
        activity.idle_for(limit).await;
        assert_eq!(
            started.elapsed(),
            limit,
            "idle from the moment the request ended"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_request_restarts_the_idle_clock() {
        let activity = Activity::new();
        let limit = Duration::from_secs(10);
        let started = Instant::now();
        let watcher = {
            let activity = activity.clone();
            tokio::spawn(async move { activity.idle_for(limit).await })
        };
        tokio::time::sleep(Duration::from_secs(7)).await;
        drop(activity.begin());
        watcher.await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(17));
    }

    #[tokio::test]
    async fn a_tracked_body_keeps_its_size_and_ends_its_request_when_dropped() {
        let activity = Activity::new();
        let body = Tracked::new(Body::from("twelve bytes"), activity.begin());
        assert_eq!(http_body::Body::size_hint(&body).exact(), Some(12));
        let bytes = http_body_util::BodyExt::collect(body)
            .await
            .unwrap()
            .to_bytes();
        assert_eq!(&bytes[..], b"twelve bytes");
        tokio::time::timeout(Duration::from_secs(5), activity.idle_for(Duration::ZERO))
            .await
            .expect("the request ended with its body");
    }
}
