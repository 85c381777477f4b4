//! The refresh loop of one source: refresh at once, then every
//! `refresh_interval`, and sooner when the source's cheap check says its
//! list changed (a `file_sd` file touched). Each refresh is handed to the
//! receiver whole; the loop keeps nothing of it.

use super::file_sd::FileSd;
use super::http_sd::HttpSd;
use super::refresh::Refresh;
use super::registry::McpRegistry;
use super::DiscoverySource;
use crate::config::{ProbeModule, SourceConfig, SourceKind};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How often a source's cheap change check runs between refreshes.
pub const CHANGE_CHECK_EVERY: Duration = Duration::from_secs(2);

/// One refresh of one source, from the loop started as `generation`: a
/// receiver drops updates of loops it has replaced since.
#[derive(Debug)]
pub struct Update {
    pub source: String,
    pub generation: u64,
    pub refresh: Refresh,
}

/// Start `source`'s loop, bound to `module`; it stops when `updates` is
/// closed or the handle is aborted.
pub fn spawn(
    source: Arc<SourceConfig>,
    module: ProbeModule,
    generation: u64,
    updates: mpsc::Sender<Update>,
) -> JoinHandle<()> {
    let looped = Looped {
        name: source.name.clone(),
        every: source.refresh_interval,
        generation,
        updates,
    };
    tokio::spawn(looped.run(AnySource::open(source, module)))
}

/// One refresh of `source` now, bound to `module` (`discover`).
pub async fn refresh_once(source: Arc<SourceConfig>, module: ProbeModule) -> Refresh {
    AnySource::open(source, module).refresh().await
}

/// The source kind a configured source is.
enum AnySource {
    FileSd(FileSd),
    HttpSd(HttpSd),
    Registry(McpRegistry),
}

impl AnySource {
    fn open(source: Arc<SourceConfig>, module: ProbeModule) -> AnySource {
        match source.kind.clone() {
            SourceKind::FileSd {
                files,
                max_file_bytes,
            } => AnySource::FileSd(FileSd::new(source, module, files, max_file_bytes)),
            SourceKind::HttpSd(endpoint) => {
                AnySource::HttpSd(HttpSd::new(source, module, endpoint))
            }
            SourceKind::Registry(registry) => {
                AnySource::Registry(McpRegistry::new(source, module, registry))
            }
        }
    }
}

impl DiscoverySource for AnySource {
    async fn refresh(&mut self) -> Refresh {
        match self {
            AnySource::FileSd(s) => s.refresh().await,
            AnySource::HttpSd(s) => s.refresh().await,
            AnySource::Registry(s) => s.refresh().await,
        }
    }

    async fn changed(&mut self) -> bool {
        match self {
            AnySource::FileSd(s) => s.changed().await,
            AnySource::HttpSd(s) => s.changed().await,
            AnySource::Registry(s) => s.changed().await,
        }
    }
}

struct Looped {
    name: String,
    every: Duration,
    generation: u64,
    updates: mpsc::Sender<Update>,
}

impl Looped {
    async fn run<S: DiscoverySource>(self, mut source: S) {
        loop {
            let refresh = source.refresh().await;
            let update = Update {
                source: self.name.clone(),
                generation: self.generation,
                refresh,
            };
            if self.updates.send(update).await.is_err() {
                return;
            }
            let next = Instant::now() + self.every;
            loop {
                let now = Instant::now();
                if now >= next {
                    break;
                }
                tokio::time::sleep(CHANGE_CHECK_EVERY.min(next - now)).await;
                if Instant::now() < next && source.changed().await {
                    break;
                }
            }
        }
    }
}
