//! One span per client listing a tap observed: a trace of its own, named
//! `mcp.client.listing <kind>` (INTERNAL: the tap watched it, it made no
//! request), with the client's identity as the tap labels it, how the
//! listing ended, pages and items, what it missed of the known catalogue
//! (an event naming up to the observer's few names), and whether the tap
//! merged it, and the route it was for (`mcp.tap.route`). Pure: times are
//! handed in. Never a cursor or a session id:
//! the session only as the observer's short hash.

use super::ids;
use super::names as attr;
use mcp_observer::{ClientListing, ListingOutcome};
use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use std::time::SystemTime;

/// The span of one client listing on tap `tap`, from `start` to `end`.
pub fn client_listing_span(
    tap: &str,
    l: &ClientListing,
    start: SystemTime,
    end: SystemTime,
    trace_id: TraceId,
    scope: &InstrumentationScope,
) -> SpanData {
    let mut events = SpanEvents::default();
    if let Some(missed) = &l.missed {
        let mut names: Vec<StringValue> =
            missed.names.iter().map(|n| n.to_string().into()).collect();
        if let Some(last) = &missed.last {
            names.push(last.to_string().into());
        }
        events.events.push(Event::new(
            "mcp.client.items_missed",
            end,
            vec![
                KeyValue::new(attr::PAGINATION_ITEM_COUNT, count(missed.count)),
                KeyValue::new(
                    attr::PAGINATION_ITEM_NAMES,
                    Value::Array(Array::String(names)),
                ),
            ],
            0,
        ));
    }
    let (attributes, status) = attributes(tap, l);
    SpanData {
        span_context: SpanContext::new(
            trace_id,
            ids::fresh_span_id(),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        ),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Internal,
        name: format!("mcp.client.listing {}", l.kind.label()).into(),
        start_time: start,
        end_time: end.max(start),
        attributes,
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status,
        instrumentation_scope: scope.clone(),
    }
}

fn attributes(tap: &str, l: &ClientListing) -> (Vec<KeyValue>, Status) {
    let mut attrs = vec![
        KeyValue::new(attr::MCP_TAP, tap.to_string()),
        KeyValue::new(attr::MCP_TAP_ROUTE, l.route.name().to_string()),
        KeyValue::new(attr::MCP_CLIENT_NAME, l.client.label().to_string()),
        KeyValue::new(attr::MCP_CLIENT_IDENTITY_SOURCE, l.source.label()),
        KeyValue::new(attr::MCP_LISTING_KIND, l.kind.label()),
        KeyValue::new(attr::MCP_METHOD_NAME, l.kind.method()),
        KeyValue::new(attr::PAGINATION_OUTCOME, l.outcome.label()),
        KeyValue::new(attr::PAGINATION_PAGES, i64::from(l.pages)),
        KeyValue::new(attr::PAGINATION_UNIQUE_ITEMS, count(l.items)),
        KeyValue::new(attr::MCP_CLIENT_SESSION, l.session.as_str().to_string()),
    ];
    if let Some(v) = &l.version {
        attrs.push(KeyValue::new(attr::MCP_CLIENT_VERSION, v.to_string()));
    }
    if let Some(cause) = l.abandoned {
        attrs.push(KeyValue::new(attr::PAGINATION_REASON, cause.label()));
    }
    if let Some(missed) = &l.missed {
        attrs.push(KeyValue::new(
            attr::MCP_CLIENT_ITEMS_MISSED,
            count(missed.count),
        ));
    }
    if let Some(merge) = l.merged {
        attrs.push(KeyValue::new(attr::MCP_CLIENT_MERGED, merge.label()));
    }
    if l.invalid_cursor {
        attrs.push(KeyValue::new(attr::PAGINATION_INVALID_CURSOR_ERRORS, 1i64));
    }
    let status = match (l.outcome, l.error_code()) {
        (ListingOutcome::Failed, code) => {
            let error = code.map_or_else(|| "failed".to_string(), |c| c.to_string());
            attrs.push(KeyValue::new(attr::ERROR_TYPE, error.clone()));
            if let Some(c) = code {
                attrs.push(KeyValue::new(attr::RPC_RESPONSE_STATUS_CODE, c.to_string()));
            }
            Status::error(error)
        }
        _ => Status::Unset,
    };
    (attrs, status)
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
