//! Events of the exporter itself, one struct each (vector's
//! `internal_events`): `emit` writes the log line and moves the series
//! when it has one, so a log line never goes without its count or the
//! other way round. Every `emit` is `#[track_caller]`: its line carries
//! where it was emitted (`mcp_listing::EmittedAt`), which the logfmt
//! format shows as `source`. The orphan sweeper's event lives in the wire
//! crate (`process_tree.rs`), which owns its count.
//!
//! A refused `/probe` is counted and not logged: the scraper reads why in
//! the 503, and any client could otherwise fill our log.

use super::metrics::{
    ClientMetrics, DiscoveryMetrics, ExporterMetrics, ObserverHealth, ReloadResult, ReportDrop,
    TapHealth, WebMetrics,
};
use crate::discovery::{Refresh, SkipList};
use crate::poll::unix_now;
use crate::verdict::{Health, Reason};
use mcp_listing::EmittedAt;
use std::sync::Arc;

/// How many left-out discovery entries are logged one by one; the rest
/// are on `/api/sources`.
const SKIPPED_ENTRIES_LOGGED: usize = 5;

/// A configuration reload was refused (unreadable or invalid file); the
/// running configuration stays.
#[derive(Debug)]
pub struct ConfigReloadFailed<'a> {
    pub error: &'a str,
}

impl ConfigReloadFailed<'_> {
    #[track_caller]
    pub fn emit(self, exporter: &ExporterMetrics) {
        let at = EmittedAt::caller();
        tracing::error!(emitted_at = %at, error = %self.error, "config reload failed; keeping the running config");
        exporter.config_reloaded(false, unix_now());
    }
}

/// A configuration reload succeeded: a changed file was applied, or the
/// file was unchanged.
#[derive(Debug)]
pub struct ConfigReloaded {
    pub changed: bool,
}

impl ConfigReloaded {
    #[track_caller]
    pub fn emit(self, exporter: &ExporterMetrics) {
        let at = EmittedAt::caller();
        if self.changed {
            tracing::info!(emitted_at = %at, "config reloaded");
        } else {
            tracing::info!(emitted_at = %at, "config reload: the file is unchanged");
        }
        exporter.config_reloaded(true, unix_now());
    }
}

mcp_listing::labelled_enum! {
    /// Why scheduled polls were skipped.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SkipCause as "skip cause" {
        /// No slot under the concurrency cap came free within a period.
        ConcurrencyCap => "concurrency_cap",
        /// Ticks came due while the target's previous poll still ran.
        StillRunning => "still_running",
    }
}

/// Scheduled polls of a target were not made: counted in one go, logged
/// once with their number.
#[derive(Debug)]
pub struct PollsSkipped<'a> {
    pub target: &'a str,
    pub count: u64,
    pub cause: SkipCause,
}

impl PollsSkipped<'_> {
    #[track_caller]
    pub fn emit(self, exporter: &ExporterMetrics) {
        let at = EmittedAt::caller();
        if self.count == 0 {
            return;
        }
        tracing::warn!(emitted_at = %at,
            target_name = %self.target,
            skipped = self.count,
            cause = self.cause.label(),
            "scheduled polls skipped: the schedule is tighter than the polls or the concurrency cap allow"
        );
        exporter.polls_skipped(self.target, self.count);
    }
}

/// A discovery source's refresh was taken: a failure as a warning (the
/// last good list stays in force), a complete one at debug.
#[derive(Debug)]
pub struct DiscoveryRefreshed<'a> {
    pub source: &'a str,
    pub refresh: &'a Refresh,
    /// Failed refreshes in a row, this one included (0 after a complete).
    pub consecutive_failures: u32,
}

impl DiscoveryRefreshed<'_> {
    #[track_caller]
    pub fn emit(self, discovery: &DiscoveryMetrics) {
        let at = EmittedAt::caller();
        let r = self.refresh;
        match r.outcome.failure() {
            Some(failure) => tracing::warn!(emitted_at = %at,
                source = %self.source,
                outcome = r.outcome.label(),
                reason = failure.label(),
                detail = r.detail.as_deref().unwrap_or(""),
                consecutive_failures = self.consecutive_failures,
                "discovery refresh failed; the source's last good list stays in force"
            ),
            None => tracing::debug!(emitted_at = %at,
                source = %self.source,
                entries = r.list.entries.len(),
                "discovery refresh complete"
            ),
        }
        discovery.record(self.source, r, self.consecutive_failures);
    }
}

/// A source's refresh left entries out, and not the same ones as before:
/// logged with the count per reason and the first few entries. Its series,
/// `mcp_discovery_skipped_entries`, follows the list in force, which the
/// reconcile sets.
#[derive(Debug)]
pub struct DiscoveryEntriesSkipped<'a> {
    pub source: &'a str,
    pub skipped: &'a SkipList,
}

impl DiscoveryEntriesSkipped<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        if self.skipped.total() == 0 {
            return;
        }
        let by_reason: Vec<String> = self
            .skipped
            .counts
            .iter()
            .map(|(reason, n)| format!("{reason}: {n}"))
            .collect();
        tracing::warn!(emitted_at = %at,
            source = %self.source,
            skipped = self.skipped.total(),
            reasons = %by_reason.join(", "),
            "discovery entries left out (each one and why: /api/sources)"
        );
        for s in self.skipped.entries.iter().take(SKIPPED_ENTRIES_LOGGED) {
            tracing::info!(emitted_at = %at, source = %self.source, entry = %s.entry, origin = %s.origin, reason = %s.reason, detail = %s.detail, "discovery entry left out");
        }
    }
}

/// A target's baselines could not be written to the state directory; the
/// ones in memory stay in use, and the next change writes them again.
#[derive(Debug)]
pub struct BaselineWriteFailed<'a> {
    pub target: &'a str,
    pub error: &'a dyn std::error::Error,
}

impl BaselineWriteFailed<'_> {
    #[track_caller]
    pub fn emit(self, exporter: &ExporterMetrics) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at, target_name = %self.target, error = %self.error, "could not persist baselines");
        exporter.baseline_write_failed();
    }
}

/// The TLS files changed and the configuration built from them is in use.
#[derive(Debug)]
pub struct TlsReloaded;

impl TlsReloaded {
    #[track_caller]
    pub fn emit(self, web: &WebMetrics) {
        let at = EmittedAt::caller();
        tracing::info!(emitted_at = %at, "TLS certificate files changed; reloaded");
        web.tls_reloaded(ReloadResult::Success);
    }
}

/// The TLS files changed but cannot be used: the previous configuration
/// stays until they change again.
#[derive(Debug)]
pub struct TlsReloadFailed<'a> {
    pub error: &'a dyn std::error::Error,
}

impl TlsReloadFailed<'_> {
    #[track_caller]
    pub fn emit(self, web: &WebMetrics) {
        let at = EmittedAt::caller();
        tracing::error!(emitted_at = %at, error = %self.error, "TLS files changed but cannot be used; keeping the previous ones");
        web.tls_reloaded(ReloadResult::Failure);
    }
}

/// Our listener failed to accept a connection (EMFILE and friends); it
/// waits and retries. Each failure is counted; a run of them is logged once.
#[derive(Debug)]
pub struct AcceptFailed<'a> {
    pub error: &'a std::io::Error,
    /// Not the first of a run already logged.
    pub repeat: bool,
}

impl AcceptFailed<'_> {
    #[track_caller]
    pub fn emit(self, web: &WebMetrics) {
        let at = EmittedAt::caller();
        if !self.repeat {
            tracing::warn!(emitted_at = %at, error = %self.error, "accepting a connection failed; retrying");
        }
        web.accept_failed();
    }
}

/// A new connection was closed at once: every connection up to the limit
/// was busy with a request. Each is counted; a run of them is logged once.
#[derive(Debug)]
pub struct ConnectionRefused {
    pub limit: usize,
    /// Not the first of a run already logged.
    pub repeat: bool,
}

impl ConnectionRefused {
    #[track_caller]
    pub fn emit(self, web: &WebMetrics) {
        let at = EmittedAt::caller();
        if !self.repeat {
            tracing::warn!(emitted_at = %at,
                limit = self.limit,
                "connection limit reached with every connection busy; refusing new connections"
            );
        }
        web.connection_refused();
    }
}

/// A verdict level that changed, as the lines below say it.
#[derive(Debug, Clone, Copy)]
pub struct LevelChange<'a> {
    /// `None` before the first verdict.
    pub from: Option<Health>,
    pub to: Health,
    /// The worst reason of the new verdict; `None` when healthy.
    pub first_reason: Option<&'a Reason>,
}

/// What a change line says: its message about `what` changed, the levels'
/// labels, the first reason's code and message ("" when healthy), and
/// whether it got worse (a warning, else info).
struct ChangeLine<'a> {
    summary: String,
    from: &'static str,
    to: &'static str,
    code: &'static str,
    reason: &'a str,
    worse: bool,
}

impl<'a> LevelChange<'a> {
    fn line(&self, what: &str) -> ChangeLine<'a> {
        let to = self.to.label();
        let summary = match self.from {
            Some(from) => format!("{what} changed: {} → {to}", from.label()),
            None => format!("first {what}: {to}"),
        };
        let (code, reason) = self
            .first_reason
            .map_or(("", ""), |r| (r.code.label(), r.message.as_str()));
        ChangeLine {
            summary,
            from: self.from.map_or("none", Health::label),
            to,
            code,
            reason,
            worse: self.from.map_or(0, Health::gauge_value) < self.to.gauge_value(),
        }
    }
}

/// A scheduled target's verdict level changed (or its first verdict is not
/// healthy): one line per change, never one per poll — warn when it got
/// worse, info when it got better. Its series is `mcp_verdict`, set by the
/// fan-out for every verdict.
#[derive(Debug)]
pub struct VerdictLevelChanged<'a> {
    pub target: &'a str,
    pub change: LevelChange<'a>,
}

impl VerdictLevelChanged<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        let l = self.change.line("verdict");
        let (from, to, code, reason) = (l.from, l.to, l.code, l.reason);
        let summary = l.summary;
        match (l.worse, self.change.first_reason.is_some()) {
            (true, _) => {
                tracing::warn!(emitted_at = %at, target_name = %self.target, from, to, code, reason, "{summary}")
            }
            (false, true) => {
                tracing::info!(emitted_at = %at, target_name = %self.target, from, to, code, reason, "{summary}")
            }
            (false, false) => {
                tracing::info!(emitted_at = %at, target_name = %self.target, from, to, "{summary}")
            }
        }
    }
}

/// A client identity's verdict behind a tap changed (or its first verdict
/// is not healthy): one line per change — warn when it got worse, info when
/// it got better. The client's name and the reason were cut and escaped by
/// the tap's observer.
#[derive(Debug)]
pub struct ClientVerdictChanged<'a> {
    pub tap: &'a str,
    pub client: &'a str,
    /// The route (its name), where the tap tells routes apart.
    pub route: Option<&'a str>,
    pub change: LevelChange<'a>,
}

impl ClientVerdictChanged<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        if self.change.from.is_none() && self.change.to == Health::Healthy {
            return;
        }
        let l = self.change.line("client verdict");
        let (from, to, code, reason) = (l.from, l.to, l.code, l.reason);
        let summary = l.summary;
        let (tap, client) = (self.tap, self.client);
        let route = self.route.unwrap_or_default();
        match (l.worse, self.route.is_some()) {
            (true, true) => {
                tracing::warn!(emitted_at = %at, tap, client, route, from, to, code, reason, "{summary}")
            }
            (true, false) => {
                tracing::warn!(emitted_at = %at, tap, client, from, to, code, reason, "{summary}")
            }
            (false, true) => {
                tracing::info!(emitted_at = %at, tap, client, route, from, to, code, reason, "{summary}")
            }
            (false, false) => {
                tracing::info!(emitted_at = %at, tap, client, from, to, code, reason, "{summary}")
            }
        }
    }
}

/// A configured route (`routes:`, `--route`) matched none of the first
/// requests the tap routed: likely a typo, or not where its clients go.
/// Said once per tap; the tap goes on (those requests have routes of their
/// own, or `other`).
#[derive(Debug)]
pub struct RouteUnmatched<'a> {
    pub tap: &'a str,
    /// The path or pattern as configured.
    pub written: &'a str,
    pub requests: u64,
}

impl RouteUnmatched<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at,
            tap = self.tap,
            route = self.written,
            requests = self.requests,
            "a configured route matched none of the first requests routed through the tap"
        );
    }
}

/// A configured tap could not start after a reload (its listener, TLS or
/// report file); the other taps run, this one waits for the next reload.
#[derive(Debug)]
pub struct TapNotStarted<'a> {
    pub tap: &'a str,
    pub error: &'a str,
}

impl TapNotStarted<'_> {
    #[track_caller]
    pub fn emit(self, health: &TapHealth) {
        let at = EmittedAt::caller();
        tracing::error!(emitted_at = %at,
            tap = self.tap,
            error = self.error,
            "tap not started after the reload"
        );
        health.start_failed(self.tap);
    }
}

/// A tap's observer task ended before its tap did (a panic): the tap goes
/// on forwarding, `mcp_tap_observing` is 0 and a fresh observer starts
/// after `restart_in`. Logged and counted (`mcp_tap_observer_restarts_total`)
/// once per end, with what the ended observer held at its last tick (the
/// sessions, exchanges and listings in progress a fresh one does not know).
#[derive(Debug)]
pub struct ObserverEnded<'a> {
    pub tap: &'a str,
    /// Why: the panic's message (cut and escaped), or `cancelled`.
    pub cause: &'a str,
    pub restart_in: std::time::Duration,
}

impl ObserverEnded<'_> {
    #[track_caller]
    pub fn emit(self, health: &ObserverHealth) {
        let at = EmittedAt::caller();
        let held = health.ended();
        let (sessions, exchanges, listings) =
            held.map_or((0, 0, 0), |h| (h.sessions, h.exchanges, h.listings));
        tracing::error!(emitted_at = %at,
            tap = self.tap,
            cause = self.cause,
            restarts = health.restarts(),
            restart_in_seconds = self.restart_in.as_secs_f64(),
            sessions_lost = sessions,
            exchanges_lost = exchanges,
            listings_lost = listings,
            "tap observer ended: the tap forwards but does not observe until a fresh observer starts"
        );
    }
}

/// A fresh observer started after one ended; `not_observed`: the messages
/// that passed meanwhile (`mcp_tap_messages_not_observed_total`,
/// `reason="observer_restart"`).
#[derive(Debug)]
pub struct ObserverRestarted<'a> {
    pub tap: &'a str,
    pub not_observed: u64,
}

impl ObserverRestarted<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at,
            tap = self.tap,
            not_observed = self.not_observed,
            "tap observer started afresh"
        );
    }
}

/// Why a client listing was not written (`ReportLineDropped` logs and
/// counts it).
#[derive(Debug)]
pub enum DroppedLine {
    /// Writing it would pass the bound; `first`: the file just became full.
    Full { first: bool },
    /// Writing failed; `first`: the first failure since a write last
    /// succeeded (a full disk fails every listing: said once per run).
    WriteFailed { error: std::io::Error, first: bool },
    /// The file's writer thread was `REPORT_QUEUE_LINES` (1,024) lines
    /// behind.
    QueueFull,
}

impl DroppedLine {
    pub fn reason(&self) -> ReportDrop {
        match self {
            DroppedLine::Full { .. } => ReportDrop::Full,
            DroppedLine::WriteFailed { .. } => ReportDrop::WriteFailed,
            DroppedLine::QueueFull => ReportDrop::QueueFull,
        }
    }
}

/// A client listing a tap observed was not written to its report file.
/// Counted every time where there is a `/metrics` (the stdio tap has none);
/// logged once when the file became full and once per run of failed writes
/// (clients choose how many listings there are: a full disk must not flood
/// the log).
#[derive(Debug)]
pub struct ReportLineDropped<'a> {
    pub tap: &'a Arc<str>,
    pub dropped: &'a DroppedLine,
    /// The file's bound.
    pub max_bytes: u64,
}

impl ReportLineDropped<'_> {
    #[track_caller]
    pub fn emit(self, metrics: Option<&ClientMetrics>) {
        let at = EmittedAt::caller();
        if let Some(metrics) = metrics {
            metrics.report_dropped(self.tap, self.dropped.reason());
        }
        let tap: &str = self.tap;
        match self.dropped {
            DroppedLine::WriteFailed { error, first: true } => tracing::warn!(emitted_at = %at,
                tap,
                error = %error,
                "report file: client listings are not written until a write succeeds again"
            ),
            DroppedLine::WriteFailed { first: false, .. } => {}
            DroppedLine::Full { first: true } => tracing::warn!(emitted_at = %at,
                tap,
                max_bytes = self.max_bytes,
                "report file full: further client listings are not written"
            ),
            DroppedLine::Full { first: false } => {}
            // Counted only: the writer catches up or the disk is slow, and
            // clients choose how many listings there are.
            DroppedLine::QueueFull => {}
        }
    }
}

/// A client listing a tap observed, logged when the tap reports each one
/// (the stdio tap: its client's server log is where a person looks). The
/// listing is counted in `mcp_client_listings_total` where there is a
/// `/metrics`.
#[derive(Debug)]
pub struct ClientListingObserved<'a> {
    pub tap: &'a str,
    pub listing: &'a mcp_observer::ClientListing,
}

impl ClientListingObserved<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        let l = self.listing;
        // Unknown without a known catalogue: said so, not a 0.
        let missed = l
            .missed
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |m| m.count.to_string());
        let merged = l.merged.map_or("", |m| m.label());
        let (tap, client, version) = (self.tap, l.client.label(), l.version.as_deref());
        let (kind, outcome, pages, items) = (l.kind.label(), l.outcome.label(), l.pages, l.items);
        let version = version.unwrap_or("");
        // A tap in front of one server names no route, as its series do.
        match l.route.label() {
            Some(route) => tracing::info!(
                emitted_at = %at, tap, client, route, version, kind, outcome, pages, items, missed = %missed, merged,
                "client listing"
            ),
            None => tracing::info!(
                emitted_at = %at, tap, client, version, kind, outcome, pages, items, missed = %missed, merged,
                "client listing"
            ),
        }
    }
}

/// A target's schedule has no tick left (a cron expression whose last
/// occurrence passed): the target stays configured and is never polled;
/// the status page shows no next poll.
#[derive(Debug)]
pub struct ScheduleEnded<'a> {
    pub target: &'a str,
}

impl ScheduleEnded<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at, target_name = %self.target, "schedule never fires again; target idle");
    }
}

/// A due conformance run got no session (or unreadable secrets, or hit its
/// bound): the last result stays on `/metrics` and the status page.
#[derive(Debug)]
pub struct ConformanceRunMissed<'a> {
    pub target: &'a str,
}

impl ConformanceRunMissed<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::info!(
            emitted_at = %at,
            target_name = %self.target,
            "conformance run got no session (or unreadable secrets, or hit its bound); last result kept"
        );
    }
}

/// A target that left the configuration more than `baseline_retention`
/// ago: its baselines are forgotten (and their file removed).
#[derive(Debug)]
pub struct BaselinesDropped<'a> {
    pub target: &'a str,
}

impl BaselinesDropped<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::info!(emitted_at = %at, target_name = %self.target, "baselines dropped: the target left more than baseline_retention ago");
    }
}

/// Opening the state directory found what an earlier run left: baselines
/// that could not be read (left out, the others load) and temporary files
/// of interrupted writes (removed).
#[derive(Debug)]
pub struct BaselinesOpened<'a> {
    pub problems: &'a [crate::baseline::BaselineError],
    pub stale_temps_removed: usize,
    pub dir: Option<&'a std::path::Path>,
}

impl BaselinesOpened<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        for p in self.problems {
            tracing::warn!(emitted_at = %at, error = %p, "baseline not loaded");
        }
        if let (Some(dir), removed @ 1..) = (self.dir, self.stale_temps_removed) {
            tracing::info!(
                emitted_at = %at,
                dir = %dir.display(),
                removed,
                "removed temporary files an earlier run left behind"
            );
        }
    }
}

/// The configuration loaded, with something worth a look that is not an
/// error (a key that does nothing in this setting, say): one line,
/// `FILE:LINE:COL: warning: ...`.
#[derive(Debug)]
pub struct ConfigWarned<'a> {
    pub warning: &'a str,
}

impl ConfigWarned<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at, "{}", self.warning);
    }
}

/// `serve` is up: its web listener bound and its targets started.
#[derive(Debug)]
pub struct ExporterStarted<'a> {
    /// Where the web listener is bound (`host:port`).
    pub address: &'a str,
    /// The configuration file served (none for `mcp-exporter tap`).
    pub config: Option<&'a std::path::Path>,
}

impl ExporterStarted<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        match self.config {
            Some(config) => {
                tracing::info!(emitted_at = %at, address = %self.address, config = %config.display(), "mcp-exporter listening")
            }
            None => {
                tracing::info!(emitted_at = %at, address = %self.address, "mcp-exporter listening")
            }
        }
    }
}

/// A SIGHUP arrived and there is no configuration file to reload (the
/// exporter runs on flags alone).
#[derive(Debug)]
pub struct ReloadWithoutFile;

impl ReloadWithoutFile {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::info!(emitted_at = %at, "SIGHUP: no configuration file to reload");
    }
}

/// The exporter could not become the subreaper of its stdio servers'
/// trees: their orphans are found by /proc scans when a server closes.
#[derive(Debug)]
pub struct OrphanAdoptionUnavailable<'a> {
    pub error: &'a std::io::Error,
}

impl OrphanAdoptionUnavailable<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at, error = %self.error, "cannot adopt orphans of stdio servers; relying on /proc scans at close");
    }
}

/// The OTLP exporter is built and spans will go to `endpoint` (shown
/// without credentials). Logged on `log`: the export thread's own
/// subscriber is silent.
#[derive(Debug)]
pub struct SpanExportStarted<'a> {
    pub endpoint: &'a str,
    pub protocol: &'static str,
}

impl SpanExportStarted<'_> {
    #[track_caller]
    pub fn emit(self, log: &tracing::Dispatch) {
        let at = EmittedAt::caller();
        tracing::dispatcher::with_default(log, || {
            tracing::info!(
                emitted_at = %at,
                endpoint = %self.endpoint,
                protocol = self.protocol,
                "exporting poll traces over OTLP"
            )
        });
    }
}

/// A batch the collector did not take (an error, or no answer in time):
/// its spans count as dropped (`mcp_exporter_spans_dropped_total`), and
/// the first failure of an outage is logged (`error` already scrubbed of
/// URLs).
#[derive(Debug)]
pub struct SpanExportFailed<'a> {
    pub spans: usize,
    pub error: &'a str,
    pub first_of_outage: bool,
}

impl SpanExportFailed<'_> {
    #[track_caller]
    pub fn emit(self, dropped: &std::sync::atomic::AtomicU64, log: &tracing::Dispatch) {
        let at = EmittedAt::caller();
        dropped.fetch_add(self.spans as u64, std::sync::atomic::Ordering::Relaxed);
        if self.first_of_outage {
            tracing::dispatcher::with_default(log, || {
                tracing::warn!(
                    emitted_at = %at,
                    error = %self.error,
                    "OTLP trace export failing; spans are dropped until the collector answers"
                )
            });
        }
    }
}

/// The collector took a batch again after an outage.
#[derive(Debug)]
pub struct SpanExportRecovered;

impl SpanExportRecovered {
    #[track_caller]
    pub fn emit(self, log: &tracing::Dispatch) {
        let at = EmittedAt::caller();
        tracing::dispatcher::with_default(
            log,
            || tracing::info!(emitted_at = %at, "OTLP trace export recovered"),
        );
    }
}

/// The stdio tap's last word, at its exit, per client (none: no client
/// listed anything): the verdict as the tap last judged it, on stderr,
/// where a client's server log is read.
#[derive(Debug)]
pub struct TapSummarised<'a> {
    pub tap: &'a str,
    pub client: Option<(&'a str, Health, Option<&'a Reason>)>,
}

impl TapSummarised<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        let tap = self.tap;
        let Some((client, level, reason)) = self.client else {
            tracing::info!(emitted_at = %at, tap, "tap summary: no client listed anything");
            return;
        };
        let reason = reason.map_or("reads every list to its last page", |r| r.message.as_str());
        let verdict = level.label();
        tracing::info!(emitted_at = %at, tap, client, verdict, reason, "tap summary");
    }
}

/// A tap's own walk of a route (`learn_catalogue`) did not end within its
/// bound (`error`: none) or got no session: the route's catalogue stays
/// unknown until the next walk, or a client's complete one.
#[derive(Debug)]
pub struct RouteNotLearned<'a> {
    pub tap: &'a str,
    /// The route's path, cut and escaped.
    pub route: &'a str,
    /// Why there was no session (scrubbed, cut and escaped).
    pub error: Option<&'a str>,
}

impl RouteNotLearned<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        let (tap, route) = (self.tap, self.route);
        match self.error {
            None => {
                tracing::warn!(emitted_at = %at, tap, route, "the tap's walk of a route did not end in time")
            }
            Some(error) => {
                tracing::warn!(emitted_at = %at, tap, route, error, "the tap could not walk a route to learn its catalogue")
            }
        }
    }
}

/// The stdio tap could not start the thread that reads its stdin: it reads
/// with tokio's instead, and so ends with its client's stdin rather than
/// with its server.
#[derive(Debug)]
pub struct StdinThreadRefused<'a> {
    pub error: &'a std::io::Error,
}

impl StdinThreadRefused<'_> {
    #[track_caller]
    pub fn emit(self) {
        let at = EmittedAt::caller();
        tracing::warn!(emitted_at = %at, error = %self.error, "cannot start a thread for stdin; the tap then ends with its client's stdin");
    }
}
