//! Events of the exporter itself that are both logged and counted, one
//! struct each (vector's `internal_events`): `emit` writes the log line and
//! moves the series, so a log line never goes without its count or the
//! other way round. Events of the OTLP export thread live with it
//! (`spans/export.rs`: their counts are the thread's own), the orphan
//! sweeper's in the wire crate (`process_tree.rs`).
//!
//! A refused `/probe` is counted and not logged: the scraper reads why in
//! the 503, and any client could otherwise fill our log.

use super::metrics::{
    ClientMetrics, DiscoveryMetrics, ExporterMetrics, ReloadResult, TapHealth, WebMetrics,
};
use crate::discovery::{Refresh, SkipList};
use crate::poll::unix_now;
use crate::tap::report::Dropped;
use crate::verdict::{Health, Reason};
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
    pub fn emit(self, exporter: &ExporterMetrics) {
        tracing::error!(error = %self.error, "config reload failed; keeping the running config");
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
    pub fn emit(self, exporter: &ExporterMetrics) {
        if self.changed {
            tracing::info!("config reloaded");
        } else {
            tracing::info!("config reload: the file is unchanged");
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
    pub fn emit(self, exporter: &ExporterMetrics) {
        if self.count == 0 {
            return;
        }
        tracing::warn!(
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
    pub fn emit(self, discovery: &DiscoveryMetrics) {
        let r = self.refresh;
        match r.outcome.failure() {
            Some(failure) => tracing::warn!(
                source = %self.source,
                outcome = r.outcome.label(),
                reason = failure.label(),
                detail = r.detail.as_deref().unwrap_or(""),
                consecutive_failures = self.consecutive_failures,
                "discovery refresh failed; the source's last good list stays in force"
            ),
            None => tracing::debug!(
                source = %self.source,
                entries = r.entries.len(),
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
    pub fn emit(self) {
        if self.skipped.total() == 0 {
            return;
        }
        let by_reason: Vec<String> = self
            .skipped
            .counts
            .iter()
            .map(|(reason, n)| format!("{reason}: {n}"))
            .collect();
        tracing::warn!(
            source = %self.source,
            skipped = self.skipped.total(),
            reasons = %by_reason.join(", "),
            "discovery entries left out (each one and why: /api/sources)"
        );
        for s in self.skipped.entries.iter().take(SKIPPED_ENTRIES_LOGGED) {
            tracing::info!(source = %self.source, entry = %s.entry, origin = %s.origin, reason = %s.reason, detail = %s.detail, "discovery entry left out");
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
    pub fn emit(self, exporter: &ExporterMetrics) {
        tracing::warn!(target_name = %self.target, error = %self.error, "could not persist baselines");
        exporter.baseline_write_failed();
    }
}

/// The TLS files changed and the configuration built from them is in use.
#[derive(Debug)]
pub struct TlsReloaded;

impl TlsReloaded {
    pub fn emit(self, web: &WebMetrics) {
        tracing::info!("TLS certificate files changed; reloaded");
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
    pub fn emit(self, web: &WebMetrics) {
        tracing::error!(error = %self.error, "TLS files changed but cannot be used; keeping the previous ones");
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
    pub fn emit(self, web: &WebMetrics) {
        if !self.repeat {
            tracing::warn!(error = %self.error, "accepting a connection failed; retrying");
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
    pub fn emit(self, web: &WebMetrics) {
        if !self.repeat {
            tracing::warn!(
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
    pub fn emit(self) {
        let l = self.change.line("verdict");
        let (from, to, code, reason) = (l.from, l.to, l.code, l.reason);
        let summary = l.summary;
        match (l.worse, self.change.first_reason.is_some()) {
            (true, _) => {
                tracing::warn!(target_name = %self.target, from, to, code, reason, "{summary}")
            }
            (false, true) => {
                tracing::info!(target_name = %self.target, from, to, code, reason, "{summary}")
            }
            (false, false) => tracing::info!(target_name = %self.target, from, to, "{summary}"),
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
    pub fn emit(self) {
        if self.change.from.is_none() && self.change.to == Health::Healthy {
            return;
        }
        let l = self.change.line("client verdict");
        let (from, to, code, reason) = (l.from, l.to, l.code, l.reason);
        let summary = l.summary;
        let (tap, client) = (self.tap, self.client);
        let route = self.route.unwrap_or_default();
        match (l.worse, self.route.is_some()) {
            (true, true) => tracing::warn!(tap, client, route, from, to, code, reason, "{summary}"),
            (true, false) => tracing::warn!(tap, client, from, to, code, reason, "{summary}"),
            (false, true) => {
                tracing::info!(tap, client, route, from, to, code, reason, "{summary}")
            }
            (false, false) => tracing::info!(tap, client, from, to, code, reason, "{summary}"),
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
    pub fn emit(self) {
        tracing::warn!(
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
    pub fn emit(self, health: &TapHealth) {
        tracing::error!(
            tap = self.tap,
            error = self.error,
            "tap not started after the reload"
        );
        health.start_failed(self.tap);
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
    pub dropped: &'a Dropped,
    /// The file's bound.
    pub max_bytes: u64,
}

impl ReportLineDropped<'_> {
    pub fn emit(self, metrics: Option<&ClientMetrics>) {
        if let Some(metrics) = metrics {
            metrics.report_dropped(self.tap, self.dropped.reason());
        }
        let tap: &str = self.tap;
        match self.dropped {
            Dropped::WriteFailed { error, first: true } => tracing::warn!(
                tap,
                error = %error,
                "report file: client listings are not written until a write succeeds again"
            ),
            Dropped::WriteFailed { first: false, .. } => {}
            Dropped::Full { first: true } => tracing::warn!(
                tap,
                max_bytes = self.max_bytes,
                "report file full: further client listings are not written"
            ),
            Dropped::Full { first: false } => {}
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
    pub fn emit(self) {
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
                tap, client, route, version, kind, outcome, pages, items, missed = %missed, merged,
                "client listing"
            ),
            None => tracing::info!(
                tap, client, version, kind, outcome, pages, items, missed = %missed, merged,
                "client listing"
            ),
        }
    }
}
