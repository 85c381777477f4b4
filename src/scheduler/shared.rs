//! What every target task shares: the sinks, the global concurrency cap and
//! the reloadable global limits.

use crate::config::Defaults;
use crate::sinks::Sinks;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct Shared {
    pub sinks: Sinks,
    limits: RwLock<SharedLimits>,
    semaphore: RwLock<Arc<Semaphore>>,
}

#[derive(Clone, Copy)]
struct SharedLimits {
    backoff_max: Duration,
    stderr_tail_bytes: usize,
    concurrency: usize,
}

impl SharedLimits {
    fn of(d: &Defaults) -> SharedLimits {
        SharedLimits {
            backoff_max: d.backoff_max,
            stderr_tail_bytes: d.stderr_tail_bytes,
            concurrency: d.concurrency,
        }
    }
}

impl Shared {
    pub fn new(sinks: Sinks, defaults: &Defaults) -> Shared {
        Shared {
            sinks,
            limits: RwLock::new(SharedLimits::of(defaults)),
            semaphore: RwLock::new(Arc::new(Semaphore::new(defaults.concurrency.max(1)))),
        }
    }

    /// Take a reloaded config's global limits. A changed concurrency cap
    /// starts a new semaphore; polls holding the old one finish under it.
    pub fn apply(&self, defaults: &Defaults) {
        let old = self.limits();
        if let Ok(mut l) = self.limits.write() {
            *l = SharedLimits::of(defaults);
        }
        if defaults.concurrency != old.concurrency {
            if let Ok(mut s) = self.semaphore.write() {
                *s = Arc::new(Semaphore::new(defaults.concurrency.max(1)));
            }
        }
    }

    /// A slot under the global concurrency cap. Scheduled and watch polls
    /// only: `/probe` has its own budget (`web::probe_budget`), so no client
    /// can take these slots.
    pub async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        let sem = match self.semaphore.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        sem.acquire_owned().await.ok()
    }

    /// A slot under the global concurrency cap, waiting at most `wait`
    /// (the semaphore is fair: first come, first served). `None` when no
    /// slot came free in time.
    pub async fn acquire_within(&self, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let sem = match self.semaphore.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        // The semaphore is never closed: an error cannot happen.
        tokio::time::timeout(wait, sem.acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
    }

    pub fn backoff_max(&self) -> Duration {
        self.limits().backoff_max
    }

    pub fn stderr_tail_bytes(&self) -> usize {
        self.limits().stderr_tail_bytes
    }

    fn limits(&self) -> SharedLimits {
        match self.limits.read() {
            Ok(l) => *l,
            Err(p) => *p.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::BaselineStore;
    use crate::sinks::StatusStore;
    use crate::telemetry::metrics::{
        ConformanceMetrics, DiscoveryMetrics, ExporterMetrics, TargetMetrics,
    };
    use crate::telemetry::spans::TraceSink;
    use prometheus_client::registry::Registry;
    use std::sync::{Arc, Mutex};

    fn one_slot() -> Arc<Shared> {
        let loaded = crate::config::load_str(
            "global:\n  concurrency: 1\ntargets:\n  - {name: s, http: {url: \"https://s.invalid/\"}}\n",
            "t.yaml",
        )
        .unwrap();
        let mut registry = Registry::default();
        let sinks = Sinks {
            baselines: Mutex::new(BaselineStore::default()),
            metrics: TargetMetrics::new(&mut registry),
            exporter: ExporterMetrics::new(&mut registry, "t", "t"),
            traces: TraceSink::disabled(),
            status: StatusStore::new(1),
            event_window: crate::verdict::DEFAULT_EVENT_WINDOW,
            conformance: ConformanceMetrics::register(&mut registry),
            discovery: DiscoveryMetrics::register(&mut registry),
            levels: Default::default(),
        };
        Arc::new(Shared::new(sinks, &loaded.config.defaults))
    }

    #[tokio::test(start_paused = true)]
    async fn a_due_poll_waits_for_a_slot_but_not_past_its_bound() {
        let shared = one_slot();
        let held = shared.acquire_within(Duration::from_secs(1)).await;
        assert!(held.is_some());
        // The only slot stays taken: the wait gives up at its bound.
        let started = tokio::time::Instant::now();
        assert!(shared
            .acquire_within(Duration::from_secs(3))
            .await
            .is_none());
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        // Freed within the bound: the waiting poll gets it, not a skip.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            drop(held);
        });
        assert!(shared
            .acquire_within(Duration::from_secs(3))
            .await
            .is_some());
    }
}
