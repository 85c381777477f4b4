//! A configured tap (`taps:` in the configuration) as the data path and its
//! observer task are started from: its `limits:` become the upstream
//! connection's bounds and those of a merged walk; `max_connections` the
//! listener's (never past the tap's share of descriptors, `super::fds`).

use super::observe::ListingSinks;
use super::queue::QueueBudget;
use super::report_file::{ReportFile, DEFAULT_MAX_REPORT_BYTES};
use super::run::{ObservingSpec, RouteSpec, TapSpec};
use crate::config::taps::TapConfig;
use crate::listen_tls::TlsReloader;
use crate::telemetry::metrics::WebMetrics;
use mcp_observer::Routing;
use mcp_tap::{MergeClients, MergeSettings, TapLimits, TapSettings, UpstreamTls};
use std::sync::Arc;

/// Why a configured tap cannot be started (its TLS files, its report file).
#[derive(Debug, thiserror::Error)]
#[error("tap {tap}: {message}")]
pub struct SpecError {
    pub tap: String,
    pub message: String,
}

impl TapSpec {
    pub fn from_config(c: &TapConfig, web: &WebMetrics) -> Result<TapSpec, SpecError> {
        let fail = |message: String| SpecError {
            tap: c.name.clone(),
            message,
        };
        let mut settings = TapSettings::new(c.upstream.url.clone());
        settings.upstream_tls = UpstreamTls {
            ca_file: c.upstream.tls.ca_file.clone(),
            insecure_skip_verify: c.upstream.tls.insecure_skip_verify,
        };
        if let Some(tls) = &c.listener.tls {
            let tls = TlsReloader::for_tap(tls, web.clone())
                .map_err(|e| fail(format!("listener TLS: {e}")))?;
            settings.listener_tls = Some(Arc::new(tls));
        }
        settings.client_header = c
            .client_header
            .as_deref()
            .and_then(|h| http::HeaderName::from_bytes(h.as_bytes()).ok());
        settings.apps =
            mcp_tap::apps::Apps::new(c.apps.clone()).map_err(|e| fail(format!("apps: {e}")))?;
        settings.merge = merge_settings(c);
        let defaults = TapLimits::default();
        settings.limits = TapLimits {
            // Lowered to the tap's share of the open-file limit when it
            // starts (`super::fds`).
            max_connections: c.max_connections.unwrap_or(defaults.max_connections),
            connect_timeout: c.limits.connect_timeout,
            upstream_head_timeout: c.upstream.timeout,
            inspect_bytes: bytes(c.inspect_bytes),
            ..defaults
        };
        let report = match &c.report {
            Some(path) => Some(Arc::new(
                ReportFile::open(path, DEFAULT_MAX_REPORT_BYTES)
                    .map_err(|e| fail(e.to_string()))?,
            )),
            None => None,
        };
        Ok(TapSpec {
            name: Arc::from(c.name.as_str()),
            listen: c.listener.address.clone(),
            settings,
            queue: QueueBudget::default(),
            abandon_after: c.abandon_after,
            max_clients: c.max_clients,
            observing: ObservingSpec {
                max_sessions: c.max_sessions,
                client_idle: c.client_idle,
            },
            listings: ListingSinks { report, log: false },
            routes: route_spec(c),
        })
    }
}

const _: () = assert!(
    crate::config::taps::DEFAULT_MERGE_PAGE_BURST == mcp_tap::settings::DEFAULT_MERGE_PAGE_BURST
        && crate::config::taps::DEFAULT_MERGE_PAGES_PER_SECOND
            == mcp_tap::settings::DEFAULT_MERGE_PAGES_PER_SECOND
);

fn route_spec(c: &TapConfig) -> RouteSpec {
    let r = &c.routes;
    RouteSpec {
        routing: Routing {
            default_path: None,
            rules: r.named.iter().map(|n| n.rule.clone()).collect(),
            learn_paths: r.learn_paths,
        },
        max_routes: r.max_routes,
        max_client_routes: r.max_client_routes,
        learn_every: r.learn_every,
    }
}

fn merge_settings(c: &TapConfig) -> MergeSettings {
    let base = MergeSettings::default();
    let l = &c.limits;
    MergeSettings {
        clients: merge_clients(&c.merge.clients),
        walk: mcp_listing::WalkLimits {
            max_pages: l.max_pages,
            max_items: l.max_items,
            invalid_cursor_restarts: l.invalid_cursor_restarts,
            page_timeout: l.page_timeout,
            listing_timeout: l.timeout,
            ..base.walk
        },
        max_page_bytes: bytes(l.max_response_bytes),
        max_merged_bytes: bytes(c.merge.max_merged_bytes),
        credential_headers: c
            .merge
            .credential_headers
            .iter()
            .filter_map(|h| http::HeaderName::from_bytes(h.as_bytes()).ok())
            .collect(),
        page_burst: c.merge.page_burst,
        pages_per_second: c.merge.pages_per_second,
        ..base
    }
}

fn bytes(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// `merge_pages:` (or `--merge-pages`): nobody, `all`, or the identities
/// named (compared as the tap labels them).
pub fn merge_clients(names: &[String]) -> MergeClients {
    if names.is_empty() {
        MergeClients::Nobody
    } else if names.iter().any(|n| n == "all") {
        MergeClients::All
    } else {
        MergeClients::Named(names.iter().map(|n| mcp_tap::identity::label(n)).collect())
    }
}
