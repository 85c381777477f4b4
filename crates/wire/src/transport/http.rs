//! Streamable HTTP (2025-03-26 and later): one POST per message; the answer
//! is JSON or an SSE stream that may carry server requests and
//! notifications before the response, and may end early to be resumed with
//! GET + `Last-Event-ID`.

use super::http_client::{ClientSettings, HttpClient, HttpResponse};
use super::scope::{BoundScope, CredentialScope};
use super::sse_body::{self, ByteCounter, SseReadError};
use super::{
    route, CloseInfo, Exchange, ExchangeError, Outgoing, Routed, SubscriptionPath, Transport,
};
use crate::jsonrpc::{self, Incoming};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use mcp_listing::{ExchangeFailure, TransportKind};
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
    /// Where else a server may send our requests (an SSE endpoint, a
    /// redirect); see `scope.rs`.
    pub scope: CredentialScope,
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
            .field("scope", &self.scope)
            .finish()
    }
}

/// Build the shared HTTP client for one target, sending nowhere outside
/// the target's scope.
pub fn client(spec: &HttpSpec, connect_timeout: Duration) -> Result<HttpClient, ExchangeError> {
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
        headers.insert(http::header::AUTHORIZATION, value);
    }
    let client = HttpClient::new(ClientSettings {
        default_headers: headers,
        connect_timeout,
        ca_file: spec.ca_file.as_deref(),
        insecure_skip_verify: spec.insecure_skip_verify,
        max_redirects: spec.max_redirects,
    })?;
    Ok(match &spec.url {
        Some(url) => client.scoped(BoundScope::new(url, &spec.scope)),
        None => client,
    })
}

/// See [`HttpTransport::poster`].
#[derive(Clone)]
pub struct Poster {
    client: HttpClient,
    url: url::Url,
    headers: HeaderMap,
    modern: bool,
    /// The transport's response byte cap, for whoever reads the answer.
    pub(crate) limit: u64,
}

impl Poster {
    pub(crate) async fn post(
        &self,
        method: &str,
        body: Vec<u8>,
    ) -> Result<HttpResponse, ExchangeError> {
        let mut h = self.headers.clone();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if self.modern {
            if let Ok(m) = HeaderValue::from_str(method) {
                h.insert("mcp-method", m);
            }
        }
        self.client
            .send(Method::POST, &self.url, h, Bytes::from(body))
            .await
    }
}

pub struct HttpTransport {
    /// Non-JSON events seen during the request in flight (kept outside the
    /// exchange so a timeout can still tell garbage from silence).
    pending_defects: u32,
    /// Notifications from the standing GET stream (watch mode).
    listen: Option<(
        tokio::sync::mpsc::Receiver<String>,
        tokio::task::JoinHandle<()>,
    )>,
    client: HttpClient,
    url: url::Url,
    session_id: Option<String>,
    protocol_version: Option<String>,
    modern: bool,
    limit: u64,
}

impl HttpTransport {
    pub fn new(client: HttpClient, url: url::Url, max_response_bytes: u64) -> Self {
        HttpTransport {
            pending_defects: 0,
            listen: None,
            client,
            url,
            session_id: None,
            protocol_version: None,
            modern: false,
            limit: max_response_bytes,
        }
    }

    /// Headers every request of this session carries.
    fn session_headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = self
            .protocol_version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert("mcp-protocol-version", v);
        }
        if let Some(id) = self
            .session_id
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert("mcp-session-id", id);
        }
        h
    }

    async fn post(&self, method: &str, body: Vec<u8>) -> Result<HttpResponse, ExchangeError> {
        let mut h = self.session_headers();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if self.modern && !method.is_empty() {
            if let Ok(m) = HeaderValue::from_str(method) {
                h.insert("mcp-method", m);
            }
        }
        self.client
            .send(Method::POST, &self.url, h, Bytes::from(body))
            .await
    }

    async fn post_message(&self, method: &str, body: Vec<u8>) -> Result<(), ExchangeError> {
        let resp = self.post(method, body).await?;
        if resp.status.is_success() {
            Ok(())
        } else {
            Err(status_error(resp.failure(), self.session_id.is_some()))
        }
    }

    async fn request_within(&mut self, req: Outgoing<'_>, timeout: Duration) -> Exchange {
        let started = Instant::now();
        self.pending_defects = 0;
        match tokio::time::timeout(timeout, self.exchange(req, started)).await {
            Ok(ex) => ex,
            // Garbage instead of an answer, then silence: the answer was
            // the garbage.
            Err(_) if self.pending_defects > 0 => Exchange::failed(
                ExchangeFailure::Malformed(format!(
                    "no answer within {timeout:?}; the server sent {} event(s) that are not JSON-RPC",
                    self.pending_defects
                ))
                .into(),
                started,
            ),
            Err(_) => Exchange::failed(ExchangeFailure::Timeout(timeout).into(), started),
        }
    }

    async fn exchange(&mut self, req: Outgoing<'_>, started: Instant) -> Exchange {
        let mut ex = Exchange::failed(ExchangeError::transport("no response"), started);
        let resp = match self.post(req.method, req.body).await {
            Ok(r) => r,
            Err(e) => {
                ex.outcome = Err(e);
                ex.duration = started.elapsed();
                return ex;
            }
        };
        let status = resp.status;
        // Only an accepted request opens a session: Python `mcp` 1.x answers
        // a refused `server/discover` with 400 *and* the id of a session it
        // has already closed, and keeping that id makes `initialize` fail.
        if let (true, Some(id)) = (status.is_success(), resp.header("mcp-session-id")) {
            if self.session_id.is_none() {
                self.session_id = Some(id.to_string());
            }
        }
        let is_sse = resp.content_type().starts_with("text/event-stream");
        let refused = (!status.is_success()).then(|| resp.failure());
        if status.as_u16() == 429 {
            ex.outcome = Err(ExchangeError::Failed(resp.failure()));
        } else if status.is_success() && is_sse {
            self.read_stream(resp, req.id, &mut ex).await;
        } else if status.is_success() || status.is_client_error() {
            // 4xx may carry a JSON-RPC error (modern servers answer 400 with
            // one); keep it, with the status.
            match read_capped(resp, self.limit).await {
                Ok(body) => {
                    ex.bytes = body.len() as u64;
                    ex.outcome = match refused {
                        None => parse_json_response(&body, req.id),
                        Some(refused) => {
                            Err(error_from_body(&body, refused, self.session_id.is_some()))
                        }
                    };
                }
                Err(e) => ex.outcome = Err(e),
            }
        } else if let Some(refused) = refused {
            ex.outcome = Err(status_error(refused, self.session_id.is_some()));
        }
        ex.duration = started.elapsed();
        ex
    }

    async fn read_stream(&mut self, resp: HttpResponse, id: i64, ex: &mut Exchange) {
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
                    match self.on_event(&event.data, id, ex).await {
                        EventStep::Wait => {}
                        EventStep::Answered(result) => {
                            ex.bytes = counter.get();
                            ex.outcome = result;
                            return;
                        }
                        EventStep::Failed(e) => {
                            ex.outcome = Err(e);
                            return;
                        }
                    }
                }
                Some(Err(e)) => {
                    if matches!(e, SseReadError::TooLarge) {
                        ex.bytes = counter.get();
                    }
                    ex.outcome = Err(self.stream_error(e, ex.defects));
                    return;
                }
                // The server ended the stream before our response: resume
                // where it stopped if it gave event ids.
                None => {
                    let resumed = match self
                        .resume_ended(last_event_id.as_deref(), resumptions, ex.defects)
                        .await
                    {
                        Ok(resp) => resp,
                        Err(e) => {
                            ex.outcome = Err(e);
                            return;
                        }
                    };
                    resumptions += 1;
                    events = sse_body::events(resumed, self.limit, counter.clone());
                }
            }
        }
    }

    /// One event's data: our answer ends the exchange, a server request is
    /// answered, anything else is recorded (data that is not JSON as a
    /// defect) and the stream read on.
    async fn on_event(&mut self, data: &str, id: i64, ex: &mut Exchange) -> EventStep {
        // Priming events carry an id and no data.
        if data.trim().is_empty() {
            return EventStep::Wait;
        }
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            ex.defects += 1;
            self.pending_defects += 1;
            return EventStep::Wait;
        };
        match route(value, id, ex) {
            Routed::Answer(result) => EventStep::Answered(result),
            Routed::Reply(answer) => match self.post_message("", answer).await {
                Ok(()) => EventStep::Wait,
                Err(e) => EventStep::Failed(e),
            },
            Routed::Recorded => EventStep::Wait,
        }
    }

    /// The error a stream that could not be read ends the exchange with;
    /// `defects`: events so far that were not JSON-RPC.
    fn stream_error(&self, e: SseReadError, defects: u32) -> ExchangeError {
        match e {
            SseReadError::TooLarge => {
                ExchangeError::Failed(ExchangeFailure::TooLarge { limit: self.limit })
            }
            SseReadError::Parse(e) => {
                ExchangeError::Failed(ExchangeFailure::Malformed(format!("SSE stream: {e}")))
            }
            // The connection broke mid-stream: the server crashed or a
            // proxy cut it. Resumption is for streams the server ends on
            // purpose.
            SseReadError::Body(_) if defects > 0 => {
                ExchangeError::Failed(ExchangeFailure::Malformed(format!(
                    "SSE stream broke after {defects} event(s) that are not JSON-RPC"
                )))
            }
            SseReadError::Body(e) => ExchangeError::transport(format!("SSE stream broke: {e}")),
        }
    }

    /// The stream the server ended before our response, resumed from its
    /// last event id: not when it sent no ids, sent events that are not
    /// JSON-RPC, or was resumed `MAX_RESUMPTIONS` times already.
    async fn resume_ended(
        &self,
        last_event_id: Option<&str>,
        resumptions: u32,
        defects: u32,
    ) -> Result<HttpResponse, ExchangeError> {
        if defects > 0 {
            return Err(ExchangeError::Failed(ExchangeFailure::Malformed(format!(
                "SSE stream ended after {defects} event(s) that are not JSON-RPC"
            ))));
        }
        let Some(last) = last_event_id else {
            return Err(ExchangeError::transport(
                "SSE stream ended before the response",
            ));
        };
        if resumptions >= MAX_RESUMPTIONS {
            return Err(ExchangeError::transport(format!(
                "SSE stream ended before the response after {MAX_RESUMPTIONS} resumptions"
            )));
        }
        self.resume(last).await
    }

    /// Wait for the next notification on the standing GET stream, opening
    /// it on first use. None when the server offers no stream (405) or it
    /// ended.
    async fn listen_idle(&mut self) -> Option<String> {
        if self.listen.is_none() {
            let mut h = self.session_headers();
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            let resp = self
                .client
                .send(Method::GET, &self.url, h, Bytes::new())
                .await
                .ok()?;
            if !resp.status.is_success() || !resp.content_type().starts_with("text/event-stream") {
                return None;
            }
            let (tx, rx) = tokio::sync::mpsc::channel(64);
            let limit = self.limit;
            let task = tokio::spawn(async move {
                let counter = ByteCounter::default();
                let mut events = sse_body::events(resp, limit, counter.clone());
                while let Some(Ok(ev)) = events.next().await {
                    counter.reset();
                    if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
                        if let Incoming::Notification { method, .. } = jsonrpc::classify(v) {
                            if tx.send(method).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
            self.listen = Some((rx, task));
        }
        let (rx, _) = self.listen.as_mut()?;
        rx.recv().await
    }

    async fn resume(&self, last_event_id: &str) -> Result<HttpResponse, ExchangeError> {
        let mut h = self.session_headers();
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Ok(v) = HeaderValue::from_str(last_event_id) {
            h.insert("last-event-id", v);
        }
        let resp = self
            .client
            .send(Method::GET, &self.url, h, Bytes::new())
            .await?;
        if !resp.status.is_success() {
            return Err(status_error(resp.failure(), self.session_id.is_some()));
        }
        Ok(resp)
    }

    /// An owned handle that POSTs with this session's headers, for a
    /// long-lived answer read elsewhere (2026-07-28 `subscriptions/listen`).
    pub(crate) fn poster(&self) -> Poster {
        Poster {
            client: self.client.clone(),
            url: self.url.clone(),
            headers: self.session_headers(),
            modern: self.modern,
            limit: self.limit,
        }
    }

    /// DELETE the session (405 is a fine answer); bounded so close never hangs.
    async fn end(self) -> CloseInfo {
        if self.session_id.is_some() {
            let h = self.session_headers();
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                self.client.send(Method::DELETE, &self.url, h, Bytes::new()),
            )
            .await;
        }
        CloseInfo::default()
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::StreamableHttp
    }

    fn request<'a>(&'a mut self, req: Outgoing<'a>, timeout: Duration) -> BoxFuture<'a, Exchange> {
        Box::pin(self.request_within(req, timeout))
    }

    fn notify<'a>(
        &'a mut self,
        method: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), ExchangeError>> {
        Box::pin(self.post_message(method, body))
    }

    fn next_notification(&mut self) -> BoxFuture<'_, Option<String>> {
        Box::pin(self.listen_idle())
    }

    fn subscriptions(&self) -> SubscriptionPath {
        SubscriptionPath::Stream(Box::new(self.poster()))
    }

    fn set_protocol_version(&mut self, version: &str, modern: bool) {
        self.protocol_version = Some(version.to_string());
        self.modern = modern;
    }

    fn clear_protocol_version(&mut self) {
        self.protocol_version = None;
        self.modern = false;
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn reset_session(&mut self) {
        self.session_id = None;
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, CloseInfo> {
        Box::pin((*self).end())
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some((_, task)) = &self.listen {
            task.abort();
        }
    }
}

/// Read a body, failing once it passes `limit` without buffering more.
pub(crate) async fn read_capped(
    mut resp: HttpResponse,
    limit: u64,
) -> Result<Vec<u8>, ExchangeError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(ExchangeError::Failed(ExchangeFailure::TooLarge { limit }));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn parse_json_response(body: &[u8], id: i64) -> Result<Value, ExchangeError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ExchangeError::Failed(ExchangeFailure::Malformed(format!(
            "response is not JSON: {e}"
        )))
    })?;
    match jsonrpc::classify(value) {
        Incoming::Response { id: rid, result } if jsonrpc::id_matches(&rid, id) => {
            result.map_err(|e| ExchangeError::Rpc {
                code: e.code,
                message: e.message,
                data: e.data,
                http_status: None,
            })
        }
        Incoming::Response { .. } => Err(ExchangeError::Failed(ExchangeFailure::Malformed(
            "response id does not match the request".into(),
        ))),
        _ => Err(ExchangeError::Failed(ExchangeFailure::Malformed(
            "body is not a JSON-RPC response".into(),
        ))),
    }
}

fn error_from_body(body: &[u8], refused: ExchangeFailure, had_session: bool) -> ExchangeError {
    // The status decides first: 401/403 and a forgotten session mean the
    // same whatever body comes with them.
    let status = refused.http_status();
    if matches!(refused, ExchangeFailure::Unauthorized { .. })
        || (status == Some(404) && had_session)
    {
        return status_error(refused, had_session);
    }
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let is_jsonrpc = value.get("jsonrpc").is_some()
            && value.pointer("/error/code").is_some_and(Value::is_i64);
        if let (true, Incoming::Response { result: Err(e), .. }) =
            (is_jsonrpc, jsonrpc::classify(value))
        {
            return ExchangeError::Rpc {
                code: e.code,
                message: e.message,
                data: e.data,
                http_status: status,
            };
        }
    }
    status_error(refused, had_session)
}

/// A refused request: a forgotten session (404 to a request that carried
/// one) is the wire's own to handle; any other status means what
/// `ExchangeFailure::from_http_status` says it means everywhere.
fn status_error(refused: ExchangeFailure, had_session: bool) -> ExchangeError {
    match refused.http_status() {
        Some(404) if had_session => ExchangeError::SessionExpired,
        _ => ExchangeError::Failed(refused),
    }
}

/// What one SSE event did to a request's exchange.
enum EventStep {
    /// Read on.
    Wait,
    /// Our response (or its error): the exchange is over.
    Answered(Result<Value, ExchangeError>),
    /// Answering a server request failed: the exchange is over.
    Failed(ExchangeError),
}
