//! The queue between a tap's data path and its observer: a [`Tee`] that
//! never blocks and never holds more than its byte budget. An event that
//! does not fit is refused at once (the data path counts the message as
//! `queue_full` and forwards it all the same); the observer task drains the
//! other end at its own pace.

use mcp_tap::{RequestHead, TapEvent, Tee};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// How much a queue may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBudget {
    /// Bytes of the events queued (their payloads and their own size).
    pub bytes: usize,
    /// Events queued, whatever their size.
    pub events: usize,
}

impl Default for QueueBudget {
    fn default() -> Self {
        QueueBudget {
            bytes: 16 << 20,
            events: 16_384,
        }
    }
}

/// The data path's end.
#[derive(Debug)]
pub struct ObserverQueue {
    tx: mpsc::Sender<TapEvent>,
    queued: Arc<AtomicUsize>,
    budget: usize,
}

/// The observer task's end.
#[derive(Debug)]
pub struct QueueReceiver {
    rx: mpsc::Receiver<TapEvent>,
    queued: Arc<AtomicUsize>,
}

/// A queue holding at most `budget`.
pub fn observer_queue(budget: QueueBudget) -> (ObserverQueue, QueueReceiver) {
    let (tx, rx) = mpsc::channel(budget.events.max(1));
    let queued = Arc::new(AtomicUsize::new(0));
    let sender = ObserverQueue {
        tx,
        queued: queued.clone(),
        budget: budget.bytes,
    };
    (sender, QueueReceiver { rx, queued })
}

impl Tee for ObserverQueue {
    fn offer(&self, event: TapEvent) -> bool {
        let cost = cost_of(&event);
        let reserved = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(cost).filter(|after| *after <= self.budget)
            });
        if reserved.is_err() {
            return false;
        }
        match self.tx.try_send(event) {
            Ok(()) => true,
            Err(_) => {
                self.queued.fetch_sub(cost, Ordering::AcqRel);
                false
            }
        }
    }
}

impl ObserverQueue {
    /// Bytes queued now (for the page and tests).
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

impl QueueReceiver {
    /// The next event; None once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<TapEvent> {
        let event = self.rx.recv().await?;
        self.queued.fetch_sub(cost_of(&event), Ordering::AcqRel);
        Some(event)
    }

    /// The next event if one is queued now.
    pub fn try_recv(&mut self) -> Option<TapEvent> {
        let event = self.rx.try_recv().ok()?;
        self.queued.fetch_sub(cost_of(&event), Ordering::AcqRel);
        Some(event)
    }
}

/// What an event pins while it waits: its own size and the bytes it shares
/// with the data path (a chunk, header values, the request's path).
fn cost_of(event: &TapEvent) -> usize {
    let payload = match event {
        TapEvent::Chunk { bytes, .. } => bytes.len(),
        TapEvent::Opened { head, .. } => head_bytes(head),
        TapEvent::Answered { head, .. } => head.session.as_ref().map_or(0, |v| v.len()),
        TapEvent::LegacySession { session, .. } => session.len(),
        TapEvent::MessageEnd { .. } | TapEvent::Closed { .. } | TapEvent::Merged { .. } => 0,
    };
    std::mem::size_of::<TapEvent>() + payload
}

fn head_bytes(head: &RequestHead) -> usize {
    let values: usize = [&head.session, &head.user_agent, &head.client_header]
        .into_iter()
        .flatten()
        .map(|v| v.len())
        .sum();
    values + head.path.as_ref().map_or(0, |p| p.as_str().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mcp_tap::{Direction, ExchangeId};

    fn chunk(len: usize) -> TapEvent {
        TapEvent::Chunk {
            exchange: ExchangeId(1),
            direction: Direction::FromUpstream,
            bytes: Bytes::from(vec![b'x'; len]),
        }
    }

    #[tokio::test]
    async fn refuses_what_does_not_fit_and_takes_it_again_once_drained() {
        let overhead = std::mem::size_of::<TapEvent>();
        let (queue, mut rx) = observer_queue(QueueBudget {
            bytes: 2 * (overhead + 1000),
            events: 100,
        });
        assert!(queue.offer(chunk(1000)));
        assert!(queue.offer(chunk(1000)));
        assert!(!queue.offer(chunk(1)), "past the byte budget");
        assert_eq!(queue.queued_bytes(), 2 * (overhead + 1000));
        assert!(rx.recv().await.is_some());
        assert!(queue.offer(chunk(1000)), "room again after one was taken");
        assert!(rx.try_recv().is_some());
        assert!(rx.try_recv().is_some());
        assert!(rx.try_recv().is_none());
        assert_eq!(queue.queued_bytes(), 0);
    }

    #[tokio::test]
    async fn refuses_past_the_event_count_and_gives_the_bytes_back() {
        let (queue, mut rx) = observer_queue(QueueBudget {
            bytes: usize::MAX,
            events: 2,
        });
        assert!(queue.offer(chunk(10)));
        assert!(queue.offer(chunk(10)));
        assert!(!queue.offer(chunk(10)), "past the event count");
        let held = queue.queued_bytes();
        assert_eq!(held, 2 * (std::mem::size_of::<TapEvent>() + 10));
        while rx.try_recv().is_some() {}
        assert_eq!(queue.queued_bytes(), 0);
    }

    #[tokio::test]
    async fn a_closed_observer_refuses_everything() {
        let (queue, rx) = observer_queue(QueueBudget::default());
        drop(rx);
        assert!(!queue.offer(chunk(10)));
        assert_eq!(queue.queued_bytes(), 0);
    }
}
