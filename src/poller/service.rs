//! The running exporter: the loaded config, one task per target, reloads.

use super::schedule::{run_target, stable_hash};
use super::sinks::{unix_now, Sinks};
use crate::config::{self, Config, LoadedConfig, TargetConfig};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// `--shard i/n`: keep the targets whose stable hash falls in shard i.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s:?} is not i/n"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: bad index"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: bad count"))?;
        if count == 0 || index >= count {
            return Err(format!("--shard {s:?}: need 0 <= i < n"));
        }
        Ok(Shard { index, count })
    }

    pub fn keeps(&self, target: &str) -> bool {
        stable_hash(target) % self.count == self.index
    }
}

/// What every target task shares.
pub struct Shared {
    pub sinks: Sinks,
    limits: RwLock<SharedLimits>,
    semaphore: RwLock<Arc<Semaphore>>,
}

#[derive(Clone, Copy)]
struct SharedLimits {
    backoff_max: Duration,
    stderr_tail_bytes: usize,
}

impl Shared {
    pub async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        let sem = match self.semaphore.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        sem.acquire_owned().await.ok()
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

/// A running target loop and the config it runs with.
type TargetTask = (Arc<TargetConfig>, JoinHandle<()>);

/// Result of a reload request.
#[derive(Debug, PartialEq, Eq)]
pub enum ReloadOutcome {
    Unchanged,
    Applied,
}

pub struct Service {
    pub shared: Arc<Shared>,
    config_path: PathBuf,
    shard: Option<Shard>,
    current: RwLock<Arc<LoadedConfig>>,
    tasks: Mutex<HashMap<String, TargetTask>>,
    reload_lock: tokio::sync::Mutex<()>,
}

impl Service {
    pub fn new(
        loaded: LoadedConfig,
        config_path: PathBuf,
        shard: Option<Shard>,
        sinks: Sinks,
    ) -> Arc<Service> {
        let d = &loaded.config.defaults;
        let shared = Arc::new(Shared {
            sinks,
            limits: RwLock::new(SharedLimits {
                backoff_max: d.backoff_max,
                stderr_tail_bytes: d.stderr_tail_bytes,
            }),
            semaphore: RwLock::new(Arc::new(Semaphore::new(d.concurrency.max(1)))),
        });
        Arc::new(Service {
            shared,
            config_path,
            shard,
            current: RwLock::new(Arc::new(loaded)),
            tasks: Mutex::new(HashMap::new()),
            reload_lock: tokio::sync::Mutex::new(()),
        })
    }

    pub fn config(&self) -> Arc<LoadedConfig> {
        match self.current.read() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Targets this replica polls.
    fn my_targets<'a>(&self, config: &'a Config) -> Vec<&'a TargetConfig> {
        config
            .targets
            .iter()
            .filter(|t| self.shard.is_none_or(|s| s.keeps(&t.name)))
            .collect()
    }

    /// Start (or, after a reload, reconcile) one task per target: unchanged
    /// targets keep running, changed ones restart, removed ones stop.
    pub fn start(self: &Arc<Self>) {
        let config = self.config();
        let mine: Vec<TargetConfig> = self
            .my_targets(&config.config)
            .into_iter()
            .cloned()
            .collect();
        let mut tasks = match self.tasks.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        tasks.retain(|name, (cfg, handle)| {
            let keep = mine.iter().any(|t| t == cfg.as_ref());
            if !keep {
                handle.abort();
                if !mine.iter().any(|t| &t.name == name) {
                    self.shared.sinks.metrics.forget_target(name);
                    self.shared.sinks.exporter.forget_target(name);
                }
            }
            keep
        });
        self.shared.sinks.status.set_targets(
            &mine
                .iter()
                .map(|t| (t.name.clone(), describe_endpoint(t), t.schedule.describe()))
                .collect::<Vec<_>>(),
        );
        for t in mine {
            if tasks.contains_key(&t.name) {
                continue;
            }
            self.shared.sinks.metrics.register_target(&t.name, &t.kinds);
            self.shared.sinks.exporter.register_target(&t.name);
            let t = Arc::new(t);
            let handle = tokio::spawn(run_target(t.clone(), self.shared.clone()));
            tasks.insert(t.name.clone(), (t, handle));
        }
        self.shared.sinks.exporter.set_targets(tasks.len() as i64);
    }

    /// Re-read the config file. An invalid file keeps the running config
    /// and reports the failure; an unchanged checksum does nothing.
    pub async fn reload(self: &Arc<Self>) -> Result<ReloadOutcome, String> {
        let _guard = self.reload_lock.lock().await;
        let loaded = match config::load_file(&self.config_path) {
            Ok(l) => l,
            Err(e) => {
                self.shared
                    .sinks
                    .exporter
                    .config_reloaded(false, unix_now());
                return Err(e.to_string());
            }
        };
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        if loaded.checksum == self.config().checksum {
            self.shared.sinks.exporter.config_reloaded(true, unix_now());
            return Ok(ReloadOutcome::Unchanged);
        }
        {
            let d = &loaded.config.defaults;
            if let Ok(mut l) = self.shared.limits.write() {
                *l = SharedLimits {
                    backoff_max: d.backoff_max,
                    stderr_tail_bytes: d.stderr_tail_bytes,
                };
            }
            if d.concurrency != self.config().config.defaults.concurrency {
                if let Ok(mut s) = self.shared.semaphore.write() {
                    *s = Arc::new(Semaphore::new(d.concurrency.max(1)));
                }
            }
        }
        if let Ok(mut c) = self.current.write() {
            *c = Arc::new(loaded);
        }
        self.start();
        self.shared.sinks.exporter.config_reloaded(true, unix_now());
        Ok(ReloadOutcome::Applied)
    }

    /// Stop every target task (their children are killed on drop).
    pub fn stop(&self) {
        if let Ok(mut tasks) = self.tasks.lock() {
            for (_, (_, h)) in tasks.drain() {
                h.abort();
            }
        }
    }
}

/// Host for URLs (never path, query or credentials), the command for stdio.
pub fn describe_endpoint(t: &TargetConfig) -> String {
    match &t.endpoint {
        config::Endpoint::Http { url, transport, .. } => format!(
            "{}://{}{} ({})",
            url.scheme(),
            url.host_str().unwrap_or("?"),
            url.port().map(|p| format!(":{p}")).unwrap_or_default(),
            transport.label()
        ),
        config::Endpoint::Stdio { command, .. } => format!("stdio: {command}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_targets() {
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        for n in 0..100 {
            let name = format!("target-{n}");
            assert_eq!(shards.iter().filter(|s| s.keeps(&name)).count(), 1);
        }
        assert!(Shard::parse("3/3").is_err());
        assert!(Shard::parse("0/0").is_err());
        assert_eq!(Shard::parse("1/4").unwrap(), Shard { index: 1, count: 4 });
    }
}
