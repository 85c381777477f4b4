//! The message-channel core of the transports whose answers arrive on a
//! stream of their own (stdio's stdout, legacy SSE's event stream) rather
//! than in reply to the request: a reader task turns the stream into
//! [`Inbound`] items, the [`Channel`] sends our messages through a
//! transport's [`Link`] and sorts what comes back — our answer by its id,
//! notifications kept (bounded), server requests answered, garbage counted —
//! within the request's deadline. A transport only says how to send one
//! message and how to read the next.

use super::{
    idle, keep_notification, route, CloseInfo, Exchange, ExchangeError, Idle, Outgoing, Routed,
    SubscriptionPath, Transport,
};
use futures_util::future::BoxFuture;
use mcp_listing::{ExchangeFailure, TransportKind};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// Most items queued between a reader and its channel.
const QUEUED_ITEMS: usize = 256;

/// One thing a reader found on the stream.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A JSON value and the bytes it took on the wire.
    Message(Value, u64),
    /// A line or event that is not JSON.
    Defect,
    /// A message over the byte cap, not kept; `stream_over`: the reader
    /// stopped there (nothing more will come).
    TooLarge { stream_over: bool },
    /// The stream ended, with the reader's words for why (may be empty).
    Ended(String),
}

/// The reader's end: queues items, waiting while the channel holds
/// [`QUEUED_ITEMS`] items or its byte budget of messages.
pub(crate) struct InboundTx {
    tx: mpsc::Sender<Queued>,
    bytes: Arc<Semaphore>,
    budget: u32,
}

/// The channel's end.
pub(crate) struct InboundRx {
    rx: mpsc::Receiver<Queued>,
}

/// An item with the bytes of budget it holds until it is taken.
struct Queued {
    item: Inbound,
    _credit: Option<OwnedSemaphorePermit>,
}

/// A queue of at most [`QUEUED_ITEMS`] items holding messages of at most
/// `budget` bytes together (one message larger than that on its own).
/// Without the byte bound, a server that writes while nobody reads (between
/// polls of a kept session) could park hundreds of capped messages in
/// memory.
pub(crate) fn inbound(budget: u64) -> (InboundTx, InboundRx) {
    let budget = u32::try_from(budget.max(1)).unwrap_or(u32::MAX);
    let (tx, rx) = mpsc::channel(QUEUED_ITEMS);
    let bytes = Arc::new(Semaphore::new(budget as usize));
    (InboundTx { tx, bytes, budget }, InboundRx { rx })
}

impl InboundTx {
    /// Queue `item` once there is room; `false` when the channel is gone.
    pub async fn send(&self, item: Inbound) -> bool {
        let credit = match &item {
            Inbound::Message(_, n) => {
                // A message larger than the whole budget takes all of it.
                let want = u32::try_from(*n).unwrap_or(u32::MAX).clamp(1, self.budget);
                match self.bytes.clone().acquire_many_owned(want).await {
                    Ok(permit) => Some(permit),
                    Err(_) => return false,
                }
            }
            _ => None,
        };
        let queued = Queued {
            item,
            _credit: credit,
        };
        self.tx.send(queued).await.is_ok()
    }
}

impl InboundRx {
    async fn recv(&mut self) -> Option<Inbound> {
        self.rx.recv().await.map(|q| q.item)
    }

    fn try_recv(&mut self) -> Option<Inbound> {
        self.rx.try_recv().ok().map(|q| q.item)
    }
}

/// How a transport sends one message, and what it calls an ended stream.
pub(crate) trait Link: Send {
    /// What the stream's units are called in error messages.
    const UNIT: &'static str;

    /// The transport this link writes for.
    const KIND: TransportKind;

    /// How a `subscriptions/listen` travels (see [`Transport::subscriptions`]).
    const LISTEN: SubscriptionPath;

    /// Send one serialised JSON-RPC message.
    fn send(&mut self, body: Vec<u8>) -> impl Future<Output = Result<(), ExchangeError>> + Send;

    /// The error for a request on a stream that has ended: before anything
    /// was sent (`before_send`) or while waiting for the answer.
    fn ended(&mut self, why: &str, before_send: bool) -> ExchangeError;
}

/// Requests and idle reads over one message stream.
pub(crate) struct Channel<L> {
    pub link: L,
    inbound: InboundRx,
    /// `list_changed` notifications that arrived while no request was
    /// outstanding; at most `MAX_KEPT_NOTIFICATIONS`.
    idle: Vec<String>,
    /// Why the stream ended, once it has.
    ended: Option<String>,
    /// The byte cap of one message (reported when one exceeds it).
    limit: u64,
}

impl<L: Link> Channel<L> {
    pub fn new(link: L, inbound: InboundRx, limit: u64) -> Channel<L> {
        Channel {
            link,
            inbound,
            idle: Vec::new(),
            ended: None,
            limit,
        }
    }

    /// Send a request and wait for its answer until `timeout` has passed,
    /// answering server requests and keeping notifications meanwhile.
    pub async fn request(&mut self, req: Outgoing<'_>, timeout: Duration) -> Exchange {
        let started = Instant::now();
        let mut ex = Exchange::failed(ExchangeFailure::Timeout(timeout).into(), started);
        ex.notifications = std::mem::take(&mut self.idle);
        if let Some(why) = &self.ended {
            ex.outcome = Err(self.link.ended(why, true));
            return ex;
        }
        let deadline = tokio::time::Instant::from_std(started + timeout);
        ex.outcome = match tokio::time::timeout_at(deadline, self.link.send(req.body)).await {
            Err(_) => Err(ExchangeError::Failed(ExchangeFailure::Timeout(timeout))),
            Ok(Err(e)) => Err(e),
            Ok(Ok(())) => self.answer(req.id, deadline, timeout, &mut ex).await,
        };
        ex.duration = started.elapsed();
        ex
    }

    /// Read until the answer to `id`, the end of the stream or `deadline`.
    async fn answer(
        &mut self,
        id: i64,
        deadline: tokio::time::Instant,
        timeout: Duration,
        ex: &mut Exchange,
    ) -> Result<Value, ExchangeError> {
        loop {
            let item = match tokio::time::timeout_at(deadline, self.inbound.recv()).await {
                Err(_) => return Err(silence(timeout, ex.defects, L::UNIT)),
                Ok(None) => Inbound::Ended(String::new()),
                Ok(Some(item)) => item,
            };
            match item {
                Inbound::Message(value, bytes) => match route(value, id, ex) {
                    Routed::Answer(result) => {
                        ex.bytes = bytes;
                        return result;
                    }
                    Routed::Reply(answer) => {
                        match tokio::time::timeout_at(deadline, self.link.send(answer)).await {
                            Err(_) => {
                                return Err(ExchangeError::Failed(ExchangeFailure::Timeout(
                                    timeout,
                                )))
                            }
                            Ok(sent) => sent?,
                        }
                    }
                    Routed::Recorded => {}
                },
                Inbound::Defect => ex.defects += 1,
                Inbound::TooLarge { stream_over } => {
                    ex.bytes = self.limit;
                    if stream_over {
                        self.ended = Some("a message exceeded the size limit".into());
                    }
                    return Err(ExchangeError::Failed(ExchangeFailure::TooLarge {
                        limit: self.limit,
                    }));
                }
                Inbound::Ended(why) => {
                    let e = self.link.ended(&why, false);
                    self.ended = Some(why);
                    return Err(e);
                }
            }
        }
    }

    /// Notifications that arrived while no request was outstanding.
    pub fn drain_notifications(&mut self) -> Vec<String> {
        while let Some(item) = self.inbound.try_recv() {
            match item {
                Inbound::Message(v, _) => {
                    if let Idle::Notification(method) = idle(v) {
                        keep_notification(&mut self.idle, method);
                    }
                }
                Inbound::Ended(why) => self.ended = Some(why),
                Inbound::Defect | Inbound::TooLarge { .. } => {}
            }
        }
        std::mem::take(&mut self.idle)
    }

    /// Wait for the next notification between requests (watch mode),
    /// answering server requests meanwhile. None once the stream is over.
    pub async fn next_notification(&mut self) -> Option<String> {
        if !self.idle.is_empty() {
            return Some(self.idle.remove(0));
        }
        if self.ended.is_some() {
            return None;
        }
        loop {
            match self.inbound.recv().await? {
                Inbound::Message(v, _) => match idle(v) {
                    Idle::Notification(method) => return Some(method),
                    Idle::Reply(answer) => self.link.send(answer).await.ok()?,
                    Idle::Nothing => {}
                },
                Inbound::Ended(why) => {
                    self.ended = Some(why);
                    return None;
                }
                Inbound::TooLarge { stream_over: true } => {
                    self.ended = Some("a message exceeded the size limit".into());
                    return None;
                }
                Inbound::TooLarge { stream_over: false } | Inbound::Defect => {}
            }
        }
    }
}

/// No answer by the deadline. Requests are sequential: garbage sent while
/// ours was outstanding was most likely our answer, broken.
fn silence(timeout: Duration, defects: u32, unit: &str) -> ExchangeError {
    if defects > 0 {
        ExchangeError::Failed(ExchangeFailure::Malformed(format!(
            "no answer within {timeout:?}; the server sent {defects} {unit}(s) that are not JSON-RPC"
        )))
    } else {
        ExchangeError::Failed(ExchangeFailure::Timeout(timeout))
    }
}

/// A transport that is one [`Channel`] and a way to close: its requests,
/// notifications and idle reads are the channel's, so the [`Transport`]
/// methods are written once, here.
pub(crate) trait OverChannel: Send {
    type Link: Link;

    fn channel(&mut self) -> &mut Channel<Self::Link>;

    /// See [`Transport::set_protocol_version`].
    fn protocol_version(&mut self, _version: Option<&str>) {}

    /// See [`Transport::close`].
    fn shut(self: Box<Self>) -> BoxFuture<'static, CloseInfo>;
}

impl<T: OverChannel> Transport for T {
    fn kind(&self) -> TransportKind {
        T::Link::KIND
    }

    fn request<'a>(&'a mut self, req: Outgoing<'a>, timeout: Duration) -> BoxFuture<'a, Exchange> {
        Box::pin(self.channel().request(req, timeout))
    }

    fn notify<'a>(
        &'a mut self,
        _method: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), ExchangeError>> {
        Box::pin(self.channel().link.send(body))
    }

    fn drain_notifications(&mut self) -> Vec<String> {
        self.channel().drain_notifications()
    }

    fn next_notification(&mut self) -> BoxFuture<'_, Option<String>> {
        Box::pin(self.channel().next_notification())
    }

    fn subscriptions(&self) -> SubscriptionPath {
        T::Link::LISTEN
    }

    fn set_protocol_version(&mut self, version: &str, _modern: bool) {
        self.protocol_version(Some(version));
    }

    fn clear_protocol_version(&mut self) {
        self.protocol_version(None);
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, CloseInfo> {
        self.shut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A link that records what it sends.
    struct Recording(Vec<Vec<u8>>);

    impl Link for Recording {
        const UNIT: &'static str = "line";
        const KIND: TransportKind = TransportKind::Stdio;
        const LISTEN: SubscriptionPath = SubscriptionPath::InBand;

        async fn send(&mut self, body: Vec<u8>) -> Result<(), ExchangeError> {
            self.0.push(body);
            Ok(())
        }

        fn ended(&mut self, why: &str, _: bool) -> ExchangeError {
            ExchangeError::transport(format!("ended: {why}"))
        }
    }

    fn message(v: Value) -> Inbound {
        let n = v.to_string().len() as u64;
        Inbound::Message(v, n)
    }

    fn outgoing(id: i64) -> Outgoing<'static> {
        Outgoing {
            id,
            method: "tools/list",
            body: b"{}".to_vec(),
        }
    }

    #[tokio::test]
    async fn the_answer_is_found_among_pings_notifications_and_garbage() {
        let (tx, rx) = inbound(1 << 20);
        let mut ch = Channel::new(Recording(Vec::new()), rx, 1 << 20);
        tx.send(message(
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        ))
        .await;
        tx.send(message(
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ))
        .await;
        tx.send(Inbound::Defect).await;
        tx.send(message(json!({"jsonrpc": "2.0", "id": 6, "result": {}})))
            .await;
        tx.send(message(
            json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}),
        ))
        .await;
        let ex = ch.request(outgoing(7), Duration::from_secs(5)).await;
        assert_eq!(ex.outcome.unwrap(), json!({"tools": []}));
        assert_eq!(ex.server_requests, 1);
        assert_eq!(ex.defects, 1);
        assert_eq!(ex.notifications, ["notifications/tools/list_changed"]);
        // Our request, then the answer to the server's ping.
        assert_eq!(ch.link.0.len(), 2);
        let pong: Value = serde_json::from_slice(&ch.link.0[1]).unwrap();
        assert_eq!(pong["id"], 9);
    }

    #[tokio::test(start_paused = true)]
    async fn garbage_then_silence_is_malformed_and_silence_a_timeout() {
        let (tx, rx) = inbound(1 << 20);
        let mut ch = Channel::new(Recording(Vec::new()), rx, 1 << 20);
        let ex = ch.request(outgoing(1), Duration::from_secs(2)).await;
        assert!(matches!(
            ex.outcome,
            Err(ExchangeError::Failed(ExchangeFailure::Timeout(_)))
        ));
        tx.send(Inbound::Defect).await;
        let ex = ch.request(outgoing(2), Duration::from_secs(2)).await;
        assert!(matches!(
            ex.outcome,
            Err(ExchangeError::Failed(ExchangeFailure::Malformed(_)))
        ));
    }

    #[tokio::test]
    async fn an_ended_stream_fails_this_request_and_the_next_before_sending() {
        let (tx, rx) = inbound(1 << 20);
        let mut ch = Channel::new(Recording(Vec::new()), rx, 1 << 20);
        tx.send(Inbound::TooLarge { stream_over: true }).await;
        let ex = ch.request(outgoing(1), Duration::from_secs(5)).await;
        assert!(matches!(
            ex.outcome,
            Err(ExchangeError::Failed(ExchangeFailure::TooLarge { .. }))
        ));
        let ex = ch.request(outgoing(2), Duration::from_secs(5)).await;
        assert!(matches!(
            ex.outcome,
            Err(ExchangeError::Failed(ExchangeFailure::Transport { .. }))
        ));
        assert_eq!(ch.link.0.len(), 1, "nothing sent on an ended stream");
        assert_eq!(ch.next_notification().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_queue_holds_at_most_its_byte_budget() {
        let (tx, mut rx) = inbound(100);
        assert!(tx.send(Inbound::Message(Value::Null, 60)).await);
        // 60 of 100 bytes are queued: 60 more wait until that one is taken
        // (the paused clock runs out the timeout only if nothing can move).
        let more = tokio::time::timeout(
            Duration::from_secs(1),
            tx.send(Inbound::Message(Value::Null, 60)),
        )
        .await;
        assert!(more.is_err(), "a second message fit in the budget");
        assert!(rx.recv().await.is_some());
        assert!(tx.send(Inbound::Message(Value::Null, 60)).await);
        assert!(rx.recv().await.is_some());
        // A message over the whole budget still passes, alone.
        assert!(tx.send(Inbound::Message(Value::Null, 1_000)).await);
        assert!(rx.recv().await.is_some());
    }
}
