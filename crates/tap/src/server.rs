//! The tap's listener: HTTP/1.1 (keep-alive, chunked) on hyper, with TLS
//! when configured, at most `max_connections` clients at once (past that
//! the listener stops accepting and new connections wait in the kernel's
//! backlog), a deadline for each request head (and TLS handshake), and a
//! bound on its size.

use crate::event::Tee;
use crate::forward::{Forwarder, Via};
use crate::settings::{ListenerTls, TapError, TapLimits, TapSettings};
use crate::stats::TapStats;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

/// A transparent reverse proxy for one upstream MCP endpoint.
pub struct Tap {
    forwarder: Arc<Forwarder>,
    listener_tls: Option<Arc<dyn ListenerTls>>,
    limits: TapLimits,
    http: http1::Builder,
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
        let limits = settings.limits.clone();
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .max_header_size(limits.max_head_bytes)
            // The upstream's `Date` (or none) passes as it is.
            .auto_date_header(false);
        if limits.max_head_bytes > DEFAULT_MAX_BUF {
            http.max_buf_size(limits.max_head_bytes);
        }
        Ok(Tap {
            forwarder,
            listener_tls: settings.listener_tls,
            limits,
            http,
        })
    }

    /// Serve clients on `listener` until `shutdown` completes; then take no
    /// new connection, let exchanges in progress finish for
    /// `shutdown_grace`, and close what is left. Accept errors (out of file
    /// descriptors, say) are waited out, never the end of the tap.
    pub async fn serve(&self, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        let slots = Arc::new(Semaphore::new(self.limits.max_connections));
        let (phase, _) = watch::channel(Phase::Serving);
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = accept(&listener, &slots) => accepted,
            };
            let Some((stream, slot)) = accepted else {
                continue;
            };
            let connection = self.connection(stream, phase.subscribe());
            tokio::spawn(async move {
                connection.await;
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

    /// One client connection, TLS first when configured.
    fn connection(
        &self,
        stream: TcpStream,
        phase: watch::Receiver<Phase>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let forwarder = self.forwarder.clone();
        let http = self.http.clone();
        let tls = self.listener_tls.as_ref().map(|t| t.server_config());
        let handshake_timeout = self.limits.header_read_timeout;
        async move {
            // Both sides: small SSE writes must not wait for an ACK.
            let _ = stream.set_nodelay(true);
            match tls {
                None => serve_http(http, stream, forwarder, Via { tls: false }, phase).await,
                Some(config) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(config);
                    let handshake = acceptor.accept(stream);
                    if let Ok(Ok(stream)) = tokio::time::timeout(handshake_timeout, handshake).await
                    {
                        serve_http(http, stream, forwarder, Via { tls: true }, phase).await;
                    }
                }
            }
        }
    }
}

/// hyper's own bound on its read buffer (about 400 KB).
const DEFAULT_MAX_BUF: usize = 400 * 1024;

/// The next connection once a slot is free; `None` after an accept error
/// (waited out briefly so a lack of descriptors does not spin).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> Option<(TcpStream, tokio::sync::OwnedSemaphorePermit)> {
    // The semaphore is never closed, so this only waits.
    let slot = slots.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, _)) => Some((stream, slot)),
        Err(e) => {
            tracing::debug!(error = %e, "tap: accept failed");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}

async fn serve_http<I>(
    http: http1::Builder,
    io: I,
    forwarder: Arc<Forwarder>,
    via: Via,
    mut phase: watch::Receiver<Phase>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| forwarder.clone().handle(via, req));
    let connection = http.serve_connection(TokioIo::new(io), service);
    let mut connection = std::pin::pin!(connection);
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            changed = phase.changed() => {
                let now = if changed.is_ok() { *phase.borrow() } else { Phase::Closing };
                match now {
                    Phase::Serving => {}
                    Phase::Draining => connection.as_mut().graceful_shutdown(),
                    Phase::Closing => return,
                }
            }
        }
    }
}
