//! A body from one side to the other as it arrives: each read is cut by
//! the body's framing into data (and trailers), passed through the legacy
//! `endpoint` watch when there is one, copied for the observer, and written
//! before the next read — one read in flight, so a side that stops reading
//! stops the other. Chunked bodies are decoded and coded again (chunk
//! boundaries are the connection's; the data is unchanged; extensions and
//! trailers are dropped: only bytes the tap framed itself go out). A body
//! read off a client has a deadline ([`BodyDeadline`]).

use crate::copy::Copier;
use crate::event::TapEvent;
use crate::exchange_tee::Exchange;
use crate::http1::framing::{BadChunk, Chunked, Framing};
use crate::legacy::{EndpointWatch, Released};
use crate::merge::ChangeWatch;
use crate::peer::{Peer, Slices};
use bytes::Bytes;
use std::ops::Range;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};

/// Bytes of a body that buy one more second past its deadline's base: a
/// large body sent at a fair rate is never cut, a trickle always is.
pub(crate) const BODY_BYTES_PER_SECOND: u64 = 64 * 1024;

/// When a body read off a peer must have come by: `base` after `from`,
/// and one second more per [`BODY_BYTES_PER_SECOND`] received.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyDeadline {
    pub(crate) from: tokio::time::Instant,
    pub(crate) base: Duration,
}

impl BodyDeadline {
    pub(crate) fn at(&self, received: u64) -> tokio::time::Instant {
        // Both at most a day (the base is checked with the settings): the
        // sum cannot overflow the clock.
        let more = Duration::from_secs((received / BODY_BYTES_PER_SECOND).min(86_400));
        self.from + self.base.min(Duration::from_secs(86_400)) + more
    }
}

/// Reads one body off a peer, as its framing delimits it.
pub(crate) struct BodyReader {
    framing: Framing,
    /// Bytes left of a body of known length.
    left: u64,
    chunked: Chunked,
    done: bool,
    data: Vec<Range<usize>>,
    /// Bytes of the body read so far (framing included).
    received: u64,
    deadline: Option<BodyDeadline>,
}

impl BodyReader {
    pub(crate) fn new(framing: Framing) -> BodyReader {
        let left = match framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        BodyReader {
            framing,
            left,
            chunked: Chunked::new(),
            done: matches!(framing, Framing::None | Framing::Length(0)),
            data: Vec::new(),
            received: 0,
            deadline: None,
        }
    }

    /// The body must come within `deadline`.
    pub(crate) fn within(mut self, deadline: BodyDeadline) -> BodyReader {
        self.deadline = Some(deadline);
        self
    }

    /// Take what `src` holds of this body: its data.
    fn drain<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        src: &mut Peer<S>,
        out: &mut Vec<Bytes>,
    ) -> Result<(), BadChunk> {
        let held = src.buffered().len();
        if self.done || held == 0 {
            return Ok(());
        }
        let taken = match self.framing {
            Framing::None => {
                self.done = true;
                0
            }
            Framing::Length(_) => {
                let n = held.min(usize::try_from(self.left).unwrap_or(usize::MAX));
                out.push(src.take(n));
                self.left -= n as u64;
                self.done = self.left == 0;
                n
            }
            Framing::UntilClose => {
                out.push(src.take(held));
                held
            }
            Framing::Chunked => {
                let data = &mut self.data;
                let progress = self.chunked.feed(src.buffered(), |r| data.push(r))?;
                let taken = src.take(progress.consumed);
                out.extend(self.data.drain(..).map(|r| taken.slice(r)));
                self.done = progress.done;
                progress.consumed
            }
        };
        self.received += taken as u64;
        Ok(())
    }

    /// Read more of the body off `src`, within its deadline if it has one.
    async fn fill<S: AsyncRead + AsyncWrite + Unpin>(&self, src: &mut Peer<S>) -> Filled {
        let read = match self.deadline {
            None => src.fill().await,
            Some(deadline) => {
                match tokio::time::timeout_at(deadline.at(self.received), src.fill()).await {
                    Ok(read) => read,
                    Err(_) => return Filled::Late,
                }
            }
        };
        match read {
            Ok(0) if self.framing == Framing::UntilClose => Filled::End,
            Ok(0) | Err(_) => Filled::Broken,
            Ok(_) => Filled::More,
        }
    }
}

/// What reading more of a body found.
enum Filled {
    More,
    /// The connection ended, and with it a body that lasts until then.
    End,
    /// The connection ended or failed before the body's end.
    Broken,
    /// The body's deadline passed.
    Late,
}

/// How the body goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    /// As the data (a length, or until the connection closes).
    Plain,
    Chunked,
}

/// What happens to a body on its way: copies, the endpoint watch, coding.
pub(crate) struct Sink<'a> {
    pub(crate) exchange: &'a Exchange,
    pub(crate) copier: Copier,
    pub(crate) watch: Option<Box<EndpointWatch>>,
    /// Merged answers of this session, made stale by a `list_changed`.
    pub(crate) changes: Option<ChangeWatch<'a>>,
    pub(crate) coding: Coding,
    /// When the first write (the head) was done.
    pub(crate) first_write: Option<Instant>,
}

/// How a relay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RelayEnd {
    Done,
    /// The side sending broke off or ended early.
    SourceBroke,
    /// The sender's chunked coding broke its grammar or a bound.
    SourceBadFraming,
    /// The sender did not send the body within its deadline.
    SourceLate,
    /// The side receiving went away (or stopped reading past its write
    /// deadline).
    SinkGone,
}

/// Write `head` to `dst`, then the body `reader` delimits from `src` —
/// the head together with what is already read of the body, in one write.
/// With `watch_dst` the receiving side is watched for closing while the
/// sender is quiet (a client that leaves an open stream); what it sends
/// meanwhile is kept for later, up to that many bytes.
pub(crate) async fn relay<A, B>(
    src: &mut Peer<A>,
    dst: &mut Peer<B>,
    head: Vec<u8>,
    reader: &mut BodyReader,
    sink: &mut Sink<'_>,
    watch_dst: Option<usize>,
) -> RelayEnd
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let mut parts = Vec::new();
    let mut out = Vec::new();
    let mut head = Some(head);
    let end = loop {
        if reader.drain(src, &mut parts).is_err() {
            break RelayEnd::SourceBadFraming;
        }
        if head.is_some() || !parts.is_empty() || reader.done {
            let written = sink
                .write(
                    dst,
                    head.take().as_deref(),
                    &mut parts,
                    &mut out,
                    reader.done,
                )
                .await;
            if written.is_err() {
                break RelayEnd::SinkGone;
            }
            if reader.done {
                break RelayEnd::Done;
            }
        }
        let read = match watch_dst {
            Some(keep) => tokio::select! {
                read = reader.fill(src) => read,
                () = dst.closed(keep) => break RelayEnd::SinkGone,
            },
            None => reader.fill(src).await,
        };
        match read {
            Filled::More => {}
            Filled::End => reader.done = true,
            Filled::Broken => break RelayEnd::SourceBroke,
            Filled::Late => break RelayEnd::SourceLate,
        }
    };
    sink.copier.finish(sink.exchange, end != RelayEnd::Done);
    end
}

impl Sink<'_> {
    /// Write `head` if given, `parts` (emptied), and the body's end when
    /// `last`, in one vectored write; `out` is where what goes out is
    /// gathered (kept by the caller so its allocation serves every write).
    async fn write<B: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        dst: &mut Peer<B>,
        head: Option<&[u8]>,
        parts: &mut Vec<Bytes>,
        out: &mut Vec<Out>,
        last: bool,
    ) -> std::io::Result<()> {
        out.clear();
        for data in parts.drain(..) {
            for data in self.watched(data).into_iter().flatten() {
                self.copier.data(self.exchange, &data);
                if let Some(changes) = self.changes.as_mut() {
                    changes.see(&data);
                }
                self.code(out, data);
            }
        }
        if last {
            if let Some(held) = self.watch.take().and_then(|mut w| w.flush()) {
                self.copier.data(self.exchange, &held);
                self.code(out, held);
            }
            if self.coding == Coding::Chunked {
                // The last chunk and no trailers: the sender's were read
                // (to find the body's end) and dropped.
                out.push(Out::Data(Bytes::from_static(b"0\r\n\r\n")));
            }
        }
        if head.is_none() && out.is_empty() {
            return Ok(());
        }
        let pieces = Slices::gather(head.into_iter().chain(out.iter().map(Out::bytes)));
        let written = dst.write_slices(pieces).await;
        out.clear();
        written?;
        self.first_write.get_or_insert_with(Instant::now);
        Ok(())
    }

    fn code(&self, out: &mut Vec<Out>, data: Bytes) {
        if data.is_empty() {
            return;
        }
        match self.coding {
            Coding::Plain => out.push(Out::Data(data)),
            Coding::Chunked => {
                out.push(Out::Size(ChunkSize::of(data.len())));
                out.push(Out::Data(data));
                out.push(Out::Data(Bytes::from_static(b"\r\n")));
            }
        }
    }

    /// `data` through the endpoint watch, if one still looks.
    fn watched(&mut self, data: Bytes) -> [Option<Bytes>; 2] {
        let Some(watch) = self.watch.as_mut() else {
            return [Some(data), None];
        };
        let Some(Released { now, then, done }) = watch.push(data) else {
            return [None, None];
        };
        if let Some(found) = done {
            self.watch = None;
            if let Some(session) = found.session {
                if let Some(changes) = self.changes.as_mut() {
                    changes.session(Bytes::copy_from_slice(session.as_bytes()));
                }
                self.exchange.offer(TapEvent::LegacySession {
                    exchange: self.exchange.id,
                    session,
                });
            }
        }
        [Some(now), then]
    }
}

/// One piece of a write: data (shared with what was read, or static), or
/// a chunk's size line, formatted in place.
enum Out {
    Data(Bytes),
    Size(ChunkSize),
}

impl Out {
    fn bytes(&self) -> &[u8] {
        match self {
            Out::Data(data) => data,
            Out::Size(size) => size.line(),
        }
    }
}

/// A chunk's size line: its length in hex and CRLF (at most 16 digits).
struct ChunkSize {
    line: [u8; 18],
    len: u8,
}

impl ChunkSize {
    fn of(n: usize) -> ChunkSize {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [0u8; 16];
        let mut at = digits.len();
        let mut rest = n;
        loop {
            at -= 1;
            digits[at] = HEX[rest & 0xf];
            rest >>= 4;
            if rest == 0 {
                break;
            }
        }
        let mut line = [0u8; 18];
        let count = digits.len() - at;
        line[..count].copy_from_slice(&digits[at..]);
        line[count..count + 2].copy_from_slice(b"\r\n");
        ChunkSize {
            line,
            // At most 18.
            len: (count + 2) as u8,
        }
    }

    fn line(&self) -> &[u8] {
        &self.line[..usize::from(self.len)]
    }
}

/// Why a body could not be read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Longer than the bound.
    TooLarge,
    /// Broken off.
    Broken,
    /// Its chunked coding broke the grammar or a bound.
    BadFraming,
    /// Not all there by its deadline.
    Late,
}

/// Read the body `reader` delimits from `src` into one buffer of at most
/// `max` bytes, or until `enough` says what was read suffices (then the
/// rest stays unread). The flag: the body was read to its end.
pub(crate) async fn read_whole<S: AsyncRead + AsyncWrite + Unpin>(
    src: &mut Peer<S>,
    reader: &mut BodyReader,
    max: usize,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Result<(Bytes, bool), Unread> {
    let mut body = bytes::BytesMut::new();
    let mut parts = Vec::new();
    loop {
        reader
            .drain(src, &mut parts)
            .map_err(|_| Unread::BadFraming)?;
        for data in parts.drain(..) {
            if body.len() + data.len() > max {
                return Err(Unread::TooLarge);
            }
            body.extend_from_slice(&data);
            if enough(&data) {
                return Ok((body.freeze(), reader.done));
            }
        }
        if reader.done {
            return Ok((body.freeze(), true));
        }
        match reader.fill(src).await {
            Filled::More => {}
            Filled::End => reader.done = true,
            Filled::Broken => return Err(Unread::Broken),
            Filled::Late => return Err(Unread::Late),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkSize;

    #[test]
    fn a_chunk_size_line_is_its_length_in_hex_and_crlf() {
        for n in [0usize, 1, 9, 10, 15, 16, 255, 4096, 0xdead_beef, usize::MAX] {
            let expected = format!("{n:x}\r\n");
            assert_eq!(ChunkSize::of(n).line(), expected.as_bytes(), "{n}");
        }
    }
}
