//! Connections to the upstream: made with the wire crate's connector (its
//! shared TLS settings, TCP_NODELAY, TCP_QUICKACK re-armed before every
//! read), each with the write deadline, and kept for reuse only when an
//! exchange ended cleanly by the tap's own reading of it: the answer read
//! to its framed end with nothing more buffered, the request written whole,
//! neither side asking to close (the callers' part), and nothing arriving
//! since (checked again on every checkin and every reuse: a kept
//! connection that was closed, or that said anything while idle, is
//! dropped, never handed to the next client).

use crate::event::UpstreamFailure;
use crate::peer::{Peer, WriteDeadline};
use http::Uri;
use hyper_util::rt::TokioIo;
use mcp_wire::transport::http_client::Connector;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tower_service::Service;

pub(crate) type UpstreamIo = TokioIo<<Connector as Service<Uri>>::Response>;
/// Boxed: the connection's TLS state makes it large, and a kept
/// connection moves (pool, exchange, pool) with every request it serves.
pub(crate) type Upstream = Peer<Box<UpstreamIo>>;

/// How long a kept connection may wait for its next request. Servers close
/// theirs after a few seconds (Node's default is 5 s); past that, reuse
/// mostly meets a closed connection.
const IDLE_FOR: Duration = Duration::from_secs(4);

/// How the pool connects, and what its connections are held to.
pub(crate) struct PoolSettings {
    pub(crate) connect_timeout: Duration,
    /// An upstream's answer head must begin within this of the request's
    /// end, on every path that reads one.
    pub(crate) head_timeout: Duration,
    pub(crate) max_idle: usize,
    pub(crate) write_deadline: WriteDeadline,
}

pub(crate) struct Pool {
    connector: Connector,
    /// The upstream's origin: the one address the connector is given.
    origin: Uri,
    settings: PoolSettings,
    idle: Mutex<Vec<(Upstream, Instant)>>,
}

impl Pool {
    pub(crate) fn new(connector: Connector, origin: Uri, settings: PoolSettings) -> Pool {
        Pool {
            connector,
            origin,
            settings,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// How long an answer head may take (see [`PoolSettings::head_timeout`]).
    pub(crate) fn head_timeout(&self) -> Duration {
        self.settings.head_timeout
    }

    /// A connection: the most recently kept one still open and silent, or
    /// a new one. The flag says whether it was kept.
    pub(crate) async fn checkout(&self) -> Result<(Upstream, bool), UpstreamFailure> {
        if let Some(conn) = self.kept() {
            return Ok((conn, true));
        }
        self.connect().await.map(|conn| (conn, false))
    }

    fn kept(&self) -> Option<Upstream> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        expire(&mut idle);
        while let Some((mut conn, _)) = idle.pop() {
            // Every time: a connection kept for a moment may still have
            // been closed, or have had bytes arrive nobody asked for.
            if conn.idle_and_open() {
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
        match tokio::time::timeout(self.settings.connect_timeout * 2, connecting).await {
            Err(_) => Err(UpstreamFailure::Connect),
            Ok(Ok(io)) => Ok(Peer::new(Box::new(TokioIo::new(io)))
                .with_write_deadline(self.settings.write_deadline.clone())),
            // The TCP connector wraps each of its failures (refused,
            // unreachable, DNS) in an error of its own; an io::Error is
            // the TLS layer's: a handshake broken off, a certificate refused.
            Ok(Err(e)) if e.is::<std::io::Error>() => Err(UpstreamFailure::Tls),
            Ok(Err(_)) => Err(UpstreamFailure::Connect),
        }
    }

    /// Keep a connection whose exchange the caller saw end cleanly (see
    /// the module's note): only when nothing is left unread of it and it
    /// is still open.
    pub(crate) fn checkin(&self, mut conn: Upstream) {
        if !conn.idle_and_open() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        expire(&mut idle);
        if idle.len() >= self.settings.max_idle {
            idle.remove(0);
        }
        idle.push((conn, Instant::now()));
    }
}

/// Let go of the connections kept too long (their descriptors with them).
fn expire(idle: &mut Vec<(Upstream, Instant)>) {
    let now = Instant::now();
    idle.retain(|(_, since)| now.duration_since(*since) < IDLE_FOR);
}
