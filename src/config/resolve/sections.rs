//! The `modules`, `tracing` and `web` sections.

use super::http::HttpRole;
use super::limits::LISTING;
use super::{Resolver, Result};
use crate::config::allow::{AllowList, AllowPattern};
use crate::config::locate::{yaml_path, At};
use crate::config::raw::{RawModule, RawTracing, RawWeb};
use crate::config::types::{default, Defaults, ProbeModule, TracingConfig, WebConfig};
use std::sync::Arc;
use url::Url;

/// Most polls kept per target; bounds the status store's memory.
const MAX_HISTORY: usize = 10_000;

impl Resolver<'_> {
    pub(super) fn module(&mut self, name: &str, m: RawModule, d: &Defaults) -> Result<ProbeModule> {
        let owner = yaml_path!["modules", name];
        let key = |k: &str| yaml_path!["modules", name, k];
        let who = format!("module `{name}`");
        self.check_name(&owner, At::Key, "module", name)?;
        let allow = self.allow(name, &who, &m.allow)?;
        let protocol_version = self
            .optional_protocol_version(&key("protocol_version"), m.protocol_version.as_deref())?;
        let http = self.http_settings(
            &key("http"),
            &who,
            m.http.unwrap_or_default(),
            HttpRole::Module,
        )?;
        let limits = self.limits(&owner, &who, d.settings.limits, m.limits, &LISTING)?;
        let kinds = self.kinds_over(&key("kinds"), m.kinds, &d.settings.kinds)?;
        Ok(ProbeModule {
            name: name.to_string(),
            allow,
            http,
            limits,
            kinds,
            protocol_version,
            // Filled in once every section is resolved.
            known_secrets: mcp_wire::secrets::SecretScrubber::default(),
        })
    }

    /// A module's `allow:`, compiled: not empty, every pattern pinned to one
    /// origin.
    fn allow(&self, name: &str, who: &str, allow: &[String]) -> Result<Arc<AllowList>> {
        if allow.is_empty() {
            return Err(self.error(
                &yaml_path!["modules", name, "allow"],
                At::Value,
                format!("{who}: `allow` is empty, so nothing could be probed with it"),
            ));
        }
        let mut patterns = Vec::with_capacity(allow.len());
        for (j, pattern) in allow.iter().enumerate() {
            match AllowPattern::parse(pattern) {
                Ok(p) => patterns.push(p),
                Err(why) => return Err(self.error(
                    &yaml_path!["modules", name, "allow", j],
                    At::Value,
                    format!("{who}: allow pattern {pattern:?} {why} (write scheme://host[:port]/path-prefix, so that it cannot match other hosts)"),
                )),
            }
        }
        Ok(Arc::new(AllowList::new(patterns)))
    }

    pub(super) fn tracing(&mut self, t: RawTracing) -> Result<TracingConfig> {
        let key = |k: &str| yaml_path!["tracing", k];
        if let Some(endpoint) = &t.endpoint {
            match Url::parse(endpoint) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                Ok(_) => {
                    return Err(self.error(
                        &key("endpoint"),
                        At::Value,
                        "tracing `endpoint` must be an http:// or https:// URL",
                    ))
                }
                Err(e) => {
                    return Err(self.error(
                        &key("endpoint"),
                        At::Value,
                        format!("tracing `endpoint` is not a valid URL: {e}"),
                    ))
                }
            }
        }
        if let Some(ratio) = t.sample_ratio {
            if !(0.0..=1.0).contains(&ratio) {
                return Err(self.error(
                    &key("sample_ratio"),
                    At::Value,
                    "tracing `sample_ratio` must be between 0.0 and 1.0",
                ));
            }
        }
        if t.service_name
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            return Err(self.error(
                &key("service_name"),
                At::Value,
                "tracing `service_name` is empty",
            ));
        }
        let headers = match t.headers {
            Some(h) => self.headers(&key("headers"), "tracing", h)?,
            None => Vec::new(),
        };
        Ok(TracingConfig {
            endpoint: t.endpoint,
            protocol: t.protocol,
            headers,
            service_name: t.service_name,
            sample_ratio: t.sample_ratio,
        })
    }

    pub(super) fn web(&self, w: RawWeb) -> Result<WebConfig> {
        let history = w.history.unwrap_or(default::WEB_HISTORY);
        if !(1..=MAX_HISTORY).contains(&history) {
            return Err(self.error(
                &yaml_path!["web", "history"],
                At::Value,
                format!("web `history` must be between 1 and {MAX_HISTORY}"),
            ));
        }
        Ok(WebConfig { history })
    }
}
