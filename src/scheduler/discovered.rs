//! The running service's discovery sources: one refresh loop per source
//! (`discovery::runner`), each source's last good list and how its
//! refreshes went (`discovery::status`), and the discovered targets those
//! lists make (`discovery::fleet`), which the service reconciles exactly
//! as it reconciles a reload.

use crate::config::{Config, ProbeModule, SourceConfig};
use crate::discovery::fleet::{self, DiscoveredFleet};
use crate::discovery::runner::{self, Update};
use crate::discovery::status::{SourceStatus, Sources};
use crate::telemetry::metrics::DiscoveryMetrics;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Refreshes waiting for the service at most; a source loop waits past it.
const UPDATE_QUEUE: usize = 64;

pub struct Discovery {
    /// Lock order: `loops` before `sources`, never the other way.
    loops: Mutex<HashMap<String, Loop>>,
    sources: Mutex<Sources>,
    updates: mpsc::Sender<Update>,
    receiver: Mutex<Option<mpsc::Receiver<Update>>>,
    generation: AtomicU64,
}

/// A source's running loop and what it was started with.
struct Loop {
    source: Arc<SourceConfig>,
    module: ProbeModule,
    generation: u64,
    handle: JoinHandle<()>,
}

/// What taking a refresh changed.
pub struct Applied {
    pub consecutive_failures: u32,
    /// The entries left out differ from the previous refresh's.
    pub skips_changed: bool,
}

impl Default for Discovery {
    fn default() -> Self {
        let (updates, receiver) = mpsc::channel(UPDATE_QUEUE);
        Discovery {
            loops: Mutex::new(HashMap::new()),
            sources: Mutex::new(Sources::default()),
            updates,
            receiver: Mutex::new(Some(receiver)),
            generation: AtomicU64::new(0),
        }
    }
}

impl Discovery {
    /// Match `config`: unchanged sources keep running, a changed one
    /// restarts (its list stays in force until it completes a refresh), a
    /// removed one stops and its series go.
    pub fn configure(&self, config: &Config, metrics: &DiscoveryMetrics) {
        let mut loops = lock(&self.loops);
        loops.retain(|name, running| {
            let now = config.discovery.iter().find(|s| &s.name == name);
            let module = now.and_then(|s| config.modules.get(&s.module));
            let keep = matches!((now, module), (Some(s), Some(m)) if *running.source == *s && running.module == *m);
            if !keep {
                running.handle.abort();
                if now.is_none() {
                    metrics.forget_source(name);
                }
            }
            keep
        });
        lock(&self.sources).configure(config);
        for source in &config.discovery {
            if loops.contains_key(&source.name) {
                continue;
            }
            // Resolving the configuration made sure the module exists.
            let Some(module) = config.modules.get(&source.module) else {
                continue;
            };
            metrics.register_source(&source.name);
            let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
            let source = Arc::new(source.clone());
            let handle = runner::spawn(
                source.clone(),
                module.clone(),
                generation,
                self.updates.clone(),
            );
            loops.insert(
                source.name.clone(),
                Loop {
                    source,
                    module: module.clone(),
                    generation,
                    handle,
                },
            );
        }
    }

    /// The refreshes of every loop, once (the service follows them).
    pub fn take_updates(&self) -> Option<mpsc::Receiver<Update>> {
        lock(&self.receiver).take()
    }

    /// Take a refresh, unless its loop has been replaced since.
    pub fn apply(&self, update: &Update, now_unix_seconds: f64) -> Option<Applied> {
        let current = lock(&self.loops).get(&update.source).map(|l| l.generation);
        if current != Some(update.generation) {
            return None;
        }
        let mut sources = lock(&self.sources);
        let skips_changed = sources.apply(&update.source, &update.refresh, now_unix_seconds);
        let status = sources.get(&update.source)?;
        Some(Applied {
            consecutive_failures: status.consecutive_failures,
            skips_changed,
        })
    }

    /// The discovered targets of every source's list in force, bound for
    /// `config`; each source's yield is kept for `/api/sources`.
    pub fn fleet(&self, config: &Config) -> DiscoveredFleet {
        let mut sources = lock(&self.sources);
        let fleet = fleet::assemble(config, &sources.lists());
        sources.set_fleet(&fleet);
        fleet
    }

    /// Every source as `/api/sources` shows it, in `discovery:` order.
    pub fn sources(&self) -> Vec<SourceStatus> {
        lock(&self.sources).all().to_vec()
    }

    /// Stop every loop.
    pub fn stop(&self) {
        for (_, l) in lock(&self.loops).drain() {
            l.handle.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a whole insert or replace.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
