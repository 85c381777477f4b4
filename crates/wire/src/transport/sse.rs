//! Legacy HTTP+SSE (2024-11-05): GET opens an event stream whose first
//! `endpoint` event names where to POST; answers arrive on the stream.

use super::http::read_capped;
use super::http_client::{HttpClient, HttpResponse};
use super::sse_body::{self, ByteCounter, SseReadError};
use super::{
    idle, keep_notification, route, CloseInfo, Exchange, ExchangeError, Idle, Outgoing, Routed,
};
use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

enum StreamItem {
    Endpoint(String),
    Message(Value, u64),
    Defect,
    TooLarge,
    Ended(String),
}

pub struct SseTransport {
    client: HttpClient,
    post_url: url::Url,
    events: mpsc::Receiver<StreamItem>,
    reader: JoinHandle<()>,
    protocol_version: Option<String>,
    idle_notifications: Vec<String>,
    limit: u64,
    ended: Option<String>,
}

impl SseTransport {
    /// Open the stream and wait for the `endpoint` event.
    pub async fn connect(
        client: HttpClient,
        sse_url: url::Url,
        max_response_bytes: u64,
        timeout: Duration,
    ) -> Result<SseTransport, ExchangeError> {
        let open = async {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            let resp = client.send(Method::GET, &sse_url, h, Bytes::new()).await?;
            let status = resp.status;
            if status.as_u16() == 401 || status.as_u16() == 403 {
                return Err(ExchangeError::Unauthorized {
                    status: status.as_u16(),
                });
            }
            if !status.is_success() {
                return Err(ExchangeError::Transport {
                    message: format!("GET for the SSE stream: HTTP {status}"),
                    http_status: Some(status.as_u16()),
                });
            }
            Ok(resp)
        };
        let resp = tokio::time::timeout(timeout, open)
            .await
            .map_err(|_| ExchangeError::Timeout(timeout))??;
        let (tx, mut rx) = mpsc::channel(256);
        let reader = tokio::spawn(read_events(resp, tx, max_response_bytes));
        let endpoint = tokio::time::timeout(timeout, async {
            loop {
                match rx.recv().await {
                    Some(StreamItem::Endpoint(e)) => return Ok(e),
                    Some(StreamItem::Ended(why)) => {
                        return Err(ExchangeError::transport(format!(
                            "SSE stream ended before the endpoint event: {}",
                            why_or_closed(&why)
                        )))
                    }
                    None => {
                        return Err(ExchangeError::transport(
                            "SSE stream ended before the endpoint event",
                        ))
                    }
                    Some(_) => {}
                }
            }
        })
        .await
        .map_err(|_| ExchangeError::transport(format!("no endpoint event within {timeout:?}")))??;
        let post_url = sse_url
            .join(&endpoint)
            .map_err(|_| ExchangeError::Malformed("endpoint event is not a URL".into()))?;
        // Our credentials must not follow an endpoint to another origin.
        if post_url.origin() != sse_url.origin() {
            reader.abort();
            return Err(ExchangeError::Malformed(
                "endpoint event points to another origin".into(),
            ));
        }
        Ok(SseTransport {
            client,
            post_url,
            events: rx,
            reader,
            protocol_version: None,
            idle_notifications: Vec::new(),
            limit: max_response_bytes,
            ended: None,
        })
    }

    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_string());
    }

    pub fn clear_protocol_version(&mut self) {
        self.protocol_version = None;
    }

    async fn post(&self, body: Vec<u8>) -> Result<(), ExchangeError> {
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
        let status = resp.status;
        if status.as_u16() == 429 {
            return Err(super::http::rate_limited(&resp));
        }
        // Drain the (small) acknowledgement so the connection is reusable.
        let _ = read_capped(resp, 64 * 1024).await;
        match status.as_u16() {
            200..=299 => Ok(()),
            401 | 403 => Err(ExchangeError::Unauthorized {
                status: status.as_u16(),
            }),
            code => Err(ExchangeError::Transport {
                message: format!("POST to the message endpoint: HTTP {status}"),
                http_status: Some(code),
            }),
        }
    }

    pub async fn notify(&mut self, body: Vec<u8>) -> Result<(), ExchangeError> {
        self.post(body).await
    }

    pub fn drain_notifications(&mut self) -> Vec<String> {
        while let Ok(item) = self.events.try_recv() {
            if let StreamItem::Message(v, _) = item {
                if let Idle::Notification(method) = idle(v) {
                    keep_notification(&mut self.idle_notifications, method);
                }
            }
        }
        std::mem::take(&mut self.idle_notifications)
    }

    /// Wait for the next notification between requests (watch mode).
    pub async fn next_notification(&mut self) -> Option<String> {
        if !self.idle_notifications.is_empty() {
            return Some(self.idle_notifications.remove(0));
        }
        loop {
            match self.events.recv().await? {
                StreamItem::Message(v, _) => match idle(v) {
                    Idle::Notification(method) => return Some(method),
                    Idle::Reply(answer) => {
                        self.post(answer).await.ok()?;
                    }
                    Idle::Nothing => {}
                },
                StreamItem::Ended(why) => {
                    self.ended = Some(why);
                    return None;
                }
                StreamItem::TooLarge => return None,
                StreamItem::Endpoint(_) | StreamItem::Defect => {}
            }
        }
    }

    pub async fn request(&mut self, req: Outgoing<'_>, timeout: Duration) -> Exchange {
        let started = Instant::now();
        let mut ex = Exchange::failed(ExchangeError::Timeout(timeout), started);
        ex.notifications = std::mem::take(&mut self.idle_notifications);
        if let Some(why) = &self.ended {
            ex.outcome = Err(ExchangeError::transport(format!("SSE stream ended: {why}")));
            return ex;
        }
        let deadline = tokio::time::Instant::from_std(started + timeout);
        match tokio::time::timeout_at(deadline, self.post(req.body)).await {
            Err(_) => return ex,
            Ok(Err(e)) => {
                ex.outcome = Err(e);
                ex.duration = started.elapsed();
                return ex;
            }
            Ok(Ok(())) => {}
        }
        loop {
            let item = match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => {
                    // Garbage instead of an answer, then silence: the
                    // answer was the garbage.
                    if ex.defects > 0 {
                        ex.outcome = Err(ExchangeError::Malformed(format!(
                            "no answer within {timeout:?}; the server sent {} event(s) that are not JSON-RPC",
                            ex.defects
                        )));
                    }
                    break;
                }
                Ok(None) => StreamItem::Ended("closed".into()),
                Ok(Some(item)) => item,
            };
            match item {
                StreamItem::Message(value, bytes) => match route(value, req.id, &mut ex) {
                    Routed::Answer(result) => {
                        ex.bytes = bytes;
                        ex.outcome = result;
                        break;
                    }
                    Routed::Reply(answer) => {
                        if let Err(e) = self.post(answer).await {
                            ex.outcome = Err(e);
                            break;
                        }
                    }
                    Routed::Recorded => {}
                },
                StreamItem::Defect => ex.defects += 1,
                StreamItem::TooLarge => {
                    ex.bytes = self.limit;
                    ex.outcome = Err(ExchangeError::TooLarge { limit: self.limit });
                    self.ended = Some("an event exceeded the size limit".into());
                    break;
                }
                StreamItem::Endpoint(_) => {}
                StreamItem::Ended(why) => {
                    ex.outcome = Err(ExchangeError::transport(format!(
                        "SSE stream ended before the response: {}",
                        why_or_closed(&why)
                    )));
                    self.ended = Some(why);
                    break;
                }
            }
        }
        ex.duration = started.elapsed();
        ex
    }

    pub async fn close(self) -> CloseInfo {
        self.reader.abort();
        CloseInfo::default()
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn why_or_closed(why: &str) -> &str {
    if why.is_empty() {
        "closed"
    } else {
        why
    }
}

/// Forward events; the byte counter is per event so a long-lived stream is
/// bounded per message, not in total.
async fn read_events(resp: HttpResponse, tx: mpsc::Sender<StreamItem>, limit: u64) {
    let counter = ByteCounter::default();
    let mut events = sse_body::events(resp, limit, counter.clone());
    loop {
        let item = match events.next().await {
            Some(Ok(ev)) => {
                let bytes = counter.get();
                counter.reset();
                if ev.event == "endpoint" {
                    StreamItem::Endpoint(ev.data.trim().to_string())
                } else if ev.data.trim().is_empty() {
                    continue;
                } else {
                    match serde_json::from_str::<Value>(&ev.data) {
                        Ok(v) => StreamItem::Message(v, bytes),
                        Err(_) => StreamItem::Defect,
                    }
                }
            }
            Some(Err(SseReadError::TooLarge)) => {
                let _ = tx.send(StreamItem::TooLarge).await;
                return;
            }
            Some(Err(SseReadError::Body(e))) | Some(Err(SseReadError::Parse(e))) => {
                let _ = tx.send(StreamItem::Ended(e)).await;
                return;
            }
            None => {
                let _ = tx.send(StreamItem::Ended(String::new())).await;
                return;
            }
        };
        if tx.send(item).await.is_err() {
            return;
        }
    }
}
