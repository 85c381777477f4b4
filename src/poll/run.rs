//! One poll of one target: session + walker for every enabled kind, as a
//! `PollReport`. The scheduler, `/probe` and the `probe` command all call
//! this; none has listing code of its own.

use super::garbage_cursor::{self, invalid_cursor_check};
use super::ids::PollTrace;
use super::pager::{error_kind, http_status, retry_after, SessionPager};
use super::poll_report::{HandshakeRecord, PollReport, ServerInfo, SessionFailure};
use super::scrub::{scrub_listing, scrub_report};
use super::target::{nominal_transport, PollTarget};
use crate::config::TargetConfig;
use mcp_listing::{walk, ErrorKind, Kind, ListingReport, Outcome};
use mcp_wire::session::{ConnectFailure, Endpoint, Session, SessionOptions};
use std::time::{Duration, Instant, SystemTime};

/// Per-poll inputs that are not configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct PollContext {
    /// Era learned from an earlier poll of the same target (true = modern).
    pub era_hint: Option<bool>,
    /// The poll's trace ids; the report carries them.
    pub trace: Option<PollTrace>,
    /// Also send them to the server in `_meta.traceparent`.
    pub propagate_trace_context: bool,
}

/// Connect, list every enabled kind, close. Never panics, never outlives
/// the target's deadlines; every failure ends up in the report.
pub async fn poll(target: &PollTarget, ctx: PollContext) -> PollReport {
    let (mut report, session) = poll_open(target, ctx).await;
    if let Some(session) = session {
        close_into(&mut report, session, target).await;
    }
    report
}

/// Close the session and keep its stderr tail (redacted) in the report.
pub async fn close_into(report: &mut PollReport, session: Session, target: &PollTarget) {
    let close = session.close().await;
    report.stderr_tail = close.stderr_tail.map(|t| target.secrets.scrub(&t));
}

/// How long a configured poll may take, and what the report says when it
/// took longer.
#[derive(Debug, Clone)]
pub struct HardDeadline {
    pub limit: Duration,
    pub exceeded: String,
}

/// One poll of a configured target: what to poll and how this poll runs.
#[derive(Debug, Clone)]
pub struct ConfiguredPoll<'a> {
    pub config: &'a TargetConfig,
    pub stderr_tail_bytes: usize,
    pub ctx: PollContext,
    pub deadline: HardDeadline,
    /// Hand an established session back (watch mode); the caller must
    /// close it.
    pub keep_open: bool,
}

/// Poll a configured target under a hard deadline: build the target
/// (reading its secrets), poll it, and turn an unreadable secret or a blown
/// deadline into a report too. With `keep_open`, an established session is
/// handed back (for watch mode) with the target it was opened for; the
/// caller must close it.
pub(super) async fn poll_configured_single(
    poll: ConfiguredPoll<'_>,
) -> (PollReport, Option<OpenSession>) {
    let ConfiguredPoll {
        config,
        stderr_tail_bytes,
        ctx,
        deadline,
        keep_open,
    } = poll;
    let target = match PollTarget::from_config(config, stderr_tail_bytes) {
        Ok(t) => t,
        Err(e) => {
            let mut report = unstarted(config, ErrorKind::Unauthorized, e.to_string());
            // No poll span: nothing was sent (the trace id still marks the
            // exemplar of the failed poll).
            report.trace_id = ctx.trace.map(|t| t.trace_id);
            return (report, None);
        }
    };
    let (mut report, session) =
        match tokio::time::timeout(deadline.limit, poll_open(&target, ctx)).await {
            Ok(done) => done,
            Err(_) => (
                unstarted(config, ErrorKind::Timeout, deadline.exceeded),
                None,
            ),
        };
    let session = match session {
        Some(session) if keep_open => Some(OpenSession { session, target }),
        Some(s) => {
            close_into(&mut report, s, &target).await;
            None
        }
        None => None,
    };
    if let Some(t) = ctx.trace {
        report.trace_id = Some(t.trace_id);
        report.poll_span_id = Some(t.poll_span_id);
    }
    (report, session)
}

/// A session kept open after a poll (watch mode), with the target it was
/// opened for.
pub struct OpenSession {
    session: Session,
    target: PollTarget,
}

impl OpenSession {
    /// Next idle notification's method; `None` when none can arrive.
    pub async fn next_notification(&mut self) -> Option<String> {
        self.session.next_notification().await
    }

    /// Re-list one kind (after its list_changed).
    pub async fn relist(&mut self, kind: Kind) -> ListingReport {
        relist(&mut self.session, &self.target, kind).await
    }

    /// Close the session (its child, for stdio, is killed).
    pub async fn close(self) {
        self.session.close().await;
    }
}

/// A configured target's poll that could not even start (or never ended).
fn unstarted(config: &TargetConfig, error: ErrorKind, detail: String) -> PollReport {
    PollReport::failed(
        &config.name,
        nominal_transport(config.is_stdio()),
        SystemTime::now(),
        &config.settings.kinds,
        SessionFailure {
            error,
            detail: detail.clone(),
            http_status: None,
        },
        &detail,
    )
}

/// Re-list one kind on an open session (watch mode, after list_changed).
pub async fn relist(session: &mut Session, target: &PollTarget, kind: Kind) -> ListingReport {
    let era = session.era();
    let _ = session.drain_notifications();
    let mut listing = walk(&mut SessionPager { session }, kind, &target.walk, era).await;
    scrub_listing(&mut listing, &target.secrets);
    listing
}

/// Like [`poll`] but hands back the open session (when one was
/// established) for watch mode; the caller must close it.
pub async fn poll_open(target: &PollTarget, ctx: PollContext) -> (PollReport, Option<Session>) {
    let (mut report, session) = poll_open_unscrubbed(target, ctx).await;
    scrub_report(&mut report, &target.secrets);
    (report, session)
}

async fn poll_open_unscrubbed(
    target: &PollTarget,
    ctx: PollContext,
) -> (PollReport, Option<Session>) {
    let t0 = Instant::now();
    let mut report = PollReport::new(&target.name, target.nominal_transport(), SystemTime::now());
    report.trace_id = ctx
        .trace
        .filter(|_| ctx.propagate_trace_context)
        .map(|t| t.trace_id);
    report.poll_span_id = ctx.trace.map(|t| t.poll_span_id);
    if let Endpoint::Http { spec, .. } = &target.endpoint {
        if let Some(url) = &spec.url {
            (report.server_address, report.server_port) = mcp_wire::transport::server_address(url);
        }
    }
    let mut session = match Session::connect(&target.endpoint, session_options(target, &ctx)).await
    {
        Ok(s) => s,
        Err(failure) => {
            let mut failed = session_failed(target, &report, failure);
            failed.duration = t0.elapsed();
            return (failed, None);
        }
    };
    report.transport = session.transport_kind();
    report.protocol_version = Some(session.protocol_version.clone());
    report.modern = session.modern;
    report.server = Some(ServerInfo {
        name: session.server_name.clone().unwrap_or_default(),
        version: session.server_version.clone().unwrap_or_default(),
    });
    list_every_kind(&mut session, target, &mut report).await;
    if super::poll_report::all_complete(&report.listings) {
        report.time_to_ready = Some(t0.elapsed());
    }
    report.handshakes = session.handshakes.iter().map(handshake_record).collect();
    report.session_id = session.session_id().map(str::to_string);
    report.stdout_defects = session.stdout_defects;
    report.server_requests = session.server_requests;
    report.duration = t0.elapsed();
    (report, Some(session))
}

/// How the session connects: the target's protocol and limits, and the
/// poll's trace when it is propagated.
fn session_options(target: &PollTarget, ctx: &PollContext) -> SessionOptions {
    SessionOptions {
        protocol: target.protocol,
        era_hint: ctx.era_hint,
        limits: target.transport.clone(),
        request_timeout: target.walk.page_timeout,
        trace: ctx
            .trace
            .filter(|_| ctx.propagate_trace_context)
            .map(|t| t.context()),
    }
}

/// The report of a poll whose session was not established: every kind
/// failed with the session's error; what `started` already knew (address,
/// trace) is kept.
fn session_failed(
    target: &PollTarget,
    started: &PollReport,
    failure: ConnectFailure,
) -> PollReport {
    let detail = failure.error.to_string();
    let mut failed = PollReport::failed(
        &target.name,
        failure.transport,
        started.started,
        &target.kinds,
        SessionFailure {
            error: error_kind(&failure.error),
            detail: detail.clone(),
            http_status: http_status(&failure.error),
        },
        &format!("session not established: {detail}"),
    );
    failed.handshakes = failure.handshakes.iter().map(handshake_record).collect();
    failed.session_retry_after = retry_after(&failure.error);
    failed.stderr_tail = failure.close.stderr_tail;
    failed.server_address = started.server_address.clone();
    failed.server_port = started.server_port;
    failed.trace_id = started.trace_id;
    failed.poll_span_id = started.poll_span_id;
    failed
}

/// Walk every enabled kind on the session, in order: a kind the server
/// does not advertise is unsupported unless forced; a complete listing may
/// get the garbage-cursor check.
async fn list_every_kind(session: &mut Session, target: &PollTarget, report: &mut PollReport) {
    for &kind in &target.kinds {
        if !session.advertises(kind.capability()) {
            if !target.forced_kinds.contains(&kind) {
                report
                    .listings
                    .push(ListingReport::empty(kind, Outcome::Unsupported));
                continue;
            }
            report.unadvertised_kinds.push(kind);
        }
        // Notifications that arrived between listings belong to no walk.
        let _ = session.drain_notifications();
        let era = session.era();
        let listing = walk(&mut SessionPager { session }, kind, &target.walk, era).await;
        if garbage_cursor::wanted(target.garbage_cursor_check, &listing) {
            let check = invalid_cursor_check(session, &listing, target.walk.page_timeout).await;
            report.garbage_cursor_checks.push(check);
        }
        report.listings.push(listing);
    }
}

fn handshake_record(h: &mcp_wire::session::Handshake) -> HandshakeRecord {
    HandshakeRecord {
        method: h.method.to_string(),
        started: h.started,
        duration: h.duration,
        request_id: h.request_id,
        span_id: h.span_id,
    }
}
