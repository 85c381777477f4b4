//! One tap running inside the application: the data path (`mcp_tap::Tap`)
//! on its own listener — never the exporter's web port — and one observer
//! task draining its queue. Stopping it stops taking connections, lets
//! exchanges in progress finish within the tap's grace period, then lets the
//! observer finish what was queued.

use super::fds::{self, TapShare};
use super::learn::{learn, LearnRoute, LearnSpec, LEARN_QUEUE};
use super::observe::{ClientSinks, ObserverInputs, ObserverTask, TapHeader};
use super::queue::{observer_queue, QueueBudget};
use super::reference::{Reference, RouteRef};
use super::setup;
use super::start_error::{StartFailure, TapStartError};
use super::supervise::supervise;
use crate::config::taps::TapConfig;
use crate::telemetry::metrics::{ObserverHealth, WebMetrics};
use mcp_observer::{normalise, Routing};
use mcp_tap::{MergeClients, Tap, TapSettings, TapStats};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

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

/// Bind the tap `config` declares (its connections held to `share`) and
/// start it and its observer task.
pub async fn start(
    config: &TapConfig,
    share: TapShare,
    sinks: Arc<ClientSinks>,
    web: &WebMetrics,
) -> Result<RunningTap, TapStartError> {
    let name: Arc<str> = Arc::from(config.name.as_str());
    let fail = |cause: StartFailure| TapStartError::new(&name, cause);
    let mut settings = setup::tap_settings(config, web).map_err(fail)?;
    fds::fit(&mut settings.limits, share);
    let listings =
        setup::listing_sinks(config.report.as_ref(), config.log_listings).map_err(fail)?;
    let stats = Arc::new(TapStats::default());
    let (queue, receiver) = observer_queue(QueueBudget::default());
    let tap =
        Tap::new(settings.clone(), Arc::new(queue), stats.clone()).map_err(|e| fail(e.into()))?;
    let address = &config.listener.address;
    let listen = |source| {
        fail(StartFailure::Listen {
            address: address.clone(),
            source,
        })
    };
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(listen)?;
    let local_addr = listener.local_addr().map_err(listen)?;
    // A few per route and kind: they change only when a catalogue does.
    let (references, references_rx) = mpsc::channel(64);
    let mut routing = setup::routing(&config.routes);
    routing.default_path = Some(normalise(settings.upstream.path()));
    let learning = config
        .routes
        .learn_every
        .map(|every| start_learner(&name, &settings, every, &routing, references.clone()));
    let task = ObserverTask {
        tap: name.clone(),
        limits: setup::observer_limits(config),
        routing,
        apps: settings.apps.clone(),
        stats: stats.clone(),
        sinks,
        header: TapHeader {
            listen: local_addr.to_string(),
            upstream: shown_url(&settings.upstream),
            merge_pages: merge_pages(&settings.merge.clients),
        },
        tick: std::time::Duration::from_secs(1),
        listings,
        health: Arc::new(ObserverHealth::default()),
        learner: learning.as_ref().map(|(learner, _)| learner.clone()),
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
        name,
        local_addr,
        stats,
        references,
        observer,
        stop,
        serving,
        observing,
        learning: learning.map(|(_, task)| task),
    })
}

/// The tap's learner, walking its routes itself every `every`: where new
/// routes go, and its task. It starts with the upstream's own path and the
/// named routes.
fn start_learner(
    name: &Arc<str>,
    settings: &TapSettings,
    every: std::time::Duration,
    routing: &Routing,
    references: mpsc::Sender<Reference>,
) -> (mpsc::Sender<LearnRoute>, JoinHandle<()>) {
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
    let task = learn(name.clone(), learn_spec, start, rx, references);
    (tx, tokio::spawn(task))
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
