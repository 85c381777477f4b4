//! `subscriptions/listen` (2026-07-28, basic/patterns/subscriptions): the
//! acknowledgement first, `subscriptionId` in `_meta` on every message,
//! `notifications/<kind>/list_changed` when the catalogue's epoch moves (with
//! `--notify`), and the completion result on a graceful close. Misbehaviour
//! comes from `--listen-fault`. Transport-free: HTTP renders the messages as
//! an SSE stream, stdio as lines.

use super::behaviour::scenarios;
use super::config::ListenFault;
use super::engine::VirtualServer;
use super::per_kind::PerKind;
use super::reply::result;
use mcp_listing::kind::Kind;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

pub const METHOD: &str = "subscriptions/listen";
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How often an open subscription looks for a catalogue change.
const TICK: Duration = Duration::from_millis(50);
/// A stream ends after this long even if nobody closes it.
const MAX_STREAM: Duration = Duration::from_secs(3600);

/// The list filters a server can honour and the kinds they cover.
const FILTERS: [(&str, &[Kind]); 3] = [
    ("toolsListChanged", &[Kind::Tools]),
    ("promptsListChanged", &[Kind::Prompts]),
    (
        "resourcesListChanged",
        &[Kind::Resources, Kind::ResourceTemplates],
    ),
];

/// One message of the stream, or its abrupt end.
#[derive(Debug)]
pub enum Message {
    Json(Value),
    /// Cut the stream without a completion (`--listen-fault die`).
    Die,
}

/// An open subscription: the request id and what it asked for.
pub struct Subscription {
    server: Arc<VirtualServer>,
    id: Value,
    /// Filter names honoured (requested and supported).
    honoured: Vec<&'static str>,
    /// Epoch last announced, per kind.
    seen: PerKind<u32>,
    sent_ack: bool,
    notifications_sent: u32,
    done: bool,
    opened: tokio::time::Instant,
}

impl Subscription {
    pub fn open(server: Arc<VirtualServer>, id: Value, params: Option<&Value>) -> Subscription {
        let asked = params.and_then(|p| p.get("notifications"));
        let honoured = FILTERS
            .iter()
            .filter(|(name, _)| asked.and_then(|a| a.get(*name)) == Some(&Value::Bool(true)))
            .map(|(name, _)| *name)
            .collect();
        let seen = PerKind::from_fn(|kind| server.epoch(kind));
        Subscription {
            server,
            id,
            honoured,
            seen,
            sent_ack: false,
            notifications_sent: 0,
            done: false,
            opened: tokio::time::Instant::now(),
        }
    }

    fn meta(&self) -> Value {
        json!({ META_SUBSCRIPTION_ID: self.id })
    }

    fn acknowledgement(&self) -> Value {
        let filters: Map<String, Value> = self
            .honoured
            .iter()
            .map(|n| (n.to_string(), Value::Bool(true)))
            .collect();
        json!({
            "jsonrpc": "2.0",
            "method": ACKNOWLEDGED,
            "params": {"_meta": self.meta(), "notifications": filters},
        })
    }

    /// The graceful end: the (empty) result of the listen request.
    pub fn completion(&self) -> Value {
        result(
            &self.id,
            json!({"resultType": "complete", "_meta": self.meta()}),
        )
    }

    fn announces(&self) -> bool {
        let cfg = &self.server.cfg;
        cfg.change.notify && scenarios::of(cfg.scenario).changes()
    }

    /// The next message; `None` when the stream is over.
    pub async fn next(&mut self) -> Option<Message> {
        if self.done {
            return None;
        }
        let fault = self.server.cfg.listen.fault;
        if !self.sent_ack {
            self.sent_ack = true;
            if fault != Some(ListenFault::NoAck) {
                return Some(Message::Json(self.acknowledgement()));
            }
        }
        if fault == Some(ListenFault::Die) {
            self.done = true;
            // Long enough for the acknowledgement to reach the client
            // before the connection is cut.
            tokio::time::sleep(Duration::from_millis(200)).await;
            return Some(Message::Die);
        }
        loop {
            if let Some(limit) = self.server.cfg.listen.close_after {
                if self.notifications_sent >= limit {
                    self.done = true;
                    return Some(Message::Json(self.completion()));
                }
            }
            if self.opened.elapsed() >= MAX_STREAM {
                self.done = true;
                return Some(Message::Json(self.completion()));
            }
            if self.announces() {
                if let Some(kind) = self.changed_kind() {
                    self.notifications_sent += 1;
                    return Some(Message::Json(json!({
                        "jsonrpc": "2.0",
                        "method": kind.list_changed_method(),
                        "params": {"_meta": self.meta()},
                    })));
                }
            }
            tokio::time::sleep(TICK).await;
        }
    }

    /// A subscribed, faulty kind whose epoch moved since last announced.
    /// Templates share the resources notification: one message for both.
    fn changed_kind(&mut self) -> Option<Kind> {
        for (name, kinds) in FILTERS {
            if !self.honoured.contains(&name) {
                continue;
            }
            let mut moved = false;
            for &kind in kinds {
                if !self.server.cfg.faulty(kind) {
                    continue;
                }
                let epoch = self.server.epoch(kind);
                if epoch > self.seen[kind] {
                    self.seen[kind] = epoch;
                    moved = true;
                }
            }
            if moved {
                return Some(kinds[0]);
            }
        }
        None
    }
}

/// `notifications/cancelled` naming a request: its `requestId`.
pub fn cancelled_request(msg: &Value) -> Option<&Value> {
    (msg.get("method").and_then(Value::as_str) == Some("notifications/cancelled"))
        .then(|| msg.pointer("/params/requestId"))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Knobs, ServerConfig};

    fn server(extra: impl FnOnce(&mut Knobs)) -> Arc<VirtualServer> {
        let mut k = Knobs {
            scenario: Some("grow".into()),
            protocol: Some("2026-07-28".into()),
            notify: Some(true),
            ..Knobs::default()
        };
        extra(&mut k);
        Arc::new(VirtualServer::new(ServerConfig::resolve(&k, "s").unwrap()))
    }

    #[tokio::test]
    async fn acknowledges_first_then_announces_changes_with_the_id() {
        let s = server(|k| k.after_seconds = Some(1));
        let params = json!({"notifications": {"toolsListChanged": true, "bogus": true}});
        let mut sub = Subscription::open(s, json!(7), Some(&params));
        let Some(Message::Json(ack)) = sub.next().await else {
            panic!("no ack")
        };
        assert_eq!(ack["method"], ACKNOWLEDGED);
        assert_eq!(ack["params"]["_meta"][META_SUBSCRIPTION_ID], 7);
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true})
        );
        let next = tokio::time::timeout(Duration::from_secs(5), sub.next()).await;
        let Ok(Some(Message::Json(n))) = next else {
            panic!("no notification")
        };
        assert_eq!(n["method"], "notifications/tools/list_changed");
        assert_eq!(n["params"]["_meta"][META_SUBSCRIPTION_ID], 7);
        assert_eq!(sub.completion()["result"]["resultType"], "complete");
    }

    #[tokio::test]
    async fn faults_skip_the_ack_or_cut_the_stream() {
        let s = server(|k| k.listen_fault = Some(ListenFault::Die));
        let mut sub = Subscription::open(s, json!(1), None);
        assert!(matches!(sub.next().await, Some(Message::Json(_))));
        assert!(matches!(sub.next().await, Some(Message::Die)));
        assert!(sub.next().await.is_none());
        let s = server(|k| {
            k.listen_fault = Some(ListenFault::NoAck);
            k.listen_close_after = Some(0);
        });
        let mut sub = Subscription::open(s, json!(1), None);
        let Some(Message::Json(first)) = sub.next().await else {
            panic!()
        };
        assert!(
            first.get("result").is_some(),
            "the completion, no ack: {first}"
        );
    }
}
