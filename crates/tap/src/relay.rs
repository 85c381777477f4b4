//! A body from one side to the other as it arrives: each read is cut by
//! the body's framing into data (and trailers), passed through the legacy
//! `endpoint` watch when there is one, copied for the observer, and written
//! before the next read — one read in flight, so a side that stops reading
//! stops the other. Chunked bodies are decoded and coded again (chunk
//! boundaries are the connection's; the data is unchanged).

use crate::copy::Copier;
use crate::event::TapEvent;
use crate::exchange::Exchange;
use crate::http1::framing::{BadChunk, Chunked, Framing, Piece};
use crate::legacy::{EndpointWatch, Released};
use crate::merge::ChangeWatch;
use crate::peer::Peer;
use bytes::Bytes;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};

/// Reads one body off a peer, as its framing delimits it.
pub(crate) struct BodyReader {
    framing: Framing,
    /// Bytes left of a body of known length.
    left: u64,
    chunked: Chunked,
    done: bool,
    pieces: Vec<Piece>,
}

/// A part of the body to forward.
enum Part {
    Data(Bytes),
    Trailer(Bytes),
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
            pieces: Vec::new(),
        }
    }

    /// Take what `src` holds of this body.
    fn drain<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        src: &mut Peer<S>,
        out: &mut Vec<Part>,
    ) -> Result<(), BadChunk> {
        let held = src.buffered().len();
        if self.done || held == 0 {
            return Ok(());
        }
        match self.framing {
            Framing::None => self.done = true,
            Framing::Length(_) => {
                let n = held.min(usize::try_from(self.left).unwrap_or(usize::MAX));
                out.push(Part::Data(src.take(n)));
                self.left -= n as u64;
                self.done = self.left == 0;
            }
            Framing::UntilClose => out.push(Part::Data(src.take(held))),
            Framing::Chunked => {
                let pieces = &mut self.pieces;
                let progress = self.chunked.feed(src.buffered(), |p| pieces.push(p))?;
                let taken = src.take(progress.consumed);
                out.extend(self.pieces.drain(..).map(|p| match p {
                    Piece::Data(r) => Part::Data(taken.slice(r)),
                    Piece::Trailer(r) => Part::Trailer(taken.slice(r)),
                }));
                self.done = progress.done;
            }
        }
        Ok(())
    }
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
    /// The side receiving went away.
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
    let mut head = Some(Bytes::from(head));
    let end = loop {
        if reader.drain(src, &mut parts).is_err() {
            break RelayEnd::SourceBroke;
        }
        if head.is_some() || !parts.is_empty() || reader.done {
            if sink
                .write(dst, head.take(), &mut parts, reader.done)
                .await
                .is_err()
            {
                break RelayEnd::SinkGone;
            }
            if reader.done {
                break RelayEnd::Done;
            }
        }
        let read = match watch_dst {
            Some(keep) => tokio::select! {
                read = src.fill() => read,
                () = dst.closed(keep) => break RelayEnd::SinkGone,
            },
            None => src.fill().await,
        };
        match read {
            Ok(0) if reader.framing == Framing::UntilClose => reader.done = true,
            Ok(0) | Err(_) => break RelayEnd::SourceBroke,
            Ok(_) => {}
        }
    };
    sink.copier.finish(sink.exchange, end != RelayEnd::Done);
    end
}

impl Sink<'_> {
    /// Write `head` if given, `parts` (emptied), and the body's end when
    /// `last`.
    async fn write<B: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        dst: &mut Peer<B>,
        head: Option<Bytes>,
        parts: &mut Vec<Part>,
        last: bool,
    ) -> std::io::Result<()> {
        let mut out: Vec<Bytes> = Vec::with_capacity(parts.len() * 3 + 3);
        out.extend(head);
        let mut trailers = Vec::new();
        for part in parts.drain(..) {
            match part {
                Part::Data(data) => {
                    for data in self.watched(data).into_iter().flatten() {
                        self.copier.data(self.exchange, &data);
                        if let Some(changes) = self.changes.as_mut() {
                            changes.see(&data);
                        }
                        self.code(&mut out, data);
                    }
                }
                Part::Trailer(line) => trailers.push(line),
            }
        }
        if last {
            if let Some(held) = self.watch.take().and_then(|mut w| w.flush()) {
                self.copier.data(self.exchange, &held);
                self.code(&mut out, held);
            }
            if self.coding == Coding::Chunked {
                out.push(Bytes::from_static(b"0\r\n"));
                out.extend(trailers);
                out.push(Bytes::from_static(b"\r\n"));
            }
        }
        if out.is_empty() {
            return Ok(());
        }
        let slices: Vec<&[u8]> = out.iter().map(|b| &b[..]).collect();
        dst.write_parts(&slices).await?;
        self.first_write.get_or_insert_with(Instant::now);
        Ok(())
    }

    fn code(&self, out: &mut Vec<Bytes>, data: Bytes) {
        if data.is_empty() {
            return;
        }
        match self.coding {
            Coding::Plain => out.push(data),
            Coding::Chunked => {
                out.push(Bytes::from(format!("{:x}\r\n", data.len())));
                out.push(data);
                out.push(Bytes::from_static(b"\r\n"));
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

/// Why a body could not be read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Longer than the bound.
    TooLarge,
    /// Broken off, or its framing was.
    Broken,
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
        reader.drain(src, &mut parts).map_err(|_| Unread::Broken)?;
        for part in parts.drain(..) {
            if let Part::Data(data) = part {
                if body.len() + data.len() > max {
                    return Err(Unread::TooLarge);
                }
                body.extend_from_slice(&data);
                if enough(&data) {
                    return Ok((body.freeze(), reader.done));
                }
            }
        }
        if reader.done {
            return Ok((body.freeze(), true));
        }
        match src.fill().await {
            Ok(0) if reader.framing == Framing::UntilClose => reader.done = true,
            Ok(0) | Err(_) => return Err(Unread::Broken),
            Ok(_) => {}
        }
    }
}
