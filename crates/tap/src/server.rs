//! The tap's listener: HTTP/1.1 clients (kept alive, pipelined requests
//! taken in turn), TLS when configured, at most `max_connections` at once
//! (past that the listener stops accepting and new connections wait in the
//! kernel's backlog; counted), a deadline for each request head (and the
//! TLS handshake; it is also how long a kept-alive connection may idle), a
//! bound on a head's size, and a deadline on every write to a client.

use crate::answer;
use crate::event::{Cut, Tee};
use crate::forward::{After, Forwarder, Via};
use crate::http1::head::Request;
use crate::peer::{HeadRead, Peer, WriteDeadline};
use crate::settings::{ListenerTls, TapError, TapLimits, TapSettings};
use crate::stats::TapStats;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

/// A transparent reverse proxy for one upstream MCP endpoint.
pub struct Tap {
    forwarder: Arc<Forwarder>,
    listener_tls: Option<Arc<dyn ListenerTls>>,
    limits: TapLimits,
}

/// What connections are told as the tap stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Serving,
    /// Finish the exchange in progress, take no new request.
    Draining,
    /// The grace period is over: close now.
    Closing,
}

impl Tap {
    /// A tap for `settings.upstream`, telling `tee` what passes and
    /// counting in `stats`. Fails on settings that cannot work (a URL that
    /// is not http(s), credentials in it, an unreadable CA file).
    pub fn new(
        settings: TapSettings,
        tee: Arc<dyn Tee>,
        stats: Arc<TapStats>,
    ) -> Result<Tap, TapError> {
        settings.check()?;
        let forwarder = Arc::new(Forwarder::new(&settings, tee, stats)?);
        Ok(Tap {
            forwarder,
            listener_tls: settings.listener_tls,
            limits: settings.limits,
        })
    }

    /// Serve clients on `listener` until `shutdown` completes; then take no
    /// new connection, let exchanges in progress finish for
    /// `shutdown_grace`, and close what is left. Accept errors (out of file
    /// descriptors, say) are waited out, never the end of the tap.
    pub async fn serve(&self, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        let slots = Arc::new(Semaphore::new(self.limits.max_connections));
        let stats = self.forwarder.stats.clone();
        stats.set_max_connections(self.limits.max_connections);
        let (phase, _) = watch::channel(Phase::Serving);
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = accept(&listener, &slots, &stats) => accepted,
            };
            let Some((stream, peer, slot)) = accepted else {
                continue;
            };
            let connection = self.connection(stream, peer, phase.subscribe());
            let open = OpenConnection::new(stats.clone());
            tokio::spawn(async move {
                connection.await;
                drop(open);
                drop(slot);
            });
        }
        drop(listener);
        self.drain(&phase, &slots).await;
    }

    /// Ask every connection to finish, wait out the grace period, then
    /// close what is left and wait for it to go.
    async fn drain(&self, phase: &watch::Sender<Phase>, slots: &Arc<Semaphore>) {
        let all = u32::try_from(self.limits.max_connections).unwrap_or(u32::MAX);
        phase.send_replace(Phase::Draining);
        let idle = slots.acquire_many(all);
        if tokio::time::timeout(self.limits.shutdown_grace, idle)
            .await
            .is_ok()
        {
            return;
        }
        phase.send_replace(Phase::Closing);
        // Closing is immediate; the bound is only against a task that
        // never runs again.
        let _ = tokio::time::timeout(Duration::from_secs(5), slots.acquire_many(all)).await;
    }

    /// One client connection from `peer`, TLS first when configured.
    fn connection(
        &self,
        stream: TcpStream,
        peer: IpAddr,
        phase: watch::Receiver<Phase>,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        let forwarder = self.forwarder.clone();
        // Both sides: small SSE writes must not wait for an ACK.
        let _ = stream.set_nodelay(true);
        let peer = Some(peer);
        match self.listener_tls.as_ref().map(|t| t.server_config()) {
            None => Box::pin(serve_client(
                stream,
                forwarder,
                Via { tls: false, peer },
                phase,
            )),
            Some(config) => {
                let handshake_timeout = self.limits.header_read_timeout;
                Box::pin(async move {
                    let acceptor = tokio_rustls::TlsAcceptor::from(config);
                    let handshake = acceptor.accept(stream);
                    if let Ok(Ok(stream)) = tokio::time::timeout(handshake_timeout, handshake).await
                    {
                        serve_client(stream, forwarder, Via { tls: true, peer }, phase).await;
                    }
                })
            }
        }
    }
}

/// The next connection once a slot is free; `None` after an accept error
/// (waited out briefly so a lack of descriptors does not spin).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    stats: &TapStats,
) -> Option<(TcpStream, IpAddr, tokio::sync::OwnedSemaphorePermit)> {
    let slot = match slots.clone().try_acquire_owned() {
        Ok(slot) => slot,
        Err(_) => {
            stats.listener_was_full();
            // The semaphore is never closed, so this only waits.
            slots.clone().acquire_owned().await.ok()?
        }
    };
    match listener.accept().await {
        Ok((stream, from)) => Some((stream, from.ip(), slot)),
        Err(e) => {
            tracing::debug!(error = %e, "tap: accept failed");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}

/// Requests of one client connection, in turn, until it closes, a request
/// asks to, an exchange ends it, or the tap stops.
async fn serve_client<C>(
    io: C,
    forwarder: Arc<Forwarder>,
    via: Via,
    mut phase: watch::Receiver<Phase>,
) where
    C: AsyncRead + AsyncWrite + Unpin + Send,
{
    let limits = &forwarder.limits;
    let mut client = Peer::new(io).with_write_deadline(WriteDeadline {
        after: limits.write_timeout,
        stats: forwarder.stats.clone(),
        cut: Cut::ClientWrite,
    });
    // One deadline for every head this connection sends, moved later for
    // each: a later deadline only updates the timer in place, where a new
    // timer per request (the answer's wait being longer) would make the
    // runtime wake its own driver to re-arm — two system calls a request.
    let head_deadline = tokio::time::sleep(limits.header_read_timeout);
    tokio::pin!(head_deadline);
    loop {
        if *phase.borrow() != Phase::Serving {
            break;
        }
        head_deadline
            .as_mut()
            .reset(tokio::time::Instant::now() + limits.header_read_timeout);
        let read = tokio::select! {
            // In this order: the tap stopping takes no new request; a head
            // that is here wins over its deadline.
            biased;
            _ = phase.changed() => break,
            read = client.read_head::<Request>(limits.max_head_bytes) => Some(read),
            () = &mut head_deadline => None,
        };
        let started = Instant::now();
        let req = match read {
            Some(HeadRead::Head(req)) => req,
            Some(HeadRead::TooLarge) => {
                let _ = client.write(&answer::head_too_large()).await;
                break;
            }
            Some(HeadRead::Invalid) => {
                let _ = client.write(&answer::bad_request()).await;
                break;
            }
            Some(HeadRead::Closed | HeadRead::Broken) => return,
            None => {
                // A head begun and not finished; a quiet kept-alive
                // connection just ends.
                if !client.buffered().is_empty() {
                    forwarder.stats.cut(Cut::HeadTimeout);
                }
                return;
            }
        };
        // Pinned where it is made: the exchange's state is large, and
        // `select!` would otherwise move (copy) it in.
        let mut exchange = std::pin::pin!(forwarder.exchange(&mut client, via, req, started));
        let after = tokio::select! {
            after = &mut exchange => after,
            () = closing(&mut phase) => return,
        };
        if after == After::Close {
            break;
        }
    }
    client.shutdown().await;
}

/// Resolves once the tap's grace period is over.
async fn closing(phase: &mut watch::Receiver<Phase>) {
    while *phase.borrow() != Phase::Closing {
        if phase.changed().await.is_err() {
            return;
        }
    }
}

/// A client connection counted in `TapStats::connections` while it lasts.
struct OpenConnection(Arc<TapStats>);

impl OpenConnection {
    fn new(stats: Arc<TapStats>) -> OpenConnection {
        stats.connection_opened();
        OpenConnection(stats)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connection_closed();
    }
}
