//! Legacy HTTP+SSE (2024-11-05): GET opens an event stream whose first
//! `endpoint` event names where to POST; answers arrive on the stream.
//! The endpoint is held to the target's scope before anything is POSTed
//! there (`scope.rs`): a server must not steer our credentials elsewhere.

use super::channel::{self, Channel, Inbound, InboundTx, Link, OverChannel};
use super::http::read_capped;
use super::http_client::{HttpClient, HttpResponse};
use super::scope::NamedBy;
use super::sse_body::{self, ByteCounter, SseReadError};
use super::{CloseInfo, ExchangeError, SubscriptionPath};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use mcp_listing::{ExchangeFailure, TransportKind};
use serde_json::Value;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How a message reaches the server: a POST to the endpoint it named.
pub(crate) struct PostLink {
    client: HttpClient,
    post_url: url::Url,
    protocol_version: Option<String>,
}

impl Link for PostLink {
    const UNIT: &'static str = "event";
    const KIND: TransportKind = TransportKind::Sse;
    const LISTEN: SubscriptionPath = SubscriptionPath::Unsupported;

    async fn send(&mut self, body: Vec<u8>) -> Result<(), ExchangeError> {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(v) = self
            .protocol_version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert("mcp-protocol-version", v);
        }
        let resp = self
            .client
            .send(Method::POST, &self.post_url, h, Bytes::from(body))
            .await?;
        let refused = (!resp.status.is_success()).then(|| resp.failure());
        // Drain the (small) acknowledgement so the connection is reusable.
        let _ = read_capped(resp, 64 * 1024).await;
        match refused {
            None => Ok(()),
            Some(refused) => Err(ExchangeError::Failed(
                refused.answering("POST to the message endpoint"),
            )),
        }
    }

    fn ended(&mut self, why: &str, before_send: bool) -> ExchangeError {
        let why = if why.is_empty() { "closed" } else { why };
        ExchangeError::transport(if before_send {
            format!("SSE stream ended: {why}")
        } else {
            format!("SSE stream ended before the response: {why}")
        })
    }
}

pub struct SseTransport {
    channel: Channel<PostLink>,
    reader: JoinHandle<()>,
}

/// The `endpoint` event's data, or why the stream ended before one.
type EndpointEvent = Result<String, String>;

impl SseTransport {
    /// Open the stream, wait for the `endpoint` event and check the URL it
    /// names against the client's scope.
    pub async fn connect(
        client: HttpClient,
        sse_url: url::Url,
        max_response_bytes: u64,
        timeout: Duration,
    ) -> Result<SseTransport, ExchangeError> {
        let resp = tokio::time::timeout(timeout, open(&client, &sse_url))
            .await
            .map_err(|_| ExchangeError::Failed(ExchangeFailure::Timeout(timeout)))??;
        let (tx, rx) = channel::inbound(max_response_bytes);
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let reader = tokio::spawn(read_events(resp, tx, endpoint_tx, max_response_bytes));
        let post_url = endpoint_url(&sse_url, endpoint_rx, timeout)
            .await
            .and_then(|url| {
                // Never another origin, whatever the client's scope says.
                if url.origin() != sse_url.origin() {
                    return Err(ExchangeError::NotAllowed {
                        named_by: NamedBy::SseEndpoint,
                    });
                }
                client.check(&url, NamedBy::SseEndpoint).map(|()| url)
            });
        let post_url = match post_url {
            Ok(url) => url,
            Err(e) => {
                reader.abort();
                return Err(e);
            }
        };
        let link = PostLink {
            client,
            post_url,
            protocol_version: None,
        };
        Ok(SseTransport {
            channel: Channel::new(link, rx, max_response_bytes),
            reader,
        })
    }
}

/// GET the event stream.
async fn open(client: &HttpClient, sse_url: &url::Url) -> Result<HttpResponse, ExchangeError> {
    let mut h = HeaderMap::new();
    h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let resp = client.send(Method::GET, sse_url, h, Bytes::new()).await?;
    if !resp.status.is_success() {
        return Err(ExchangeError::Failed(
            resp.failure().answering("GET for the SSE stream"),
        ));
    }
    Ok(resp)
}

/// The URL the `endpoint` event names, resolved against the stream's.
async fn endpoint_url(
    sse_url: &url::Url,
    endpoint: oneshot::Receiver<EndpointEvent>,
    timeout: Duration,
) -> Result<url::Url, ExchangeError> {
    let named = match tokio::time::timeout(timeout, endpoint).await {
        Err(_) => {
            return Err(ExchangeError::transport(format!(
                "no endpoint event within {timeout:?}"
            )))
        }
        Ok(Err(_)) => String::new(),
        Ok(Ok(Ok(named))) => named,
        Ok(Ok(Err(why))) => {
            let why = if why.is_empty() { "closed" } else { &why };
            return Err(ExchangeError::transport(format!(
                "SSE stream ended before the endpoint event: {why}"
            )));
        }
    };
    sse_url.join(&named).map_err(|_| {
        ExchangeError::Failed(ExchangeFailure::Malformed(
            "endpoint event is not a URL".into(),
        ))
    })
}

impl OverChannel for SseTransport {
    type Link = PostLink;

    fn channel(&mut self) -> &mut Channel<PostLink> {
        &mut self.channel
    }

    fn protocol_version(&mut self, version: Option<&str>) {
        self.channel.link.protocol_version = version.map(str::to_string);
    }

    fn shut(self: Box<Self>) -> BoxFuture<'static, CloseInfo> {
        self.reader.abort();
        Box::pin(std::future::ready(CloseInfo::default()))
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Forward events; the byte counter is per event so a long-lived stream is
/// bounded per message, not in total. The first `endpoint` event goes to
/// `endpoint` (later ones are ignored); if the stream ends first, why.
async fn read_events(
    resp: HttpResponse,
    tx: InboundTx,
    endpoint: oneshot::Sender<EndpointEvent>,
    limit: u64,
) {
    let mut endpoint = Some(endpoint);
    let counter = ByteCounter::default();
    let mut events = sse_body::events(resp, limit, counter.clone());
    let why = loop {
        let item = match events.next().await {
            Some(Ok(ev)) => {
                let bytes = counter.get();
                counter.reset();
                if ev.event == "endpoint" {
                    if let Some(first) = endpoint.take() {
                        let _ = first.send(Ok(ev.data.trim().to_string()));
                    }
                    continue;
                } else if ev.data.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&ev.data) {
                    Ok(v) => Inbound::Message(v, bytes),
                    Err(_) => Inbound::Defect,
                }
            }
            Some(Err(SseReadError::TooLarge)) => {
                tx.send(Inbound::TooLarge { stream_over: true }).await;
                break "an event exceeded the size limit".to_string();
            }
            Some(Err(SseReadError::Body(e))) | Some(Err(SseReadError::Parse(e))) => break e,
            None => break String::new(),
        };
        if !tx.send(item).await {
            return;
        }
    };
    if let Some(first) = endpoint.take() {
        let _ = first.send(Err(why.clone()));
    }
    tx.send(Inbound::Ended(why)).await;
}
