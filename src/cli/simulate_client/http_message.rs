//! One JSON-RPC message over Streamable HTTP for the simulated client: a
//! POST with the session id once there is one, the answer read from a JSON
//! body or from the SSE stream that carries it, never more than
//! [`MAX_ANSWER_BYTES`].

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use mcp_wire::transport::http_client::{ClientSettings, HttpClient, HttpResponse};
use mcp_wire::transport::sse_parser::SseParser;
use serde_json::Value;
use std::time::Duration;

/// An answer larger than this is a failed round, not a buffer that grows.
const MAX_ANSWER_BYTES: usize = 8 << 20;

const SESSION_HEADER: &str = "mcp-session-id";

/// Why a round stopped early; shown on stderr, never retried within the round.
#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error("{0}")]
    Http(#[from] mcp_wire::transport::ExchangeError),
    #[error("HTTP {0}")]
    Status(u16),
    #[error("JSON-RPC error {0} to initialize")]
    Rpc(i64),
    #[error("no answer to request {0}")]
    NoAnswer(i64),
    #[error("answer larger than {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// One client session against one endpoint.
pub struct Connection {
    client: HttpClient,
    url: url::Url,
    session: Option<HeaderValue>,
    timeout: Duration,
    next_id: i64,
}

impl Connection {
    pub fn new(url: url::Url, timeout: Duration) -> Result<Connection, RoundError> {
        let client = HttpClient::new(ClientSettings {
            default_headers: HeaderMap::new(),
            connect_timeout: timeout,
            ca_file: None,
            insecure_skip_verify: false,
            max_redirects: 0,
        })?;
        Ok(Connection {
            client,
            url,
            session: None,
            timeout,
            next_id: 0,
        })
    }

    /// Send a request and return its whole JSON-RPC answer (result or error).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, RoundError> {
        self.next_id += 1;
        let id = self.next_id;
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.post(body).await?;
        if self.session.is_none() {
            self.session = response.headers.get(SESSION_HEADER).cloned();
        }
        tokio::time::timeout(self.timeout, read_answer(response, id))
            .await
            .map_err(|_| RoundError::Timeout(self.timeout))?
    }

    /// Send a notification (the server answers 202, no body).
    pub async fn notify(&mut self, method: &str) -> Result<(), RoundError> {
        let body = serde_json::json!({"jsonrpc": "2.0", "method": method});
        self.post(body).await.map(drop)
    }

    /// End the session as Python SDK clients do on exit (a 405 is allowed).
    pub async fn delete(self) {
        let Some(session) = self.session.clone() else {
            return;
        };
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_HEADER, session);
        let sent = self
            .client
            .send(Method::DELETE, &self.url, headers, Bytes::new());
        let _ = tokio::time::timeout(self.timeout, sent).await;
    }

    async fn post(&self, body: Value) -> Result<HttpResponse, RoundError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(session) = &self.session {
            headers.insert(SESSION_HEADER, session.clone());
        }
        let bytes = Bytes::from(body.to_string());
        let sent = self.client.send(Method::POST, &self.url, headers, bytes);
        let response = tokio::time::timeout(self.timeout, sent)
            .await
            .map_err(|_| RoundError::Timeout(self.timeout))??;
        if !response.status.is_success() {
            return Err(RoundError::Status(response.status.as_u16()));
        }
        Ok(response)
    }
}

/// The message answering `id`, from a JSON body or an SSE stream (whose
/// other events, notifications say, are skipped).
async fn read_answer(mut response: HttpResponse, id: i64) -> Result<Value, RoundError> {
    let sse = response.content_type().starts_with("text/event-stream");
    let mut parser = SseParser::new();
    let mut body = Vec::new();
    let mut read = 0usize;
    while let Some(chunk) = response.chunk().await? {
        read += chunk.len();
        if read > MAX_ANSWER_BYTES {
            return Err(RoundError::TooLarge);
        }
        if !sse {
            body.extend_from_slice(&chunk);
            continue;
        }
        for event in parser.push(&chunk) {
            if let Some(answer) = answer_to(event.data.as_bytes(), id) {
                return Ok(answer);
            }
        }
    }
    answer_to(&body, id).ok_or(RoundError::NoAnswer(id))
}

fn answer_to(message: &[u8], id: i64) -> Option<Value> {
    let value: Value = serde_json::from_slice(message).ok()?;
    (value.get("id").and_then(Value::as_i64) == Some(id)).then_some(value)
}
