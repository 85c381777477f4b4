//! Events of the exporter itself that are both logged and counted, one
//! struct each (vector's `internal_events`): `emit` writes the log line and
//! moves the series, so a log line never goes without its count or the
//! other way round. Events of the OTLP export thread live with it
//! (`spans/export.rs`: their counts are the thread's own), the orphan
//! sweeper's in the wire crate (`process_tree.rs`).

use super::metrics::ExporterMetrics;
use crate::poll::unix_now;
use crate::verdict::{Health, Reason};

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

/// A scheduled target's verdict level changed (or its first verdict is not
/// healthy): one line per change, never one per poll — warn when it got
/// worse, info when it got better. Its series is `mcp_verdict`, set by the
/// fan-out for every verdict.
#[derive(Debug)]
pub struct VerdictLevelChanged<'a> {
    pub target: &'a str,
    /// `None` before the target's first verdict.
    pub from: Option<Health>,
    pub to: Health,
    /// The worst reason of the new verdict; `None` when healthy.
    pub first_reason: Option<&'a Reason>,
}

impl VerdictLevelChanged<'_> {
    pub fn emit(self) {
        let to = self.to.label();
        let summary = match self.from {
            Some(from) => format!("verdict changed: {} → {to}", from.label()),
            None => format!("first verdict: {to}"),
        };
        let from = self.from.map_or("none", Health::label);
        let (code, reason) = self
            .first_reason
            .map_or(("", ""), |r| (r.code.label(), r.message.as_str()));
        let worse = self.from.map_or(0, Health::gauge_value) < self.to.gauge_value();
        match (worse, self.first_reason.is_some()) {
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
    /// `None` before the client's first verdict.
    pub from: Option<Health>,
    pub to: Health,
    /// The worst reason of the new verdict; `None` when healthy.
    pub first_reason: Option<&'a Reason>,
}

impl ClientVerdictChanged<'_> {
    pub fn emit(self) {
        if self.from.is_none() && self.to == Health::Healthy {
            return;
        }
        let to = self.to.label();
        let summary = match self.from {
            Some(from) => format!("client verdict changed: {} → {to}", from.label()),
            None => format!("first client verdict: {to}"),
        };
        let from = self.from.map_or("none", Health::label);
        let (code, reason) = self
            .first_reason
            .map_or(("", ""), |r| (r.code.label(), r.message.as_str()));
        let (tap, client) = (self.tap, self.client);
        if self.from.map_or(0, Health::gauge_value) < self.to.gauge_value() {
            tracing::warn!(tap, client, from, to, code, reason, "{summary}");
        } else {
            tracing::info!(tap, client, from, to, code, reason, "{summary}");
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
        tracing::info!(
            tap = self.tap,
            client = l.client.label(),
            version = l.version.as_deref().unwrap_or(""),
            kind = l.kind.label(),
            outcome = l.outcome.label(),
            pages = l.pages,
            items = l.items,
            missed = %missed,
            merged,
            "client listing"
        );
    }
}
