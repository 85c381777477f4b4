//! Our HTTP client: hyper with a connector that sets TCP_QUICKACK before
//! every read. Servers that answer with an SSE stream write a priming event
//! and then the data as two small writes; with Nagle on their side and
//! delayed ACKs on ours, each response waits ~40 ms for our ACK. That delay
//! is ours, not the server's, so we must not cause it: acknowledging at
//! once makes a 1,000-page walk take milliseconds per page instead of ~27 s
//! (docs/performance.md has the numbers).

use super::scope::{BoundScope, NamedBy};
use super::ExchangeError;
use bytes::Bytes;
use futures_util::Stream;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyDataStream, BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_listing::ExchangeFailure;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpStream;

/// http and https over our shared TLS settings, every read re-arming
/// TCP_QUICKACK: what our HTTP client connects with, and what anything else
/// of ours that talks HTTP to a server (the tap) should connect with.
pub type Connector = hyper_rustls::HttpsConnector<QuickAckConnector>;

/// The [`Connector`] for this CA file and verification mode (TLS settings
/// shared, see `tls.rs`), with TCP_NODELAY and `connect_timeout`.
pub fn connector(
    connect_timeout: Duration,
    ca_file: Option<&Path>,
    insecure_skip_verify: bool,
) -> Result<Connector, ExchangeError> {
    let tls = super::tls::client_config(ca_file, insecure_skip_verify)?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(connect_timeout));
    // http and https, HTTP/1.1 only (no ALPN): what the connector
    // builder's `https_or_http().enable_http1()` makes, but over the
    // shared TLS settings instead of a copy.
    Ok(hyper_rustls::HttpsConnector::from((
        QuickAckConnector { http },
        tls,
    )))
}

/// A cheap-to-clone HTTP/1.1 client with per-target TLS and default headers.
#[derive(Clone)]
pub struct HttpClient {
    client: Client<Connector, Full<Bytes>>,
    default_headers: Arc<HeaderMap>,
    max_redirects: usize,
    /// Every URL a request goes to (redirects included) must be in it.
    scope: Option<Arc<BoundScope>>,
}

/// A response whose body has not been read yet.
pub struct HttpResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: Incoming,
}

impl HttpResponse {
    /// The next chunk of the body, or None at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, ExchangeError> {
        loop {
            match self.body.frame().await {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(ExchangeError::transport(format!("reading the body: {e}")))
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes, hyper::Error>> + Send {
        BodyDataStream::new(self.body)
    }

    pub fn content_type(&self) -> String {
        self.headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What this answer's status means when it is not a success (one
    /// reading for every caller, `Retry-After` included).
    pub fn failure(&self) -> mcp_listing::ExchangeFailure {
        let retry_after = self.headers.get(http::header::RETRY_AFTER);
        mcp_listing::ExchangeFailure::from_http_status(
            self.status,
            retry_after.map(HeaderValue::as_bytes),
            std::time::SystemTime::now(),
        )
    }
}

/// TLS and connection settings.
pub struct ClientSettings<'a> {
    pub default_headers: HeaderMap,
    pub connect_timeout: Duration,
    pub ca_file: Option<&'a Path>,
    pub insecure_skip_verify: bool,
    pub max_redirects: usize,
}

impl HttpClient {
    pub fn new(settings: ClientSettings<'_>) -> Result<HttpClient, ExchangeError> {
        let connector = connector(
            settings.connect_timeout,
            settings.ca_file,
            settings.insecure_skip_verify,
        )?;
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(4)
            .build(connector);
        Ok(HttpClient {
            client,
            default_headers: Arc::new(settings.default_headers),
            max_redirects: settings.max_redirects,
            scope: None,
        })
    }

    /// This client, sending nowhere outside `scope`: a URL outside it is
    /// refused before anything is sent (docs/security.md).
    pub fn scoped(mut self, scope: BoundScope) -> HttpClient {
        self.scope = Some(Arc::new(scope));
        self
    }

    /// Whether `url` may get our requests; `named_by` says who named it.
    pub fn check(&self, url: &url::Url, named_by: NamedBy) -> Result<(), ExchangeError> {
        match &self.scope {
            Some(scope) if !scope.admits(url) => Err(ExchangeError::NotAllowed { named_by }),
            _ => Ok(()),
        }
    }

    /// Send a request, following at most `max_redirects` same-origin
    /// redirects. Cross-origin redirects are refused, and so is every URL
    /// outside the client's scope: our credentials must not follow them.
    pub async fn send(
        &self,
        method: Method,
        url: &url::Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<HttpResponse, ExchangeError> {
        let mut out = Outgoing {
            method,
            url: url.clone(),
            headers,
            body,
            body_dropped: false,
        };
        let mut named_by = NamedBy::Request;
        for _ in 0..=self.max_redirects {
            self.check(&out.url, named_by)?;
            named_by = NamedBy::Redirect;
            let resp = self
                .client
                .request(self.build(&out)?)
                .await
                .map_err(|e| ExchangeError::transport(describe_client_error(&e)))?;
            let (parts, incoming) = resp.into_parts();
            match redirect_target(&out.url, &parts)? {
                Some(next) => out.redirect(parts.status, next),
                None => {
                    return Ok(HttpResponse {
                        status: parts.status,
                        headers: parts.headers,
                        body: incoming,
                    })
                }
            }
        }
        Err(ExchangeError::transport(format!(
            "more than {} redirects",
            self.max_redirects
        )))
    }

    /// The request with the client's default headers (not those that
    /// describe a body a redirect dropped), its own, and our User-Agent.
    fn build(&self, out: &Outgoing) -> Result<Request<Full<Bytes>>, ExchangeError> {
        let mut req = Request::builder()
            .method(out.method.clone())
            .uri(out.url.as_str())
            .body(Full::new(out.body.clone()))
            .map_err(|e| ExchangeError::transport(format!("building the request: {e}")))?;
        let h = req.headers_mut();
        for (k, v) in self.default_headers.iter() {
            if !(out.body_dropped && BODY_HEADERS.contains(k)) {
                h.insert(k, v.clone());
            }
        }
        for (k, v) in out.headers.iter() {
            h.insert(k, v.clone());
        }
        h.insert(
            http::header::USER_AGENT,
            HeaderValue::from_static(concat!("mcp-exporter/", env!("CARGO_PKG_VERSION"))),
        );
        Ok(req)
    }
}

/// A request as it goes out now: a redirect may change each part.
struct Outgoing {
    method: Method,
    url: url::Url,
    headers: HeaderMap,
    body: Bytes,
    /// A redirect turned the request into a GET without its body.
    body_dropped: bool,
}

impl Outgoing {
    /// Follow a redirect to `next`: 301/302/303 turn a POST into a GET, as
    /// browsers do; 307/308 keep it.
    fn redirect(&mut self, status: StatusCode, next: url::Url) {
        if matches!(status.as_u16(), 301..=303) && self.method != Method::GET {
            self.method = Method::GET;
            self.body = Bytes::new();
            // The body is gone, so are the headers that describe it.
            for name in BODY_HEADERS {
                self.headers.remove(name);
            }
            self.body_dropped = true;
        }
        self.url = next;
    }
}

/// Where a redirect answer sends us, resolved against `url`: `None` when
/// the answer is not a redirect or has no `Location` (it is the response);
/// an error for an invalid URL or another origin.
fn redirect_target(
    url: &url::Url,
    parts: &http::response::Parts,
) -> Result<Option<url::Url>, ExchangeError> {
    if !parts.status.is_redirection() {
        return Ok(None);
    }
    let Some(location) = parts
        .headers
        .get(http::header::LOCATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    let next = url
        .join(location)
        .map_err(|_| ExchangeError::transport("redirect to an invalid URL"))?;
    if next.origin() != url.origin() {
        return Err(ExchangeError::Failed(ExchangeFailure::Transport {
            message: "refused a redirect to another origin".into(),
            http_status: Some(parts.status.as_u16()),
        }));
    }
    Ok(Some(next))
}

/// Headers describing a request body (RFC 9110 §15.4: dropped when a
/// redirect turns the request into a GET).
const BODY_HEADERS: [http::header::HeaderName; 5] = [
    http::header::CONTENT_TYPE,
    http::header::CONTENT_LENGTH,
    http::header::CONTENT_ENCODING,
    http::header::CONTENT_LANGUAGE,
    http::header::CONTENT_LOCATION,
];

/// hyper's errors print causes but never the URL; keep the chain short.
fn describe_client_error(e: &hyper_util::client::legacy::Error) -> String {
    let mut msg = if e.is_connect() {
        "connection failed".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    let mut last = None;
    while let Some(s) = source {
        last = Some(s.to_string());
        source = s.source();
    }
    if let Some(l) = last {
        msg.push_str(": ");
        msg.push_str(&l);
    }
    msg
}

/// Plain TCP connections whose reads re-arm TCP_QUICKACK.
#[derive(Clone)]
pub struct QuickAckConnector {
    http: HttpConnector,
}

impl tower_service::Service<http::Uri> for QuickAckConnector {
    type Response = QuickAck;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<QuickAck, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let fut = self.http.call(uri);
        Box::pin(async move {
            let io = fut.await?;
            // Never armed yet: the first read arms.
            Ok(QuickAck { io, wrote: true })
        })
    }
}

pub struct QuickAck {
    io: TokioIo<TcpStream>,
    /// Bytes were written since quick-ack mode was last armed (or it never
    /// was): the next read must arm it again.
    wrote: bool,
}

impl QuickAck {
    /// Arm quick-ack mode if a write may have left it. Linux leaves it
    /// (enters "ping-pong" mode, where ACKs wait to ride on the next data)
    /// only when this side sends data soon after receiving; reading alone
    /// never does. So arming once after each write is enough — a read that
    /// waits again without having written (a stream's next event, a kept
    /// connection's idle check) needs no system call.
    fn arm_if_written(&mut self) {
        if std::mem::take(&mut self.wrote) {
            self.arm();
        }
    }

    #[cfg(target_os = "linux")]
    fn arm(&self) {
        use std::os::fd::AsRawFd;
        let fd = self.io.inner().as_raw_fd();
        let one: libc::c_int = 1;
        // SAFETY: setsockopt on a socket we own, with a pointer to a live
        // c_int and its size. Failure only means a delayed ACK.
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_QUICKACK,
                &one as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn arm(&self) {}

    /// Note a write's outcome: any byte sent may leave quick-ack mode.
    fn wrote<T>(&mut self, written: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        if matches!(written, Poll::Ready(Ok(_))) {
            self.wrote = true;
        }
        written
    }
}

impl hyper::rt::Read for QuickAck {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        // Before the read that may wait for the answer: whatever arrives
        // next is acknowledged at once.
        let this = self.get_mut();
        this.arm_if_written();
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for QuickAck {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        this.wrote(written)
    }
    /// A head and its body go out in one system call (and one segment).
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.wrote(written)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl Connection for QuickAck {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}
