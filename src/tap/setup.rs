//! A tap's resolved configuration (`TapConfig`, from `taps:` or from
//! `mcp-exporter tap`'s flags) made into what its parts run on: the data
//! path's settings (its `limits:` the upstream connection's bounds and a
//! merged walk's, through `Limits::walk_limits`), the observer's limits,
//! and where its listings go. One road for both kinds of tap.

use super::observe::ListingSinks;
use super::report_file::ReportFile;
use super::start_error::StartFailure;
use crate::config::taps::{TapConfig, TapMerge, TapReport, TapRoutes};
use crate::config::Limits;
use crate::listen_tls::TlsReloader;
use crate::telemetry::metrics::WebMetrics;
use mcp_observer::{ObserverLimits, Routing};
use mcp_tap::apps::Apps;
use mcp_tap::{MergeClients, MergeSettings, TapLimits, TapSettings, UpstreamTls};
use std::sync::Arc;

/// The data path's settings. `max_connections` is lowered to the tap's
/// share of the open-file limit as it starts (`super::fds`).
pub fn tap_settings(c: &TapConfig, web: &WebMetrics) -> Result<TapSettings, StartFailure> {
    let mut settings = TapSettings::new(c.upstream.url.clone());
    settings.upstream_tls = UpstreamTls {
        ca_file: c.upstream.tls.ca_file.clone(),
        insecure_skip_verify: c.upstream.tls.insecure_skip_verify,
    };
    if let Some(tls) = &c.listener.tls {
        settings.listener_tls = Some(Arc::new(TlsReloader::for_tap(tls, web.clone())?));
    }
    // Checked as a header name when it was resolved.
    settings.client_header = c
        .client_header
        .as_deref()
        .and_then(|h| http::HeaderName::from_bytes(h.as_bytes()).ok());
    settings.apps = Apps::new(c.apps.clone()).map_err(|source| StartFailure::Apps {
        key: c.origin.key("apps", "--app"),
        source,
    })?;
    settings.merge = merge_settings(&c.merge, &c.limits);
    settings.limits = TapLimits {
        max_connections: c
            .max_connections
            .unwrap_or(TapLimits::DEFAULT.max_connections),
        connect_timeout: c.limits.connect_timeout,
        upstream_head_timeout: c.upstream.timeout,
        inspect_bytes: bytes(c.inspect_bytes),
        ..TapLimits::DEFAULT
    };
    Ok(settings)
}

/// What merging may do: whom for, and what it may spend. A merged walk is
/// bounded by the tap's `limits:` as any walk of ours is.
pub fn merge_settings(merge: &TapMerge, limits: &Limits) -> MergeSettings {
    MergeSettings {
        clients: merge_clients(&merge.clients),
        walk: limits.walk_limits(),
        max_page_bytes: bytes(limits.max_response_bytes),
        max_merged_bytes: bytes(merge.max_merged_bytes),
        // Checked as header names when they were resolved.
        credential_headers: (merge.credential_headers.iter())
            .filter_map(|h| http::HeaderName::from_bytes(h.as_bytes()).ok())
            .collect(),
        page_burst: merge.page_burst,
        pages_per_second: merge.pages_per_second,
        reuse_for: merge.reuse_for,
        ..MergeSettings::DEFAULT
    }
}

/// The observer's limits. Its session cap is an eighth above
/// `max_sessions`: while clients end sessions and make others, a request
/// racing its session's DELETE makes that session again until the
/// upstream's 404 ends it, and a gateway that holds `max_sessions` open
/// must not lose one to that.
pub fn observer_limits(c: &TapConfig) -> ObserverLimits {
    let base = ObserverLimits::default();
    let sessions = c.max_sessions.saturating_add(c.max_sessions / 8);
    ObserverLimits {
        inspect_bytes: bytes(c.inspect_bytes),
        abandon_after: c.abandon_after,
        max_clients: c.max_clients,
        max_routes: c.routes.max_routes,
        max_client_routes: c.routes.max_client_routes,
        max_sessions: sessions,
        // Each session may hold a GET stream open besides its POSTs.
        max_exchanges: base.max_exchanges.max(sessions.saturating_mul(2)),
        client_idle: c.client_idle,
        ..base
    }
}

/// Which paths are which route (the upstream's own path is filled in
/// from the upstream URL as the tap starts).
pub fn routing(routes: &TapRoutes) -> Routing {
    Routing {
        default_path: None,
        rules: routes.named.iter().map(|n| n.rule.clone()).collect(),
        learn_paths: routes.learn_paths,
    }
}

/// Where each client listing is told besides metrics and spans: the
/// report file (opened here), and a log line when `log`.
pub fn listing_sinks(report: Option<&TapReport>, log: bool) -> Result<ListingSinks, StartFailure> {
    let report = match report {
        Some(r) => Some(Arc::new(ReportFile::open(&r.path, r.max_bytes)?)),
        None => None,
    };
    Ok(ListingSinks { report, log })
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
