//! One tap running inside the application: the data path (`mcp_tap::Tap`)
//! on its own listener — never the exporter's web port — and one observer
//! task draining its queue. Stopping it stops taking connections, lets
//! exchanges in progress finish within the tap's grace period, then lets the
//! observer finish what was queued.

use super::learn::{learn, LearnRoute, LearnSpec, LEARN_QUEUE};
use super::observe::{ClientSinks, ListingSinks, ObserverInputs, ObserverTask, TapHeader};
use super::queue::{observer_queue, QueueBudget};
use super::reference::{Reference, RouteRef};
use super::supervise::supervise;
use crate::telemetry::metrics::ObserverHealth;
use mcp_observer::{normalise, ObserverLimits, Routing};
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
    /// Sessions followed at once, and how long a quiet client is kept.
    pub observing: ObservingSpec,
    /// Where each client listing is told besides metrics and spans.
    pub listings: ListingSinks,
    /// How requests become routes, and their bounds.
    pub routes: RouteSpec,
}

/// The observer's bounds a tap's configuration sets.
#[derive(Debug, Clone, Copy)]
pub struct ObservingSpec {
    /// Open sessions held (`max_sessions`); past them (and an eighth more,
    /// [`ObservingSpec::limits`]) the one quiet longest is forgotten.
    pub max_sessions: usize,
    /// A client with no list request for this long is forgotten, and its
    /// series with it (`client_idle`).
    pub client_idle: std::time::Duration,
}

impl Default for ObservingSpec {
    fn default() -> Self {
        ObservingSpec {
            max_sessions: mcp_observer::DEFAULT_MAX_SESSIONS,
            client_idle: mcp_observer::DEFAULT_CLIENT_IDLE,
        }
    }
}

impl ObservingSpec {
    /// The observer's limits for a tap with these bounds. Its session cap
    /// is an eighth above `max_sessions`: while clients end sessions and
    /// make others, a request racing its session's DELETE makes that
    /// session again until the upstream's 404 ends it, and a gateway that
    /// holds `max_sessions` open must not lose one to that.
    pub fn limits(&self, base: ObserverLimits) -> ObserverLimits {
        let sessions = self.max_sessions.saturating_add(self.max_sessions / 8);
        ObserverLimits {
            max_sessions: sessions,
            // Each session may hold a GET stream open besides its POSTs.
            max_exchanges: base.max_exchanges.max(sessions.saturating_mul(2)),
            client_idle: self.client_idle,
            ..base
        }
    }
}

/// A tap's routes: which paths are which route, how many are kept, and
/// whether the tap walks them itself.
#[derive(Debug, Clone)]
pub struct RouteSpec {
    /// Named routes and patterns, and whether other paths are learned (the
    /// upstream's own path is filled in from the upstream URL).
    pub routing: Routing,
    pub max_routes: usize,
    pub max_client_routes: usize,
    /// The tap walks each route itself this often (`learn_catalogue`).
    pub learn_every: Option<std::time::Duration>,
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
    /// Whether its observer observes now, and how often it was restarted.
    pub observer: Arc<ObserverHealth>,
    stop: oneshot::Sender<()>,
    serving: JoinHandle<()>,
    observing: JoinHandle<()>,
    learning: Option<JoinHandle<()>>,
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
    // A few per route and kind: they change only when a catalogue does.
    let (references, references_rx) = mpsc::channel(64);
    let mut routing = spec.routes.routing.clone();
    routing.default_path = Some(normalise(spec.settings.upstream.path()));
    let (learner, learning) = start_learner(&spec, &routing, references.clone());
    let task = ObserverTask {
        tap: spec.name.clone(),
        limits: spec.observing.limits(ObserverLimits {
            inspect_bytes: spec.settings.limits.inspect_bytes,
            abandon_after: spec.abandon_after,
            max_clients: spec.max_clients,
            max_routes: spec.routes.max_routes,
            max_client_routes: spec.routes.max_client_routes,
            ..ObserverLimits::default()
        }),
        routing,
        apps: spec.settings.apps.clone(),
        stats: stats.clone(),
        sinks,
        header: TapHeader {
            listen: local_addr.to_string(),
            upstream: shown_url(&spec.settings.upstream),
            merge_pages: merge_pages(&spec.settings.merge.clients),
        },
        tick: std::time::Duration::from_secs(1),
        listings: spec.listings.clone(),
        health: Arc::new(ObserverHealth::default()),
        learner,
    };
    let observer = task.health.clone();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        tap.serve(listener, async {
            let _ = stopped.await;
        })
        .await;
        // `tap` (and with it the queue's sender) drops here: the observer
        // task sees the end of the queue once it is drained.
    });
    let inputs = ObserverInputs::new(receiver, Some(references_rx));
    let observing = tokio::spawn(supervise(inputs, task));
    Ok(RunningTap {
        name: spec.name,
        local_addr,
        stats,
        references,
        observer,
        stop,
        serving,
        observing,
        learning,
    })
}

/// The tap's learner, when it walks its routes itself: where new routes
/// go, and its task. It starts with the upstream's own path and the named
/// routes.
fn start_learner(
    spec: &TapSpec,
    routing: &Routing,
    references: mpsc::Sender<Reference>,
) -> (Option<mpsc::Sender<LearnRoute>>, Option<JoinHandle<()>>) {
    let Some(every) = spec.routes.learn_every else {
        return (None, None);
    };
    let settings = &spec.settings;
    let learn_spec = LearnSpec {
        upstream: settings.upstream.clone(),
        ca_file: settings.upstream_tls.ca_file.clone(),
        insecure_skip_verify: settings.upstream_tls.insecure_skip_verify,
        walk: settings.merge.walk.clone(),
        max_response_bytes: settings.merge.max_page_bytes as u64,
        connect_timeout: settings.limits.connect_timeout,
        every,
    };
    let mut start = Vec::new();
    for rule in &routing.rules {
        if let Some(path) = rule.literal_path() {
            let name = rule.name().map_or_else(|| path.clone(), str::to_string);
            start.push(LearnRoute {
                route: RouteRef::Named(name),
                path,
            });
        }
    }
    if let Some(path) = routing.default_path.clone() {
        if !start.iter().any(|r| r.path == path) {
            start.push(LearnRoute {
                route: RouteRef::Default,
                path,
            });
        }
    }
    let (tx, rx) = mpsc::channel(LEARN_QUEUE);
    let task = learn(spec.name.clone(), learn_spec, start, rx, references);
    (Some(tx), Some(tokio::spawn(task)))
}

impl RunningTap {
    /// Stop taking connections, let open exchanges finish (the tap's grace
    /// period), then let the observer finish what was queued.
    pub async fn stop(self) {
        if let Some(learning) = &self.learning {
            learning.abort();
        }
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
