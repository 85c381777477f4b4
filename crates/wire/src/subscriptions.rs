//! 2026-07-28 has no GET stream: list changes arrive on a
//! `subscriptions/listen` request whose answer stays open
//! (basic/patterns/subscriptions). The server acknowledges first
//! (`notifications/subscriptions/acknowledged`), tags every message with
//! `_meta["io.modelcontextprotocol/subscriptionId"]` (the request's id) and
//! ends gracefully with the request's result.
//!
//! Over Streamable HTTP a background task holds the stream, checks the
//! acknowledgement and the ids, and re-subscribes (bounded, with backoff)
//! when the stream ends. Over stdio the request is one line; the
//! notifications share the process's stdout with everything else.
//!
//! A child module of `session` so the hook there stays a few lines.

use super::Session;
use crate::jsonrpc::{self, Incoming};
use crate::transport::http::Poster;
use crate::transport::sse_body::{self, ByteCounter};
use crate::transport::SubscriptionPath;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub const METHOD: &str = "subscriptions/listen";
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The list filters we ask for: every list kind.
pub const LIST_FILTERS: [&str; 3] = [
    "toolsListChanged",
    "promptsListChanged",
    "resourcesListChanged",
];

/// Longest wait for the answer headers and then for the acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_secs(10);
/// Streams that fail in a row (no ack, refused, cut) before we stop trying
/// until the next poll opens a new session.
const MAX_CONSECUTIVE_FAILURES: u32 = 5;
/// Notifications queued for the watcher; beyond this they are dropped (a
/// re-list covers any number of them).
const QUEUE: usize = 64;

/// What the subscription has seen so far (for tests and diagnostics).
#[derive(Debug, Default)]
pub struct ListenStats {
    pub opened: AtomicU32,
    pub acknowledged: AtomicU32,
    pub completed: AtomicU32,
    pub failed: AtomicU32,
    /// Notifications without our subscription id (ignored).
    pub unattributed: AtomicU32,
}

/// A snapshot of [`ListenStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListenCounts {
    pub opened: u32,
    pub acknowledged: u32,
    pub completed: u32,
    pub failed: u32,
    pub unattributed: u32,
}

impl ListenStats {
    pub fn snapshot(&self) -> ListenCounts {
        ListenCounts {
            opened: self.opened.load(Ordering::Relaxed),
            acknowledged: self.acknowledged.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            unattributed: self.unattributed.load(Ordering::Relaxed),
        }
    }
}

/// The session's subscription, once opened.
pub(super) enum Listener {
    /// The request was written among other messages; notifications come
    /// through the transport's own stream (stdio's stdout).
    Stdio,
    Http {
        rx: mpsc::Receiver<String>,
        task: tokio::task::JoinHandle<()>,
        stats: Arc<ListenStats>,
    },
    /// Nothing can arrive (legacy SSE, or the request could not be sent).
    Closed,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Http { task, .. } = self {
            task.abort();
        }
    }
}

/// What opening a subscription once showed (`check`'s rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckProbe {
    /// The acknowledgement came first with our id; the filters it honoured.
    Acknowledged {
        honoured: Vec<String>,
    },
    NotAcknowledged {
        detail: String,
    },
}

impl Session {
    /// Next list change from the 2026-07-28 subscription, opening it on
    /// first use. Cancel-safe: opening only writes one line (stdio) or
    /// spawns a task (HTTP); waiting is a channel receive.
    pub(super) async fn next_subscribed_notification(&mut self) -> Option<String> {
        if self.listener.is_none() {
            let l = self.open_listener().await;
            self.listener = Some(l);
        }
        loop {
            match self.listener.as_mut()? {
                Listener::Http { rx, .. } => return rx.recv().await,
                Listener::Closed => return None,
                Listener::Stdio => {}
            }
            let m = self.transport.next_notification().await?;
            // The acknowledgement is not a change.
            if m != ACKNOWLEDGED {
                return Some(m);
            }
        }
    }

    /// Counters of the HTTP subscription, if one was opened.
    pub fn subscription_counts(&self) -> Option<ListenCounts> {
        match &self.listener {
            Some(Listener::Http { stats, .. }) => Some(stats.snapshot()),
            _ => None,
        }
    }

    fn listen_body(&mut self) -> (i64, Vec<u8>) {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = Map::new();
        params.insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": self.protocol_version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": super::client_info(),
            }),
        );
        let filters: Map<String, Value> = LIST_FILTERS
            .iter()
            .map(|f| (f.to_string(), Value::Bool(true)))
            .collect();
        params.insert("notifications".into(), Value::Object(filters));
        (id, jsonrpc::request(id, METHOD, Some(params)))
    }

    async fn open_listener(&mut self) -> Listener {
        let (id, body) = self.listen_body();
        match self.transport.subscriptions() {
            SubscriptionPath::InBand => match self.transport.notify(METHOD, body).await {
                Ok(()) => Listener::Stdio,
                Err(_) => Listener::Closed,
            },
            SubscriptionPath::Stream(poster) => {
                let (tx, rx) = mpsc::channel(QUEUE);
                let stats = Arc::new(ListenStats::default());
                let task = tokio::spawn(hold_http(*poster, id, body, tx, stats.clone()));
                Listener::Http { rx, task, stats }
            }
            SubscriptionPath::Unsupported => Listener::Closed,
        }
    }

    /// Open a subscription, wait for its first message, close it: was it
    /// the acknowledgement with our id, and what did it honour?
    pub async fn probe_subscription(&mut self) -> AckProbe {
        let (id, body) = self.listen_body();
        match self.transport.subscriptions() {
            SubscriptionPath::Stream(poster) => {
                match tokio::time::timeout(ACK_TIMEOUT, first_message(&poster, id, &body)).await {
                    Ok(r) => r,
                    Err(_) => AckProbe::NotAcknowledged {
                        detail: format!("nothing within {ACK_TIMEOUT:?}"),
                    },
                }
            }
            SubscriptionPath::InBand => self.probe_in_band(id, body).await,
            SubscriptionPath::Unsupported => AckProbe::NotAcknowledged {
                detail: "legacy HTTP+SSE has no subscriptions/listen".into(),
            },
        }
    }

    /// [`Self::probe_subscription`] where the request is one message among
    /// others (stdio): send it, take the first notification, cancel it.
    async fn probe_in_band(&mut self, id: i64, body: Vec<u8>) -> AckProbe {
        let t = &mut self.transport;
        if let Err(e) = t.notify(METHOD, body).await {
            return AckProbe::NotAcknowledged {
                detail: e.to_string(),
            };
        }
        let first = tokio::time::timeout(ACK_TIMEOUT, t.next_notification()).await;
        let cancel = jsonrpc::notification(
            "notifications/cancelled",
            Some(Map::from_iter([("requestId".to_string(), json!(id))])),
        );
        let _ = t.notify("notifications/cancelled", cancel).await;
        match first {
            Ok(Some(m)) if m == ACKNOWLEDGED => AckProbe::Acknowledged {
                // stdio notifications reach us without params.
                honoured: LIST_FILTERS.iter().map(|s| s.to_string()).collect(),
            },
            Ok(Some(m)) => AckProbe::NotAcknowledged {
                detail: format!("the first message was {m}"),
            },
            Ok(None) => AckProbe::NotAcknowledged {
                detail: "the server went away".into(),
            },
            Err(_) => AckProbe::NotAcknowledged {
                detail: format!("no acknowledgement within {ACK_TIMEOUT:?}"),
            },
        }
    }
}

fn subscription_id(msg: &Value) -> Option<&Value> {
    msg.pointer("/params/_meta")
        .or_else(|| msg.pointer("/result/_meta"))
        .and_then(|m| m.get(META_SUBSCRIPTION_ID))
}

fn is_ours(msg: &Value, id: i64) -> bool {
    subscription_id(msg).is_some_and(|v| jsonrpc::id_matches(v, id))
}

/// POST the listen request and read its first JSON-RPC message.
async fn first_message(poster: &Poster, id: i64, body: &[u8]) -> AckProbe {
    let resp = match open(poster, body).await {
        Ok(r) => r,
        Err(detail) => return AckProbe::NotAcknowledged { detail },
    };
    let mut events = sse_body::events(resp, poster.limit, ByteCounter::default());
    while let Some(ev) = events.next().await {
        let Ok(ev) = ev else {
            return AckProbe::NotAcknowledged {
                detail: "the stream broke before any message".into(),
            };
        };
        let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
            continue;
        };
        let method = v.get("method").and_then(Value::as_str).unwrap_or("");
        if method == ACKNOWLEDGED && is_ours(&v, id) {
            let honoured = v
                .pointer("/params/notifications")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(_, x)| x.as_bool() == Some(true))
                        .map(|(k, _)| k.clone())
                        .collect()
                })
                .unwrap_or_default();
            return AckProbe::Acknowledged { honoured };
        }
        let what = if method.is_empty() {
            "a response"
        } else {
            method
        };
        return AckProbe::NotAcknowledged {
            detail: if method == ACKNOWLEDGED {
                "the acknowledgement did not carry our subscriptionId".into()
            } else {
                format!("the first message was {what}, not the acknowledgement")
            },
        };
    }
    AckProbe::NotAcknowledged {
        detail: "the stream ended without a message".into(),
    }
}

async fn open(
    poster: &Poster,
    body: &[u8],
) -> Result<crate::transport::http_client::HttpResponse, String> {
    let resp = tokio::time::timeout(ACK_TIMEOUT, poster.post(METHOD, body.to_vec()))
        .await
        .map_err(|_| format!("no answer within {ACK_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    if !resp.status.is_success() {
        return Err(format!("HTTP {}", resp.status.as_u16()));
    }
    if !resp.content_type().starts_with("text/event-stream") {
        return Err(format!(
            "the answer is {:?}, not an event stream",
            resp.content_type()
        ));
    }
    Ok(resp)
}

/// How one stream ended.
enum StreamEnd {
    /// The server's completion result: subscribe again.
    Completed,
    Failed,
    /// Nobody listens any more.
    Abandoned,
}

/// Keep a subscription open until the watcher goes away or too many
/// streams fail in a row.
async fn hold_http(
    poster: Poster,
    id: i64,
    body: Vec<u8>,
    tx: mpsc::Sender<String>,
    stats: Arc<ListenStats>,
) {
    let mut failures = 0u32;
    loop {
        stats.opened.fetch_add(1, Ordering::Relaxed);
        let pause = match one_stream(&poster, id, &body, &tx, &stats).await {
            StreamEnd::Abandoned => return,
            StreamEnd::Completed => {
                stats.completed.fetch_add(1, Ordering::Relaxed);
                failures = 0;
                Duration::from_millis(200)
            }
            StreamEnd::Failed => {
                stats.failed.fetch_add(1, Ordering::Relaxed);
                failures += 1;
                if failures >= MAX_CONSECUTIVE_FAILURES {
                    return;
                }
                Duration::from_millis(250u64 << failures.min(6))
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = tx.closed() => return,
        }
    }
}

async fn one_stream(
    poster: &Poster,
    id: i64,
    body: &[u8],
    tx: &mpsc::Sender<String>,
    stats: &ListenStats,
) -> StreamEnd {
    let resp = tokio::select! {
        r = open(poster, body) => r,
        _ = tx.closed() => return StreamEnd::Abandoned,
    };
    let Ok(resp) = resp else {
        return StreamEnd::Failed;
    };
    let counter = ByteCounter::default();
    let mut events = sse_body::events(resp, poster.limit, counter.clone());
    let mut acknowledged = false;
    let ack_deadline = tokio::time::Instant::now() + ACK_TIMEOUT;
    loop {
        let next = if acknowledged {
            tokio::select! {
                e = events.next() => e,
                _ = tx.closed() => return StreamEnd::Abandoned,
            }
        } else {
            match tokio::time::timeout_at(ack_deadline, events.next()).await {
                Ok(e) => e,
                // No acknowledgement: the stream is not live.
                Err(_) => return StreamEnd::Failed,
            }
        };
        let Some(Ok(ev)) = next else {
            // Cut without the completion result: an unexpected end.
            return StreamEnd::Failed;
        };
        counter.reset();
        let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
            continue;
        };
        if !acknowledged {
            if v.get("method").and_then(Value::as_str) == Some(ACKNOWLEDGED) && is_ours(&v, id) {
                acknowledged = true;
                stats.acknowledged.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            // The server MUST acknowledge before anything else.
            return StreamEnd::Failed;
        }
        match jsonrpc::classify(v.clone()) {
            Incoming::Response { id: rid, .. } if jsonrpc::id_matches(&rid, id) => {
                return StreamEnd::Completed
            }
            Incoming::Notification { method, .. } if is_ours(&v, id) => {
                // Full queue: drop; one re-list covers any number.
                let _ = tx.try_send(method);
            }
            Incoming::Notification { .. } => {
                stats.unattributed.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}
