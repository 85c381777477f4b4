//! One side of the traffic: a connection and the bytes read from it that
//! no message has used yet. Nothing is held while a connection is quiet: a
//! read waits with no buffer and gets one only when bytes arrive (an idle
//! kept-alive client or an open stream with nothing to say costs its
//! socket and a few words, not a buffer). A first read lands on the stack
//! and a small one is kept in a buffer of its own size, so the copies an
//! observer holds pin only what they show. Writes have a deadline: a peer
//! that stops reading is cut, and counted, once a write has waited
//! [`WriteDeadline::after`] without progress.

use crate::event::Cut;
use crate::http1::head::{Head, Parsed};
use crate::stats::TapStats;
use bytes::{Bytes, BytesMut};
use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes asked for per read.
const READ_SIZE: usize = 16 * 1024;
/// Bytes of a first read, on the stack: what most messages fit in.
const FIRST_READ: usize = 4 * 1024;
/// Pieces of a write gathered on the stack (a relay's write rarely has
/// more than a few; Linux takes up to 1,024 in one call).
const INLINE_SLICES: usize = 16;

pub(crate) struct Peer<S> {
    pub(crate) io: S,
    buf: BytesMut,
    write_deadline: Option<WriteDeadline>,
}

/// How long one write may wait for a peer to take any of its bytes, and
/// where a cut is counted (which side stopped reading).
#[derive(Debug, Clone)]
pub(crate) struct WriteDeadline {
    pub(crate) after: Duration,
    pub(crate) stats: Arc<TapStats>,
    pub(crate) cut: Cut,
}

/// What reading a head found.
#[derive(Debug)]
pub(crate) enum HeadRead<T> {
    Head(T),
    /// The connection ended before any byte of a head.
    Closed,
    /// It ended in the middle of one, or failed.
    Broken,
    Invalid,
    TooLarge,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Peer<S> {
    pub(crate) fn new(io: S) -> Peer<S> {
        Peer {
            io,
            buf: BytesMut::new(),
            write_deadline: None,
        }
    }

    /// Writes to this peer are cut past `deadline`.
    pub(crate) fn with_write_deadline(mut self, deadline: WriteDeadline) -> Peer<S> {
        self.write_deadline = Some(deadline);
        self
    }

    /// Bytes read and not yet used.
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// The first `n` buffered bytes, taken (shared, not copied).
    pub(crate) fn take(&mut self, n: usize) -> Bytes {
        if n >= self.buf.len() {
            // All of it: the buffer itself becomes the bytes (no split, and
            // the allocation goes with them).
            return std::mem::take(&mut self.buf).freeze();
        }
        self.buf.split_to(n).freeze()
    }

    /// Read more; `Ok(0)` at the end of the connection.
    pub(crate) async fn fill(&mut self) -> io::Result<usize> {
        poll_fn(|cx| self.poll_fill(cx)).await
    }

    pub(crate) fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if !self.buf.is_empty() {
            if self.buf.capacity() - self.buf.len() < READ_SIZE / 2 {
                self.buf.reserve(READ_SIZE);
            }
            return read_into(&mut self.io, &mut self.buf, cx);
        }
        // Nothing kept: read onto the stack first, so a read that waits
        // costs no allocation and a small one gets a buffer of its size.
        let mut first = [MaybeUninit::<u8>::uninit(); FIRST_READ];
        let mut read = ReadBuf::uninit(&mut first);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut read))?;
        let n = read.filled().len();
        if n < FIRST_READ {
            self.buf = BytesMut::from(read.filled());
            return Poll::Ready(Ok(n));
        }
        // More may be there: go on into a buffer of full size.
        let mut buf = BytesMut::with_capacity(READ_SIZE);
        buf.extend_from_slice(read.filled());
        self.buf = buf;
        let more = match read_into(&mut self.io, &mut self.buf, cx) {
            Poll::Ready(Ok(more)) => more,
            // What came is enough for now; an error shows at the next read.
            Poll::Ready(Err(_)) | Poll::Pending => 0,
        };
        Poll::Ready(Ok(n + more))
    }

    /// Read until at least `n` bytes are buffered; an error when the
    /// connection ends first.
    pub(crate) async fn fill_to(&mut self, n: usize) -> io::Result<()> {
        while self.buf.len() < n {
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }

    /// The next head, at most `max` bytes long.
    pub(crate) async fn read_head<T: Head>(&mut self, max: usize) -> HeadRead<T> {
        let mut fresh = self.buf.len();
        loop {
            // A head ends in a line end: bytes without one cannot finish
            // it, so a head sent byte by byte is not parsed again each time.
            let added = &self.buf[self.buf.len() - fresh..];
            if added.contains(&b'\n') {
                match T::layout(&self.buf) {
                    Parsed::Head(layout, len) => {
                        let head = self.take(len);
                        return match T::bind(layout, &head) {
                            Some(head) => HeadRead::Head(head),
                            None => HeadRead::Invalid,
                        };
                    }
                    Parsed::Invalid => return HeadRead::Invalid,
                    Parsed::Partial => {}
                }
            }
            if self.buf.len() >= max {
                return HeadRead::TooLarge;
            }
            fresh = match self.fill().await {
                Ok(0) if self.buf.is_empty() => return HeadRead::Closed,
                Ok(0) | Err(_) => return HeadRead::Broken,
                Ok(n) => n,
            };
        }
    }

    /// Resolves once the peer has closed (or failed); bytes it sends
    /// meanwhile are kept, up to `max` — past that it just waits, and the
    /// peer waits for us.
    pub(crate) async fn closed(&mut self, max: usize) {
        loop {
            if self.buf.len() >= max {
                std::future::pending::<()>().await;
            }
            match self.fill().await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    /// Write every byte of `parts`, in order, in as few writes as the
    /// connection takes; each write within the write deadline.
    pub(crate) async fn write_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        self.write_slices(Slices::gather(parts.iter().copied()))
            .await
    }

    /// Write all of `slices`, as many per system call as the connection
    /// takes, each write within the write deadline; then flush.
    pub(crate) async fn write_slices(&mut self, mut slices: Slices<'_>) -> io::Result<()> {
        let mut rest = slices.as_mut();
        let deadline = self.write_deadline.as_ref();
        while !rest.is_empty() {
            let io = &mut self.io;
            let write = poll_fn(|cx| Pin::new(&mut *io).poll_write_vectored(cx, rest));
            let n = within(deadline, write).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut rest, n);
        }
        let io = &mut self.io;
        within(deadline, poll_fn(|cx| Pin::new(&mut *io).poll_flush(cx))).await
    }

    pub(crate) async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_parts(&[bytes]).await
    }

    /// Whether a quiet connection is still open with nothing to say (an
    /// idle upstream connection worth reusing).
    pub(crate) fn idle_and_open(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        matches!(self.poll_fill(&mut cx), Poll::Pending)
    }

    pub(crate) async fn shutdown(&mut self) {
        let _ = poll_fn(|cx| Pin::new(&mut self.io).poll_shutdown(cx)).await;
    }
}

/// The pieces of one write, gathered for a vectored write: on the stack up
/// to [`INLINE_SLICES`] of them (what a write nearly always has), so a
/// write allocates nothing; more spill over to the heap.
pub(crate) struct Slices<'a> {
    inline: [IoSlice<'a>; INLINE_SLICES],
    len: usize,
    spilled: Vec<IoSlice<'a>>,
}

impl<'a> Slices<'a> {
    /// `parts` in order, empty ones left out.
    pub(crate) fn gather(parts: impl IntoIterator<Item = &'a [u8]>) -> Slices<'a> {
        let mut slices = Slices {
            inline: [IoSlice::new(&[]); INLINE_SLICES],
            len: 0,
            spilled: Vec::new(),
        };
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            if slices.len < INLINE_SLICES {
                slices.inline[slices.len] = IoSlice::new(part);
                slices.len += 1;
            } else {
                if slices.spilled.is_empty() {
                    slices.spilled.extend_from_slice(&slices.inline);
                }
                slices.spilled.push(IoSlice::new(part));
            }
        }
        slices
    }

    fn as_mut(&mut self) -> &mut [IoSlice<'a>] {
        if self.spilled.is_empty() {
            &mut self.inline[..self.len]
        } else {
            &mut self.spilled
        }
    }
}

/// `write` within `deadline`; a cut is counted where the deadline says.
async fn within<T>(
    deadline: Option<&WriteDeadline>,
    write: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    let Some(deadline) = deadline else {
        return write.await;
    };
    match tokio::time::timeout(deadline.after, write).await {
        Ok(done) => done,
        Err(_) => {
            deadline.stats.cut(deadline.cut);
            Err(io::ErrorKind::TimedOut.into())
        }
    }
}

fn read_into<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    let mut read = ReadBuf::uninit(buf.spare_capacity_mut());
    ready!(Pin::new(io).poll_read(cx, &mut read))?;
    let n = read.filled().len();
    // SAFETY: the reader initialised these `n` bytes of the spare
    // capacity, right after the bytes already in `buf`.
    unsafe { buf.set_len(buf.len() + n) };
    Poll::Ready(Ok(n))
}
