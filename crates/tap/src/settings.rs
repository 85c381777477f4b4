//! What a tap is told: the one upstream it may ever contact, TLS on both
//! sides, and its bounds. The application builds these from its config or
//! flags; nothing here reads files but the upstream CA file (through the
//! wire crate's shared TLS settings).

use crate::apps::Apps;
use http::HeaderName;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One tap's settings.
#[derive(Clone)]
pub struct TapSettings {
    /// The upstream MCP endpoint: `http://` or `https://`, no userinfo.
    /// Its origin is the only place the tap ever connects to; request paths
    /// are forwarded unchanged to that origin (the tap mirrors its paths).
    pub upstream: url::Url,
    /// How the upstream's certificate is checked (`https://` upstreams).
    pub upstream_tls: UpstreamTls,
    /// TLS on the tap's listener; `None` serves plain HTTP.
    pub listener_tls: Option<Arc<dyn ListenerTls>>,
    /// The operator's client-identity request header (a gateway's
    /// `X-Client-Id`, say), handed to the observer as it arrives.
    pub client_header: Option<HeaderName>,
    /// The operator's apps, told by source address or User-Agent (the
    /// observer is given the same rules).
    pub apps: Apps,
    pub limits: TapLimits,
    /// Whose first-page list requests the tap answers with every page.
    pub merge: MergeSettings,
}

/// Merging, opt-in per client identity (issue 33): for a named client's
/// list request without a cursor, the tap walks the upstream itself — same
/// session, the client's own headers — with the walker's guards, and
/// answers with one page holding every item. A walk that is not complete
/// leaves the client page 1 as it came. What merging may spend is bounded
/// per tap whatever clients send: bytes (`max_bytes`, reused answers
/// within it), page requests of its own (`page_burst` and
/// `pages_per_second`), walks at once, and time.
#[derive(Debug, Clone)]
pub struct MergeSettings {
    pub clients: MergeClients,
    /// The walk's bounds (pages, items, per-page and whole-walk time);
    /// `modern` is taken from each request, not from here.
    pub walk: mcp_listing::WalkLimits,
    /// Most bytes of one upstream page read during a walk.
    pub max_page_bytes: usize,
    /// A merged answer larger than this is not sent: page 1 goes.
    pub max_merged_bytes: usize,
    /// Merged walks in progress at once, per tap; past it, page 1 passes.
    pub max_concurrent: usize,
    /// Bytes merging holds at once, per tap: pages being read (page 1 is
    /// charged four times `max_page_bytes` before it is asked for, later
    /// pages four times their bytes as they arrive), merges being built,
    /// answers kept for reuse and answers being written. Past it, page 1
    /// passes (`busy`).
    pub max_bytes: usize,
    /// How long a merged answer is reused for the same key (no
    /// `list_changed` since, within the pages' smallest `ttlMs`).
    pub reuse_for: Duration,
    /// Bytes of merged answers kept for reuse, at most (within
    /// `max_bytes`); the oldest go first.
    pub reuse_max_bytes: usize,
    /// Merged answers kept for reuse, at most.
    pub reuse_max_entries: usize,
    /// Request headers besides `Authorization`, `Proxy-Authorization`,
    /// `Cookie`, `X-Api-Key`, `Api-Key` and `X-Auth-Token` whose value
    /// can change an answer (a tenant header): reuse is keyed by them too.
    pub credential_headers: Vec<HeaderName>,
    /// Page requests of the tap's own (pages after the client's first)
    /// merging may send at once, per tap ...
    pub page_burst: u32,
    /// ... and per second after that: past it, page 1 goes (`throttled`).
    pub pages_per_second: u32,
}

/// Which clients are merged for, by identity (`identity::label` of the
/// name a client gives).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum MergeClients {
    #[default]
    Nobody,
    All,
    Named(Vec<String>),
}

impl MergeClients {
    pub fn includes(&self, label: &str) -> bool {
        match self {
            MergeClients::Nobody => false,
            MergeClients::All => true,
            MergeClients::Named(names) => names.iter().any(|n| n == label),
        }
    }
}

impl MergeSettings {
    /// A merged walk's bounds where nobody says otherwise: at most 100
    /// pages and 10,000 items, the walker's times and restarts (a merge
    /// never renews a session, so never restarts for one).
    pub const DEFAULT_WALK: mcp_listing::WalkLimits = mcp_listing::WalkLimits {
        max_pages: 100,
        max_items: 10_000,
        session_restarts: 0,
        ..mcp_listing::WalkLimits::DEFAULT
    };
    /// Default of [`MergeSettings::max_page_bytes`].
    pub const DEFAULT_MAX_PAGE_BYTES: usize = 4 << 20;
    /// Default of [`MergeSettings::max_merged_bytes`].
    pub const DEFAULT_MAX_MERGED_BYTES: usize = 8 << 20;
    /// Default of [`MergeSettings::page_burst`]: two walks of 100 pages.
    pub const DEFAULT_PAGE_BURST: u32 = 200;
    /// Default of [`MergeSettings::pages_per_second`].
    pub const DEFAULT_PAGES_PER_SECOND: u32 = 10;
    /// Default of [`MergeSettings::reuse_for`].
    pub const DEFAULT_REUSE_FOR: Duration = Duration::from_secs(30);

    /// Merging where nobody says otherwise: nobody merged for; the bounds
    /// above, 16 walks and 128 MiB at once per tap, answers reused within
    /// 32 MiB and 1,024 entries. The application's `taps:` defaults and
    /// `mcp-exporter tap`'s flags are these (a constant with a `Vec` in it
    /// cannot lend a field to another constant: hence the ones above).
    pub const DEFAULT: MergeSettings = MergeSettings {
        clients: MergeClients::Nobody,
        walk: MergeSettings::DEFAULT_WALK,
        max_page_bytes: MergeSettings::DEFAULT_MAX_PAGE_BYTES,
        max_merged_bytes: MergeSettings::DEFAULT_MAX_MERGED_BYTES,
        max_concurrent: 16,
        max_bytes: 128 << 20,
        reuse_for: MergeSettings::DEFAULT_REUSE_FOR,
        reuse_max_bytes: 32 << 20,
        reuse_max_entries: 1024,
        credential_headers: Vec::new(),
        page_burst: MergeSettings::DEFAULT_PAGE_BURST,
        pages_per_second: MergeSettings::DEFAULT_PAGES_PER_SECOND,
    };
}

impl Default for MergeSettings {
    fn default() -> Self {
        MergeSettings::DEFAULT
    }
}

/// How an `https://` upstream's certificate is checked.
#[derive(Debug, Clone, Default)]
pub struct UpstreamTls {
    /// PEM roots to trust besides the system's.
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate (tests, self-signed lab servers).
    pub insecure_skip_verify: bool,
}

/// TLS on the listener: the configuration for each new connection, so a
/// renewed certificate can be picked up without a restart (the
/// application's reloading TLS settings implement this).
pub trait ListenerTls: Send + Sync + 'static {
    fn server_config(&self) -> Arc<rustls::ServerConfig>;
}

/// A fixed configuration.
impl ListenerTls for Arc<rustls::ServerConfig> {
    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        self.clone()
    }
}

/// A tap's bounds. Every one is in bytes, a count or a time.
#[derive(Debug, Clone)]
pub struct TapLimits {
    /// Client connections served at once; past it the listener stops
    /// accepting (new connections wait in the kernel's backlog). Each may
    /// hold two descriptors (its own and an upstream connection): the
    /// application derives this from the open-file limit.
    pub max_connections: usize,
    /// A client must send a request head within this (also how long a
    /// kept-alive connection may idle between requests), and finish a TLS
    /// handshake within it.
    pub header_read_timeout: Duration,
    /// Largest request head accepted (request line and headers); past it
    /// the client gets 431.
    pub max_head_bytes: usize,
    /// Connecting to the upstream (TCP, then TLS).
    pub connect_timeout: Duration,
    /// The upstream's answer head must arrive within this, else 504. Bodies
    /// (an SSE stream) may then last as long as they last.
    pub upstream_head_timeout: Duration,
    /// Most bytes of one message copied for the observer; the message
    /// itself is forwarded whole.
    pub inspect_bytes: usize,
    /// A request body must arrive within this of its head, plus one
    /// second per 64 KiB received (a large body at a fair rate is never
    /// cut, a trickle always is); past it the client gets 408.
    pub body_timeout: Duration,
    /// A write to a client or the upstream may wait this long for the peer
    /// to take any of its bytes; a peer that stops reading is cut.
    pub write_timeout: Duration,
    /// Request bodies of known length up to 64 KiB are read whole before an
    /// upstream connection is taken (a client trickling its body holds no
    /// upstream connection); this many bytes of them at most, all clients
    /// together — past it a body is forwarded as it comes.
    pub buffered_body_bytes: usize,
    /// Idle upstream connections kept for reuse.
    pub upstream_idle_connections: usize,
    /// After shutdown is asked for, how long open exchanges (streams) may
    /// go on before they are cut.
    pub shutdown_grace: Duration,
}

impl TapLimits {
    /// A tap's bounds where nobody says otherwise. `inspect_bytes` is 4
    /// MiB, the wire client's page-size ballpark (larger list pages are
    /// rare and still forwarded). The application's `taps:` defaults and
    /// `mcp-exporter tap`'s flags are these.
    pub const DEFAULT: TapLimits = TapLimits {
        max_connections: 16_384,
        header_read_timeout: Duration::from_secs(30),
        max_head_bytes: 64 * 1024,
        connect_timeout: Duration::from_secs(10),
        upstream_head_timeout: Duration::from_secs(60),
        inspect_bytes: 4 << 20,
        body_timeout: Duration::from_secs(30),
        write_timeout: Duration::from_secs(30),
        buffered_body_bytes: 16 << 20,
        upstream_idle_connections: 64,
        shutdown_grace: Duration::from_secs(5),
    };
}

impl Default for TapLimits {
    fn default() -> Self {
        TapLimits::DEFAULT
    }
}

/// Why a tap cannot start (an HTTP tap's settings, a stdio tap's server).
/// Never holds a URL's userinfo or any other secret value: it names what
/// is wrong.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    #[error("the upstream URL must be http:// or https://")]
    UpstreamScheme,
    #[error("the upstream URL has no host")]
    UpstreamHost,
    #[error(
        "the upstream URL must not carry credentials (user or password); send them as headers"
    )]
    UpstreamUserinfo,
    #[error("upstream TLS: {0}")]
    UpstreamTls(String),
    #[error("the limit {0} must be above zero")]
    ZeroLimit(&'static str),
    #[error("the limit {0} must be above zero and at most a day")]
    BadDuration(&'static str),
    #[error("cannot start the server: {0}")]
    ServerStart(std::io::ErrorKind),
}

impl TapSettings {
    /// Settings for `upstream` with plain HTTP on the listener and default
    /// limits.
    pub fn new(upstream: url::Url) -> TapSettings {
        TapSettings {
            upstream,
            upstream_tls: UpstreamTls::default(),
            listener_tls: None,
            client_header: None,
            apps: Apps::default(),
            limits: TapLimits::default(),
            merge: MergeSettings::default(),
        }
    }

    pub(crate) fn check(&self) -> Result<(), TapError> {
        if !matches!(self.upstream.scheme(), "http" | "https") {
            return Err(TapError::UpstreamScheme);
        }
        if self.upstream.host_str().is_none_or(str::is_empty) {
            return Err(TapError::UpstreamHost);
        }
        if !self.upstream.username().is_empty() || self.upstream.password().is_some() {
            return Err(TapError::UpstreamUserinfo);
        }
        let l = &self.limits;
        let m = &self.merge;
        for (name, value) in [
            ("max_connections", l.max_connections),
            ("max_head_bytes", l.max_head_bytes),
            ("inspect_bytes", l.inspect_bytes),
            ("max_page_bytes", m.max_page_bytes),
            ("max_merged_bytes", m.max_merged_bytes),
            ("max_concurrent", m.max_concurrent),
            ("max_bytes", m.max_bytes),
        ] {
            if value == 0 {
                return Err(TapError::ZeroLimit(name));
            }
        }
        for (name, value) in [
            ("body_timeout", l.body_timeout),
            ("write_timeout", l.write_timeout),
        ] {
            // Deadlines are added to the clock: a day is past any use.
            if value.is_zero() || value > Duration::from_secs(86_400) {
                return Err(TapError::BadDuration(name));
            }
        }
        Ok(())
    }
}
