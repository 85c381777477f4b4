//! The budget `/probe` requests run under, apart from the scheduler's:
//! their own concurrency and a bounded queue. A flood of probes (against a
//! hanging server, say) fills only these slots; scheduled polls never wait
//! for them. A request that finds the queue full is refused at once, and
//! time spent queued comes out of the request's own deadline, so a queued
//! probe still answers within Prometheus' scrape timeout.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Probes running at once, by default.
pub const DEFAULT_PROBE_CONCURRENCY: usize = 8;
/// Probes waiting for a slot, by default; one more is refused.
pub const DEFAULT_PROBE_QUEUE: usize = 32;

mcp_listing::labelled_enum! {
    /// Why a probe request was not run: the `reason` label.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Refused as "refusal" {
        /// Every slot busy and the queue full.
        QueueFull => "queue_full",
        /// Queued until the request's own deadline passed.
        Deadline => "deadline",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

pub struct ProbeBudget {
    slots: Arc<Semaphore>,
    queue: usize,
    waiting: AtomicUsize,
    running: Gauge,
    queued: Gauge,
    refused: Family<ReasonLabels, Counter>,
}

/// Holds a probe slot and counts the probe as running until dropped.
pub struct ProbeSlot {
    _permit: OwnedSemaphorePermit,
    running: Gauge,
}

impl Drop for ProbeSlot {
    fn drop(&mut self) {
        self.running.dec();
    }
}

/// Counts one queued request; leaving the queue (slot, deadline, or the
/// client hanging up) always decrements.
struct Queued<'a> {
    budget: &'a ProbeBudget,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.budget.waiting.fetch_sub(1, Ordering::AcqRel);
        self.budget.queued.dec();
    }
}

impl ProbeBudget {
    /// `concurrency` probes at once (at least 1), `queue` waiting (may be 0).
    /// Registers the exporter-wide `mcp_exporter_probes_*` series.
    pub fn new(concurrency: usize, queue: usize, registry: &mut Registry) -> ProbeBudget {
        let budget = ProbeBudget {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            queue,
            waiting: AtomicUsize::new(0),
            running: Gauge::default(),
            queued: Gauge::default(),
            refused: Family::default(),
        };
        for r in Refused::ALL {
            // Pre-created, so an alert sees the first refusal as an increase.
            let _ = budget
                .refused
                .get_or_create(&ReasonLabels { reason: r.label() });
        }
        registry.register(
            "mcp_exporter_probes_running",
            "/probe requests polling now (bounded by --probe.concurrency)",
            budget.running.clone(),
        );
        registry.register(
            "mcp_exporter_probes_queued",
            "/probe requests waiting for a slot (bounded by --probe.queue)",
            budget.queued.clone(),
        );
        registry.register(
            "mcp_exporter_probes_refused",
            "/probe requests answered 503 without polling: queue_full (every slot busy and the queue full) or deadline (queued past the request's scrape timeout)",
            budget.refused.clone(),
        );
        budget
    }

    /// A slot for one probe that must finish by `deadline`: at once when one
    /// is free, else after waiting in the bounded queue, never past
    /// `deadline`.
    pub async fn admit(&self, deadline: Instant) -> Result<ProbeSlot, Refused> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => self.wait(deadline).await.inspect_err(|r| {
                self.refused
                    .get_or_create(&ReasonLabels { reason: r.label() })
                    .inc();
            })?,
        };
        self.running.inc();
        Ok(ProbeSlot {
            _permit: permit,
            running: self.running.clone(),
        })
    }

    async fn wait(&self, deadline: Instant) -> Result<OwnedSemaphorePermit, Refused> {
        let joined = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w < self.queue).then_some(w + 1)
            });
        if joined.is_err() {
            return Err(Refused::QueueFull);
        }
        self.queued.inc();
        let _queued = Queued { budget: self };
        // The semaphore is fair: queued probes are served in arrival order.
        match tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok(p),
            // Timed out, or the semaphore closed (it never is).
            _ => Err(Refused::Deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn slots_then_queue_then_refusal() {
        let mut reg = Registry::default();
        let budget = ProbeBudget::new(2, 1, &mut reg);
        let far = Instant::now() + Duration::from_secs(60);
        let a = budget.admit(far).await.expect("first slot");
        let _b = budget.admit(far).await.expect("second slot");
        // Third waits in the queue; fourth finds it full.
        let third = budget.admit(far);
        tokio::pin!(third);
        assert!(futures_util::poll!(&mut third).is_pending());
        assert_eq!(budget.admit(far).await.err(), Some(Refused::QueueFull));
        drop(a);
        assert!(third.await.is_ok());
        assert_eq!(budget.waiting.load(Ordering::Acquire), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_queued_probe_gives_up_at_its_deadline() {
        let mut reg = Registry::default();
        let budget = ProbeBudget::new(1, 4, &mut reg);
        let _held = budget
            .admit(Instant::now() + Duration::from_secs(60))
            .await
            .expect("slot");
        let soon = Instant::now() + Duration::from_secs(2);
        assert_eq!(budget.admit(soon).await.err(), Some(Refused::Deadline));
        assert_eq!(budget.waiting.load(Ordering::Acquire), 0);
    }
}
