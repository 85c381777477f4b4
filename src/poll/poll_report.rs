//! What one poll of one target produced: the input of every sink (metrics,
//! spans, baselines, status store, `probe` output). Plain data.

use super::garbage_cursor::GarbageCursorCheck;
use super::ids::{SpanId, TraceId};
pub use mcp_listing::report::SessionFailure;
use mcp_listing::{Kind, ListingReport, Outcome, TransportKind};
use serde::Serialize;
use std::time::{Duration, SystemTime};

/// The server's self-description from `initialize` or `server/discover`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// The handshake request (`initialize` or `server/discover`).
#[derive(Debug, Clone, Serialize)]
pub struct HandshakeRecord {
    /// `initialize` or `server/discover`.
    pub method: String,
    #[serde(skip)]
    pub started: SystemTime,
    #[serde(serialize_with = "secs", rename = "duration_seconds")]
    pub duration: Duration,
    pub request_id: i64,
    /// Span id sent to the server in `_meta.traceparent`, if any.
    #[serde(skip)]
    pub span_id: Option<SpanId>,
}

/// One poll of one target: session set-up plus one listing per enabled kind.
#[derive(Debug, Clone, Serialize)]
pub struct PollReport {
    pub target: String,
    #[serde(skip)]
    pub started: SystemTime,
    pub transport: TransportKind,
    /// The version the server named (its text: it may be one we do not know).
    pub protocol_version: Option<String>,
    /// The session was a 2026-07-28 (stateless) one, as its handshake
    /// decided; meaningful only with a session.
    #[serde(skip)]
    pub modern: bool,
    pub server: Option<ServerInfo>,
    /// Handshakes made (a re-initialise after session expiry adds one).
    pub handshakes: Vec<HandshakeRecord>,
    /// Set when the session could not be established; every listing then
    /// carries the same error.
    pub session_error: Option<SessionFailure>,
    /// Connect + handshake + every enabled kind listed completely; `None`
    /// when any listing did not complete.
    #[serde(serialize_with = "opt_secs", rename = "time_to_ready_seconds")]
    pub time_to_ready: Option<Duration>,
    pub listings: Vec<ListingReport>,
    /// Host (never a URL with credentials or query) for `server.address`.
    pub server_address: Option<String>,
    pub server_port: Option<u16>,
    pub session_id: Option<String>,
    /// Non-JSON lines a stdio server wrote to stdout (protocol defects).
    pub stdout_defects: u32,
    /// Server-to-client requests answered (ping and the like).
    pub server_requests: u32,
    /// Last bytes of a stdio server's stderr, secrets redacted.
    pub stderr_tail: Option<String>,
    #[serde(serialize_with = "secs", rename = "duration_seconds")]
    pub duration: Duration,
    /// Garbage-cursor checks sent after complete listings.
    #[serde(rename = "invalid_cursor_probes")]
    pub garbage_cursor_checks: Vec<GarbageCursorCheck>,
    /// The poll's trace, when traced.
    pub trace_id: Option<TraceId>,
    /// The `mcp.poll` span, when traced.
    #[serde(skip)]
    pub poll_span_id: Option<SpanId>,
    /// `Retry-After` of an HTTP 429 that refused the handshake (a refused
    /// page keeps its own in its listing); see [`PollReport::retry_after`].
    #[serde(serialize_with = "opt_secs", rename = "session_retry_after_seconds")]
    pub session_retry_after: Option<Duration>,
    /// With `protocols:`, the catalogue at every configured version; empty
    /// otherwise. This report is the primary version's (see
    /// `poll::protocols`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocol_catalogues: Vec<super::catalogues::ProtocolCatalogue>,
    /// Kinds listed although the server does not advertise them
    /// (`forced_kinds`); every other listed kind was advertised.
    #[serde(skip)]
    pub unadvertised_kinds: Vec<Kind>,
}

impl PollReport {
    /// The one constructor: an empty poll of `target` that started at
    /// `started`; the poll fills in what it learns.
    pub fn new(target: &str, transport: TransportKind, started: SystemTime) -> PollReport {
        PollReport {
            target: target.to_string(),
            started,
            transport,
            protocol_version: None,
            modern: false,
            server: None,
            handshakes: Vec::new(),
            session_error: None,
            time_to_ready: None,
            listings: Vec::new(),
            server_address: None,
            server_port: None,
            session_id: None,
            stdout_defects: 0,
            server_requests: 0,
            stderr_tail: None,
            duration: Duration::ZERO,
            garbage_cursor_checks: Vec::new(),
            trace_id: None,
            poll_span_id: None,
            session_retry_after: None,
            protocol_catalogues: Vec::new(),
            unadvertised_kinds: Vec::new(),
        }
    }

    /// The tests' usual poll: `target` over Streamable HTTP, started now,
    /// with one complete tools listing of `names`.
    #[cfg(test)]
    pub fn tools_for_test(target: &str, names: &[&str]) -> PollReport {
        let mut r = PollReport::new(target, TransportKind::StreamableHttp, SystemTime::now());
        r.listings
            .push(complete_listing_for_test(Kind::Tools, names));
        r
    }

    /// The longest wait a server asked for with HTTP 429 in this poll
    /// (handshake or any page), for the scheduler's backoff.
    pub fn retry_after(&self) -> Option<Duration> {
        self.listings
            .iter()
            .filter_map(|l| l.retry_after)
            .chain(self.session_retry_after)
            .max()
    }

    /// A poll that never got a session: the failure, and every kind in
    /// `kinds` as an error listing with `listing_detail`.
    pub fn failed(
        target: &str,
        transport: TransportKind,
        started: SystemTime,
        kinds: &[Kind],
        failure: SessionFailure,
        listing_detail: &str,
    ) -> PollReport {
        let mut report = PollReport::new(target, transport, started);
        report.listings = kinds
            .iter()
            .map(|&k| {
                let mut l = ListingReport::empty(k, Outcome::Error(failure.error));
                l.detail = Some(listing_detail.to_string());
                l.http_status = failure.http_status;
                l
            })
            .collect();
        report.session_error = Some(failure);
        report
    }

    /// Every listing that was attempted completed.
    pub fn all_complete(&self) -> bool {
        self.session_error.is_none() && all_complete(&self.listings)
    }

    /// The era the server spoke (true = modern), for the next poll's
    /// negotiation; `None` when no session was established.
    pub fn era_hint(&self) -> Option<bool> {
        (self.protocol_version.is_some() && self.session_error.is_none()).then_some(self.modern)
    }

    pub fn listing(&self, kind: Kind) -> Option<&ListingReport> {
        self.listings.iter().find(|l| l.kind == kind)
    }

    /// The poll's state after a watch re-list: these listings replace the
    /// ones of the same kinds, every other kind keeps its last listing.
    pub fn with_relisted(&self, relisted: &[ListingReport]) -> PollReport {
        let mut merged = self.clone();
        for l in relisted {
            match merged.listings.iter_mut().find(|m| m.kind == l.kind) {
                Some(m) => *m = l.clone(),
                None => merged.listings.push(l.clone()),
            }
        }
        merged
    }
}

/// Complete, or a kind the server does not offer.
pub fn all_complete(listings: &[ListingReport]) -> bool {
    listings
        .iter()
        .all(|l| l.outcome.is_complete() || l.outcome == Outcome::Unsupported)
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// A watch-mode re-list: only the kinds the server said changed, with its
/// own start and duration. Not a poll: sinks update those kinds and
/// nothing poll-wide except `up`.
#[derive(Debug, Clone)]
pub struct RelistReport {
    /// The session facts of the poll that opened the session, and the
    /// re-listed kinds' listings only.
    pub report: PollReport,
    /// Whether every kind is complete now: the re-listed kinds as just
    /// listed, the others as last listed.
    pub up: bool,
}

impl RelistReport {
    /// The re-list of `listings` on the session `last` opened. Returns the
    /// re-list and the target's state after it (the next re-list's `last`).
    pub fn new(
        last: &PollReport,
        listings: Vec<ListingReport>,
        started: SystemTime,
        duration: Duration,
    ) -> (RelistReport, PollReport) {
        let state = last.with_relisted(&listings);
        let mut report = PollReport::new(&last.target, last.transport, started);
        report.protocol_version = last.protocol_version.clone();
        report.modern = last.modern;
        report.server = last.server.clone();
        report.server_address = last.server_address.clone();
        report.server_port = last.server_port;
        report.session_id = last.session_id.clone();
        report.unadvertised_kinds = last.unadvertised_kinds.clone();
        // The other protocol versions were not re-listed: their comparison
        // stands as the poll left it, so the verdict keeps saying it.
        report.protocol_catalogues = last.protocol_catalogues.clone();
        report.listings = listings;
        report.duration = duration;
        let relist = RelistReport {
            report,
            up: state.all_complete(),
        };
        (relist, state)
    }
}

/// A complete listing of `kind` holding `names`, each unique (tests).
#[cfg(test)]
pub fn complete_listing_for_test(kind: Kind, names: &[&str]) -> ListingReport {
    let mut l = ListingReport::empty(kind, Outcome::Complete);
    l.names = names.iter().map(|s| s.to_string()).collect();
    l.unique_items = names.len() as u64;
    l
}
