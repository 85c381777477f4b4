//! One poll of one target: session + walker for every enabled kind, as a
//! `PollReport`. The scheduler, `/probe` and the `probe` command all call
//! this; none has listing code of its own.

use crate::listing::{
    walk, ErrorKind, Kind, ListingReport, Outcome, PageError, PageResult, Pager, WalkLimits,
};
use crate::mcp::session::{Endpoint, Session, SessionOptions, TraceIds};
use crate::mcp::transport::{ExchangeError, TransportLimits};
use crate::poller::report::{HandshakeRecord, PollReport, ServerInfo, SessionFailure};
use serde_json::{json, Map};
use std::time::{Duration, Instant, SystemTime};

/// Everything needed to poll one target once.
#[derive(Debug, Clone)]
pub struct ProbeTarget {
    pub name: String,
    pub endpoint: Endpoint,
    pub protocol: Option<String>,
    pub kinds: Vec<Kind>,
    /// Kinds listed even when the server does not advertise them.
    pub forced_kinds: Vec<Kind>,
    pub walk: WalkLimits,
    pub transport: TransportLimits,
    /// After a complete multi-page listing, send one garbage cursor and
    /// record how the server answers.
    pub invalid_cursor_probe: bool,
    /// Values to scrub from anything we keep (stderr tails, details).
    pub secrets: Vec<String>,
}

/// Per-poll inputs that are not configuration.
#[derive(Debug, Clone, Default)]
pub struct PollContext {
    pub era_hint: Option<bool>,
    pub trace: Option<TraceIds>,
    pub poll_span_id: Option<String>,
}

/// Map a transport failure to the walker's error label.
pub fn error_kind(e: &ExchangeError) -> ErrorKind {
    match e {
        ExchangeError::Rpc { code, .. } if *code == crate::listing::walk::INVALID_PARAMS => {
            ErrorKind::InvalidCursor
        }
        ExchangeError::Rpc { .. } => ErrorKind::RpcError,
        ExchangeError::Timeout(_) => ErrorKind::Timeout,
        ExchangeError::Transport { .. } | ExchangeError::SessionExpired => {
            ErrorKind::TransportError
        }
        ExchangeError::Unauthorized { .. } => ErrorKind::Unauthorized,
        ExchangeError::TooLarge { .. } => ErrorKind::ResponseTooLarge,
        ExchangeError::Malformed(_) => ErrorKind::MalformedResult,
    }
}

fn http_status(e: &ExchangeError) -> Option<u16> {
    match e {
        ExchangeError::Transport { http_status, .. } | ExchangeError::Rpc { http_status, .. } => {
            *http_status
        }
        ExchangeError::Unauthorized { status } => Some(*status),
        ExchangeError::SessionExpired => Some(404),
        _ => None,
    }
}

/// Adapts a session to the walker's one-page interface.
struct SessionPager<'a> {
    session: &'a mut Session,
}

impl Pager for SessionPager<'_> {
    async fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> PageResult {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), json!(c));
        }
        let answer = self.session.request(kind.method(), params, timeout).await;
        let ex = answer.exchange;
        let list_changed = ex
            .notifications
            .iter()
            .filter(|m| m.as_str() == kind.list_changed_method())
            .count() as u32;
        let outcome = match ex.outcome {
            Ok(v) => Ok(v),
            Err(ExchangeError::SessionExpired) => match self.session.reinitialize().await {
                Ok(()) => Err(PageError::SessionRenewed),
                Err(e) => Err(PageError::Transport {
                    message: format!("session expired and re-initialising failed: {e}"),
                    http_status: http_status(&e),
                }),
            },
            Err(e) => Err(page_error(e)),
        };
        PageResult {
            outcome,
            request_id: answer.request_id,
            bytes: ex.bytes,
            duration: ex.duration,
            started: answer.started,
            span_id: answer.span_id,
            list_changed,
        }
    }
}

fn page_error(e: ExchangeError) -> PageError {
    match e {
        ExchangeError::Rpc { code, message, .. } => PageError::Rpc { code, message },
        ExchangeError::Timeout(d) => PageError::Timeout(d),
        ExchangeError::Transport {
            message,
            http_status,
        } => PageError::Transport {
            message,
            http_status,
        },
        ExchangeError::Unauthorized { status } => PageError::Unauthorized { status },
        ExchangeError::TooLarge { limit } => PageError::TooLarge { limit },
        ExchangeError::Malformed(m) => PageError::Malformed(m),
        ExchangeError::SessionExpired => PageError::SessionRenewed,
    }
}

/// Connect, list every enabled kind, close. Never panics, never outlives
/// the target's deadlines; every failure ends up in the report.
pub async fn poll_target(target: &ProbeTarget, ctx: PollContext) -> PollReport {
    let (mut report, session) = poll_target_open(target, ctx).await;
    if let Some(session) = session {
        let close = session.close().await;
        report.stderr_tail = close.stderr_tail.map(|t| redact(&t, &target.secrets));
    }
    report
}

/// Re-list one kind on an open session (watch mode, after list_changed).
pub async fn relist(session: &mut Session, target: &ProbeTarget, kind: Kind) -> ListingReport {
    let limits = WalkLimits {
        modern: session.modern,
        ..target.walk.clone()
    };
    let _ = session.drain_notifications();
    let mut listing = walk(&mut SessionPager { session }, kind, &limits).await;
    if let Some(d) = &listing.detail {
        listing.detail = Some(redact(d, &target.secrets));
    }
    listing
}

/// Like [`poll_target`] but hands back the open session (when one was
/// established) for watch mode; the caller must close it.
pub async fn poll_target_open(
    target: &ProbeTarget,
    ctx: PollContext,
) -> (PollReport, Option<Session>) {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let (server_address, server_port) = match &target.endpoint {
        Endpoint::Http { spec, .. } => spec
            .url
            .as_ref()
            .map(crate::mcp::transport::server_address)
            .unwrap_or((None, None)),
        Endpoint::Stdio(_) => (None, None),
    };
    let opts = SessionOptions {
        protocol: target.protocol.clone(),
        era_hint: ctx.era_hint,
        limits: target.transport.clone(),
        request_timeout: target.walk.page_timeout,
        trace: ctx.trace.clone(),
    };
    let mut report = PollReport {
        target: target.name.clone(),
        started,
        transport: String::new(),
        protocol_version: None,
        server: None,
        handshakes: Vec::new(),
        session_error: None,
        time_to_ready: None,
        listings: Vec::new(),
        server_address,
        server_port,
        session_id: None,
        stdout_defects: 0,
        server_requests: 0,
        stderr_tail: None,
        duration: Duration::ZERO,
        trace_id: ctx.trace.as_ref().map(|t| t.trace_id.clone()),
        poll_span_id: ctx.poll_span_id.clone(),
        invalid_cursor_probes: Vec::new(),
    };

    let mut session = match Session::connect(&target.endpoint, opts).await {
        Ok(s) => s,
        Err(failure) => {
            let kind = error_kind(&failure.error);
            let detail = redact(&failure.error.to_string(), &target.secrets);
            report.transport = failure.transport.to_string();
            report.handshakes = failure.handshakes.iter().map(handshake_record).collect();
            report.stderr_tail = failure
                .close
                .stderr_tail
                .map(|t| redact(&t, &target.secrets));
            for &k in &target.kinds {
                let mut l = ListingReport::empty(k, Outcome::Error(kind));
                l.detail = Some(format!("session not established: {detail}"));
                l.http_status = http_status(&failure.error);
                report.listings.push(l);
            }
            report.session_error = Some(SessionFailure {
                error: kind,
                detail,
                http_status: http_status(&failure.error),
            });
            report.duration = t0.elapsed();
            return (report, None);
        }
    };
    report.transport = session.transport_label().to_string();
    report.protocol_version = Some(session.protocol_version.clone());
    report.server = Some(ServerInfo {
        name: session.server_name.clone().unwrap_or_default(),
        version: session.server_version.clone().unwrap_or_default(),
    });

    let limits = WalkLimits {
        modern: session.modern,
        ..target.walk.clone()
    };
    for &kind in &target.kinds {
        if !session.advertises(kind.capability()) && !target.forced_kinds.contains(&kind) {
            report
                .listings
                .push(ListingReport::empty(kind, Outcome::Unsupported));
            continue;
        }
        // Notifications that arrived between listings belong to no walk.
        let _ = session.drain_notifications();
        let mut listing = walk(
            &mut SessionPager {
                session: &mut session,
            },
            kind,
            &limits,
        )
        .await;
        if let Some(d) = &listing.detail {
            listing.detail = Some(redact(d, &target.secrets));
        }
        if target.invalid_cursor_probe && listing.outcome.is_complete() && listing.final_pages > 1 {
            let result = probe_invalid_cursor(&mut session, &listing, limits.page_timeout).await;
            report
                .invalid_cursor_probes
                .push(crate::poller::InvalidCursorProbe { kind, result });
        }
        report.listings.push(listing);
    }
    if report
        .listings
        .iter()
        .all(|l| l.outcome.is_complete() || l.outcome == Outcome::Unsupported)
    {
        report.time_to_ready = Some(t0.elapsed());
    }
    report.handshakes = session.handshakes.iter().map(handshake_record).collect();
    report.session_id = session.session_id().map(str::to_string);
    report.stdout_defects = session.stdout_defects;
    report.server_requests = session.server_requests;
    report.duration = t0.elapsed();
    (report, Some(session))
}

/// A cursor no server could have issued.
const GARBAGE_CURSOR: &str = "mcp-exporter/invalid-cursor-probe";

async fn probe_invalid_cursor(
    session: &mut Session,
    listing: &ListingReport,
    timeout: Duration,
) -> &'static str {
    let mut params = Map::new();
    params.insert("cursor".into(), json!(GARBAGE_CURSOR));
    let answer = session
        .request(listing.kind.method(), params, timeout)
        .await;
    match answer.exchange.outcome {
        Err(ExchangeError::Rpc { code, .. }) if code == crate::listing::walk::INVALID_PARAMS => {
            "invalid_params"
        }
        Err(_) => "other_error",
        Ok(result) => {
            let key = listing.kind.identity_key();
            let items = result
                .get(listing.kind.array_field())
                .and_then(serde_json::Value::as_array);
            match items {
                Some(items)
                    if !items.is_empty()
                        && items.iter().all(|i| {
                            i.get(key)
                                .and_then(serde_json::Value::as_str)
                                .is_some_and(|n| {
                                    listing
                                        .names
                                        .binary_search_by(|x| x.as_str().cmp(n))
                                        .is_ok()
                                })
                        }) =>
                {
                    "silent_restart"
                }
                _ => "accepted",
            }
        }
    }
}

fn handshake_record(h: &crate::mcp::session::Handshake) -> HandshakeRecord {
    HandshakeRecord {
        method: h.method.to_string(),
        started: h.started,
        duration: h.duration,
        request_id: h.request_id,
        span_id: h.span_id.clone(),
    }
}

/// Replace every configured secret value in `text`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "<redacted>");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn redacts_secrets_but_not_short_noise() {
        let s = vec!["tok-123456".to_string(), "ab".to_string()];
        assert_eq!(
            redact("auth tok-123456 failed ab", &s),
            "auth <redacted> failed ab"
        );
    }
}
