//! A connection's writes gathered across turns of the scheduler, so that the responses of
//! many concurrent requests leave in one TLS record and one `writev` instead of one each.
//!
//! hyper's HTTP/2 server writes and flushes whatever frames are ready each time its connection
//! task runs, and that task is woken (and, by tokio's LIFO slot, run) right after each request
//! handler finishes. When a group commit answers a dozen writers at once, their responses would
//! otherwise leave one by one: a dozen TLS records, a dozen `writev`s, a dozen wake-ups of the
//! client. Go's HTTP/2 server avoids the same cost by flushing only when its write queue is
//! empty. [`Coalesced`] gets there from below: the first flush of a round of writes steps aside
//! for one turn (it wakes its own task and returns `Pending`), the handlers that are already
//! runnable add their frames, and the next flush sends them all — or steps aside once more if
//! that turn brought more, up to [`MAX_TURNS`]. A lone request waits one turn of the scheduler,
//! a few microseconds; nothing waits for a timer.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Writes that would make the buffer larger than this go to the inner stream straight away
/// (after what is buffered), so large bodies are not copied and the buffer stays small.
const WRITE_THROUGH: usize = 64 * 1024;

/// Most scheduler turns one flush steps aside for, while each brings more responses.
const MAX_TURNS: u32 = 4;

/// A stream whose writes are buffered until a flush, and whose flushes wait a turn of the
/// scheduler (more while each turn brings more) before sending (see the module documentation).
#[derive(Debug)]
pub struct Coalesced<T> {
    inner: T,
    buffer: Vec<u8>,
    /// Bytes at the front of `buffer` already handed to `inner`.
    sent: usize,
    /// Turns the flush in progress has stepped aside for so far, and how much was buffered at
    /// the last of them.
    turns: u32,
    buffered_at_turn: usize,
}

impl<T> Coalesced<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Coalesced {
            inner,
            buffer: Vec::new(),
            sent: 0,
            turns: 0,
            buffered_at_turn: 0,
        }
    }

    fn buffered(&self) -> usize {
        self.buffer.len() - self.sent
    }
}

impl<T: AsyncWrite + Unpin> Coalesced<T> {
    /// Hands everything buffered to the inner stream.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.buffer.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buffer[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.buffer.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Coalesced<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesced<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if this.buffered() + total > WRITE_THROUGH {
            ready!(this.drain(cx))?;
            return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        }
        for buf in bufs {
            this.buffer.extend_from_slice(buf);
        }
        Poll::Ready(Ok(total))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let buffered = this.buffered();
        if buffered > 0 {
            // Step aside for a turn, and for another while the last one brought more to send.
            if this.turns == 0 || (this.turns < MAX_TURNS && buffered > this.buffered_at_turn) {
                this.turns += 1;
                this.buffered_at_turn = buffered;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            ready!(this.drain(cx))?;
        }
        this.turns = 0;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::*;

    /// A stream that counts the writes reaching it.
    struct Counting {
        inner: DuplexStream,
        writes: Arc<AtomicUsize>,
    }

    impl AsyncWrite for Counting {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.writes.fetch_add(1, Ordering::Relaxed);
            Pin::new(&mut self.inner).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.inner).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.inner).poll_shutdown(cx)
        }
    }

    fn counted() -> (Coalesced<Counting>, DuplexStream, Arc<AtomicUsize>) {
        let (near, far) = duplex(1 << 20);
        let writes = Arc::new(AtomicUsize::new(0));
        let stream = Coalesced::new(Counting {
            inner: near,
            writes: writes.clone(),
        });
        (stream, far, writes)
    }

    async fn read_exactly(far: &mut DuplexStream, n: usize) -> Vec<u8> {
        let mut got = vec![0; n];
        far.read_exact(&mut got).await.unwrap();
        got
    }

    #[tokio::test]
    async fn writes_wait_for_the_flush_and_leave_together_after_one_turn() {
        let (mut stream, mut far, writes) = counted();
        for part in [&b"one "[..], b"two ", b"three"] {
            stream.write_all(part).await.unwrap();
        }
        assert_eq!(
            writes.load(Ordering::Relaxed),
            0,
            "nothing leaves before a flush"
        );

        // The first poll of the flush steps aside; more writes join before the second.
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut stream).poll_flush(&mut cx).is_pending());
        assert_eq!(writes.load(Ordering::Relaxed), 0);
        stream.write_all(b" four").await.unwrap();
        stream.flush().await.unwrap();

        assert_eq!(
            writes.load(Ordering::Relaxed),
            1,
            "one write carries them all"
        );
        assert_eq!(read_exactly(&mut far, 18).await, b"one two three four");
    }

    #[tokio::test]
    async fn a_flush_steps_aside_again_only_while_more_arrives_and_at_most_max_turns() {
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);

        // Nothing new during the turn: the second poll sends.
        let (mut stream, _far, writes) = counted();
        stream.write_all(b"a").await.unwrap();
        assert!(Pin::new(&mut stream).poll_flush(&mut cx).is_pending());
        assert!(Pin::new(&mut stream).poll_flush(&mut cx).is_ready());
        assert_eq!(writes.load(Ordering::Relaxed), 1);

        // More in every turn: it waits MAX_TURNS turns, then sends everything in one write.
        let (mut stream, mut far, writes) = counted();
        let mut pending = 0;
        loop {
            stream.write_all(b"x").await.unwrap();
            match Pin::new(&mut stream).poll_flush(&mut cx) {
                Poll::Pending => pending += 1,
                Poll::Ready(done) => break done.unwrap(),
            }
        }
        assert_eq!(pending, MAX_TURNS);
        assert_eq!(writes.load(Ordering::Relaxed), 1);
        let sent = MAX_TURNS as usize + 1;
        assert_eq!(read_exactly(&mut far, sent).await, vec![b'x'; sent]);
    }

    #[tokio::test]
    async fn a_flush_with_nothing_buffered_does_not_step_aside() {
        let (mut stream, _far, writes) = counted();
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut stream).poll_flush(&mut cx).is_ready());
        assert_eq!(writes.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn large_writes_pass_through_after_what_is_buffered_in_order() {
        let (mut stream, mut far, _writes) = counted();
        stream.write_all(b"head").await.unwrap();
        let body = vec![7u8; WRITE_THROUGH + 10];
        let reader = tokio::spawn(async move { read_exactly(&mut far, 4 + body.len() + 4).await });
        stream
            .write_all(&vec![7u8; WRITE_THROUGH + 10])
            .await
            .unwrap();
        stream.write_all(b"tail").await.unwrap();
        stream.flush().await.unwrap();
        let got = reader.await.unwrap();
        assert_eq!(&got[..4], b"head");
        assert!(got[4..4 + WRITE_THROUGH + 10].iter().all(|b| *b == 7));
        assert_eq!(&got[got.len() - 4..], b"tail");
        assert!(
            stream.buffer.capacity() <= WRITE_THROUGH,
            "large bodies are not copied"
        );
    }

    #[tokio::test]
    async fn shutdown_sends_what_is_buffered() {
        let (mut stream, mut far, _writes) = counted();
        stream.write_all(b"last words").await.unwrap();
        stream.shutdown().await.unwrap();
        let mut got = Vec::new();
        far.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"last words");
    }
}
