//! The running exporter: the loaded config, one task per target, reloads.

use super::schedule::run_target;
use super::shard::Shard;
use super::shared::Shared;
use crate::config::{self, Config, LoadedConfig, TargetConfig};
use crate::poll::unix_now;
use crate::sinks::{Sinks, StatusStore};
use crate::telemetry::events::ConfigReloadFailed;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use tokio::task::JoinHandle;

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
        let shared = Arc::new(Shared::new(sinks, &loaded.config.defaults));
        Arc::new(Service {
            shared,
            config_path,
            shard,
            current: RwLock::new(Arc::new(loaded)),
            tasks: Mutex::new(HashMap::new()),
            reload_lock: tokio::sync::Mutex::new(()),
        })
    }

    /// Recent polls per target, for the status page and the API.
    pub fn status(&self) -> &StatusStore {
        &self.shared.sinks.status
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
                    // Conformance first: forgetting it re-judges the
                    // verdict, which must not outlive the target's series.
                    self.shared.sinks.forget_conformance(name);
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
            self.shared
                .sinks
                .metrics
                .register_target(&t.name, &t.kinds, t.metrics_detail);
            self.shared.sinks.exporter.register_target(&t.name);
            let t = Arc::new(t);
            let handle = tokio::spawn(run_target(t.clone(), self.shared.clone()));
            tasks.insert(t.name.clone(), (t, handle));
        }
        self.shared.sinks.exporter.set_targets(tasks.len() as i64);
    }

    /// Re-read the config file. An invalid file keeps the running config
    /// and reports the failure (logged and counted here); an unchanged
    /// checksum does nothing.
    pub async fn reload(self: &Arc<Self>) -> Result<ReloadOutcome, String> {
        let _guard = self.reload_lock.lock().await;
        let loaded = match config::load_file(&self.config_path) {
            Ok(l) => l,
            Err(e) => {
                let error = e.to_string();
                ConfigReloadFailed { error: &error }.emit(&self.shared.sinks.exporter);
                return Err(error);
            }
        };
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        if loaded.checksum == self.config().checksum {
            self.shared.sinks.exporter.config_reloaded(true, unix_now());
            return Ok(ReloadOutcome::Unchanged);
        }
        self.shared.apply(&loaded.config.defaults);
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
        config::EndpointConfig::Http { url, transport, .. } => format!(
            "{}://{}{} ({})",
            url.scheme(),
            url.host_str().unwrap_or("?"),
            url.port().map(|p| format!(":{p}")).unwrap_or_default(),
            transport.label()
        ),
        config::EndpointConfig::Stdio { command, .. } => format!("stdio: {command}"),
    }
}
