//! A body forwarded as it arrives, frame by frame (one frame in flight: a
//! side that stops reading stops the other), with copies for the observer
//! taken on the way and, on a legacy GET stream, the `endpoint` URL
//! rewritten. The only state kept per body is the cutter's few flags and,
//! at a legacy stream's start, at most `legacy::WATCH_BYTES`.

use crate::copy::Copier;
use crate::event::{BodyFraming, Direction, ExchangeEnd, TapEvent, UpstreamFailure};
use crate::exchange::Exchange;
use crate::legacy::{EndpointWatch, Released};
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

pub(crate) struct ObservedBody<B: Body<Data = Bytes> + Unpin> {
    inner: B,
    exchange: Arc<Exchange>,
    copier: Copier,
    direction: Direction,
    /// A legacy GET stream's start, watched for `endpoint` (boxed: rare,
    /// and most of this body's size otherwise).
    watch: Option<Box<EndpointWatch>>,
    /// Bytes to forward before reading on (the rest of a released chunk).
    queued: Option<Bytes>,
    /// The inner body ended; what was held has been let out.
    inner_done: bool,
    finished: bool,
    /// Counted in `TapStats::open_streams` while it lasts.
    stream: bool,
}

impl<B: Body<Data = Bytes> + Unpin> ObservedBody<B> {
    pub(crate) fn new(
        inner: B,
        exchange: Arc<Exchange>,
        framing: BodyFraming,
        direction: Direction,
        inspect_bytes: usize,
    ) -> ObservedBody<B> {
        let stream = direction == Direction::FromUpstream && framing == BodyFraming::EventStream;
        if stream {
            exchange.stats.stream_opened();
        }
        ObservedBody {
            inner,
            exchange,
            copier: Copier::new(framing, direction, inspect_bytes),
            direction,
            watch: None,
            queued: None,
            inner_done: false,
            finished: false,
            stream,
        }
    }

    /// Watch this (legacy GET) stream's start for the `endpoint` event.
    pub(crate) fn watching(mut self, watch: EndpointWatch) -> ObservedBody<B> {
        self.watch = Some(Box::new(watch));
        self
    }

    /// Forward `data`, copying it for the observer. hyper stops polling a
    /// body that says it is at its end, so the end is taken here too.
    fn pass(&mut self, data: Bytes) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        self.copier.data(&self.exchange, &data);
        if self.at_end() {
            self.finish(None);
        }
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    /// Nothing is left to forward.
    fn at_end(&self) -> bool {
        self.queued.is_none()
            && self.watch.is_none()
            && (self.inner_done || self.inner.is_end_stream())
    }

    /// A chunk through the watch: what to forward now, if anything.
    fn watched(&mut self, data: Bytes) -> Option<Bytes> {
        let Some(watch) = self.watch.as_mut() else {
            return Some(data);
        };
        let Released { now, then, done } = watch.push(data)?;
        self.queued = then;
        if let Some(found) = done {
            self.watch = None;
            if let Some(session) = found.session {
                self.exchange.offer(TapEvent::LegacySession {
                    exchange: self.exchange.id,
                    session,
                });
            }
        }
        Some(now)
    }

    fn finish(&mut self, broken: Option<ExchangeEnd>) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.copier.finish(&self.exchange, broken.is_some());
        if self.direction == Direction::FromUpstream {
            self.exchange
                .ended(broken.unwrap_or(ExchangeEnd::Completed));
        }
    }
}

impl<B> Body for ObservedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        if let Some(data) = this.queued.take() {
            return this.pass(data);
        }
        loop {
            if this.inner_done {
                this.finish(None);
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => match this.watched(data) {
                        Some(now) => return this.pass(now),
                        None => continue,
                    },
                    // Trailers pass as they are.
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(e)) => {
                    if this.direction == Direction::FromUpstream {
                        this.exchange.stats.upstream_error(UpstreamFailure::Reset);
                        this.finish(Some(ExchangeEnd::UpstreamFailed(UpstreamFailure::Reset)));
                    } else {
                        this.finish(Some(ExchangeEnd::ClientGone));
                    }
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    this.inner_done = true;
                    if let Some(held) = this.watch.take().and_then(|mut w| w.flush()) {
                        return this.pass(held);
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.at_end()
    }

    fn size_hint(&self) -> SizeHint {
        if self.watch.is_some() || self.queued.is_some() {
            // The endpoint URL may change length.
            return SizeHint::default();
        }
        self.inner.size_hint()
    }
}

impl<B: Body<Data = Bytes> + Unpin> Drop for ObservedBody<B> {
    fn drop(&mut self) {
        if !self.finished {
            if self.at_end() {
                // Empty, or let go right at its end without a last poll.
                self.finish(None);
            } else {
                // Let go before its end: the message in progress is cut
                // short; an answer's exchange ends as the client going
                // away, unless an end was already recorded.
                self.finished = true;
                self.copier.finish(&self.exchange, true);
            }
        }
        if self.stream {
            self.exchange.stats.stream_closed();
        }
    }
}
