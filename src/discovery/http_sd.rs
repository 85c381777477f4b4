//! `http_sd`: the Prometheus target-group list over HTTP(S). Every refresh
//! GETs the whole list (no increments) with
//! `X-Prometheus-Refresh-Interval-Seconds`; only `200` with
//! `application/json` is a list, `[]` an empty one.

use super::budget::KeptBudget;
use super::entry::admit_all;
use super::fetch::Fetcher;
use super::refresh::{Refresh, RefreshFailure};
use super::sd_format::{Format, FormatError, GroupReader};
use super::DiscoverySource;
use crate::config::{ProbeModule, SourceConfig, SourceEndpoint};
use http::{HeaderMap, HeaderValue};
use mcp_listing::ErrorKind;
use std::sync::Arc;
use std::time::SystemTime;

/// The header Prometheus sends, so an endpoint can tell how often we ask.
pub const REFRESH_HEADER: &str = "x-prometheus-refresh-interval-seconds";

pub struct HttpSd {
    source: Arc<SourceConfig>,
    endpoint: SourceEndpoint,
    module: ProbeModule,
}

impl HttpSd {
    /// `source`, whose `http_sd` endpoint is `endpoint`.
    pub fn new(source: Arc<SourceConfig>, module: ProbeModule, endpoint: SourceEndpoint) -> HttpSd {
        HttpSd {
            endpoint,
            source,
            module,
        }
    }
}

impl DiscoverySource for HttpSd {
    async fn refresh(&mut self) -> Refresh {
        let started = SystemTime::now();
        let fetcher = match Fetcher::new(&self.endpoint) {
            Ok(f) => f,
            Err((failure, why)) => return Refresh::failed(failure, why, started),
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            REFRESH_HEADER,
            HeaderValue::from(self.source.refresh_interval.as_secs()),
        );
        let fetched = fetcher
            .get(
                &self.endpoint.http.url,
                headers,
                self.endpoint.limits.timeout,
            )
            .await;
        let answer = match fetched.outcome {
            Ok(answer) => answer,
            Err(e) => {
                let detail = match e.http_status() {
                    Some(status) => format!("the endpoint answered HTTP {status}"),
                    None => e.to_string(),
                };
                return Refresh::failed(RefreshFailure::Error(e.error_kind()), detail, started);
            }
        };
        let malformed = |why: String| {
            Refresh::failed(
                RefreshFailure::Error(ErrorKind::MalformedResult),
                why,
                started,
            )
        };
        if !answer.content_type.starts_with("application/json") {
            return malformed(format!(
                "the answer's Content-Type is {:?}, not application/json",
                answer.content_type.chars().take(64).collect::<String>()
            ));
        }
        let origin = self
            .endpoint
            .http
            .url
            .host_str()
            .unwrap_or("endpoint")
            .to_string();
        let mut reader = GroupReader::new(self.source.max_targets, KeptBudget::default());
        match reader.read(&answer.body, Format::Json, &origin) {
            Ok(()) => {
                let (candidates, skipped) = reader.finish();
                let (entries, skipped) = admit_all(candidates, &self.module, skipped);
                Refresh::complete(entries, skipped, started)
            }
            Err(FormatError::Malformed(why)) => malformed(why),
            Err(FormatError::TooMany { max, .. }) => Refresh::failed(
                RefreshFailure::TooManyTargets,
                format!("the list holds more than max_targets ({max}) entries"),
                started,
            ),
            Err(FormatError::OverBudget(e)) => {
                Refresh::failed(RefreshFailure::OverBudget, e.to_string(), started)
            }
        }
    }
}
