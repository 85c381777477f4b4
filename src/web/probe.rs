//! `/probe`, blackbox-style: Prometheus drives the schedule; each request
//! polls once and answers from a registry of its own. Only configured
//! targets, or URLs a configured module allows, can be probed, and a request
//! never starts a process.

use super::AppState;
use crate::listing::{ErrorKind, Kind};
use crate::poller::schedule::failed_report;
use crate::poller::target_spec::probe_target;
use crate::poller::PolledTarget;
use crate::probe::{poll_target, PollContext};
use crate::telemetry::metrics::{encode, TargetMetrics, OPENMETRICS_CONTENT_TYPE};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use prometheus_client::registry::Registry;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Deserialize)]
pub struct ProbeQuery {
    target: Option<String>,
    kind: Option<String>,
    module: Option<String>,
}

fn bad(status: StatusCode, msg: &str) -> Response {
    (status, format!("{msg}\n")).into_response()
}

pub async fn probe(
    State(app): State<AppState>,
    Query(q): Query<ProbeQuery>,
    headers: HeaderMap,
) -> Response {
    let Some(target_param) = q.target else {
        return bad(StatusCode::BAD_REQUEST, "target parameter is missing");
    };
    let loaded = app.service.config();
    let config = &loaded.config;
    let mut target = match &q.module {
        Some(m) => {
            let Some(module) = config.modules.get(m) else {
                return bad(StatusCode::BAD_REQUEST, "unknown module");
            };
            let Ok(url) = url::Url::parse(&target_param) else {
                return bad(StatusCode::BAD_REQUEST, "target is not a URL");
            };
            if !module.allows(&url) {
                return bad(
                    StatusCode::FORBIDDEN,
                    "target URL is not allowed by the module",
                );
            }
            // The label is the module's name, never the URL.
            module.target_for(m.clone(), url, &config.defaults)
        }
        None => match config.target(&target_param) {
            Some(t) => t.clone(),
            None => return bad(StatusCode::NOT_FOUND, "unknown target"),
        },
    };
    if target.is_stdio() {
        return bad(
            StatusCode::BAD_REQUEST,
            "stdio targets are polled on their schedule only: a probe request never starts a process",
        );
    }
    if let Some(k) = &q.kind {
        match k.parse::<Kind>() {
            Ok(kind) => target.kinds = vec![kind],
            Err(e) => return bad(StatusCode::BAD_REQUEST, &e),
        }
    }
    // Finish inside Prometheus' scrape timeout.
    let budget = super::scrape_timeout::probe_budget(
        headers
            .get("X-Prometheus-Scrape-Timeout-Seconds")
            .and_then(|v| v.to_str().ok()),
    );
    let per_kind = budget / target.kinds.len().max(1) as u32;
    target.limits.timeout = target.limits.timeout.min(per_kind);
    target.limits.page_timeout = target.limits.page_timeout.min(per_kind);
    target.limits.connect_timeout = target.limits.connect_timeout.min(budget);

    // Failures are data here too: an unreadable token or a poll past its
    // budget still answers 200 with `mcp_up 0`, so the scrape keeps its series.
    let report = match probe_target(&target, loaded.config.defaults.stderr_tail_bytes) {
        Err(detail) => failed_report(&target, ErrorKind::Unauthorized, detail, None),
        Ok(spec) => {
            let _permit = app.service.shared.acquire().await;
            let limit = budget + Duration::from_secs(1);
            match tokio::time::timeout(limit, poll_target(&spec, PollContext::default())).await {
                Ok(r) => r,
                Err(_) => failed_report(
                    &target,
                    ErrorKind::Timeout,
                    format!("probe exceeded its budget of {budget:?}"),
                    None,
                ),
            }
        }
    };
    let mut registry = Registry::default();
    let metrics = TargetMetrics::for_probe(&mut registry);
    metrics.register_target(&target.name, &target.kinds);
    let polled = PolledTarget {
        report,
        diffs: BTreeMap::new(),
        reference_missing: BTreeMap::new(),
    };
    metrics.observe(&polled, &target.expect);
    for p in &polled.report.invalid_cursor_probes {
        metrics.set_invalid_cursor_probe(&target.name, p.kind, p.result);
    }
    match encode(&registry) {
        Ok(body) => ([(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], body).into_response(),
        Err(_) => bad(StatusCode::INTERNAL_SERVER_ERROR, "encoding metrics failed"),
    }
}
