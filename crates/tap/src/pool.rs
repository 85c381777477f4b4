//! Connections to the upstream: made with the wire crate's connector (its
//! shared TLS settings, TCP_NODELAY, TCP_QUICKACK re-armed before every
//! read), and kept for reuse when an exchange leaves one clean. A kept
//! connection the upstream has closed meanwhile is noticed before use.

use crate::event::UpstreamFailure;
use crate::peer::Peer;
use http::Uri;
use hyper_util::rt::TokioIo;
use mcp_wire::transport::http_client::Connector;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tower_service::Service;

pub(crate) type UpstreamIo = TokioIo<<Connector as Service<Uri>>::Response>;
pub(crate) type Upstream = Peer<UpstreamIo>;

/// How long a kept connection may wait for its next request. Servers close
/// theirs after a few seconds (Node's default is 5 s); past that, reuse
/// mostly meets a closed connection.
const IDLE_FOR: Duration = Duration::from_secs(4);
/// A connection kept longer than this is checked (a read that must find
/// nothing) before reuse; a younger one has had no time to be closed by a
/// server's idle timeout, and is taken without the extra system call.
const CHECK_AFTER: Duration = Duration::from_millis(500);

pub(crate) struct Pool {
    connector: Connector,
    /// The upstream's origin: the one address the connector is given.
    origin: Uri,
    connect_timeout: Duration,
    idle: Mutex<Vec<(Upstream, Instant)>>,
    max_idle: usize,
}

impl Pool {
    pub(crate) fn new(
        connector: Connector,
        origin: Uri,
        connect_timeout: Duration,
        max_idle: usize,
    ) -> Pool {
        Pool {
            connector,
            origin,
            connect_timeout,
            idle: Mutex::new(Vec::new()),
            max_idle,
        }
    }

    /// A connection: the most recently kept one still open, or a new one.
    /// The flag says whether it was kept (and so may turn out closed).
    pub(crate) async fn checkout(&self) -> Result<(Upstream, bool), UpstreamFailure> {
        if let Some(conn) = self.kept() {
            return Ok((conn, true));
        }
        self.connect().await.map(|conn| (conn, false))
    }

    fn kept(&self) -> Option<Upstream> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        idle.retain(|(_, since)| now.duration_since(*since) < IDLE_FOR);
        while let Some((mut conn, since)) = idle.pop() {
            if now.duration_since(since) < CHECK_AFTER || conn.idle_and_open() {
                return Some(conn);
            }
        }
        None
    }

    /// A new connection; TCP and TLS together within twice the connect
    /// timeout (the connector bounds TCP alone).
    pub(crate) async fn connect(&self) -> Result<Upstream, UpstreamFailure> {
        let mut connector = self.connector.clone();
        let connecting = connector.call(self.origin.clone());
        match tokio::time::timeout(self.connect_timeout * 2, connecting).await {
            Err(_) => Err(UpstreamFailure::Connect),
            Ok(Ok(io)) => Ok(Peer::new(TokioIo::new(io))),
            // The TCP connector wraps each of its failures (refused,
            // unreachable, DNS) in an error of its own; an io::Error is
            // the TLS layer's: a handshake broken off, a certificate refused.
            Ok(Err(e)) if e.is::<std::io::Error>() => Err(UpstreamFailure::Tls),
            Ok(Err(_)) => Err(UpstreamFailure::Connect),
        }
    }

    /// Keep a connection an exchange left clean.
    pub(crate) fn checkin(&self, conn: Upstream) {
        if !conn.buffered().is_empty() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() >= self.max_idle {
            idle.remove(0);
        }
        idle.push((conn, Instant::now()));
    }
}
