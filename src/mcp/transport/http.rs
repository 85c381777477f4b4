//! Streamable HTTP (2025-03-26 and later): one POST per message; the answer
//! is JSON or an SSE stream that may carry server requests and
//! notifications before the response, and may end early to be resumed with
//! GET + `Last-Event-ID`.

use super::sse_body::{self, ByteCounter, SseReadError};
use super::{CloseInfo, Exchange, ExchangeError, Outgoing};
use crate::mcp::jsonrpc::{self, Incoming};
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Response, StatusCode};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Times we resume a stream that ended before its response.
const MAX_RESUMPTIONS: u32 = 3;

/// How to reach a HTTP server. Header values and the token are secrets:
/// Debug prints only names.
#[derive(Clone, Default)]
pub struct HttpSpec {
    pub url: Option<url::Url>,
    pub headers: Vec<(String, String)>,
    pub bearer_token: Option<String>,
    pub ca_file: Option<PathBuf>,
    pub insecure_skip_verify: bool,
    pub max_redirects: usize,
}

impl std::fmt::Debug for HttpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSpec")
            .field("host", &self.url.as_ref().and_then(|u| u.host_str()))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Build the shared HTTP client for one target.
pub fn client(
    spec: &HttpSpec,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ExchangeError> {
    let mut headers = HeaderMap::new();
    for (k, v) in &spec.headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ExchangeError::transport(format!("invalid header name {k:?}")))?;
        let mut value = HeaderValue::from_str(v)
            .map_err(|_| ExchangeError::transport(format!("invalid value for header {k:?}")))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    if let Some(token) = &spec.bearer_token {
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ExchangeError::transport("bearer token is not a valid header value"))?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let mut builder = reqwest::Client::builder()
        .default_headers(headers)
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::limited(spec.max_redirects))
        .user_agent(concat!("mcp-exporter/", env!("CARGO_PKG_VERSION")));
    if let Some(ca) = &spec.ca_file {
        let pem = std::fs::read(ca).map_err(|e| {
            ExchangeError::transport(format!("reading CA file {}: {e}", ca.display()))
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| ExchangeError::transport(format!("CA file {}: {e}", ca.display())))?;
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
    }
    if spec.insecure_skip_verify {
        builder = builder.tls_danger_accept_invalid_certs(true);
    }
    builder
        .build()
        .map_err(|e| ExchangeError::transport(format!("building HTTP client: {e}")))
}

pub struct HttpTransport {
    client: reqwest::Client,
    url: url::Url,
    session_id: Option<String>,
    protocol_version: Option<String>,
    modern: bool,
    limit: u64,
}

impl HttpTransport {
    pub fn new(client: reqwest::Client, url: url::Url, max_response_bytes: u64) -> Self {
        HttpTransport {
            client,
            url,
            session_id: None,
            protocol_version: None,
            modern: false,
            limit: max_response_bytes,
        }
    }

    pub fn set_protocol_version(&mut self, version: &str, modern: bool) {
        self.protocol_version = Some(version.to_string());
        self.modern = modern;
    }

    pub fn clear_protocol_version(&mut self) {
        self.protocol_version = None;
        self.modern = false;
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    pub fn reset_session(&mut self) {
        self.session_id = None;
    }

    fn post(&self, method: &str, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body);
        if let Some(v) = &self.protocol_version {
            req = req.header("MCP-Protocol-Version", v);
        }
        if let Some(id) = &self.session_id {
            req = req.header("Mcp-Session-Id", id);
        }
        if self.modern {
            req = req.header("Mcp-Method", method);
        }
        req
    }

    pub async fn notify(&mut self, method: &str, body: Vec<u8>) -> Result<(), ExchangeError> {
        let resp = self
            .post(method, body)
            .send()
            .await
            .map_err(|e| send_error(&e))?;
        let status = resp.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(status_error(status, self.session_id.is_some()))
        }
    }

    pub async fn request(&mut self, req: Outgoing<'_>, timeout: Duration) -> Exchange {
        let started = Instant::now();
        match tokio::time::timeout(timeout, self.exchange(req, started)).await {
            Ok(ex) => ex,
            Err(_) => Exchange::failed(ExchangeError::Timeout(timeout), started),
        }
    }

    async fn exchange(&mut self, req: Outgoing<'_>, started: Instant) -> Exchange {
        let mut ex = Exchange::failed(ExchangeError::transport("no response"), started);
        let resp = match self.post(req.method, req.body).send().await {
            Ok(r) => r,
            Err(e) => {
                ex.outcome = Err(send_error(&e));
                ex.duration = started.elapsed();
                return ex;
            }
        };
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            if self.session_id.is_none() {
                self.session_id = Some(id.to_string());
            }
        }
        let status = resp.status();
        let is_sse = content_type(&resp).starts_with("text/event-stream");
        if status.is_success() && is_sse {
            self.read_stream(resp, req.id, &mut ex).await;
        } else if status.is_success() || status.is_client_error() {
            // 4xx may carry a JSON-RPC error (modern servers answer 400 with
            // one); keep it, with the status.
            match read_capped(resp, self.limit).await {
                Ok(body) => {
                    ex.bytes = body.len() as u64;
                    ex.outcome = if status.is_success() {
                        parse_json_response(&body, req.id)
                    } else {
                        Err(error_from_body(&body, status, self.session_id.is_some()))
                    };
                }
                Err(e) => ex.outcome = Err(e),
            }
        } else {
            ex.outcome = Err(status_error(status, self.session_id.is_some()));
        }
        ex.duration = started.elapsed();
        ex
    }

    async fn read_stream(&mut self, resp: Response, id: i64, ex: &mut Exchange) {
        let counter = ByteCounter::default();
        let mut events = sse_body::events(resp, self.limit, counter.clone());
        let mut last_event_id: Option<String> = None;
        let mut resumptions = 0;
        loop {
            match events.next().await {
                Some(Ok(event)) => {
                    if !event.id.is_empty() {
                        last_event_id = Some(event.id.clone());
                    }
                    // Priming events carry an id and no data.
                    if event.data.trim().is_empty() {
                        continue;
                    }
                    let value: Value = match serde_json::from_str(&event.data) {
                        Ok(v) => v,
                        Err(_) => {
                            ex.defects += 1;
                            continue;
                        }
                    };
                    match jsonrpc::classify(value) {
                        Incoming::Response { id: rid, result } if jsonrpc::id_matches(&rid, id) => {
                            ex.bytes = counter.get();
                            ex.outcome = result.map_err(|e| ExchangeError::Rpc {
                                code: e.code,
                                message: e.message,
                                data: e.data,
                                http_status: None,
                            });
                            return;
                        }
                        Incoming::Response { .. } => {}
                        Incoming::Request {
                            id: rid, method, ..
                        } => {
                            ex.server_requests += 1;
                            let answer = jsonrpc::answer_server_request(&rid, &method);
                            if let Err(e) = self.notify("", answer).await {
                                ex.outcome = Err(e);
                                return;
                            }
                        }
                        Incoming::Notification { method, .. } => ex.notifications.push(method),
                        Incoming::Invalid(_) => ex.defects += 1,
                    }
                }
                Some(Err(SseReadError::TooLarge)) => {
                    ex.bytes = counter.get();
                    ex.outcome = Err(ExchangeError::TooLarge { limit: self.limit });
                    return;
                }
                Some(Err(SseReadError::Parse(e))) => {
                    ex.outcome = Err(ExchangeError::Malformed(format!("SSE stream: {e}")));
                    return;
                }
                // The stream ended (or broke) before our response: resume
                // where it stopped if the server gave event ids.
                Some(Err(SseReadError::Body(_))) | None => {
                    let Some(last) = last_event_id.clone() else {
                        ex.outcome = Err(ExchangeError::transport(
                            "SSE stream ended before the response",
                        ));
                        return;
                    };
                    if resumptions >= MAX_RESUMPTIONS {
                        ex.outcome = Err(ExchangeError::transport(format!(
                            "SSE stream ended before the response after {MAX_RESUMPTIONS} resumptions"
                        )));
                        return;
                    }
                    resumptions += 1;
                    match self.resume(&last).await {
                        Ok(resp) => events = sse_body::events(resp, self.limit, counter.clone()),
                        Err(e) => {
                            ex.outcome = Err(e);
                            return;
                        }
                    }
                }
            }
        }
    }

    async fn resume(&self, last_event_id: &str) -> Result<Response, ExchangeError> {
        let mut req = self
            .client
            .get(self.url.clone())
            .header(ACCEPT, "text/event-stream")
            .header("Last-Event-ID", last_event_id);
        if let Some(v) = &self.protocol_version {
            req = req.header("MCP-Protocol-Version", v);
        }
        if let Some(id) = &self.session_id {
            req = req.header("Mcp-Session-Id", id);
        }
        let resp = req.send().await.map_err(|e| send_error(&e))?;
        if !resp.status().is_success() {
            return Err(status_error(resp.status(), self.session_id.is_some()));
        }
        Ok(resp)
    }

    /// DELETE the session (405 is a fine answer); bounded so close never hangs.
    pub async fn close(self) -> CloseInfo {
        if let Some(id) = &self.session_id {
            let mut req = self
                .client
                .delete(self.url.clone())
                .header("Mcp-Session-Id", id);
            if let Some(v) = &self.protocol_version {
                req = req.header("MCP-Protocol-Version", v);
            }
            let _ = tokio::time::timeout(Duration::from_secs(2), req.send()).await;
        }
        CloseInfo::default()
    }
}

fn content_type(resp: &Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Read a body, failing once it passes `limit` without buffering more.
pub(crate) async fn read_capped(mut resp: Response, limit: u64) -> Result<Vec<u8>, ExchangeError> {
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if (body.len() + chunk.len()) as u64 > limit {
                    return Err(ExchangeError::TooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(ExchangeError::transport(format!(
                    "reading body: {}",
                    plain(&e)
                )))
            }
        }
    }
}

fn parse_json_response(body: &[u8], id: i64) -> Result<Value, ExchangeError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ExchangeError::Malformed(format!("response is not JSON: {e}")))?;
    match jsonrpc::classify(value) {
        Incoming::Response { id: rid, result } if jsonrpc::id_matches(&rid, id) => {
            result.map_err(|e| ExchangeError::Rpc {
                code: e.code,
                message: e.message,
                data: e.data,
                http_status: None,
            })
        }
        Incoming::Response { .. } => Err(ExchangeError::Malformed(
            "response id does not match the request".into(),
        )),
        _ => Err(ExchangeError::Malformed(
            "body is not a JSON-RPC response".into(),
        )),
    }
}

fn error_from_body(body: &[u8], status: StatusCode, had_session: bool) -> ExchangeError {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if let Incoming::Response { result: Err(e), .. } = jsonrpc::classify(value) {
            return ExchangeError::Rpc {
                code: e.code,
                message: e.message,
                data: e.data,
                http_status: Some(status.as_u16()),
            };
        }
    }
    status_error(status, had_session)
}

fn status_error(status: StatusCode, had_session: bool) -> ExchangeError {
    match status.as_u16() {
        401 | 403 => ExchangeError::Unauthorized {
            status: status.as_u16(),
        },
        404 if had_session => ExchangeError::SessionExpired,
        code => ExchangeError::Transport {
            message: format!("HTTP {status}"),
            http_status: Some(code),
        },
    }
}

fn send_error(e: &reqwest::Error) -> ExchangeError {
    ExchangeError::transport(plain(e))
}

/// reqwest errors print the URL, which may carry a token in its query:
/// describe the error without it.
pub(crate) fn plain(e: &reqwest::Error) -> String {
    let what = if e.is_connect() {
        "connection failed"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_redirect() {
        "too many redirects"
    } else if e.is_body() || e.is_decode() {
        "reading the body failed"
    } else if e.is_request() {
        "request failed"
    } else {
        "HTTP error"
    };
    let mut detail = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}
