//! `/probe`, blackbox-style: Prometheus drives the schedule; each request
//! polls once and answers from a registry of its own. Only configured
//! targets, or URLs a configured module allows, can be probed, and a request
//! never starts a process.

use super::probe_budget::ProbeRefused;
use super::AppState;
use crate::config::{Config, TargetConfig};
use crate::poll::{poll_configured, HardDeadline, Kind, PollContext};
use crate::sinks::probe_answer;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;
use std::time::Duration;

#[derive(Deserialize)]
pub struct ProbeQuery {
    target: Option<String>,
    kind: Option<String>,
    module: Option<String>,
    /// `debug=true`: the human report (pages, cursor hashes, verdict) as
    /// text instead of metrics, as blackbox_exporter does.
    #[serde(default)]
    debug: bool,
}

fn bad(status: StatusCode, msg: &str) -> Response {
    (status, format!("{msg}\n")).into_response()
}

/// The probe was not run: the exporter is busy, not the target down. 503
/// makes the scrape fail (`up` 0) rather than report a target as down.
fn busy(refused: ProbeRefused) -> Response {
    let msg = match refused {
        ProbeRefused::QueueFull => {
            "too many probes: every probe slot is busy and the queue is full"
        }
        ProbeRefused::Deadline => "waited for a probe slot until the scrape timeout",
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        format!("{msg}\n"),
    )
        .into_response()
}

pub async fn probe(
    State(app): State<AppState>,
    Query(q): Query<ProbeQuery>,
    headers: HeaderMap,
) -> Response {
    let gzip = super::compression::accepts_gzip(&headers);
    let format = super::negotiation::exposition_for(&headers);
    let loaded = app.service.config();
    let mut target = match requested_target(&loaded.config, &q) {
        Ok(t) => t,
        Err((status, why)) => return bad(status, &why),
    };
    // Finish inside Prometheus' scrape timeout: the budget starts now, so
    // time spent queued for a probe slot comes out of it.
    let budget = super::scrape_timeout::probe_budget(
        headers
            .get("X-Prometheus-Scrape-Timeout-Seconds")
            .and_then(|v| v.to_str().ok()),
    );
    let deadline = tokio::time::Instant::now() + budget;
    // Probes have slots of their own: they never take the scheduler's.
    let _slot = match app.probe_budget.admit(deadline).await {
        Ok(slot) => slot,
        Err(refused) => return busy(refused),
    };
    let left = fit_to_budget(&mut target, deadline);

    // Failures are data here too: an unreadable token or a poll past its
    // budget still answers 200 with `mcp_up 0`, so the scrape keeps its series.
    let deadline = HardDeadline {
        limit: left + Duration::from_secs(1),
        exceeded: format!("probe exceeded its budget of {budget:?}"),
    };
    let stderr_tail_bytes = loaded.config.defaults.stderr_tail_bytes;
    let (report, _) = poll_configured(
        &target,
        stderr_tail_bytes,
        PollContext::default(),
        deadline,
        false,
    )
    .await;
    if q.debug {
        let body = probe_answer::debug(report, &target);
        return ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response();
    }
    match probe_answer::render(report, &target, format) {
        // A probe answer is one target's series (a few kB): compressing it
        // inline costs less than a hop to the blocking pool.
        Ok(body) if gzip => {
            super::metrics_response(super::compression::gzip(body.as_bytes()), format, true)
        }
        Ok(body) => super::metrics_response(Bytes::from(body), format, false),
        Err(_) => bad(StatusCode::INTERNAL_SERVER_ERROR, "encoding metrics failed"),
    }
}

/// The target a request may probe: a configured one by name, or a URL a
/// configured module allows (labelled with the module's name); never a
/// stdio target. `kind=` narrows it to one kind. Otherwise the status and
/// message that refuse the request.
fn requested_target(config: &Config, q: &ProbeQuery) -> Result<TargetConfig, (StatusCode, String)> {
    let Some(target_param) = &q.target else {
        return Err((
            StatusCode::BAD_REQUEST,
            "target parameter is missing".into(),
        ));
    };
    let mut target = match &q.module {
        Some(m) => {
            let Some(module) = config.modules.get(m) else {
                return Err((StatusCode::BAD_REQUEST, "unknown module".into()));
            };
            let Ok(url) = url::Url::parse(target_param) else {
                return Err((StatusCode::BAD_REQUEST, "target is not a URL".into()));
            };
            if !module.allows(&url) {
                return Err((
                    StatusCode::FORBIDDEN,
                    "target URL is not allowed by the module".into(),
                ));
            }
            // The label is the module's name, never the URL.
            module.target_for(m.clone(), url, &config.defaults)
        }
        None => match config.target(target_param) {
            Some(t) => t.clone(),
            None => return Err((StatusCode::NOT_FOUND, "unknown target".into())),
        },
    };
    if target.is_stdio() {
        return Err((StatusCode::BAD_REQUEST, "stdio targets are polled on their schedule only: a probe request never starts a process".into()));
    }
    if let Some(k) = &q.kind {
        match k.parse::<Kind>() {
            Ok(kind) => target.settings.kinds = vec![kind],
            Err(e) => return Err((StatusCode::BAD_REQUEST, e.to_string())),
        }
    }
    Ok(target)
}

/// Cut the target's timeouts to what is left until `deadline`, shared by
/// its protocol versions and kinds; returns the time one version's poll has.
fn fit_to_budget(target: &mut TargetConfig, deadline: tokio::time::Instant) -> Duration {
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    // `protocols:` polls once per version, one after another: each gets
    // its share, so the whole answer still fits.
    let left = left / target.protocols.len().max(1) as u32;
    let per_kind = left / target.settings.kinds.len().max(1) as u32;
    target.settings.limits.timeout = target.settings.limits.timeout.min(per_kind);
    target.settings.limits.page_timeout = target.settings.limits.page_timeout.min(per_kind);
    target.settings.limits.connect_timeout = target.settings.limits.connect_timeout.min(left);
    left
}
