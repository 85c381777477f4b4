//! What one poll of one target produced: the input of every sink (metrics,
//! spans, baselines, status page, `probe` output).

use crate::listing::{ErrorKind, Kind, ListingReport};
use serde::Serialize;
use std::collections::BTreeMap;
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
    pub span_id: Option<String>,
}

/// One poll of one target: session set-up plus one listing per enabled kind.
#[derive(Debug, Clone, Serialize)]
pub struct PollReport {
    pub target: String,
    #[serde(skip)]
    pub started: SystemTime,
    /// `stdio`, `streamable_http` or `sse`.
    pub transport: String,
    pub protocol_version: Option<String>,
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
    /// Invalid-cursor compliance probes sent after complete listings.
    pub invalid_cursor_probes: Vec<InvalidCursorProbe>,
    /// 32 hex digits when the poll was traced.
    pub trace_id: Option<String>,
    /// Span id of the `mcp.poll` span when traced.
    #[serde(skip)]
    pub poll_span_id: Option<String>,
}

/// How a server answered one deliberately garbage cursor.
#[derive(Debug, Clone, Serialize)]
pub struct InvalidCursorProbe {
    pub kind: Kind,
    /// `invalid_params` (-32602, as the spec says), `silent_restart` (items
    /// we already listed, as if the cursor were absent), `other_error`, or
    /// `accepted` (anything else).
    pub result: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionFailure {
    pub error: ErrorKind,
    pub detail: String,
    pub http_status: Option<u16>,
}

impl PollReport {
    /// Every listing that was attempted completed.
    pub fn all_complete(&self) -> bool {
        self.session_error.is_none()
            && self.listings.iter().all(|l| {
                l.outcome.is_complete() || l.outcome == crate::listing::Outcome::Unsupported
            })
    }

    pub fn listing(&self, kind: Kind) -> Option<&ListingReport> {
        self.listings.iter().find(|l| l.kind == kind)
    }
}

/// Churn of one kind against the previous complete listing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindDiff {
    /// Whether a previous complete listing existed to compare with.
    pub had_baseline: bool,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Fewer unique items, no list_changed notice, no error.
    pub silent_shrink: bool,
    pub previous_items: u64,
}

/// A poll report with what the baselines made of it: what sinks consume.
#[derive(Debug, Clone, Serialize)]
pub struct PolledTarget {
    pub report: PollReport,
    pub diffs: BTreeMap<Kind, KindDiff>,
    /// Per kind and reference target: reference items this target lacks.
    pub reference_missing: BTreeMap<Kind, BTreeMap<String, Vec<String>>>,
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
