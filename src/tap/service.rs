//! The taps `serve` runs — `taps:` in the configuration, or the one of
//! `mcp-exporter tap` — each on its own listener. A reload changes them
//! like everything else: a tap added starts, one removed stops, one changed
//! restarts (its clients reconnect); one that cannot start is logged and
//! the others go on. Each tap with a `target:` (for the upstream's own
//! path) or named routes with theirs gets each target's last complete
//! listing as that route's reference catalogue whenever it changes.

use super::client_views::ClientBook;
use super::fds;
use super::observe::ClientSinks;
use super::reference::{RouteRef, Sent};
use super::run::{start, RunningTap};
use super::start_error::TapStartError;
use crate::config::taps::{TapConfig, TapOrigin};
use crate::scheduler::Service;
use crate::telemetry::events::TapNotStarted;
use crate::telemetry::metrics::{TapHealth, WebMetrics};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How often a reload and the reference targets' catalogues are looked at.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// One running tap and what it was started from.
struct Running {
    tap: RunningTap,
    config: TapConfig,
    sent: Sent,
}

/// Every running tap, by name.
pub struct TapService {
    running: Mutex<BTreeMap<Arc<str>, Running>>,
    health: Arc<TapHealth>,
    sinks: Arc<ClientSinks>,
    /// Where the listeners' TLS reloads are counted.
    web: WebMetrics,
}

impl TapService {
    pub fn new(health: Arc<TapHealth>, sinks: Arc<ClientSinks>, web: WebMetrics) -> TapService {
        TapService {
            running: Mutex::new(BTreeMap::new()),
            health,
            sinks,
            web,
        }
    }

    /// What the taps publish for people (the status page, `/api/clients`).
    pub fn book(&self) -> Arc<ClientBook> {
        self.sinks.book.clone()
    }

    /// Start the taps `given` (`mcp-exporter tap`'s) and the configured
    /// ones; the first that cannot start stops those already started and
    /// is the error (at start-up a tap that cannot listen is a
    /// configuration error, as the exporter's own port is).
    pub async fn start_all(
        &self,
        configured: &[TapConfig],
        given: &[TapConfig],
    ) -> Result<(), TapStartError> {
        let share = fds::share(given.len() + configured.len());
        for config in given.iter().chain(configured) {
            if let Err(e) = self.start_one(config, share).await {
                self.shut_down().await;
                return Err(e);
            }
        }
        Ok(())
    }

    async fn start_one(
        &self,
        config: &TapConfig,
        share: fds::TapShare,
    ) -> Result<(), TapStartError> {
        let tap = start(config, share, self.sinks.clone(), &self.web).await?;
        crate::telemetry::logging::announce_tap(&tap.name, &format!("http://{}", tap.local_addr));
        self.health
            .insert(tap.name.clone(), tap.stats.clone(), tap.observer.clone());
        let name = tap.name.clone();
        let running = Running {
            tap,
            config: config.clone(),
            sent: Sent::default(),
        };
        self.running.lock().await.insert(name, running);
        Ok(())
    }

    /// Bring the configured taps to `configured` (after a reload); the
    /// taps of the command line stay.
    pub async fn reconcile(&self, configured: &[TapConfig]) {
        let stale: Vec<Arc<str>> = {
            let running = self.running.lock().await;
            running
                .iter()
                .filter(|(_, r)| {
                    r.config.origin == TapOrigin::File && !configured.contains(&r.config)
                })
                .map(|(name, _)| name.clone())
                .collect()
        };
        for name in stale {
            let taken = self.running.lock().await.remove(&name);
            if let Some(running) = taken {
                self.stop(running.tap).await;
            }
        }
        // Taps started now get their share among all the taps there will
        // be; those running keep theirs.
        let given = {
            let running = self.running.lock().await;
            (running.values())
                .filter(|r| r.config.origin == TapOrigin::Flags)
                .count()
        };
        let share = fds::share(configured.len() + given);
        for c in configured {
            if self.running.lock().await.contains_key(c.name.as_str()) {
                continue;
            }
            if let Err(error) = self.start_one(c, share).await {
                TapNotStarted {
                    tap: &c.name,
                    error: &error.to_string(),
                }
                .emit(&self.health);
            }
        }
    }

    /// Follow the service: after each reload, reconcile the taps; every
    /// second, hand changed reference catalogues to the taps' observers.
    pub async fn follow(self: Arc<Self>, service: Arc<Service>) {
        let mut seen = service.config();
        loop {
            tokio::time::sleep(FOLLOW_EVERY).await;
            let now = service.config();
            if !Arc::ptr_eq(&now, &seen) {
                self.reconcile(&now.config.taps).await;
                seen = now;
            }
            let mut running = self.running.lock().await;
            for r in running.values_mut() {
                for (route, target) in reference_targets(&r.config) {
                    let baselines = &service.shared.sinks.baselines;
                    for reference in r.sent.changed(baselines, &route, target) {
                        let _ = r.tap.references.try_send(reference);
                    }
                }
            }
        }
    }

    async fn stop(&self, tap: RunningTap) {
        let name = tap.name.clone();
        tap.stop().await;
        self.health.remove(&name);
        if let Some(metrics) = &self.sinks.metrics {
            metrics.forget_tap(&name);
        }
        self.sinks.book.remove(&name);
    }

    /// Stop every tap: no new connections, open exchanges finish within
    /// each tap's grace period.
    pub async fn shut_down(&self) {
        let taps = std::mem::take(&mut *self.running.lock().await);
        let stops = taps.into_values().map(|r| self.stop(r.tap));
        futures_util::future::join_all(stops).await;
    }
}

/// A configured tap's reference targets, by route: `target:` for the
/// upstream's own path, `routes[].target` for each named route.
fn reference_targets(c: &TapConfig) -> Vec<(RouteRef, &str)> {
    let mut out: Vec<(RouteRef, &str)> = c
        .target
        .as_deref()
        .map(|t| (RouteRef::Default, t))
        .into_iter()
        .collect();
    for route in &c.routes.named {
        if let (Some(name), Some(target)) = (route.route_name(), route.target.as_deref()) {
            out.push((RouteRef::Named(name), target));
        }
    }
    out
}
