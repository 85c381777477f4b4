//! Whether a tap's observer is reading the copies now, how often it was
//! restarted, and what it held at its last tick (what a restart loses).
//! Moved by the tap's supervisor (`crate::tap::supervise`), read by
//! `/metrics` (`mcp_tap_observing`, `mcp_tap_observer_restarts_total`) and
//! the tap's views.

use mcp_observer::ObserverUsage;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct ObserverHealth {
    observing: AtomicBool,
    restarts: AtomicU64,
    held: Mutex<Option<ObserverUsage>>,
}

impl ObserverHealth {
    pub fn observing(&self) -> bool {
        self.observing.load(Ordering::Acquire)
    }

    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Acquire)
    }

    /// An observer started reading.
    pub fn started(&self) {
        self.observing.store(true, Ordering::Release);
    }

    /// The observer ended before the tap did; what it held at its last
    /// tick, if it ticked.
    pub fn ended(&self) -> Option<ObserverUsage> {
        self.observing.store(false, Ordering::Release);
        self.restarts.fetch_add(1, Ordering::AcqRel);
        self.lock().take()
    }

    /// The tap stopped, and its observer with it.
    pub fn stopped(&self) {
        self.observing.store(false, Ordering::Release);
    }

    /// What the observer holds now (at each tick).
    pub fn held(&self, usage: ObserverUsage) {
        *self.lock() = Some(usage);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ObserverUsage>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}
