//! Turning one finished poll into finished spans. Pure: no I/O, no clock.
//!
//! The tree is `mcp.poll` → handshake (`initialize` / `server/discover`) and
//! `mcp.listing <kind>` → one CLIENT span per page named by the method. The
//! ids are the ones the session already sent to the server in `traceparent`,
//! so the server's spans hang under our request spans.
//!
//! Only labels, counts, short cursor hashes, host and port are exported:
//! never a cursor, URL, header, error detail or stderr text.

use super::ids;
use super::names as attr;
use super::redact::{host_only, safe_item_name};
use crate::baseline::{KindDiff, PolledTarget};
use crate::poll::{HandshakeRecord, PollReport, SessionFailure};
use mcp_listing::{CursorState, Guard, Kind, ListingReport, Outcome, PageRecord};
use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use std::borrow::Cow;
use std::time::{Duration, SystemTime};

/// Names listed in one added/removed event; the rest are only counted, so a
/// mass removal cannot produce a huge span.
pub const MAX_NAMES_PER_EVENT: usize = 50;
/// Server-chosen strings (server name, version) are cut to this many chars.
const MAX_SERVER_STRING: usize = 256;

/// The spans of one poll, or `None` when the poll was not traced (no valid
/// trace id and poll span id in the report).
pub fn poll_spans(polled: &PolledTarget, scope: &InstrumentationScope) -> Option<Vec<SpanData>> {
    let report = &polled.report;
    let trace_id = ids::trace_id(report.trace_id?);
    let poll_span_id = ids::span_id(report.poll_span_id?);
    let b = Builder {
        trace_id,
        scope,
        common: Common::of(report),
    };

    let mut spans = Vec::with_capacity(
        1 + report.handshakes.len()
            + report
                .listings
                .iter()
                .map(|l| 1 + l.pages.len())
                .sum::<usize>(),
    );
    let mut latest_end = end_of(report.started, report.duration);

    for (i, hs) in report.handshakes.iter().enumerate() {
        // A session failure belongs to the last handshake made.
        let failed = report.session_error.is_some() && i + 1 == report.handshakes.len();
        let span = b.handshake(
            hs,
            poll_span_id,
            failed
                .then_some(report)
                .and_then(|r| r.session_error.as_ref()),
        );
        latest_end = latest_end.max(span.end_time);
        spans.push(span);
    }

    // A listing without pages (unsupported kind, session failure) starts
    // where the previous step ended.
    let mut cursor_time = report
        .handshakes
        .iter()
        .map(|h| end_of(h.started, h.duration))
        .max()
        .unwrap_or(report.started);
    for listing in &report.listings {
        let listing_span_id = ids::fresh_span_id();
        let mut pages = Vec::with_capacity(listing.pages.len());
        for page in &listing.pages {
            pages.push(b.page(listing.kind, page, listing_span_id));
        }
        let start = pages
            .iter()
            .map(|p| p.start_time)
            .min()
            .unwrap_or(cursor_time);
        let end = pages
            .iter()
            .map(|p| p.end_time)
            .max()
            .unwrap_or(start)
            .max(end_of(start, listing.duration));
        let diff = polled.diffs.get(&listing.kind);
        spans.push(b.listing(listing, diff, listing_span_id, poll_span_id, start, end));
        spans.extend(pages);
        cursor_time = end;
        latest_end = latest_end.max(end);
    }

    spans.insert(0, b.poll(report, poll_span_id, latest_end));
    Some(spans)
}

fn end_of(start: SystemTime, duration: Duration) -> SystemTime {
    start.checked_add(duration).unwrap_or(start)
}

/// Connection attributes every request span carries.
struct Common {
    protocol_version: Option<String>,
    session_id: Option<String>,
    network_transport: &'static str,
    /// `http` for the HTTP transports, none for stdio.
    network_protocol: Option<&'static str>,
    server_address: Option<String>,
    server_port: Option<u16>,
}

impl Common {
    fn of(report: &PollReport) -> Common {
        let stdio = report.transport.is_stdio();
        Common {
            protocol_version: report.protocol_version.clone(),
            session_id: report.session_id.clone(),
            network_transport: if stdio { "pipe" } else { "tcp" },
            network_protocol: (!stdio).then_some("http"),
            server_address: report.server_address.as_deref().map(host_only),
            server_port: report.server_port,
        }
    }

    fn push(&self, attrs: &mut Vec<KeyValue>) {
        if let Some(v) = &self.protocol_version {
            attrs.push(KeyValue::new(attr::MCP_PROTOCOL_VERSION, v.clone()));
        }
        if let Some(v) = &self.session_id {
            attrs.push(KeyValue::new(attr::MCP_SESSION_ID, v.clone()));
        }
        attrs.push(KeyValue::new(
            attr::NETWORK_TRANSPORT,
            self.network_transport,
        ));
        if let Some(p) = self.network_protocol {
            attrs.push(KeyValue::new(attr::NETWORK_PROTOCOL_NAME, p));
        }
        if let Some(a) = &self.server_address {
            attrs.push(KeyValue::new(attr::SERVER_ADDRESS, a.clone()));
        }
        if let Some(p) = self.server_port {
            attrs.push(KeyValue::new(attr::SERVER_PORT, i64::from(p)));
        }
    }
}

fn truncate(s: &str, max_chars: usize) -> String {
    s.chars().take(max_chars).collect()
}

struct Builder<'a> {
    trace_id: TraceId,
    scope: &'a InstrumentationScope,
    common: Common,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn span(
        &self,
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        span_id: SpanId,
        parent: SpanId,
        start: SystemTime,
        end: SystemTime,
        attributes: Vec<KeyValue>,
        events: Vec<Event>,
        status: Status,
    ) -> SpanData {
        let mut span_events = SpanEvents::default();
        span_events.events = events;
        SpanData {
            span_context: SpanContext::new(
                self.trace_id,
                span_id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: false,
            span_kind: kind,
            name: name.into(),
            start_time: start,
            end_time: end.max(start),
            attributes,
            dropped_attributes_count: 0,
            events: span_events,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }

    fn poll(&self, report: &PollReport, span_id: SpanId, end: SystemTime) -> SpanData {
        let outcome = if report.session_error.is_some() {
            "session_error"
        } else if report.all_complete() {
            "complete"
        } else {
            "incomplete"
        };
        let mut attrs = vec![
            KeyValue::new(attr::MCP_TARGET, report.target.clone()),
            KeyValue::new(attr::MCP_TRANSPORT, report.transport.label()),
            KeyValue::new(attr::MCP_POLL_OUTCOME, outcome),
            KeyValue::new(attr::MCP_POLL_LISTINGS, report.listings.len() as i64),
        ];
        self.common.push(&mut attrs);
        if let Some(server) = &report.server {
            attrs.push(KeyValue::new(
                attr::MCP_SERVER_NAME,
                truncate(&server.name, MAX_SERVER_STRING),
            ));
            attrs.push(KeyValue::new(
                attr::MCP_SERVER_VERSION,
                truncate(&server.version, MAX_SERVER_STRING),
            ));
        }
        if let Some(ttr) = report.time_to_ready {
            attrs.push(KeyValue::new(
                attr::MCP_POLL_TIME_TO_READY,
                ttr.as_secs_f64(),
            ));
        }
        let status = match &report.session_error {
            Some(failure) => {
                attrs.push(KeyValue::new(attr::ERROR_TYPE, failure.error.label()));
                Status::error(failure.error.label())
            }
            None if outcome == "complete" => Status::Unset,
            None => Status::error("incomplete"),
        };
        self.span(
            "mcp.poll",
            SpanKind::Internal,
            span_id,
            SpanId::INVALID,
            report.started,
            end,
            attrs,
            Vec::new(),
            status,
        )
    }

    fn handshake(
        &self,
        hs: &HandshakeRecord,
        parent: SpanId,
        failure: Option<&SessionFailure>,
    ) -> SpanData {
        let span_id = hs.span_id.map_or_else(ids::fresh_span_id, ids::span_id);
        let mut attrs = vec![
            KeyValue::new(attr::MCP_METHOD_NAME, hs.method.clone()),
            KeyValue::new(attr::JSONRPC_REQUEST_ID, hs.request_id.to_string()),
        ];
        self.common.push(&mut attrs);
        let status = match failure {
            Some(f) => {
                attrs.push(KeyValue::new(attr::ERROR_TYPE, f.error.label()));
                push_response_codes(&mut attrs, None, f.http_status);
                Status::error(f.error.label())
            }
            None => Status::Unset,
        };
        self.span(
            hs.method.clone(),
            SpanKind::Client,
            span_id,
            parent,
            hs.started,
            end_of(hs.started, hs.duration),
            attrs,
            Vec::new(),
            status,
        )
    }

    fn listing(
        &self,
        l: &ListingReport,
        diff: Option<&KindDiff>,
        span_id: SpanId,
        parent: SpanId,
        start: SystemTime,
        end: SystemTime,
    ) -> SpanData {
        // Diff attributes and events only where there was a baseline.
        let diff = diff.filter(|d| d.had_baseline);
        let mut attrs = listing_attributes(l, diff);
        let status = listing_status(l, &mut attrs);
        let mut events = restart_events(l, start);
        if let Outcome::Aborted(guard) = l.outcome {
            events.push(abort_event(l, guard, end));
        }
        if let Some(d) = diff {
            events.extend(diff_events(l.kind, d, end));
        }
        self.span(
            format!("mcp.listing {}", l.kind.label()),
            SpanKind::Internal,
            span_id,
            parent,
            start,
            end,
            attrs,
            events,
            status,
        )
    }

    fn page(&self, kind: Kind, p: &PageRecord, parent: SpanId) -> SpanData {
        let span_id = p.span_id.map_or_else(ids::fresh_span_id, ids::span_id);
        let mut attrs = vec![
            KeyValue::new(attr::MCP_METHOD_NAME, kind.method()),
            KeyValue::new(attr::JSONRPC_REQUEST_ID, p.request_id.to_string()),
            KeyValue::new(attr::PAGINATION_PAGE_INDEX, i64::from(p.index)),
            KeyValue::new(attr::PAGINATION_ATTEMPT, i64::from(p.attempt)),
            KeyValue::new(attr::PAGINATION_ITEMS, i64::from(p.items)),
            KeyValue::new(attr::PAGINATION_NEW_ITEMS, i64::from(p.new_items)),
            KeyValue::new(attr::PAGINATION_RESPONSE_BYTES, p.bytes as i64),
            KeyValue::new(attr::PAGINATION_CURSOR_SENT, p.sent_cursor.is_some()),
            KeyValue::new(attr::PAGINATION_CURSOR_PRESENT, p.next_cursor.is_present()),
            KeyValue::new(attr::PAGINATION_NEXT_CURSOR, p.next_cursor.label()),
        ];
        self.common.push(&mut attrs);
        if let CursorState::Present(hash) = &p.next_cursor {
            attrs.push(KeyValue::new(attr::PAGINATION_CURSOR_HASH, hash.clone()));
        }
        if let Some(hash) = &p.sent_cursor {
            attrs.push(KeyValue::new(
                attr::PAGINATION_SENT_CURSOR_HASH,
                hash.clone(),
            ));
        }
        let status = match p.error {
            Some(error) => {
                let error_type = match p.rpc_code {
                    Some(code) => code.to_string(),
                    None => error.label().to_string(),
                };
                attrs.push(KeyValue::new(attr::ERROR_TYPE, error_type));
                attrs.push(KeyValue::new(attr::PAGINATION_ERROR, error.label()));
                push_response_codes(&mut attrs, p.rpc_code, p.http_status);
                Status::error(error.label())
            }
            None => Status::Unset,
        };
        self.span(
            kind.method(),
            SpanKind::Client,
            span_id,
            parent,
            p.started,
            end_of(p.started, p.duration),
            attrs,
            Vec::new(),
            status,
        )
    }
}

/// A listing span's counts, server hints and (with a baseline) churn.
fn listing_attributes(l: &ListingReport, diff: Option<&KindDiff>) -> Vec<KeyValue> {
    let mut attrs = vec![
        KeyValue::new(attr::MCP_LISTING_KIND, l.kind.label()),
        KeyValue::new(attr::PAGINATION_OUTCOME, l.outcome.label()),
        KeyValue::new(attr::PAGINATION_PAGES, i64::from(l.final_pages)),
        KeyValue::new(attr::PAGINATION_REQUESTS, i64::from(l.requests())),
        KeyValue::new(attr::PAGINATION_RAW_ITEMS, l.raw_items as i64),
        KeyValue::new(attr::PAGINATION_UNIQUE_ITEMS, l.unique_items as i64),
        KeyValue::new(attr::PAGINATION_DUPLICATE_ITEMS, l.duplicate_items as i64),
        KeyValue::new(attr::PAGINATION_INVALID_ITEMS, l.invalid_items as i64),
        KeyValue::new(
            attr::PAGINATION_INVALID_CURSOR_ERRORS,
            i64::from(l.invalid_cursor_errors),
        ),
        KeyValue::new(attr::PAGINATION_RESTARTS, l.restarts.len() as i64),
        KeyValue::new(
            attr::PAGINATION_LIST_CHANGED,
            i64::from(l.list_changed_notifications),
        ),
    ];
    if let Some(reason) = l.reason {
        attrs.push(KeyValue::new(attr::PAGINATION_REASON, reason.label()));
    }
    if let Some(ttl) = l.cache.ttl_ms {
        attrs.push(KeyValue::new(attr::PAGINATION_TTL_MS, ttl as i64));
    }
    if let Some(scope) = &l.cache.cache_scope {
        attrs.push(KeyValue::new(
            attr::PAGINATION_CACHE_SCOPE,
            truncate(scope, MAX_SERVER_STRING),
        ));
    }
    if let Some(d) = diff {
        attrs.push(KeyValue::new(
            attr::PAGINATION_ADDED_ITEMS,
            d.added.len() as i64,
        ));
        attrs.push(KeyValue::new(
            attr::PAGINATION_REMOVED_ITEMS,
            d.removed.len() as i64,
        ));
        attrs.push(KeyValue::new(
            attr::PAGINATION_SILENT_SHRINK,
            d.silent_shrink,
        ));
    }
    attrs
}

/// Unset for a complete (or unsupported) listing; otherwise an error
/// named by the guard or the error kind, with its `error.type` and codes
/// added to `attrs`.
fn listing_status(l: &ListingReport, attrs: &mut Vec<KeyValue>) -> Status {
    match l.outcome {
        Outcome::Complete | Outcome::Unsupported => Status::Unset,
        Outcome::Aborted(guard) => {
            attrs.push(KeyValue::new(attr::ERROR_TYPE, guard.label()));
            Status::error(guard.label())
        }
        Outcome::Error(kind) => {
            attrs.push(KeyValue::new(attr::ERROR_TYPE, kind.label()));
            push_response_codes(attrs, l.rpc_error_code, l.http_status);
            Status::error(kind.label())
        }
    }
}

/// The JSON-RPC error code and HTTP status of a failed request, when known.
fn push_response_codes(attrs: &mut Vec<KeyValue>, rpc_code: Option<i64>, http_status: Option<u16>) {
    if let Some(code) = rpc_code {
        attrs.push(KeyValue::new(
            attr::RPC_RESPONSE_STATUS_CODE,
            code.to_string(),
        ));
    }
    if let Some(code) = http_status {
        attrs.push(KeyValue::new(
            attr::HTTP_RESPONSE_STATUS_CODE,
            i64::from(code),
        ));
    }
}

/// One event per restart, at the end of the page whose answer caused it
/// (the listing's start when that page is unknown).
fn restart_events(l: &ListingReport, start: SystemTime) -> Vec<Event> {
    l.restarts
        .iter()
        .map(|restart| {
            let at = l
                .pages
                .iter()
                .find(|p| p.index == restart.at_page)
                .map(|p| end_of(p.started, p.duration))
                .unwrap_or(start);
            Event::new(
                "mcp.pagination.restart",
                at,
                vec![
                    KeyValue::new(attr::PAGINATION_RESTART_REASON, restart.reason.label()),
                    KeyValue::new(attr::PAGINATION_PAGE_INDEX, i64::from(restart.at_page)),
                ],
                0,
            )
        })
        .collect()
}

/// The guard that stopped the walk, at the listing's end, with the last
/// page's index.
fn abort_event(l: &ListingReport, guard: Guard, end: SystemTime) -> Event {
    let mut attrs = vec![KeyValue::new(attr::PAGINATION_GUARD, guard.label())];
    if let Some(last) = l.pages.last() {
        attrs.push(KeyValue::new(
            attr::PAGINATION_PAGE_INDEX,
            i64::from(last.index),
        ));
    }
    Event::new("mcp.pagination.abort", end, attrs, 0)
}

/// The names removed, added and changed since the baseline, at the
/// listing's end; an event only for what happened.
fn diff_events(kind: Kind, d: &KindDiff, end: SystemTime) -> Vec<Event> {
    let mut events = Vec::new();
    if !d.removed.is_empty() {
        events.push(names_event(
            "mcp.pagination.items_removed",
            kind,
            &d.removed,
            end,
        ));
    }
    if !d.added.is_empty() {
        events.push(names_event(
            "mcp.pagination.items_added",
            kind,
            &d.added,
            end,
        ));
    }
    if d.drift.changed_items > 0 {
        // `name (class: rule)`, so a trace shows what broke.
        let named: Vec<String> = d
            .drift
            .changed
            .iter()
            .map(|c| format!("{} ({}: {})", c.name, c.class.label(), c.rule))
            .collect();
        events.push(names_event(
            "mcp.pagination.items_changed",
            kind,
            &named,
            end,
        ));
    }
    events
}

/// At most `MAX_NAMES_PER_EVENT` names, plus how many were left out.
fn names_event(name: &'static str, kind: Kind, names: &[String], at: SystemTime) -> Event {
    let listed: Vec<StringValue> = names
        .iter()
        .take(MAX_NAMES_PER_EVENT)
        .map(|n| StringValue::from(safe_item_name(kind, n)))
        .collect();
    let omitted = names.len().saturating_sub(listed.len());
    Event::new(
        name,
        at,
        vec![
            KeyValue::new(attr::PAGINATION_ITEM_COUNT, names.len() as i64),
            KeyValue::new(
                attr::PAGINATION_ITEM_NAMES,
                Value::Array(Array::String(listed)),
            ),
            KeyValue::new(attr::PAGINATION_ITEM_NAMES_OMITTED, omitted as i64),
        ],
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_event_is_bounded() {
        let names: Vec<String> = (0..120).map(|i| format!("tool{i}")).collect();
        let ev = names_event("e", Kind::Tools, &names, SystemTime::UNIX_EPOCH);
        let get = |k: &str| {
            ev.attributes
                .iter()
                .find(|kv| kv.key.as_str() == k)
                .map(|kv| kv.value.clone())
        };
        assert_eq!(get(attr::PAGINATION_ITEM_COUNT), Some(Value::I64(120)));
        assert_eq!(
            get(attr::PAGINATION_ITEM_NAMES_OMITTED),
            Some(Value::I64(70))
        );
        match get(attr::PAGINATION_ITEM_NAMES) {
            Some(Value::Array(Array::String(v))) => assert_eq!(v.len(), MAX_NAMES_PER_EVENT),
            other => panic!("{other:?}"),
        }
    }
}
