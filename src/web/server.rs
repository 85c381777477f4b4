//! Our own HTTP server: the one place connections are accepted. Clients are
//! an attack surface, so every connection is bounded: a header-read
//! timeout (half-sent requests), an idle timeout (kept-alive connections
//! doing nothing), a connection limit well under the fd limit (polls keep
//! their fds), optional TLS and basic auth from `--web.config.file`.

use super::basic_auth::BasicAuth;
use crate::config::web::{WebConfigError, WebServerConfig};
use crate::listen_tls::TlsReloader;
use crate::telemetry::events::{AcceptFailed, ConnectionRefused};
use crate::telemetry::metrics::WebMetrics;
use axum::Router;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// A request's headers must arrive within this (and a TLS handshake too).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection with no request in flight and no bytes moving is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections at most, before the fd limit lowers it (see [`default_max_connections`]).
pub const MAX_CONNECTIONS: usize = 1024;

/// The connection limit: [`MAX_CONNECTIONS`], but never more than half the
/// process's open-file limit, so polls (sockets, child pipes, state files)
/// keep the other half whatever clients do.
pub fn default_max_connections() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the struct we pass.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    let soft = if ok { limit.rlim_cur } else { 1024 };
    let half = usize::try_from(soft / 2).unwrap_or(MAX_CONNECTIONS);
    MAX_CONNECTIONS.min(half).max(16)
}

#[derive(Debug, Clone)]
pub struct ServerSettings {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub web_config: WebServerConfig,
}

impl ServerSettings {
    pub fn new(web_config: WebServerConfig) -> ServerSettings {
        ServerSettings {
            header_read_timeout: HEADER_READ_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_connections: default_max_connections(),
            web_config,
        }
    }
}

/// What serving needs, prepared before the listener opens (a bad TLS file
/// fails the start, not the first connection).
pub struct Server {
    settings: ServerSettings,
    tls: Option<Arc<TlsReloader>>,
    auth: Option<Arc<BasicAuth>>,
    /// Accept failures, refused connections and TLS reloads are counted here.
    metrics: WebMetrics,
}

impl Server {
    pub fn new(settings: ServerSettings, metrics: WebMetrics) -> Result<Server, WebConfigError> {
        let tls = match &settings.web_config.tls {
            Some(t) => Some(Arc::new(TlsReloader::new(t.clone(), metrics.clone())?)),
            None => None,
        };
        let auth = BasicAuth::new(&settings.web_config.basic_auth_users).map(Arc::new);
        Ok(Server {
            settings,
            tls,
            auth,
            metrics,
        })
    }

    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Serve `app` on `listener` until `shutdown` resolves.
    pub async fn serve(
        self,
        listener: TcpListener,
        app: Router,
        shutdown: impl Future<Output = ()>,
    ) {
        let registry = Arc::new(LiveConnections::default());
        let started = Instant::now();
        tokio::pin!(shutdown);
        // Runs of failed accepts and of refused connections are logged once.
        let (mut failing, mut refusing) = (false, false);
        loop {
            let accepted = tokio::select! {
                _ = &mut shutdown => break,
                a = listener.accept() => a,
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    failing = false;
                    stream
                }
                Err(error) => {
                    // EMFILE/ENFILE and friends: wait, never spin or exit.
                    let repeat = std::mem::replace(&mut failing, true);
                    AcceptFailed {
                        error: &error,
                        repeat,
                    }
                    .emit(&self.metrics);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let limit = self.settings.max_connections;
            if registry.len() >= limit && !registry.evict_oldest_idle() {
                // Every connection is busy with a request: refuse this one.
                drop(stream);
                let repeat = std::mem::replace(&mut refusing, true);
                ConnectionRefused { limit, repeat }.emit(&self.metrics);
                continue;
            }
            refusing = false;
            let _ = stream.set_nodelay(true);
            let conn = registry.add(started);
            let ctx = ConnCtx {
                app: app.clone(),
                tls: self.tls.clone(),
                auth: self.auth.clone(),
                headers: Arc::new(self.settings.web_config.headers.clone()),
                header_read_timeout: self.settings.header_read_timeout,
                idle_timeout: self.settings.idle_timeout,
                started,
            };
            let registry = registry.clone();
            tokio::spawn(async move {
                let id = conn.id;
                serve_connection(stream, conn, ctx).await;
                registry.remove(id);
            });
        }
    }
}

#[derive(Clone)]
struct ConnCtx {
    app: Router,
    tls: Option<Arc<TlsReloader>>,
    auth: Option<Arc<BasicAuth>>,
    headers: Arc<Vec<(String, String)>>,
    header_read_timeout: Duration,
    idle_timeout: Duration,
    started: Instant,
}

/// One live connection, as the accept loop sees it.
struct Conn {
    id: u64,
    /// Milliseconds since the server started, at the last byte moved.
    last_activity_ms: AtomicU64,
    in_flight: AtomicUsize,
    close: Notify,
}

#[derive(Default)]
struct LiveConnections {
    next: AtomicU64,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl LiveConnections {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        match self.conns.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        }
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    fn add(&self, started: Instant) -> Arc<Conn> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            last_activity_ms: AtomicU64::new(millis_since(started)),
            in_flight: AtomicUsize::new(0),
            close: Notify::new(),
        });
        self.lock().insert(id, conn.clone());
        conn
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Close the connection idle the longest (no request in flight); false
    /// when every connection is busy.
    fn evict_oldest_idle(&self) -> bool {
        let mut conns = self.lock();
        let oldest = conns
            .values()
            .filter(|c| c.in_flight.load(Ordering::Relaxed) == 0)
            .min_by_key(|c| c.last_activity_ms.load(Ordering::Relaxed))
            .map(|c| c.id);
        match oldest.and_then(|id| conns.remove(&id)) {
            Some(conn) => {
                conn.close.notify_one();
                true
            }
            None => false,
        }
    }
}

fn millis_since(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

async fn serve_connection(stream: tokio::net::TcpStream, conn: Arc<Conn>, ctx: ConnCtx) {
    let io: Box<dyn Io> = match &ctx.tls {
        None => Box::new(stream),
        Some(tls) => {
            let acceptor = tokio_rustls::TlsAcceptor::from(tls.config());
            match tokio::time::timeout(ctx.header_read_timeout, acceptor.accept(stream)).await {
                Ok(Ok(s)) => Box::new(s),
                // A failed or slow handshake: nothing to answer.
                _ => return,
            }
        }
    };
    let io = Tracked {
        inner: io,
        conn: conn.clone(),
        started: ctx.started,
    };
    let service_conn = conn.clone();
    let service_ctx = ctx.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let conn = service_conn.clone();
        let ctx = service_ctx.clone();
        async move {
            let _flight = InFlight::start(&conn);
            Ok::<_, Infallible>(handle(req, &ctx).await)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(ctx.header_read_timeout)
        .max_buf_size(64 * 1024)
        .keep_alive(true);
    let served = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(served);
    let tick = (ctx.idle_timeout / 4).max(Duration::from_millis(100));
    loop {
        tokio::select! {
            _ = &mut served => return,
            _ = conn.close.notified() => return,
            _ = tokio::time::sleep(tick) => {
                let idle_ms = millis_since(ctx.started)
                    .saturating_sub(conn.last_activity_ms.load(Ordering::Relaxed));
                if conn.in_flight.load(Ordering::Relaxed) == 0
                    && u128::from(idle_ms) >= ctx.idle_timeout.as_millis()
                {
                    return;
                }
            }
        }
    }
}

async fn handle(req: Request<Incoming>, ctx: &ConnCtx) -> Response<axum::body::Body> {
    if let Some(auth) = &ctx.auth {
        let header = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let auth = auth.clone();
        // bcrypt is deliberately slow: off the async workers.
        let admitted = tokio::task::spawn_blocking(move || auth.admits(header.as_deref()))
            .await
            .unwrap_or(false);
        if !admitted {
            let mut resp = Response::new(axum::body::Body::from("Unauthorized\n"));
            *resp.status_mut() = StatusCode::UNAUTHORIZED;
            resp.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Basic"),
            );
            return resp;
        }
    }
    let mut app = ctx.app.clone();
    let mut resp = match tower_service::Service::call(&mut app, req).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    for (k, v) in ctx.headers.iter() {
        if let (Ok(k), Ok(v)) = (
            http::HeaderName::from_bytes(k.as_bytes()),
            http::HeaderValue::from_str(v),
        ) {
            resp.headers_mut().insert(k, v);
        }
    }
    resp
}

/// A request in flight on a connection: it is not idle meanwhile.
struct InFlight(Arc<Conn>);

impl InFlight {
    fn start(conn: &Arc<Conn>) -> InFlight {
        conn.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(conn.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Notes when bytes move, for the idle timeout.
struct Tracked {
    inner: Box<dyn Io>,
    conn: Arc<Conn>,
    started: Instant,
}

impl Tracked {
    fn touch(&self) {
        self.conn
            .last_activity_ms
            .store(millis_since(self.started), Ordering::Relaxed);
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
