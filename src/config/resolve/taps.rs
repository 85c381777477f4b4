//! The `taps:` section: names, listeners, upstreams, references to
//! targets, and the bounds of each tap.

use super::http::HttpRole;
use super::limits::LISTING;
use super::{child, Resolver, Result};
use crate::config::locate::{yaml_path, At, Seg};
use crate::config::raw::{RawApp, RawListenTls, RawRoute, RawTap};
use crate::config::taps::{
    ListenTls, TapConfig, TapListener, TapMerge, TapOrigin, TapReport, TapRoute, TapRoutes,
    TapUpstream, DEFAULT_ABANDON_AFTER, DEFAULT_CLIENT_IDLE, DEFAULT_INSPECT_BYTES,
    DEFAULT_LEARN_EVERY, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CLIENT_ROUTES, DEFAULT_MAX_MERGED_BYTES,
    DEFAULT_MAX_ROUTES, DEFAULT_MAX_SESSIONS, DEFAULT_MERGE_PAGES_PER_SECOND,
    DEFAULT_MERGE_PAGE_BURST, DEFAULT_MERGE_REUSE_FOR, DEFAULT_REPORT_MAX_BYTES,
    DEFAULT_UPSTREAM_TIMEOUT, TAP_LIMITS,
};
use crate::config::types::TargetConfig;
use mcp_observer::RouteRule;
use mcp_tap::apps::{AppError, AppRule};
use std::collections::HashSet;

impl Resolver<'_> {
    pub(super) fn taps(
        &mut self,
        raw: Vec<RawTap>,
        targets: &[TargetConfig],
    ) -> Result<Vec<TapConfig>> {
        let mut names = HashSet::new();
        let mut listens = HashSet::new();
        let mut out = Vec::with_capacity(raw.len());
        for (i, tap) in raw.into_iter().enumerate() {
            let at = yaml_path!["taps", i];
            self.check_name(&child(&at, "name"), At::Value, "tap", &tap.name)?;
            if !names.insert(tap.name.clone()) {
                let message = format!("duplicate tap name `{}`", tap.name);
                return Err(self.error(&child(&at, "name"), At::Value, message));
            }
            // Port 0 picks a free port each time: never the same one twice.
            if !tap.listen.ends_with(":0") && !listens.insert(tap.listen.clone()) {
                let message = format!(
                    "tap `{}`: another tap listens on the same address",
                    tap.name
                );
                return Err(self.error(&child(&at, "listen"), At::Value, message));
            }
            out.push(self.tap(&at, tap, targets)?);
        }
        Ok(out)
    }

    fn tap(&mut self, at: &[Seg], mut raw: RawTap, targets: &[TargetConfig]) -> Result<TapConfig> {
        let key = |k: &str| child(at, k);
        let who = format!("tap `{}`", raw.name);
        let merge = self.tap_merge(at, &who, &mut raw)?;
        let routes = self.tap_routes(at, &who, &mut raw, targets)?;
        if raw.listen.parse::<std::net::SocketAddr>().is_err() && !raw.listen.contains(':') {
            return Err(self.error(
                &key("listen"),
                At::Value,
                format!("{who}: `listen` must be HOST:PORT (port 0 picks a free one)"),
            ));
        }
        let upstream = self.http_endpoint(&key("upstream"), &who, raw.upstream, HttpRole::Tap)?;
        if let Some(target) = &raw.target {
            self.tap_target(&key("target"), &who, target, targets)?;
        }
        if let Some(header) = &raw.client_header {
            self.client_header(&key("client_header"), &who, header)?;
        }
        let apps = self.tap_apps(at, &who, raw.apps.take().unwrap_or_default())?;
        let limits = self.limits(at, &who, TAP_LIMITS, raw.limits, &LISTING)?;
        let positive = |this: &Self, k: &str, n: u64| {
            if n == 0 {
                Err(this.error(
                    &key(k),
                    At::Value,
                    format!("{who}: `{k}` must be greater than zero"),
                ))
            } else {
                Ok(n)
            }
        };
        let inspect_bytes = positive(
            self,
            "inspect_bytes",
            raw.inspect_bytes.map_or(DEFAULT_INSPECT_BYTES, |b| b.0),
        )?;
        let max_clients = positive(
            self,
            "max_clients",
            raw.max_clients
                .map_or(DEFAULT_MAX_CLIENTS as u64, |n| n as u64),
        )?;
        let max_connections = (raw.max_connections)
            .map(|n| positive(self, "max_connections", n as u64))
            .transpose()?;
        Ok(TapConfig {
            name: raw.name,
            origin: TapOrigin::File,
            listener: TapListener {
                address: raw.listen,
                tls: raw.tls.map(|t| self.listen_tls(t)),
            },
            upstream: TapUpstream {
                url: upstream.url,
                tls: upstream.settings.tls,
                timeout: raw
                    .upstream_timeout
                    .map_or(DEFAULT_UPSTREAM_TIMEOUT, |d| d.0),
            },
            target: raw.target,
            abandon_after: raw.abandon_after.map_or(DEFAULT_ABANDON_AFTER, |d| d.0),
            inspect_bytes,
            max_clients: usize::try_from(max_clients).unwrap_or(usize::MAX),
            max_sessions: self.tap_sessions(at, &who, raw.max_sessions)?,
            client_idle: raw.client_idle.map_or(DEFAULT_CLIENT_IDLE, |d| d.0),
            max_connections: max_connections.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            client_header: raw.client_header,
            apps,
            merge,
            limits,
            report: raw.report.map(|p| TapReport {
                path: self.file_path(p),
                max_bytes: DEFAULT_REPORT_MAX_BYTES,
            }),
            log_listings: false,
            routes,
        })
    }

    /// `max_sessions:`, greater than zero.
    fn tap_sessions(&self, at: &[Seg], who: &str, raw: Option<usize>) -> Result<usize> {
        match raw.unwrap_or(DEFAULT_MAX_SESSIONS) {
            0 => Err(self.error(
                &child(at, "max_sessions"),
                At::Value,
                format!("{who}: `max_sessions` must be greater than zero"),
            )),
            n => Ok(n),
        }
    }

    /// `routes:` and the keys that bound and learn them.
    fn tap_routes(
        &mut self,
        at: &[Seg],
        who: &str,
        raw: &mut RawTap,
        targets: &[TargetConfig],
    ) -> Result<TapRoutes> {
        let mut named: Vec<TapRoute> = Vec::new();
        for (i, route) in raw
            .routes
            .take()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let mut route_at = child(at, "routes");
            route_at.push(Seg::Index(i));
            let route = self.tap_route(&route_at, who, route, targets)?;
            let clash = named
                .iter()
                .find(|r| r.route_name() == route.route_name() && r.target != route.target);
            if route.target.is_some() && clash.is_some() {
                let message = format!("{who}: two routes of one name name different targets");
                return Err(self.error(&child(&route_at, "target"), At::Value, message));
            }
            named.push(route);
        }
        let positive = |k: &str, n: Option<usize>, default: usize| {
            let n = n.unwrap_or(default);
            if n == 0 {
                let message = format!("{who}: `{k}` must be greater than zero");
                return Err(self.error(&child(at, k), At::Value, message));
            }
            Ok(n)
        };
        let max_routes = positive("max_routes", raw.max_routes, DEFAULT_MAX_ROUTES)?;
        let max_client_routes = positive(
            "max_client_routes",
            raw.max_client_routes,
            DEFAULT_MAX_CLIENT_ROUTES,
        )?;
        let every = raw
            .learn_every
            .as_ref()
            .map_or(DEFAULT_LEARN_EVERY, |d| d.0);
        Ok(TapRoutes {
            named,
            max_routes,
            max_client_routes,
            learn_paths: raw.learn_paths.unwrap_or(true),
            learn_every: raw.learn_catalogue.unwrap_or(false).then_some(every),
        })
    }

    fn tap_route(
        &self,
        at: &[Seg],
        who: &str,
        raw: RawRoute,
        targets: &[TargetConfig],
    ) -> Result<TapRoute> {
        let rule = RouteRule::parse(raw.name.as_deref(), &raw.path).map_err(|e| {
            let key = match e {
                mcp_observer::RouteRuleError::BadName
                | mcp_observer::RouteRuleError::UnknownVariable(_) => "name",
                _ => "path",
            };
            self.error(&child(at, key), At::Value, format!("{who}: route: {e}"))
        })?;
        if let Some(target) = &raw.target {
            if !rule.is_literal() {
                let message = format!(
                    "{who}: `target` needs a route whose path has no `{{variable}}` (a pattern's routes learn their catalogue from walks)"
                );
                return Err(self.error(&child(at, "target"), At::Value, message));
            }
            self.tap_target(&child(at, "target"), who, target, targets)?;
        }
        Ok(TapRoute {
            rule,
            target: raw.target,
        })
    }

    /// A tap's merging keys: who is merged for, and what merging may spend.
    fn tap_merge(&self, at: &[Seg], who: &str, raw: &mut RawTap) -> Result<TapMerge> {
        let key = |k: &str| child(at, k);
        let positive = |k: &str, n: u64| {
            if n == 0 {
                let message = format!("{who}: `{k}` must be greater than zero");
                return Err(self.error(&key(k), At::Value, message));
            }
            Ok(n)
        };
        let max_merged_bytes = positive(
            "max_merged_bytes",
            raw.max_merged_bytes
                .map_or(DEFAULT_MAX_MERGED_BYTES, |b| b.0),
        )?;
        let burst = raw.merge_page_burst.unwrap_or(DEFAULT_MERGE_PAGE_BURST);
        let per_second = raw
            .merge_pages_per_second
            .unwrap_or(DEFAULT_MERGE_PAGES_PER_SECOND);
        positive("merge_page_burst", u64::from(burst))?;
        positive("merge_pages_per_second", u64::from(per_second))?;
        let mut credential_headers = Vec::new();
        for name in raw.merge_credential_headers.take().unwrap_or_default() {
            let Ok(header) = http::HeaderName::from_bytes(name.as_bytes()) else {
                let message =
                    format!("{who}: `merge_credential_headers` holds a name that is not a valid HTTP header name");
                return Err(self.error(&key("merge_credential_headers"), At::Value, message));
            };
            credential_headers.push(header.as_str().to_string());
        }
        Ok(TapMerge {
            clients: raw.merge_pages.take().unwrap_or_default(),
            max_merged_bytes,
            credential_headers,
            page_burst: burst,
            pages_per_second: per_second,
            reuse_for: DEFAULT_MERGE_REUSE_FOR,
        })
    }

    /// `apps:`: each a name and what tells its clients (address ranges,
    /// a User-Agent product); names unique.
    fn tap_apps(&self, at: &[Seg], who: &str, raw: Vec<RawApp>) -> Result<Vec<AppRule>> {
        let mut apps: Vec<AppRule> = Vec::with_capacity(raw.len());
        for (i, app) in raw.into_iter().enumerate() {
            let mut app_at = child(at, "apps");
            app_at.push(Seg::Index(i));
            let mut from = Vec::new();
            for (j, range) in app.from.unwrap_or_default().iter().enumerate() {
                let mut range_at = child(&app_at, "from");
                range_at.push(Seg::Index(j));
                from.push(range.parse().map_err(|e: AppError| {
                    self.error(&range_at, At::Value, format!("{who}: app: {e}"))
                })?);
            }
            let rule = AppRule::new(&app.name, from, app.user_agent.as_deref()).map_err(|e| {
                // A rule that tells no clients has no key to point at.
                let at = match e {
                    AppError::BadName => child(&app_at, "name"),
                    _ => app_at.clone(),
                };
                self.error(&at, At::Value, format!("{who}: app: {e}"))
            })?;
            if apps.iter().any(|a| a.name() == rule.name()) {
                let message = format!("{who}: two apps of the same name");
                return Err(self.error(&child(&app_at, "name"), At::Value, message));
            }
            apps.push(rule);
        }
        Ok(apps)
    }

    fn client_header(&self, at: &[Seg], who: &str, header: &str) -> Result<()> {
        if http::HeaderName::from_bytes(header.as_bytes()).is_ok() {
            return Ok(());
        }
        Err(self.error(
            at,
            At::Value,
            format!("{who}: `client_header` is not a valid HTTP header name"),
        ))
    }

    fn tap_target(
        &self,
        at: &[Seg],
        who: &str,
        target: &str,
        targets: &[TargetConfig],
    ) -> Result<()> {
        if targets.iter().any(|t| t.name == target) {
            return Ok(());
        }
        let known: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
        let hint = match crate::config::suggest::closest(target, &known) {
            Some(near) => format!(" (did you mean `{near}`?)"),
            None => String::new(),
        };
        Err(self.error(
            at,
            At::Value,
            format!("{who}: `target` names no configured target{hint}"),
        ))
    }

    fn listen_tls(&self, raw: RawListenTls) -> ListenTls {
        ListenTls {
            cert_file: self.file_path(raw.cert_file),
            key_file: self.file_path(raw.key_file),
            client_ca_file: raw.client_ca_file.map(|p| self.file_path(p)),
        }
    }
}
