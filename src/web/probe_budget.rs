//! The budget `/probe` requests run under, apart from the scheduler's:
//! their own concurrency and a bounded queue. A flood of probes (against a
//! hanging server, say) fills only these slots; scheduled polls never wait
//! for them. A request that finds the queue full is refused at once, and
//! time spent queued comes out of the request's own deadline, so a queued
//! probe still answers within Prometheus' scrape timeout.

use crate::telemetry::metrics::{InFlight, WebMetrics};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Why a probe request was not run: what [`ProbeBudget::admit`] answers
/// instead of a slot, and the `reason` it is counted under.
pub use crate::telemetry::metrics::ProbeRefused;

/// Probes running at once, by default.
pub const DEFAULT_PROBE_CONCURRENCY: usize = 8;
/// Probes waiting for a slot, by default; one more is refused.
pub const DEFAULT_PROBE_QUEUE: usize = 32;

pub struct ProbeBudget {
    slots: Arc<Semaphore>,
    queue: usize,
    waiting: AtomicUsize,
    /// `mcp_exporter_probes_*`.
    metrics: WebMetrics,
}

/// Holds a probe slot and counts the probe as running until dropped.
pub struct ProbeSlot {
    _permit: OwnedSemaphorePermit,
    _running: InFlight,
}

/// Counts one queued request; leaving the queue (slot, deadline, or the
/// client hanging up) always decrements.
struct Queued<'a> {
    budget: &'a ProbeBudget,
    _queued: InFlight,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.budget.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ProbeBudget {
    /// `concurrency` probes at once (at least 1), `queue` waiting (may be
    /// 0), counted in `metrics`.
    pub fn new(concurrency: usize, queue: usize, metrics: WebMetrics) -> ProbeBudget {
        ProbeBudget {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            queue,
            waiting: AtomicUsize::new(0),
            metrics,
        }
    }

    /// A slot for one probe that must finish by `deadline`: at once when one
    /// is free, else after waiting in the bounded queue, never past
    /// `deadline`.
    pub async fn admit(&self, deadline: Instant) -> Result<ProbeSlot, ProbeRefused> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => self
                .wait(deadline)
                .await
                .inspect_err(|r| self.metrics.probe_refused(*r))?,
        };
        Ok(ProbeSlot {
            _permit: permit,
            _running: self.metrics.probe_running(),
        })
    }

    async fn wait(&self, deadline: Instant) -> Result<OwnedSemaphorePermit, ProbeRefused> {
        let joined = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w < self.queue).then_some(w + 1)
            });
        if joined.is_err() {
            return Err(ProbeRefused::QueueFull);
        }
        let _queued = Queued {
            budget: self,
            _queued: self.metrics.probe_queued(),
        };
        // The semaphore is fair: queued probes are served in arrival order.
        match tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok(p),
            // Timed out, or the semaphore closed (it never is).
            _ => Err(ProbeRefused::Deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::registry::Registry;
    use std::time::Duration;

    fn budget(concurrency: usize, queue: usize) -> ProbeBudget {
        let metrics = WebMetrics::register(&mut Registry::default());
        ProbeBudget::new(concurrency, queue, metrics)
    }

    #[tokio::test(start_paused = true)]
    async fn slots_then_queue_then_refusal() {
        let budget = budget(2, 1);
        let far = Instant::now() + Duration::from_secs(60);
        let a = budget.admit(far).await.expect("first slot");
        let _b = budget.admit(far).await.expect("second slot");
        // Third waits in the queue; fourth finds it full.
        let third = budget.admit(far);
        tokio::pin!(third);
        assert!(futures_util::poll!(&mut third).is_pending());
        assert_eq!(budget.admit(far).await.err(), Some(ProbeRefused::QueueFull));
        drop(a);
        assert!(third.await.is_ok());
        assert_eq!(budget.waiting.load(Ordering::Acquire), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_queued_probe_gives_up_at_its_deadline() {
        let budget = budget(1, 4);
        let _held = budget
            .admit(Instant::now() + Duration::from_secs(60))
            .await
            .expect("slot");
        let soon = Instant::now() + Duration::from_secs(2);
        assert_eq!(budget.admit(soon).await.err(), Some(ProbeRefused::Deadline));
        assert_eq!(budget.waiting.load(Ordering::Acquire), 0);
    }
}
