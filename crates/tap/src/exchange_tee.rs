//! One exchange as the data path tracks it: who is told (the `Tee`), what
//! is counted (`TapStats`), and how it ended. `Closed` goes out when it is
//! let go, after every message of both directions; an exchange let go
//! without an end recorded was abandoned by its client (the task serving
//! it was dropped).

use crate::event::{ExchangeEnd, ExchangeId, TapEvent, Tee};
use crate::stats::TapStats;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(crate) struct Exchange {
    pub(crate) id: ExchangeId,
    tee: Arc<dyn Tee>,
    pub(crate) stats: Arc<TapStats>,
    /// The observer took `Opened`: it knows this exchange. When it did not
    /// (or nobody observes), nothing more is offered.
    observed: bool,
    /// The first end recorded, and when.
    end: Mutex<Option<(Instant, ExchangeEnd)>>,
}

impl Exchange {
    /// Start an exchange, offering `opened` (an `Opened` event).
    pub(crate) fn open(
        id: ExchangeId,
        tee: Arc<dyn Tee>,
        stats: Arc<TapStats>,
        opened: impl FnOnce() -> TapEvent,
    ) -> Exchange {
        let observed = tee.observing() && tee.offer(opened());
        Exchange {
            id,
            tee,
            stats,
            observed,
            end: Mutex::new(None),
        }
    }

    pub(crate) fn observed(&self) -> bool {
        self.observed
    }

    /// Whether a copy is wanted at all (someone observes).
    pub(crate) fn observing(&self) -> bool {
        self.tee.observing()
    }

    /// Offer an event of this exchange; false when it was refused or the
    /// observer does not know the exchange.
    pub(crate) fn offer(&self, event: TapEvent) -> bool {
        self.observed && self.tee.offer(event)
    }

    /// Record how the exchange ended; the first end recorded stands.
    pub(crate) fn ended(&self, end: ExchangeEnd) {
        let mut slot = self.end.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some((Instant::now(), end));
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.observed {
            return;
        }
        let recorded = self.end.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        // Nobody recorded an end: the answer was let go unfinished, which
        // only a client that went away makes happen.
        let (at, end) = recorded.unwrap_or((Instant::now(), ExchangeEnd::ClientGone));
        self.tee.offer(TapEvent::Closed {
            exchange: self.id,
            at,
            end,
        });
    }
}
