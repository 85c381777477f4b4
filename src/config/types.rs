//! The resolved configuration: every default merged, every value checked.
//! This is what the rest of the exporter reads; the YAML shape lives in
//! `raw.rs`.

use super::name_map::NameMap;
use super::schedule::Schedule;
use super::secret::{Secret, SecretSource};
use super::sources::SourceConfig;
pub use super::tls::TlsConfig;
use mcp_listing::{HttpMode, Kind, ProtocolVersion, WalkLimits};
use mcp_wire::secrets::SecretScrubber;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Longest accepted target or module name.
pub const MAX_NAME_LEN: usize = 128;

/// Longest duration the configuration and the command line accept (a year
/// and a day): every timeout, period, jitter and retention is below it, so
/// no arithmetic on one can overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// A duration as written (`30s`, `1m30s`, `500ms`), refused past
/// [`MAX_DURATION`]. The message never quotes the value.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("invalid duration: {e} (write e.g. 30s, 1m30s or 500ms)"))?;
    if d > MAX_DURATION {
        return Err(format!(
            "duration too long: at most {} (a year and a day)",
            humantime::format_duration(MAX_DURATION)
        ));
    }
    Ok(d)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub defaults: Defaults,
    /// In file order.
    pub targets: Vec<TargetConfig>,
    /// For `/probe?module=M&target=URL`, and what binds discovered targets.
    pub modules: BTreeMap<String, ProbeModule>,
    /// `discovery:` sources, in file order (an earlier source wins a name).
    pub discovery: Vec<SourceConfig>,
    pub tracing: TracingConfig,
    pub web: WebConfig,
    /// Every secret value this configuration knows (all targets, modules and
    /// tracing), read at load. Scrubbed from everything we keep.
    pub known_secrets: SecretScrubber,
}

impl Config {
    pub fn target(&self, name: &str) -> Option<&TargetConfig> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// The `global:` section with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub schedule: Schedule,
    /// Whole listing of one kind, restarts included.
    pub timeout: Duration,
    pub page_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_pages: u32,
    pub max_items: u64,
    pub max_response_bytes: u64,
    /// Upper bound of the random delay added to each scheduled poll.
    pub jitter: Duration,
    pub kinds: Vec<Kind>,
    /// Where baselines persist; None keeps them in memory only.
    pub state_dir: Option<PathBuf>,
    pub invalid_cursor_restarts: u32,
    /// Polls running at once, across all targets.
    pub concurrency: usize,
    /// Longest delay between retries of a failing target.
    pub backoff_max: Duration,
    pub invalid_cursor_probe: bool,
    pub watch_list_changed: bool,
    pub propagate_trace_context: bool,
    /// Bytes of a stdio server's stderr kept for error reports.
    pub stderr_tail_bytes: usize,
    /// `metrics: {detail: true}`: per-target histograms (docs/metrics.md).
    pub metrics_detail: bool,
    pub conformance: ConformanceConfig,
    /// How long the baselines of a target that left (a reload removed it,
    /// or its source no longer lists it) are kept, so one that comes back
    /// does not report its whole catalogue as new.
    pub baseline_retention: Duration,
}

/// Serve-mode conformance: `check`'s rules for a scheduled target, opt-in
/// and on their own slower schedule (a run lists every kind twice plus a
/// garbage and a repeated cursor, so never on every poll by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConformanceConfig {
    pub enabled: bool,
    /// At most one run per this long; a run happens right after the first
    /// scheduled poll that finds the last run at least this old.
    pub every: Duration,
}

impl Default for ConformanceConfig {
    fn default() -> Self {
        ConformanceConfig {
            enabled: false,
            every: default::CONFORMANCE_EVERY,
        }
    }
}

impl Defaults {
    pub fn limits(&self) -> Limits {
        Limits {
            timeout: self.timeout,
            page_timeout: self.page_timeout,
            connect_timeout: self.connect_timeout,
            max_pages: self.max_pages,
            max_items: self.max_items,
            max_response_bytes: self.max_response_bytes,
            invalid_cursor_restarts: self.invalid_cursor_restarts,
        }
    }
}

/// Default values of `global:`; docs/configuration.md quotes these.
pub mod default {
    use std::time::Duration;
    pub const EVERY: Duration = Duration::from_secs(60);
    pub const TIMEOUT: Duration = Duration::from_secs(60);
    pub const PAGE_TIMEOUT: Duration = Duration::from_secs(10);
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const MAX_PAGES: u32 = 1000;
    pub const MAX_ITEMS: u64 = 100_000;
    pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
    pub const JITTER: Duration = Duration::from_secs(5);
    pub const INVALID_CURSOR_RESTARTS: u32 = 1;
    pub const CONCURRENCY: usize = 8;
    pub const BACKOFF_MAX: Duration = Duration::from_secs(300);
    pub const INVALID_CURSOR_PROBE: bool = true;
    /// Per-target histograms are opt-in detail: they cost ~80 samples per target.
    pub const METRICS_DETAIL: bool = false;
    pub const WATCH_LIST_CHANGED: bool = false;
    pub const PROPAGATE_TRACE_CONTEXT: bool = true;
    pub const STDERR_TAIL_BYTES: usize = 8 * 1024;
    pub const MAX_REDIRECTS: usize = 5;
    pub const WEB_HISTORY: usize = 20;
    pub const CONFORMANCE_EVERY: Duration = Duration::from_secs(3600);
    /// The shortest accepted `conformance.every`.
    pub const CONFORMANCE_MIN_EVERY: Duration = Duration::from_secs(1);
    pub const BASELINE_RETENTION: Duration = Duration::from_secs(24 * 3600);
}

/// Bounds on one listing; see docs/guards.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub page_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_pages: u32,
    pub max_items: u64,
    pub max_response_bytes: u64,
    pub invalid_cursor_restarts: u32,
}

impl Limits {
    /// The walker's view of these limits. `modern` = protocol 2026-07-28 or later.
    pub fn walk_limits(&self, modern: bool) -> WalkLimits {
        WalkLimits {
            max_pages: self.max_pages,
            max_items: self.max_items,
            invalid_cursor_restarts: self.invalid_cursor_restarts,
            // One budget for both reasons the result set can move under a walk.
            list_changed_restarts: self.invalid_cursor_restarts,
            session_restarts: 1,
            page_timeout: self.page_timeout,
            listing_timeout: self.timeout,
            modern,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TargetConfig {
    /// Unique; matches `[a-zA-Z_][a-zA-Z0-9_.:-]*`, at most 128 characters.
    pub name: String,
    pub endpoint: EndpointConfig,
    pub protocol_version: Option<ProtocolVersion>,
    /// `protocols:`: every version this target is listed under, newest
    /// first (at least two); empty when not configured. See
    /// `poll::protocols`.
    pub protocols: Vec<ProtocolVersion>,
    pub schedule: Schedule,
    /// Kinds listed when the server advertises them (and `forced_kinds` always).
    pub kinds: Vec<Kind>,
    /// Listed even when the server does not advertise the capability.
    pub forced_kinds: Vec<Kind>,
    pub limits: Limits,
    pub jitter: Duration,
    pub invalid_cursor_probe: bool,
    pub watch_list_changed: bool,
    pub propagate_trace_context: bool,
    /// Minimum unique items expected per kind.
    pub expect: BTreeMap<Kind, u64>,
    /// `expect: {page_latency:}`: a listing with a page that took longer
    /// is `degraded` (`slow_pages`).
    pub expect_page_latency: Option<Duration>,
    pub reference: Vec<ReferenceConfig>,
    /// `metrics: {detail: true}`: per-target histograms (docs/metrics.md).
    pub metrics_detail: bool,
    pub conformance: ConformanceConfig,
    /// The whole configuration's known secrets (a shared handle), so a poll
    /// of this target scrubs every other target's secrets too.
    pub known_secrets: SecretScrubber,
    /// The `discovery:` source that yielded this target; `None` for a
    /// `targets:` entry (and a `/probe` module target).
    pub source: Option<String>,
    /// A discovered target's labels (its source's, then its group's), shown
    /// once on `mcp_target_info`; empty for others.
    pub labels: BTreeMap<String, String>,
    /// A target bound to a module (discovered, `/probe?module=`): the
    /// module's `allow`, to which every URL that gets the module's
    /// credentials is held (an SSE endpoint, a redirect). `None` for a
    /// `targets:` entry: its own origin and directory (docs/security.md).
    pub allow: Option<ModuleAllow>,
}

impl TargetConfig {
    pub fn walk_limits(&self, modern: bool) -> WalkLimits {
        self.limits.walk_limits(modern)
    }

    pub fn is_stdio(&self) -> bool {
        matches!(self.endpoint, EndpointConfig::Stdio { .. })
    }
}

/// "This gateway must contain `target`'s items of `kinds`, renamed the way
/// the gateway renames them (`prefix`, or per kind `map`)."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceConfig {
    pub target: String,
    /// Defaults to the referring target's kinds that the referenced target also lists.
    pub kinds: Vec<Kind>,
    /// Added to every kind's names (kinds without a `map` entry).
    pub prefix: Option<String>,
    /// Per kind: how the gateway renames this origin's names.
    pub map: BTreeMap<Kind, NameMap>,
}

impl ReferenceConfig {
    /// The renaming that applies to `kind`'s names.
    pub fn name_map(&self, kind: Kind) -> NameMap {
        self.map
            .get(&kind)
            .cloned()
            .unwrap_or_else(|| NameMap::prefix(self.prefix.clone()))
    }
}

#[derive(Clone, PartialEq)]
pub enum EndpointConfig {
    Http {
        url: Url,
        transport: HttpMode,
        /// Read at load time; values of `{env:}`/`{file:}` headers included.
        headers: Vec<(String, Secret)>,
        /// Read at every poll, so a rotated token needs no reload.
        bearer_token: Option<SecretSource>,
        tls: TlsConfig,
        max_redirects: usize,
    },
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the exporter's own environment for the child. Values may
        /// be secrets, so Debug shows only the names.
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        /// Pass the exporter's whole environment to the child; by default it
        /// gets only PATH, HOME, LANG and its own `env:`.
        inherit_env: bool,
    },
}

impl fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointConfig::Http {
                url,
                transport,
                headers,
                bearer_token,
                tls,
                max_redirects,
            } => f
                .debug_struct("Http")
                .field("url", &url.as_str())
                .field("transport", transport)
                .field("headers", headers)
                .field("bearer_token", bearer_token)
                .field("tls", tls)
                .field("max_redirects", max_redirects)
                .finish(),
            EndpointConfig::Stdio {
                command,
                args,
                env,
                cwd,
                inherit_env,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &RedactedValues(env))
                .field("cwd", cwd)
                .field("inherit_env", inherit_env)
                .finish(),
        }
    }
}

struct RedactedValues<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for RedactedValues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, Secret::new(String::new()))))
            .finish()
    }
}

/// A `/probe` module: which URLs may be probed, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeModule {
    pub name: String,
    /// `scheme://host[:port]/path-prefix` patterns, matched as parsed parts
    /// (see `allow.rs`).
    pub allow: Vec<String>,
    pub transport: HttpMode,
    pub headers: Vec<(String, Secret)>,
    pub bearer_token: Option<SecretSource>,
    pub tls: TlsConfig,
    pub max_redirects: usize,
    pub limits: Limits,
    pub kinds: Vec<Kind>,
    pub protocol_version: Option<ProtocolVersion>,
    /// The whole configuration's known secrets (see [`Config::known_secrets`]).
    pub known_secrets: SecretScrubber,
}

impl ProbeModule {
    /// Whether `url` may be probed with this module: http(s), no user info,
    /// and some `allow` pattern matches a prefix of the URL.
    pub fn allows(&self, url: &Url) -> bool {
        allows_any(&self.allow, url)
    }

    /// A one-off target for probing `url` with this module, named `name`
    /// (the caller picks the label; the URL itself never becomes one).
    pub fn target_for(&self, name: String, url: Url, defaults: &Defaults) -> TargetConfig {
        TargetConfig {
            name,
            endpoint: EndpointConfig::Http {
                url,
                transport: self.transport,
                headers: self.headers.clone(),
                bearer_token: self.bearer_token.clone(),
                tls: self.tls.clone(),
                // A redirect could lead out of the allow-list (same origin,
                // another path) with our token: module probes follow none.
                max_redirects: 0,
            },
            protocol_version: self.protocol_version,
            protocols: Vec::new(),
            schedule: defaults.schedule.clone(),
            kinds: self.kinds.clone(),
            forced_kinds: Vec::new(),
            limits: self.limits,
            jitter: Duration::ZERO,
            invalid_cursor_probe: defaults.invalid_cursor_probe,
            // A probe is one request/response cycle; nothing to watch after it.
            watch_list_changed: false,
            propagate_trace_context: defaults.propagate_trace_context,
            expect: BTreeMap::new(),
            expect_page_latency: None,
            reference: Vec::new(),
            metrics_detail: defaults.metrics_detail,
            // `/probe` answers from one poll; conformance runs are scheduled only.
            conformance: ConformanceConfig::default(),
            known_secrets: self.known_secrets.clone(),
            source: None,
            labels: BTreeMap::new(),
            allow: Some(ModuleAllow(self.allow.iter().cloned().collect())),
        }
    }
}

/// A module's `allow`, as a target bound to the module keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleAllow(Arc<[String]>);

impl ModuleAllow {
    /// Whether the module's `allow` admits `url` (as [`ProbeModule::allows`]).
    pub fn allows(&self, url: &Url) -> bool {
        allows_any(&self.0, url)
    }
}

fn allows_any(patterns: &[String], url: &Url) -> bool {
    patterns
        .iter()
        .any(|pattern| super::allow::AllowPattern::parse(pattern).is_ok_and(|p| p.matches(url)))
}

/// OTLP export settings. The standard `OTEL_*` environment variables
/// override or complement these; the telemetry module decides.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TracingConfig {
    pub endpoint: Option<String>,
    pub protocol: Option<OtlpProtocol>,
    pub headers: Vec<(String, Secret)>,
    pub service_name: Option<String>,
    /// 0.0 ..= 1.0
    pub sample_ratio: Option<f64>,
}

mcp_listing::labelled_enum! {
    /// Wire protocol towards the OTLP collector (`tracing.protocol`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum OtlpProtocol as "OTLP protocol" {
        Grpc => "grpc",
        HttpProtobuf => "http/protobuf",
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// Polls kept per target for `/api/targets` and the status page.
    pub history: usize,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            history: default::WEB_HISTORY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_debug_hides_env_values() {
        let e = EndpointConfig::Stdio {
            command: "srv".into(),
            args: vec![],
            env: BTreeMap::from([("API_KEY".to_string(), "s3cret-value".to_string())]),
            cwd: None,
            inherit_env: false,
        };
        let shown = format!("{e:?}");
        assert!(shown.contains("API_KEY"), "{shown}");
        assert!(!shown.contains("s3cret-value"), "{shown}");
    }
}
