//! The taps `serve` runs (from `taps:` in the configuration, or the one of
//! `mcp-exporter tap`): started once the exporter listens, each on its own
//! listener, and stopped when it shuts down.

use super::book::ClientBook;
use super::observe::ClientSinks;
use super::run::{start, RunningTap, TapSpec, TapStartError};
use crate::telemetry::metrics::TapHealth;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Mutex;

/// Every running tap, by name.
pub struct TapService {
    running: Mutex<BTreeMap<Arc<str>, RunningTap>>,
    health: Arc<TapHealth>,
    sinks: Arc<ClientSinks>,
}

impl TapService {
    pub fn new(health: Arc<TapHealth>, sinks: Arc<ClientSinks>) -> TapService {
        TapService {
            running: Mutex::new(BTreeMap::new()),
            health,
            sinks,
        }
    }

    /// What the taps publish for people (the status page, `/api/clients`).
    pub fn book(&self) -> Arc<ClientBook> {
        self.sinks.book.clone()
    }

    /// Start every tap; the first that cannot start stops those already
    /// started and is the error (at start-up a tap that cannot listen is a
    /// configuration error, as the exporter's own port is).
    pub async fn start_all(&self, specs: Vec<TapSpec>) -> Result<(), TapStartError> {
        for spec in specs {
            if let Err(e) = self.start_one(spec).await {
                self.shut_down().await;
                return Err(e);
            }
        }
        Ok(())
    }

    async fn start_one(&self, spec: TapSpec) -> Result<(), TapStartError> {
        let running = start(spec, self.sinks.clone()).await?;
        crate::cli::logging::announce_tap(&running.name, &format!("http://{}", running.local_addr));
        self.health
            .insert(running.name.clone(), running.stats.clone());
        self.running
            .lock()
            .await
            .insert(running.name.clone(), running);
        Ok(())
    }

    /// Where each tap listens.
    pub async fn listening(&self) -> Vec<(Arc<str>, SocketAddr)> {
        let running = self.running.lock().await;
        running
            .values()
            .map(|t| (t.name.clone(), t.local_addr))
            .collect()
    }

    /// Stop every tap: no new connections, open exchanges finish within
    /// each tap's grace period.
    pub async fn shut_down(&self) {
        let taps = std::mem::take(&mut *self.running.lock().await);
        let stops = taps.into_values().map(|tap| async move {
            let name = tap.name.clone();
            tap.stop().await;
            self.health.remove(&name);
            if let Some(metrics) = &self.sinks.metrics {
                metrics.forget_tap(&name);
            }
            self.sinks.book.remove(&name);
        });
        futures_util::future::join_all(stops).await;
    }
}
