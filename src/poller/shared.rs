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
