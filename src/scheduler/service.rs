//! The running exporter: the loaded config, its discovery sources, one
//! task per target (static or discovered), reloads.

use super::discovered::Discovery;
use super::schedule::{first_poll_spread, run_target};
use super::shard::Shard;
use super::shared::Shared;
use crate::config::{self, LoadedConfig, TargetConfig};
use crate::discovery::runner::Update;
use crate::discovery::status::SourceStatus;
use crate::poll::unix_now;
use crate::sinks::{Sinks, StatusStore, TargetDescription};
use crate::telemetry::events::{
    BaselinesDropped, ConfigReloadFailed, ConfigReloaded, ConfigWarned, DiscoveryEntriesSkipped,
    DiscoveryRefreshed,
};
use mcp_listing::text::{cut, CUT_MARK};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long shutdown waits for aborted target tasks to be dropped.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

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
    discovery: Discovery,
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
            discovery: Discovery::default(),
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

    /// Start (or, after a reload, reconcile) the discovery sources and one
    /// task per target.
    pub fn start(self: &Arc<Self>) {
        let config = self.config();
        self.discovery
            .configure(&config.config, &self.shared.sinks.discovery);
        if let Some(updates) = self.discovery.take_updates() {
            tokio::spawn(self.clone().follow_discovery(updates));
        }
        self.reconcile();
    }

    /// One task per target this replica polls — the static ones and what
    /// every source yields now: unchanged targets keep running, changed
    /// ones restart, removed ones stop and every series of theirs goes at
    /// once (their baselines stay for `baseline_retention`).
    fn reconcile(self: &Arc<Self>) {
        let config = self.config();
        let config = &config.config;
        let mut tasks = match self.tasks.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        let fleet = self.discovery.fleet(config);
        for s in self.discovery.sources() {
            self.shared
                .sinks
                .discovery
                .set_yield(&s.name, s.in_force.targets, &s.in_force.skipped);
        }
        let mine: Vec<TargetConfig> = config
            .targets
            .iter()
            .cloned()
            .chain(fleet.targets)
            .filter(|t| self.shard.is_none_or(|s| s.keeps(&t.name)))
            .collect();
        let by_name: HashMap<&str, &TargetConfig> =
            mine.iter().map(|t| (t.name.as_str(), t)).collect();
        let sinks = &self.shared.sinks;
        let stale: Vec<String> = tasks
            .iter()
            .filter(|(name, (cfg, _))| {
                by_name
                    .get(name.as_str())
                    .is_none_or(|t| *t != cfg.as_ref())
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            let Some((_, handle)) = tasks.remove(&name) else {
                continue;
            };
            handle.abort();
            if !by_name.contains_key(name.as_str()) {
                self.forget(&name);
                // A poll that was past its last await when aborted still
                // hands its report to the sinks: forget again once the task
                // has stopped, unless the target is back by then.
                let service = self.clone();
                tokio::spawn(async move {
                    let _ = handle.await;
                    service.forget_if_gone(&name);
                });
            }
        }
        sinks.status.set_targets(
            &mine
                .iter()
                .map(|t| TargetDescription {
                    name: t.name.clone(),
                    endpoint: describe_endpoint(t),
                    schedule: t.settings.schedule.describe(),
                    source: t.source.clone(),
                })
                .collect::<Vec<_>>(),
        );
        // At start and after a reload, first polls spread with the fleet.
        let spread = first_poll_spread(mine.len(), config.defaults.concurrency);
        for t in &mine {
            if !tasks.contains_key(&t.name) {
                tasks.insert(t.name.clone(), self.start_target(t, spread));
            }
        }
        sinks.exporter.set_targets(tasks.len() as i64);
        let active: HashSet<&str> = by_name.keys().copied().collect();
        let dropped = sinks
            .baselines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .track_presence(&active, unix_now(), config.defaults.baseline_retention);
        for target in dropped {
            BaselinesDropped { target: &target }.emit();
        }
    }

    /// Pre-create a new target's series and spawn its loop.
    fn start_target(self: &Arc<Self>, t: &TargetConfig, spread: Duration) -> TargetTask {
        let sinks = &self.shared.sinks;
        sinks
            .metrics
            .register_target(&t.name, &t.settings.kinds, t.settings.metrics_detail);
        sinks.exporter.register_target(&t.name);
        match &t.source {
            Some(source) => sinks.discovery.set_target_info(&t.name, source, &t.labels),
            None => sinks.discovery.forget_target(&t.name),
        }
        let t = Arc::new(t.clone());
        let handle = tokio::spawn(run_target(t.clone(), self.shared.clone(), spread));
        (t, handle)
    }

    /// Drop every series of a target that left.
    fn forget(&self, name: &str) {
        let sinks = &self.shared.sinks;
        // Conformance first: forgetting it re-judges the verdict, which
        // must not outlive the target's series.
        sinks.forget_conformance(name);
        sinks.metrics.forget_target(name);
        sinks.exporter.forget_target(name);
        sinks.discovery.forget_target(name);
        sinks.levels.forget(name);
    }

    /// [`Service::forget`], unless the target has been started again.
    fn forget_if_gone(&self, name: &str) {
        let tasks = match self.tasks.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        if !tasks.contains_key(name) {
            self.forget(name);
        }
    }

    /// Take every source's refreshes as they come: count and log each, keep
    /// the lists, and reconcile the targets they make.
    async fn follow_discovery(self: Arc<Self>, mut updates: mpsc::Receiver<Update>) {
        while let Some(first) = updates.recv().await {
            let mut batch = vec![first];
            while let Ok(more) = updates.try_recv() {
                batch.push(more);
            }
            let mut changed = false;
            for mut update in batch {
                let known = &self.config().config.known_secrets;
                update.refresh.detail = update.refresh.detail.map(|d| known.scrub(&d));
                let Some(applied) = self.discovery.apply(&update, unix_now()) else {
                    continue;
                };
                DiscoveryRefreshed {
                    source: &update.source,
                    refresh: &update.refresh,
                    consecutive_failures: applied.consecutive_failures,
                }
                .emit(&self.shared.sinks.discovery);
                if applied.skips_changed {
                    DiscoveryEntriesSkipped {
                        source: &update.source,
                        skipped: &update.refresh.list.skipped,
                    }
                    .emit();
                }
                changed = true;
            }
            if changed {
                self.reconcile();
            }
        }
    }

    /// Every discovery source as `/api/sources` shows it.
    pub fn sources(&self) -> Vec<SourceStatus> {
        self.discovery.sources()
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
        for warning in &loaded.warnings {
            ConfigWarned { warning }.emit();
        }
        if loaded.checksum == self.config().checksum {
            ConfigReloaded { changed: false }.emit(&self.shared.sinks.exporter);
            return Ok(ReloadOutcome::Unchanged);
        }
        self.shared.apply(&loaded.config.defaults);
        if let Ok(mut c) = self.current.write() {
            *c = Arc::new(loaded);
        }
        self.start();
        ConfigReloaded { changed: true }.emit(&self.shared.sinks.exporter);
        Ok(ReloadOutcome::Applied)
    }

    /// Stop every source loop and target task, wait (at most a few
    /// seconds) until the tasks are gone — a stdio server's drop starts its
    /// kill — then sweep every process still carrying one of our tags: the
    /// trees of servers that were open, and orphans the periodic sweeper
    /// had not reached (it dies with us).
    pub async fn shut_down(&self) {
        self.discovery.stop();
        let handles: Vec<JoinHandle<()>> = match self.tasks.lock() {
            Ok(mut tasks) => tasks.drain().map(|(_, (_, h))| h).collect(),
            Err(p) => p.into_inner().drain().map(|(_, (_, h))| h).collect(),
        };
        for h in &handles {
            h.abort();
        }
        let stopped = futures_util::future::join_all(handles);
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, stopped).await;
        // Logged and counted by the sweep itself.
        let _ = tokio::task::spawn_blocking(mcp_wire::transport::process_tree::sweep_at_exit).await;
    }
}

/// Host for URLs (never path, query or credentials), the command for stdio.
pub fn describe_endpoint(t: &TargetConfig) -> String {
    match &t.endpoint {
        config::EndpointConfig::Http(http) => format!(
            "{}://{}{}{} ({})",
            http.url.scheme(),
            http.url.host_str().unwrap_or("?"),
            http.url.port().map(|p| format!(":{p}")).unwrap_or_default(),
            shown_path(&http.url, t),
            http.settings.transport.label()
        ),
        config::EndpointConfig::Stdio(stdio) => format!("stdio: {}", stdio.command),
    }
}

/// Longest URL path shown, in bytes (cut with `…`).
const MAX_SHOWN_PATH_BYTES: usize = 64;

/// The URL's path, which tells targets on one host apart: the secrets the
/// configuration knows scrubbed, bounded; never the query (where API keys
/// travel) nor credentials.
fn shown_path(url: &url::Url, t: &TargetConfig) -> String {
    let path = url.path();
    if path == "/" {
        return String::new();
    }
    let scrubbed = t.known_secrets.scrub(path);
    // The mark comes on top of the bytes shown.
    cut(&scrubbed, MAX_SHOWN_PATH_BYTES + CUT_MARK.len()).into_owned()
}
