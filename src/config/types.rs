//! The resolved configuration: every default merged, every value checked.
//! This is what the rest of the exporter reads; the YAML shape lives in
//! `raw.rs`.

use super::allow::AllowList;
use super::endpoint::{EndpointConfig, HttpEndpoint, HttpSettings};
use super::expect::ExpectConfig;
use super::limits::Limits;
use super::name_map::NameMap;
use super::schedule::Schedule;
use super::secret::Secret;
use super::sources::SourceConfig;
use mcp_listing::{Kind, ProtocolVersion};
use mcp_wire::secrets::SecretScrubber;
use std::collections::BTreeMap;
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
    /// `taps:`, in file order.
    pub taps: Vec<super::taps::TapConfig>,
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
    /// What every target gets unless it says otherwise.
    pub settings: TargetSettings,
    /// Where baselines persist; None keeps them in memory only.
    pub state_dir: Option<PathBuf>,
    /// Polls running at once, across all targets.
    pub concurrency: usize,
    /// Longest delay between retries of a failing target.
    pub backoff_max: Duration,
    /// Bytes of a stdio server's stderr kept for error reports.
    pub stderr_tail_bytes: usize,
    /// How long the baselines of a target that left (a reload removed it,
    /// or its source no longer lists it) are kept, so one that comes back
    /// does not report its whole catalogue as new.
    pub baseline_retention: Duration,
}

/// How a target is listed and when: what `global:` sets for every target
/// and a target may override key by key (resolved once, `resolve/settings.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct TargetSettings {
    pub schedule: Schedule,
    /// `global.limits` are also what a module does not say otherwise.
    pub limits: Limits,
    /// Upper bound of the random delay added to each scheduled poll.
    pub jitter: Duration,
    /// Kinds listed when the server advertises them (and a target's
    /// `forced_kinds` always).
    pub kinds: Vec<Kind>,
    pub invalid_cursor_probe: bool,
    pub watch_list_changed: bool,
    pub propagate_trace_context: bool,
    /// `metrics: {detail: true}`: per-target histograms (docs/metrics.md).
    pub metrics_detail: bool,
    pub conformance: ConformanceConfig,
}

impl Default for TargetSettings {
    /// What `global:` gives every target when it says nothing.
    fn default() -> Self {
        TargetSettings {
            schedule: Schedule::Every(default::EVERY),
            limits: Limits::DEFAULT,
            jitter: default::JITTER,
            kinds: Kind::ALL.to_vec(),
            invalid_cursor_probe: default::INVALID_CURSOR_PROBE,
            watch_list_changed: default::WATCH_LIST_CHANGED,
            propagate_trace_context: default::PROPAGATE_TRACE_CONTEXT,
            metrics_detail: default::METRICS_DETAIL,
            conformance: ConformanceConfig::default(),
        }
    }
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

/// Default values of `global:` (its `limits:` are `Limits::DEFAULT`);
/// docs/configuration.md quotes these.
pub mod default {
    use std::time::Duration;
    pub const EVERY: Duration = Duration::from_secs(60);
    pub const JITTER: Duration = Duration::from_secs(5);
    pub const CONCURRENCY: usize = 8;
    pub const BACKOFF_MAX: Duration = Duration::from_secs(300);
    pub const INVALID_CURSOR_PROBE: bool = true;
    /// Per-target histograms are opt-in detail: they cost ~80 samples per target.
    pub const METRICS_DETAIL: bool = false;
    pub const WATCH_LIST_CHANGED: bool = false;
    pub const PROPAGATE_TRACE_CONTEXT: bool = true;
    pub const STDERR_TAIL_BYTES: usize =
        mcp_wire::transport::TransportLimits::DEFAULT.stderr_tail_bytes;
    pub const MAX_REDIRECTS: usize = 5;
    pub const WEB_HISTORY: usize = 20;
    pub const CONFORMANCE_EVERY: Duration = Duration::from_secs(3600);
    /// The shortest accepted `conformance.every`.
    pub const CONFORMANCE_MIN_EVERY: Duration = Duration::from_secs(1);
    pub const BASELINE_RETENTION: Duration = Duration::from_secs(24 * 3600);
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
    /// `global:`'s settings with this target's own keys over them.
    pub settings: TargetSettings,
    /// Listed even when the server does not advertise the capability.
    pub forced_kinds: Vec<Kind>,
    pub expect: ExpectConfig,
    pub reference: Vec<ReferenceConfig>,
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
    pub allow: Option<Arc<AllowList>>,
}

impl TargetConfig {
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

/// A `/probe` module: which URLs may be probed, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeModule {
    pub name: String,
    /// `scheme://host[:port]/path-prefix` patterns, compiled at load and
    /// matched as parsed parts (see `allow.rs`).
    pub allow: Arc<AllowList>,
    /// How its targets are asked; `max_redirects` is 0 (see `target_for`).
    pub http: HttpSettings,
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
        self.allow.allows(url)
    }

    /// A one-off target for probing `url` with this module, named `name`
    /// (the caller picks the label; the URL itself never becomes one).
    pub fn target_for(&self, name: String, url: Url, defaults: &Defaults) -> TargetConfig {
        TargetConfig {
            name,
            // A redirect could lead out of the allow-list (same origin,
            // another path) with our token: the module's settings follow none.
            endpoint: EndpointConfig::Http(HttpEndpoint {
                url,
                settings: self.http.clone(),
            }),
            protocol_version: self.protocol_version,
            protocols: Vec::new(),
            settings: TargetSettings {
                kinds: self.kinds.clone(),
                limits: self.limits,
                jitter: Duration::ZERO,
                // A probe is one request/response cycle; nothing to watch after it.
                watch_list_changed: false,
                // `/probe` answers from one poll; conformance runs are scheduled only.
                conformance: ConformanceConfig::default(),
                ..defaults.settings.clone()
            },
            forced_kinds: Vec::new(),
            expect: ExpectConfig::default(),
            reference: Vec::new(),
            known_secrets: self.known_secrets.clone(),
            source: None,
            labels: BTreeMap::new(),
            allow: Some(Arc::clone(&self.allow)),
        }
    }
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
