//! Calling etcd: which failures are worth retrying, and the retry loop.
//!
//! The client is given every endpoint and balances requests over them; a request that lands on
//! a dead member fails at once with a connection error and is retried (on another member, or the
//! same one once it is back). What may be retried depends on the request:
//!
//! - idempotent requests (reads, compactions) are retried on any transient failure until the
//!   store's timeout runs out;
//! - conditional writes are retried only when etcd certainly did not apply them: the connection
//!   was refused (the request never left), or the member had no leader (the client requires one,
//!   so such a member rejects requests before proposing them). A write that fails any other way,
//!   e.g. a connection lost mid-request or `leader changed`, may or may not have been applied; it
//!   is reported as [`crate::StoreError::Backend`] saying so, and the caller decides (re-read and
//!   retry the compare-and-swap, as API clients do on a conflict).

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::time::Instant;
use tonic::Status;

/// How an etcd request failed, as far as the store cares.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The revision asked for is below etcd's compaction point.
    Compacted,
    /// The revision asked for is above etcd's current revision.
    FutureRevision,
    /// Anything else, described for [`crate::StoreError::Backend`].
    Other(String),
}

/// Whether a request may be sent again after a failure whose outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotence {
    /// Reads and compactions: repeating them is harmless.
    Idempotent,
    /// Conditional writes: only retried when etcd certainly did not apply them.
    AtMostOnce,
}

/// Sends a request built by `attempt` until it succeeds, fails in a way retrying cannot help,
/// or `timeout` has passed. `what` names the request in error messages.
pub(crate) async fn call<T, F, Fut>(
    timeout: Duration,
    idempotence: Idempotence,
    what: &str,
    mut attempt: F,
) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let deadline = Instant::now() + timeout;
    let mut backoff = Backoff::new(Duration::from_millis(20), Duration::from_millis(500));
    loop {
        let error = match tokio::time::timeout_at(deadline, attempt()).await {
            Ok(Ok(response)) => return Ok(response),
            Ok(Err(error)) => error,
            Err(_) if idempotence == Idempotence::AtMostOnce => {
                return Err(Failure::Other(format!(
                    "{what}: no answer from etcd within {timeout:?}; the write may or may not \
                     have been applied"
                )));
            }
            Err(_) => {
                return Err(Failure::Other(format!(
                    "{what}: no answer from etcd within {timeout:?}"
                )));
            }
        };
        match classify(&error) {
            Class::Compacted => return Err(Failure::Compacted),
            Class::FutureRevision => return Err(Failure::FutureRevision),
            Class::NotApplied => {}
            Class::Transient if idempotence == Idempotence::Idempotent => {}
            Class::Transient => {
                return Err(Failure::Other(format!(
                    "{what}: {error}; the write may or may not have been applied"
                )));
            }
            Class::Permanent => return Err(Failure::Other(format!("{what}: {error}"))),
        }
        let pause = backoff.next();
        if Instant::now() + pause >= deadline {
            return Err(Failure::Other(format!(
                "{what}: etcd unavailable for {timeout:?}: {error}"
            )));
        }
        tracing::debug!(%error, "{what}: retrying in {pause:?}");
        tokio::time::sleep(pause).await;
    }
}

/// Exponentially growing pauses between attempts.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    first: Duration,
    next: Duration,
    max: Duration,
}

impl Backoff {
    /// Pauses starting at `first`, doubling up to `max`.
    pub(crate) fn new(first: Duration, max: Duration) -> Self {
        Backoff {
            first,
            next: first,
            max,
        }
    }

    /// The next pause.
    pub(crate) fn next(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(self.max);
        pause
    }

    /// Starts over from the first pause (after a success).
    pub(crate) fn reset(&mut self) {
        self.next = self.first;
    }
}

/// What a failure means for retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The revision was compacted.
    Compacted,
    /// The revision is in the future.
    FutureRevision,
    /// etcd did not apply the request: always safe to retry.
    NotApplied,
    /// A transient failure with an unknown outcome: retry only idempotent requests.
    Transient,
    /// Retrying cannot help.
    Permanent,
}

/// gRPC status codes of transient failures: cancelled, unknown, deadline exceeded, resource
/// exhausted, aborted, unavailable.
const TRANSIENT_CODES: [i32; 6] = [1, 2, 4, 8, 10, 14];

/// What a failed call means for retrying. The client reports every failure as a gRPC status:
/// a member it cannot reach as `Unavailable` (transient), with the I/O error as the status's
/// source.
fn classify(status: &Status) -> Class {
    let message = status.message();
    if message.contains("required revision has been compacted") {
        Class::Compacted
    } else if message.contains("required revision is a future revision") {
        Class::FutureRevision
    } else if message.contains("no leader")
        || message.contains("too many requests")
        || connection_refused(status)
    {
        Class::NotApplied
    } else if TRANSIENT_CODES.contains(&(status.code() as i32)) {
        Class::Transient
    } else {
        Class::Permanent
    }
}

/// Whether a gRPC failure was caused by a refused connection (the request was never sent).
fn connection_refused(status: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = status.source();
    while let Some(error) = source {
        if let Some(io) = error.downcast_ref::<io::Error>()
            && io.kind() == io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_resets() {
        let mut backoff = Backoff::new(Duration::from_millis(10), Duration::from_millis(35));
        let pauses: Vec<u128> = (0..4).map(|_| backoff.next().as_millis()).collect();
        assert_eq!(pauses, [10, 20, 35, 35]);
        backoff.reset();
        assert_eq!(backoff.next(), Duration::from_millis(10));
    }

    #[test]
    fn failures_are_classified_by_etcd_message_code_and_cause() {
        let compacted =
            Status::out_of_range("etcdserver: mvcc: required revision has been compacted");
        assert_eq!(classify(&compacted), Class::Compacted);
        let future =
            Status::out_of_range("etcdserver: mvcc: required revision is a future revision");
        assert_eq!(classify(&future), Class::FutureRevision);
        let no_leader = Status::unavailable("etcdserver: no leader");
        assert_eq!(classify(&no_leader), Class::NotApplied);
        // How the client reports a member that refuses connections: the I/O error is the cause.
        let refused =
            Status::from_error(Box::new(io::Error::from(io::ErrorKind::ConnectionRefused)));
        assert_eq!(classify(&refused), Class::NotApplied);
        let lost = Status::from_error(Box::new(io::Error::from(io::ErrorKind::ConnectionReset)));
        assert_eq!(classify(&lost), Class::Transient);
        assert_eq!(
            classify(&Status::unavailable("connection error")),
            Class::Transient
        );
        assert_eq!(
            classify(&Status::invalid_argument("bad key")),
            Class::Permanent
        );
    }
}
