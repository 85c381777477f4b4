//! One tap running inside the application: the data path (`mcp_tap::Tap`)
//! on its own listener — never the exporter's web port — and one observer
//! task draining its queue. Stopping it stops taking connections, lets
//! exchanges in progress finish within the tap's grace period, then lets the
//! observer finish what was queued.

use super::observe::{observe, ClientSinks, ListingSinks, ObserverTask, TapHeader};
use super::queue::{observer_queue, QueueBudget};
use super::reference::Reference;
use mcp_observer::ObserverLimits;
use mcp_tap::{MergeClients, Tap, TapError, TapSettings, TapStats};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Everything one tap is started from.
#[derive(Clone)]
pub struct TapSpec {
    /// The configured name (the `tap` label).
    pub name: Arc<str>,
    /// Where clients connect (`host:port`; port 0 picks a free one).
    pub listen: String,
    pub settings: TapSettings,
    /// The queue between the data path and the observer.
    pub queue: QueueBudget,
    /// A listing whose handed-out cursor does not come back within this is
    /// abandoned.
    pub abandon_after: std::time::Duration,
    /// Client identities kept apart; later ones count as `other`.
    pub max_clients: usize,
    /// Where each client listing is told besides metrics and spans.
    pub listings: ListingSinks,
}

/// Why a tap did not start. Names the tap and its listen address (our own
/// configuration), never the upstream URL.
#[derive(Debug, thiserror::Error)]
pub enum TapStartError {
    #[error("tap {tap}: {source}")]
    Settings { tap: Arc<str>, source: TapError },
    #[error("tap {tap}: cannot listen on {address}: {source}")]
    Listen {
        tap: Arc<str>,
        address: String,
        source: std::io::Error,
    },
}

/// A tap serving; [`RunningTap::stop`] ends it.
pub struct RunningTap {
    pub name: Arc<str>,
    /// Where it listens (the port chosen when the spec said 0).
    pub local_addr: SocketAddr,
    pub stats: Arc<TapStats>,
    /// The tap's reference catalogue goes to its observer through here.
    pub references: mpsc::Sender<Reference>,
    stop: oneshot::Sender<()>,
    serving: JoinHandle<()>,
    observing: JoinHandle<()>,
}

/// Bind the tap's listener and start it and its observer task.
pub async fn start(spec: TapSpec, sinks: Arc<ClientSinks>) -> Result<RunningTap, TapStartError> {
    let stats = Arc::new(TapStats::default());
    let (queue, receiver) = observer_queue(spec.queue);
    let tap =
        Tap::new(spec.settings.clone(), Arc::new(queue), stats.clone()).map_err(|source| {
            TapStartError::Settings {
                tap: spec.name.clone(),
                source,
            }
        })?;
    let listener = tokio::net::TcpListener::bind(&spec.listen)
        .await
        .map_err(|source| TapStartError::Listen {
            tap: spec.name.clone(),
            address: spec.listen.clone(),
            source,
        })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| TapStartError::Listen {
            tap: spec.name.clone(),
            address: spec.listen.clone(),
            source,
        })?;
    // A few: they change only when the reference target's catalogue does.
    let (references, references_rx) = mpsc::channel(8);
    let task = ObserverTask {
        tap: spec.name.clone(),
        limits: ObserverLimits {
            inspect_bytes: spec.settings.limits.inspect_bytes,
            abandon_after: spec.abandon_after,
            max_clients: spec.max_clients,
            ..ObserverLimits::default()
        },
        stats: stats.clone(),
        sinks,
        header: TapHeader {
            listen: local_addr.to_string(),
            upstream: shown_url(&spec.settings.upstream),
            merge_pages: merge_pages(&spec.settings.merge.clients),
        },
        tick: std::time::Duration::from_secs(1),
        listings: spec.listings.clone(),
        references: Some(references_rx),
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        tap.serve(listener, async {
            let _ = stopped.await;
        })
        .await;
        // `tap` (and with it the queue's sender) drops here: the observer
        // task sees the end of the queue once it is drained.
    });
    let observing = tokio::spawn(observe(receiver, task));
    Ok(RunningTap {
        name: spec.name,
        local_addr,
        stats,
        references,
        stop,
        serving,
        observing,
    })
}

impl RunningTap {
    /// Stop taking connections, let open exchanges finish (the tap's grace
    /// period), then let the observer finish what was queued.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.serving.await;
        let _ = self.observing.await;
    }
}

/// The upstream as people may see it: scheme, host, port and path (the tap
/// refuses URLs with credentials; the query is left out all the same).
pub fn shown_url(url: &url::Url) -> String {
    let mut shown = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    shown
}

pub(crate) fn merge_pages(clients: &MergeClients) -> Vec<String> {
    match clients {
        MergeClients::Nobody => Vec::new(),
        MergeClients::All => vec!["all".to_string()],
        MergeClients::Named(names) => names.clone(),
    }
}
