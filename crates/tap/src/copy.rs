//! The copies an observer gets of one direction of one exchange: the
//! body's messages as `Bytes` slices of the chunks forwarded (reference
//! counts, never a copy of the data), at most `inspect_bytes` per message,
//! each closed by a `MessageEnd` saying whether the copy is whole.
//!
//! A refused offer leaves a hole: the rest of that message is not offered
//! and its end says `Dropped`. A refused `MessageEnd` leaves the observer
//! unable to tell where that message stopped, so the next message is
//! treated as dropped too, until an end is taken again.

use crate::cut::{Cutter, Ending, Piece};
use crate::event::{BodyFraming, CopyEnd, Direction, NotObserved, TapEvent};
use crate::exchange_tee::Exchange;
use bytes::Bytes;
use std::ops::Range;
use std::time::Instant;

pub(crate) struct Copier {
    cutter: Cutter,
    message: MessageCopy,
}

struct MessageCopy {
    direction: Direction,
    limit: usize,
    /// Bytes of the message in progress handed over so far.
    copied: usize,
    state: CopyState,
    /// The message in progress had its first byte.
    started: bool,
    /// The last `MessageEnd` was refused.
    poisoned: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CopyState {
    Copying,
    TooLarge,
    Dropped,
}

impl Copier {
    pub(crate) fn new(framing: BodyFraming, direction: Direction, limit: usize) -> Copier {
        Copier {
            cutter: Cutter::new(framing),
            message: MessageCopy {
                direction,
                limit,
                copied: 0,
                state: CopyState::Copying,
                started: false,
                poisoned: false,
            },
        }
    }

    /// The next chunk forwarded in this direction.
    pub(crate) fn data(&mut self, exchange: &Exchange, chunk: &Bytes) {
        if !exchange.observing() || !self.cutter.observes() {
            return;
        }
        let message = &mut self.message;
        self.cutter.cut(chunk, |piece| match piece {
            Piece::Data(range) => message.data(exchange, chunk, range),
            Piece::End => message.end(exchange, CopyEnd::Whole),
        });
    }

    /// This direction's body is over: it ended (`broken` false) or broke or
    /// was let go before its end (`broken` true).
    pub(crate) fn finish(&mut self, exchange: &Exchange, broken: bool) {
        if !exchange.observing() {
            return;
        }
        match self.cutter.finish() {
            None => {}
            Some(Ending::Complete) if !broken => self.message.end(exchange, CopyEnd::Whole),
            Some(_) => self
                .message
                .end(exchange, CopyEnd::NotObserved(NotObserved::Truncated)),
        }
    }
}

impl MessageCopy {
    fn data(&mut self, exchange: &Exchange, chunk: &Bytes, range: Range<usize>) {
        if !self.started {
            self.started = true;
            if !exchange.observed() || std::mem::take(&mut self.poisoned) {
                self.state = CopyState::Dropped;
            }
        }
        if self.state != CopyState::Copying {
            return;
        }
        let room = self.limit - self.copied;
        let over = range.len() > room;
        let take = range.start..range.start + range.len().min(room);
        if !take.is_empty() {
            let taken = exchange.offer(TapEvent::Chunk {
                exchange: exchange.id,
                direction: self.direction,
                bytes: chunk.slice(take.clone()),
            });
            if !taken {
                self.state = CopyState::Dropped;
                return;
            }
            self.copied += take.len();
        }
        if over {
            self.state = CopyState::TooLarge;
        }
    }

    fn end(&mut self, exchange: &Exchange, copy: CopyEnd) {
        let copy = match self.state {
            CopyState::Copying => copy,
            CopyState::TooLarge => CopyEnd::NotObserved(NotObserved::TooLarge),
            CopyState::Dropped => CopyEnd::NotObserved(NotObserved::Dropped),
        };
        if let CopyEnd::NotObserved(reason) = copy {
            exchange.stats.not_observed(reason);
        }
        if exchange.observed() {
            let taken = exchange.offer(TapEvent::MessageEnd {
                exchange: exchange.id,
                direction: self.direction,
                at: Instant::now(),
                copy,
            });
            self.poisoned = !taken;
        }
        self.copied = 0;
        self.state = CopyState::Copying;
        self.started = false;
    }
}
