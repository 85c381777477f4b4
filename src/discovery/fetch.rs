//! One GET to a source's HTTP endpoint (`http_sd`, a registry page): the
//! source's own headers and token (never a module's), its TLS, no
//! redirects, a deadline on the whole answer and a byte cap we stop
//! reading at. Failures are the walker's `PageError`s, so a registry page
//! and an `http_sd` answer fail in the same words as an MCP page.

use super::refresh::RefreshFailure;
use crate::config::SourceEndpoint;
use bytes::{Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH};
use http::{HeaderMap, Method};
use mcp_listing::{ExchangeFailure, PageError};
use mcp_wire::transport::http_client::{ClientSettings, HttpClient, HttpResponse};
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// A client for one source's endpoint, with the headers read for this
/// refresh (a rotated token file needs no reload).
pub struct Fetcher {
    client: HttpClient,
    max_bytes: u64,
}

/// A 200 answer, read whole (at most the byte cap).
#[derive(Debug)]
pub struct SourceAnswer {
    pub content_type: String,
    pub body: Bytes,
}

/// One GET: the answer or why there is none, and what it cost.
#[derive(Debug)]
pub struct Fetched {
    pub outcome: Result<SourceAnswer, PageError>,
    /// Body bytes read.
    pub bytes: u64,
    pub duration: Duration,
    pub started: SystemTime,
}

impl Fetcher {
    /// The source endpoint's client; fails when its token cannot be read
    /// or its TLS settings cannot be built.
    pub fn new(endpoint: &SourceEndpoint) -> Result<Fetcher, (RefreshFailure, String)> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let http = &endpoint.http.settings;
        for (name, value) in &http.headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                (
                    RefreshFailure::Unreadable,
                    format!("header {name:?} is not a valid header name"),
                )
            })?;
            headers.insert(name, sensitive(value.expose())?);
        }
        if let Some(source) = &http.bearer_token {
            let token = source
                .read()
                .map_err(|e| (RefreshFailure::Unreadable, e.to_string()))?;
            headers.insert(
                AUTHORIZATION,
                sensitive(&format!("Bearer {}", token.expose()))?,
            );
        }
        let client = HttpClient::new(ClientSettings {
            default_headers: headers,
            connect_timeout: endpoint.limits.connect_timeout,
            ca_file: http.tls.ca_file.as_deref(),
            insecure_skip_verify: http.tls.insecure_skip_verify,
            // A source answers where it is configured; a redirect could
            // lead our token elsewhere.
            max_redirects: 0,
        })
        .map_err(|e| {
            (
                RefreshFailure::Error(mcp_listing::ErrorKind::TransportError),
                e.to_string(),
            )
        })?;
        Ok(Fetcher {
            client,
            max_bytes: endpoint.limits.max_response_bytes,
        })
    }

    /// GET `url` with `extra` headers, within `timeout` for the whole
    /// answer (`http_sd`: its `timeout`; a registry page: what the walk
    /// gives it, at most its `page_timeout`).
    pub async fn get(&self, url: &Url, extra: HeaderMap, timeout: Duration) -> Fetched {
        let started = SystemTime::now();
        let clock = Instant::now();
        let mut bytes = 0u64;
        let outcome =
            match tokio::time::timeout(timeout, self.exchange(url, extra, &mut bytes)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(PageError::Failed(ExchangeFailure::Timeout(timeout))),
            };
        Fetched {
            outcome,
            bytes,
            duration: clock.elapsed(),
            started,
        }
    }

    async fn exchange(
        &self,
        url: &Url,
        extra: HeaderMap,
        bytes: &mut u64,
    ) -> Result<SourceAnswer, PageError> {
        let mut response = self
            .client
            .send(Method::GET, url, extra, Bytes::new())
            .await
            .map_err(|e| {
                PageError::Failed(ExchangeFailure::Transport {
                    message: e.to_string(),
                    http_status: None,
                })
            })?;
        if response.status != http::StatusCode::OK {
            return Err(PageError::Failed(response.failure()));
        }
        let declared = response
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_bytes) {
            return Err(PageError::Failed(ExchangeFailure::TooLarge {
                limit: self.max_bytes,
            }));
        }
        let body = read_capped(&mut response, self.max_bytes, bytes).await?;
        Ok(SourceAnswer {
            content_type: response.content_type(),
            body,
        })
    }
}

/// The body, stopping at `cap` bytes (never buffering past it).
async fn read_capped(
    response: &mut HttpResponse,
    cap: u64,
    read: &mut u64,
) -> Result<Bytes, PageError> {
    let mut body = BytesMut::new();
    loop {
        let chunk = response.chunk().await.map_err(|e| {
            PageError::Failed(ExchangeFailure::Transport {
                message: e.to_string(),
                http_status: Some(200),
            })
        })?;
        let Some(chunk) = chunk else {
            return Ok(body.freeze());
        };
        *read += chunk.len() as u64;
        if *read > cap {
            return Err(PageError::Failed(ExchangeFailure::TooLarge { limit: cap }));
        }
        body.extend_from_slice(&chunk);
    }
}

/// A header value marked sensitive (kept out of hyper's debug output).
fn sensitive(value: &str) -> Result<HeaderValue, (RefreshFailure, String)> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        (
            RefreshFailure::Unreadable,
            "a header value holds characters a header cannot".to_string(),
        )
    })?;
    v.set_sensitive(true);
    Ok(v)
}
