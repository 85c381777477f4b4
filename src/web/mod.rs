//! HTTP surface: /metrics, /probe, health, reload, the JSON API and the
//! status page.

mod api;
mod basic_auth;
mod html;
mod probe;
pub mod probe_budget;
mod scrape_timeout;
pub mod server;
mod status_chart;
mod status_conformance;
mod status_page;
mod status_sections;
mod tls;
pub mod web_config;

use crate::poller::service::{ReloadOutcome, Service};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use prometheus_client::registry::Registry;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub service: Arc<Service>,
    pub registry: Arc<Registry>,
    /// `--web.enable-lifecycle`: `/-/reload` over HTTP (SIGHUP always works).
    pub lifecycle: bool,
    /// `/probe`'s own slots and queue, apart from the scheduler's.
    pub probe_budget: Arc<probe_budget::ProbeBudget>,
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/probe", get(probe::probe))
        .route("/-/healthy", get(|| async { "Healthy\n" }))
        .route("/-/ready", get(|| async { "Ready\n" }))
        .route("/-/reload", post(reload).put(reload))
        .route("/api/targets", get(api::targets))
        .route("/api/targets/{name}", get(api::target))
        .route("/", get(status_page::index))
        .route("/targets/{name}", get(status_page::target))
        .with_state(state)
}

async fn metrics(State(app): State<AppState>) -> Response {
    match crate::telemetry::metrics::encode(&app.registry) {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                crate::telemetry::metrics::OPENMETRICS_CONTENT_TYPE,
            )],
            body,
        )
            .into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "encoding metrics failed\n",
        )
            .into_response(),
    }
}

async fn reload(State(app): State<AppState>) -> Response {
    if !app.lifecycle {
        // As Prometheus answers without --web.enable-lifecycle.
        return (StatusCode::FORBIDDEN, "Lifecycle API is not enabled.\n").into_response();
    }
    match app.service.reload().await {
        Ok(ReloadOutcome::Applied) => (StatusCode::OK, "config reloaded\n").into_response(),
        Ok(ReloadOutcome::Unchanged) => (StatusCode::OK, "config unchanged\n").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "config reload failed; keeping the running config");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("reload failed: {e}\n"),
            )
                .into_response()
        }
    }
}
