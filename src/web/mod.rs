//! HTTP surface: /metrics, /probe, health, reload, the JSON API and the
//! status page.

mod api;
mod api_clients;
mod basic_auth;
mod compression;
mod html;
mod json;
mod negotiation;
mod probe;
pub mod probe_budget;
mod scrape_cache;
mod scrape_timeout;
pub mod server;
mod status_chart;
mod status_clients;
mod status_conformance;
mod status_page;
mod status_protocols;
mod status_sections;
mod status_sources;

use crate::scheduler::service::{ReloadOutcome, Service};
use crate::tap::client_views::ClientBook;
use crate::telemetry::metrics::{Exposition, RenderMetrics};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use prometheus_client::registry::Registry;
use scrape_cache::ScrapeCache;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub service: Arc<Service>,
    /// `/metrics`: renders of the registry, shared by concurrent scrapers.
    scrapes: Arc<ScrapeCache>,
    /// `--web.enable-lifecycle`: `/-/reload` over HTTP (SIGHUP always works).
    pub lifecycle: bool,
    /// `/probe`'s own slots and queue, apart from the scheduler's.
    pub probe_budget: Arc<probe_budget::ProbeBudget>,
    /// What the taps found about their clients.
    pub clients: Arc<ClientBook>,
}

impl AppState {
    pub fn new(
        service: Arc<Service>,
        registry: Arc<Registry>,
        render_metrics: RenderMetrics,
        lifecycle: bool,
        probe_budget: Arc<probe_budget::ProbeBudget>,
        clients: Arc<ClientBook>,
    ) -> AppState {
        AppState {
            service,
            scrapes: Arc::new(ScrapeCache::new(registry, render_metrics)),
            lifecycle,
            probe_budget,
            clients,
        }
    }
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
        .route("/api/sources", get(api::sources))
        .route("/api/clients", get(api_clients::clients))
        .route("/", get(status_page::index))
        .route("/targets/{name}", get(status_page::target))
        .route("/targets/", get(status_page::target_named))
        .with_state(state)
}

async fn metrics(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let format = negotiation::exposition_for(&headers);
    let scrape = match app.scrapes.get(format).await {
        Ok(scrape) => scrape,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    };
    if compression::accepts_gzip(&headers) {
        return metrics_response(scrape.gzip, format, true);
    }
    // Inflated while sent; its length is known, so not chunked.
    let length = scrape.text_bytes;
    let mut response = metrics_response(Bytes::new(), format, false);
    *response.body_mut() = axum::body::Body::from_stream(scrape.inflated());
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// Metrics text in `format`, with `Content-Encoding: gzip` when `gzipped`.
/// The answer depends on both request headers: caches must key on them.
fn metrics_response(body: Bytes, format: Exposition, gzipped: bool) -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, format.content_type()),
            (header::VARY, "Accept, Accept-Encoding"),
        ],
        body,
    )
        .into_response();
    if gzipped {
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

async fn reload(State(app): State<AppState>) -> Response {
    if !app.lifecycle {
        // As Prometheus answers without --web.enable-lifecycle.
        return (StatusCode::FORBIDDEN, "Lifecycle API is not enabled.\n").into_response();
    }
    match app.service.reload().await {
        Ok(ReloadOutcome::Applied) => (StatusCode::OK, "config reloaded\n").into_response(),
        Ok(ReloadOutcome::Unchanged) => (StatusCode::OK, "config unchanged\n").into_response(),
        // The service logged and counted the failure.
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("reload failed: {e}\n"),
        )
            .into_response(),
    }
}
