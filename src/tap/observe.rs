//! A tap's observer task: drains the queue the data path fills, hands each
//! event to the observer (pure logic, `mcp_observer`) and what it finds to
//! the sinks — metrics at once; each client's verdict, the views people
//! read and a log line per verdict change on every tick (about once a
//! second), when the observer also ends listings past `abandon_after`. A
//! route seen for the first time goes to the tap's learner, when it has
//! one; the catalogues handed back (and a configured target's) go to the
//! observer.

use super::client_verdicts::{self, Clock};
use super::client_views::{ClientBook, RouteRuleView, RouteView, TapView};
use super::learn::LearnRoute;
use super::queue::QueueReceiver;
use super::recent_misuse::Recent;
use super::reference::{Reference, RouteRef};
use super::report_file::ReportFile;
use crate::telemetry::events::{
    ClientListingObserved, ClientVerdictChanged, LevelChange, ReportLineDropped, RouteUnmatched,
};
use crate::telemetry::metrics::ClientMetrics;
use crate::telemetry::metrics::ObserverHealth;
use crate::telemetry::spans::TraceSink;
use crate::verdict::Health;
use mcp_listing::Kind;
use mcp_observer::{ClientListing, ClientRoute, Fact, Observer, ObserverLimits, RouteId, Routing};
use mcp_tap::apps::Apps;
use mcp_tap::TapStats;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Where every tap's findings go (one per exporter).
pub struct ClientSinks {
    /// `None` where nothing serves `/metrics` (the stdio tap).
    pub metrics: Option<Arc<ClientMetrics>>,
    /// A span per client listing when tracing is on.
    pub traces: TraceSink,
    pub book: Arc<ClientBook>,
    /// How long cursor misuse counts in a client's verdict.
    pub event_window: Duration,
}

/// What the views say of the tap itself.
#[derive(Debug, Clone)]
pub struct TapHeader {
    pub listen: String,
    pub upstream: String,
    pub merge_pages: Vec<String>,
}

/// What one tap's observer task works with (cloned for each observer the
/// supervisor starts).
#[derive(Clone)]
pub struct ObserverTask {
    pub tap: Arc<str>,
    pub limits: ObserverLimits,
    /// How its requests become routes.
    pub routing: Routing,
    /// The operator's apps, which name clients by address and User-Agent
    /// (the data path's merging reads the same rules).
    pub apps: Apps,
    /// The tap's counts: the observer's own not-observed messages join the
    /// data path's there.
    pub stats: Arc<TapStats>,
    pub sinks: Arc<ClientSinks>,
    pub header: TapHeader,
    /// How often the observer is ticked and the views published.
    pub tick: Duration,
    /// Where each client listing is told besides metrics and spans.
    pub listings: ListingSinks,
    /// Whether it observes, for `/metrics` and the views.
    pub health: Arc<ObserverHealth>,
    /// Where a route seen for the first time is sent to be walked
    /// (`learn_catalogue`).
    pub learner: Option<mpsc::Sender<LearnRoute>>,
}

/// A tap's own destinations for each finished client listing.
#[derive(Debug, Clone, Default)]
pub struct ListingSinks {
    /// `--report FILE`: a JSON line per client listing.
    pub report: Option<Arc<ReportFile>>,
    /// A log line per client listing (the stdio tap's default).
    pub log: bool,
}

/// The task's state between events.
struct State {
    task: ObserverTask,
    observer: Observer,
    recent: Recent,
    /// Each client's level on each route and since when (Unix seconds).
    levels: HashMap<ClientRoute, (Health, f64)>,
    facts: Vec<Fact>,
}

/// What an observer reads, kept by its supervisor across restarts: the
/// queue, the reference catalogues (configured targets', the tap's own
/// walks) as they change, and the last of each, for a fresh observer.
pub struct ObserverInputs {
    pub queue: QueueReceiver,
    pub references: Option<mpsc::Receiver<Reference>>,
    /// The last reference per route and kind (a fresh observer starts
    /// from these; a learned route's waits until requests make it again).
    pub known: HashMap<(RouteRef, Kind), Reference>,
}

impl ObserverInputs {
    pub fn new(queue: QueueReceiver, references: Option<mpsc::Receiver<Reference>>) -> Self {
        ObserverInputs {
            queue,
            references,
            known: HashMap::new(),
        }
    }
}

/// Runs until the data path is gone and the queue is drained.
pub async fn observe(inputs: &mut ObserverInputs, task: ObserverTask) {
    let mut tick = tokio::time::interval(task.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ObserverInputs {
        queue,
        references,
        known,
    } = inputs;
    let mut state = State {
        observer: Observer::with_routing(task.limits.clone(), task.routing.clone())
            .with_apps(task.apps.clone()),
        recent: Recent::new(task.sinks.event_window),
        levels: HashMap::new(),
        facts: Vec::new(),
        task,
    };
    if let Some(metrics) = &state.task.sinks.metrics {
        metrics.tap_started(&state.task.tap);
    }
    state.task.health.started();
    for reference in known.values() {
        state.reference(reference);
    }
    loop {
        tokio::select! {
            event = queue.recv() => match event {
                Some(event) => {
                    #[cfg(debug_assertions)]
                    super::test_hooks::panic_on(&event);
                    state.observer.observe(event, &mut state.facts);
                    state.settle(known);
                }
                None => break,
            },
            _ = tick.tick() => state.tick(),
            Some(reference) = next_reference(references) => {
                state.reference(&reference);
                known.insert((reference.route.clone(), reference.kind), reference);
            }
        }
    }
    state.tick();
    state.flush_report().await;
}

/// Longest wait, at the end, for the report file's lines to be written.
const REPORT_FLUSH: Duration = Duration::from_secs(5);

impl State {
    /// Hand what the observer found to the sinks; a route made again after
    /// a restart gets its last reference catalogue back from `known`.
    fn settle(&mut self, known: &HashMap<(RouteRef, Kind), Reference>) {
        let mut again = Vec::new();
        self.hand_over(known, &mut again);
        for reference in again {
            self.reference(&reference);
        }
    }

    fn hand_over(
        &mut self,
        known: &HashMap<(RouteRef, Kind), Reference>,
        again: &mut Vec<Reference>,
    ) {
        let tap = &self.task.tap;
        for fact in self.facts.drain(..) {
            if let Some(metrics) = &self.task.sinks.metrics {
                metrics.fact(tap, &fact);
            }
            self.recent.fact(&fact);
            match &fact {
                Fact::NotObserved(reason) => self.task.stats.not_observed(*reason),
                Fact::Listing(listing) => {
                    listing_done(tap, listing, &self.task.sinks, &self.task.listings);
                }
                Fact::NewRoute {
                    route,
                    path: Some(path),
                } => {
                    let named = route_ref(&self.observer, route);
                    let kept = Kind::ALL
                        .into_iter()
                        .filter_map(|k| known.get(&(named.clone(), k)));
                    again.extend(kept.cloned());
                    if let Some(learner) = &self.task.learner {
                        let route = named;
                        let path = path.to_string();
                        // Full: the learner is busy; the route waits for its next round.
                        let _ = learner.try_send(LearnRoute { route, path });
                    }
                }
                Fact::ClientGone(client) => self.levels.retain(|key, _| key.client != *client),
                Fact::RouteUnmatched { written, requests } => RouteUnmatched {
                    tap,
                    written,
                    requests: *requests,
                }
                .emit(),
                _ => {}
            }
        }
    }

    /// A reference catalogue for one of the tap's routes (one it does not
    /// know is dropped: routes come from requests).
    fn reference(&mut self, reference: &Reference) {
        let route = match &reference.route {
            RouteRef::Default => Some(self.observer.default_route().clone()),
            RouteRef::Named(name) => self.observer.route_named(name),
        };
        if let Some(route) = route {
            let now = std::time::Instant::now();
            let (names, pages) = (&reference.names, reference.pages);
            self.observer
                .set_reference(&route, reference.kind, names, pages, now, &mut self.facts);
            self.hand_over(&HashMap::new(), &mut Vec::new());
        }
    }

    fn tick(&mut self) {
        let clock = Clock::now();
        self.observer.tick(clock.now, &mut self.facts);
        self.hand_over(&HashMap::new(), &mut Vec::new());
        self.task.health.held(self.observer.usage());
        self.report_dropped();
        self.recent.prune(clock.now);
        let view = self.view(&clock);
        self.task.sinks.book.publish(view);
    }

    /// What the report file's writer left out, counted and logged here.
    fn report_dropped(&self) {
        let Some(report) = &self.task.listings.report else {
            return;
        };
        for dropped in report.take_dropped() {
            ReportLineDropped {
                tap: &self.task.tap,
                dropped: &dropped,
                max_bytes: report.max_bytes(),
            }
            .emit(self.task.sinks.metrics.as_deref());
        }
    }

    /// The report file's lines written (a blocking wait, off the runtime
    /// workers), at the end.
    async fn flush_report(&self) {
        if let Some(report) = self.task.listings.report.clone() {
            let flushed = tokio::task::spawn_blocking(move || report.flush(REPORT_FLUSH));
            let _ = flushed.await;
        }
        self.report_dropped();
    }

    /// Every client's verdict and view; a line for each level that changed.
    fn view(&mut self, clock: &Clock) -> TapView {
        let mut clients = Vec::new();
        for (id, tally) in self.observer.tallies() {
            let (verdict, mut view) = client_verdicts::client(id, tally, &self.recent, clock);
            let level = verdict.overall.level;
            let since = match self.levels.get(id) {
                Some((was, since)) if *was == level => *since,
                was => {
                    ClientVerdictChanged {
                        tap: &self.task.tap,
                        client: id.client.label(),
                        route: id.route.label(),
                        change: LevelChange {
                            from: was.map(|(h, _)| *h),
                            to: level,
                            first_reason: verdict.overall.first_reason(),
                        },
                    }
                    .emit();
                    self.levels.insert(id.clone(), (level, clock.unix_now()));
                    clock.unix_now()
                }
            };
            view.verdict.since_unix_seconds = since;
            clients.push(view);
        }
        clients.sort_by(|a, b| {
            b.verdict
                .verdict
                .level
                .cmp(&a.verdict.verdict.level)
                .then_with(|| a.client.cmp(&b.client))
                .then_with(|| a.route.cmp(&b.route))
        });
        let default = self.observer.default_route();
        let catalogue =
            client_verdicts::catalogues(|k| self.observer.catalogue(default, k).cloned(), clock);
        TapView {
            name: self.task.tap.clone(),
            listen: self.task.header.listen.clone(),
            upstream: self.task.header.upstream.clone(),
            merge_pages: self.task.header.merge_pages.clone(),
            catalogue,
            routes: self.routes(clock),
            route_rules: self
                .observer
                .route_rules()
                .map(|(path, matched)| RouteRuleView {
                    path: path.to_string(),
                    matched,
                })
                .collect(),
            merges: client_verdicts::merges(&self.task.stats),
            clients,
            observing: true,
            observer_restarts: self.task.health.restarts(),
            at_unix_seconds: clock.unix_now(),
        }
    }

    /// Every route with a known catalogue or a client, by name.
    fn routes(&self, clock: &Clock) -> Vec<RouteView> {
        let mut routes: BTreeMap<RouteId, RouteView> = BTreeMap::new();
        let view = |route: &RouteId| RouteView {
            route: route.name().to_string(),
            label: route.label().map(str::to_string),
            catalogue: BTreeMap::new(),
        };
        for (route, kind, info) in self.observer.catalogues() {
            let entry = routes.entry(route.clone()).or_insert_with(|| view(route));
            let shown = client_verdicts::catalogue_view(info, clock);
            entry.catalogue.insert(kind.label(), shown);
        }
        for (key, _) in self.observer.tallies() {
            routes
                .entry(key.route.clone())
                .or_insert_with(|| view(&key.route));
        }
        routes.into_values().collect()
    }
}

/// How the application names `route` to the observer.
fn route_ref(observer: &Observer, route: &RouteId) -> RouteRef {
    if route == observer.default_route() {
        RouteRef::Default
    } else {
        RouteRef::Named(route.name().to_string())
    }
}

/// A finished client listing: its span, its report line, its log line.
fn listing_done(tap: &Arc<str>, listing: &ClientListing, sinks: &ClientSinks, own: &ListingSinks) {
    let clock = Clock::now();
    let (start, end) = (clock.system(listing.started), clock.system(listing.ended));
    sinks.traces.export_client_listing(tap, listing, start, end);
    if let Some(report) = &own.report {
        if let Err(dropped) = report.listing(tap, listing, &clock) {
            ReportLineDropped {
                tap,
                dropped: &dropped,
                max_bytes: report.max_bytes(),
            }
            .emit(sinks.metrics.as_deref());
        }
    }
    if own.log {
        ClientListingObserved { tap, listing }.emit();
    }
}

/// The next reference catalogue, or never when the tap has none.
async fn next_reference(references: &mut Option<mpsc::Receiver<Reference>>) -> Option<Reference> {
    match references {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
