//! The YAML schema exactly as written: strict (unknown keys are rejected),
//! nothing merged. Values that can be checked on their own (durations, byte
//! sizes, cron expressions) are checked while parsing, so the YAML parser
//! attaches the exact line and column to the error.

use super::schedule::{Schedule, MIN_EVERY};
use super::types::OtlpProtocol;
use mcp_listing::{HttpMode, Kind};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys global, targets, modules, discovery, taps, tracing, web"
)]
pub(super) struct RawFile {
    #[serde(default)]
    pub global: RawGlobal,
    #[serde(default)]
    pub targets: Vec<RawTarget>,
    #[serde(default)]
    pub modules: OrderedMap<RawModule>,
    #[serde(default)]
    pub discovery: Vec<RawSource>,
    #[serde(default)]
    pub taps: Vec<RawTap>,
    #[serde(default)]
    pub tracing: RawTracing,
    #[serde(default)]
    pub web: RawWeb,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping of global settings")]
pub(super) struct RawGlobal {
    pub schedule: Option<RawSchedule>,
    pub limits: Option<RawLimits>,
    pub jitter: Option<RawDuration>,
    pub kinds: Option<Vec<Kind>>,
    pub state_dir: Option<PathBuf>,
    pub concurrency: Option<usize>,
    pub backoff_max: Option<RawDuration>,
    pub invalid_cursor_probe: Option<bool>,
    pub watch_list_changed: Option<bool>,
    pub propagate_trace_context: Option<bool>,
    pub stderr_tail_bytes: Option<ByteSize>,
    pub metrics: Option<RawMetrics>,
    pub conformance: Option<RawConformance>,
    pub baseline_retention: Option<RawDuration>,
}

/// The keys `global:` and a target share (a `TargetSettings`), taken out
/// of either so that one function resolves them.
#[derive(Debug, Default)]
pub(super) struct RawSettings {
    pub schedule: Option<RawSchedule>,
    pub limits: Option<RawLimits>,
    pub jitter: Option<RawDuration>,
    pub kinds: Option<Vec<Kind>>,
    pub invalid_cursor_probe: Option<bool>,
    pub watch_list_changed: Option<bool>,
    pub propagate_trace_context: Option<bool>,
    pub metrics: Option<RawMetrics>,
    pub conformance: Option<RawConformance>,
}

/// `take_settings()` for the sections that carry `RawSettings`' keys; one
/// list of them whatever the section (serde's strict keys and exact error
/// positions rule out a flattened shared struct).
macro_rules! take_settings {
    ($($section:ty),*) => {$(
        impl $section {
            pub(super) fn take_settings(&mut self) -> RawSettings {
                RawSettings {
                    schedule: self.schedule.take(),
                    limits: self.limits.take(),
                    jitter: self.jitter.take(),
                    kinds: self.kinds.take(),
                    invalid_cursor_probe: self.invalid_cursor_probe.take(),
                    watch_list_changed: self.watch_list_changed.take(),
                    propagate_trace_context: self.propagate_trace_context.take(),
                    metrics: self.metrics.take(),
                    conformance: self.conformance.take(),
                }
            }
        }
    )*};
}

take_settings!(RawGlobal, RawTarget);

/// `conformance: {enabled: true, every: 1h}`: the pagination rules of
/// `check` run for a scheduled target, on their own slower schedule.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {enabled: true, every: 1h}"
)]
pub(super) struct RawConformance {
    pub enabled: Option<bool>,
    pub every: Option<RawDuration>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a target mapping (name, and http or stdio, ...)"
)]
pub(super) struct RawTarget {
    pub name: String,
    /// An HTTP server; exactly one of `http` and `stdio`.
    pub http: Option<RawHttp>,
    pub stdio: Option<RawStdio>,
    pub limits: Option<RawLimits>,
    // listing
    pub protocol_version: Option<String>,
    pub protocols: Option<RawProtocols>,
    pub schedule: Option<RawSchedule>,
    pub kinds: Option<Vec<Kind>>,
    pub forced_kinds: Option<Vec<Kind>>,
    pub jitter: Option<RawDuration>,
    pub invalid_cursor_probe: Option<bool>,
    pub watch_list_changed: Option<bool>,
    pub propagate_trace_context: Option<bool>,
    pub expect: Option<RawExpect>,
    pub reference: Option<Vec<RawReference>>,
    pub conformance: Option<RawConformance>,
    pub metrics: Option<RawMetrics>,
}

/// One entry of `taps:`: a transparent proxy in front of one upstream,
/// watching which clients read the whole catalogue (docs/clients.md).
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a tap mapping (name, listen, upstream: {url: URL}, ...)"
)]
pub(super) struct RawTap {
    pub name: String,
    pub listen: String,
    /// An `http:` block: `url` and `tls` (the tap adds no credentials of
    /// its own; clients' pass through).
    pub upstream: RawHttp,
    /// TLS on the listener.
    pub tls: Option<RawListenTls>,
    /// The scheduled target whose last complete poll is the reference
    /// catalogue.
    pub target: Option<String>,
    pub abandon_after: Option<RawDuration>,
    pub inspect_bytes: Option<ByteSize>,
    pub max_clients: Option<usize>,
    pub max_sessions: Option<usize>,
    pub client_idle: Option<RawDuration>,
    /// Client connections at once; lowers the one the open-file limit gives.
    pub max_connections: Option<usize>,
    pub client_header: Option<String>,
    /// The operator's apps, named by source address or User-Agent.
    pub apps: Option<Vec<RawApp>>,
    pub merge_pages: Option<Vec<String>>,
    pub max_merged_bytes: Option<ByteSize>,
    /// Request headers besides the usual credential ones that change what
    /// the upstream answers (merged answers are reused per value).
    pub merge_credential_headers: Option<Vec<String>>,
    /// Page requests merging may send of its own: at once, then per second.
    pub merge_page_burst: Option<u32>,
    pub merge_pages_per_second: Option<u32>,
    pub upstream_timeout: Option<RawDuration>,
    /// Connecting to the upstream, and merged walks.
    pub limits: Option<RawLimits>,
    pub report: Option<PathBuf>,
    /// The upstream's endpoints by name or pattern (a gateway's servers).
    pub routes: Option<Vec<RawRoute>>,
    pub max_routes: Option<usize>,
    pub max_client_routes: Option<usize>,
    pub learn_paths: Option<bool>,
    pub learn_catalogue: Option<bool>,
    pub learn_every: Option<RawDuration>,
}

/// One entry of a tap's `apps:`: a name, and the source address ranges
/// and User-Agent product that tell its clients.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an app mapping like {name: desk, from: [10.1.0.0/16], user_agent: desk-app}"
)]
pub(super) struct RawApp {
    pub name: String,
    pub from: Option<Vec<String>>,
    pub user_agent: Option<String>,
}

/// One entry of a tap's `routes:`: a path (or a pattern with `{var}`
/// segments), the name its requests are told under, and the target whose
/// last complete poll is its catalogue.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a route mapping like {name: alpha, path: /mcp/alpha, target: alpha}"
)]
pub(super) struct RawRoute {
    pub name: Option<String>,
    #[serde(alias = "pattern")]
    pub path: String,
    pub target: Option<String>,
}

/// `tls:` of a tap's listener: its certificate and key (PEM), and
/// optionally the CA that client certificates must chain to.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {cert_file: PATH, key_file: PATH}"
)]
pub(super) struct RawListenTls {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub client_ca_file: Option<PathBuf>,
}

/// `limits:` of `global`, a target, a module, a discovery source's
/// `http_sd` or `registry` (and the tap's, next): one shape wherever
/// something we ask is bounded. Which keys apply depends on where it is
/// written; resolving refuses the others by name.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {timeout: 60s, page_timeout: 10s, max_pages: 1000}"
)]
pub(super) struct RawLimits {
    pub timeout: Option<RawDuration>,
    pub page_timeout: Option<RawDuration>,
    pub connect_timeout: Option<RawDuration>,
    pub max_pages: Option<u32>,
    pub max_items: Option<u64>,
    pub max_response_bytes: Option<ByteSize>,
    pub invalid_cursor_restarts: Option<u32>,
}

/// `http:`: an HTTP endpoint we ask, with its credentials and TLS. The one
/// shape of a target's server, a module's targets (no `url`: it comes from
/// `/probe` or discovery), a discovery source's endpoint (and the tap's
/// upstream, next). Keys that do not apply where it is written are refused
/// when resolving.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {url: URL, bearer_token_env: VARIABLE, tls: {ca_file: PATH}}"
)]
pub(super) struct RawHttp {
    pub url: Option<String>,
    pub transport: Option<HttpMode>,
    pub headers: Option<RawHeaders>,
    pub bearer_token_env: Option<String>,
    pub bearer_token_file: Option<PathBuf>,
    /// Only here to reject it with a helpful message.
    #[serde(default)]
    pub bearer_token: Present,
    pub tls: Option<RawTls>,
    pub max_redirects: Option<usize>,
}

/// `stdio:`: a server we start as a child and talk to over its stdin and
/// stdout.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {command: PROGRAM, args: [ARG, ...]}"
)]
pub(super) struct RawStdio {
    pub command: String,
    pub args: Option<Vec<String>>,
    pub env: Option<RawHeaders>,
    pub cwd: Option<PathBuf>,
    pub inherit_env: Option<bool>,
}

/// `metrics:` under `global` or a target.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping like {detail: true}")]
pub(super) struct RawMetrics {
    /// Per-target histograms (with exemplars when traced) for this target.
    pub detail: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {target: NAME, prefix: PREFIX}"
)]
pub(super) struct RawReference {
    pub target: String,
    pub kinds: Option<Vec<Kind>>,
    pub prefix: Option<String>,
    pub map: Option<BTreeMap<Kind, RawNameMap>>,
}

/// One kind's renaming in `reference[].map`.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {prefix: P, separator: S, strip_prefix: X, regex: R, replace: T}"
)]
pub(super) struct RawNameMap {
    pub strip_prefix: Option<String>,
    pub regex: Option<String>,
    pub replace: Option<String>,
    pub prefix: Option<String>,
    pub separator: Option<String>,
}

/// `protocols:` is a list of versions or `all_supported`.
#[derive(Debug, Clone)]
pub(super) enum RawProtocols {
    AllSupported,
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for RawProtocols {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawProtocols;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of protocol versions or `all_supported`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawProtocols, E> {
                if s == "all_supported" {
                    Ok(RawProtocols::AllSupported)
                } else {
                    Err(E::custom(
                        "expected a list of protocol versions or `all_supported`",
                    ))
                }
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RawProtocols, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<String>()? {
                    out.push(v);
                }
                Ok(RawProtocols::List(out))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {ca_file: PATH, insecure_skip_verify: false}"
)]
pub(super) struct RawTls {
    pub ca_file: Option<PathBuf>,
    pub insecure_skip_verify: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a module mapping (allow, http, limits, ...)"
)]
pub(super) struct RawModule {
    pub allow: Vec<String>,
    pub http: Option<RawHttp>,
    pub limits: Option<RawLimits>,
    pub protocol_version: Option<String>,
    pub kinds: Option<Vec<Kind>>,
}

/// One `discovery:` source: a name, the module its targets are bound to,
/// exactly one of `file_sd`, `http_sd`, `registry`, and what its targets
/// get besides the module.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a discovery source mapping (name, module, and one of file_sd, http_sd, registry)"
)]
pub(super) struct RawSource {
    pub name: String,
    pub module: String,
    pub file_sd: Option<RawFileSd>,
    pub http_sd: Option<RawHttpSd>,
    pub registry: Option<RawRegistry>,
    pub schedule: Option<RawSchedule>,
    pub jitter: Option<RawDuration>,
    pub expect: Option<RawExpect>,
    pub labels: Option<OrderedMap<String>>,
    pub max_targets: Option<usize>,
}

/// `file_sd: {files: [GLOB, ...], refresh_interval: 5m}`.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {files: [\"/etc/mcp-exporter/targets/*.json\"], refresh_interval: 5m}"
)]
pub(super) struct RawFileSd {
    pub files: Vec<String>,
    pub refresh_interval: Option<RawDuration>,
    pub max_file_bytes: Option<ByteSize>,
}

/// `http_sd: {http: {url: URL}, refresh_interval: 1m}`: the source's own
/// endpoint (credentials and TLS, never a module's) and its bounds.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {http: {url: URL}, refresh_interval: 1m}"
)]
pub(super) struct RawHttpSd {
    pub http: RawHttp,
    pub refresh_interval: Option<RawDuration>,
    pub limits: Option<RawLimits>,
}

/// `registry: {http: {url: URL}, search: TEXT, limit: 100}`: like
/// `http_sd`, plus what the registry's walk asks for.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping like {http: {url: URL}, refresh_interval: 1h}"
)]
pub(super) struct RawRegistry {
    pub http: RawHttp,
    pub refresh_interval: Option<RawDuration>,
    pub limits: Option<RawLimits>,
    pub search: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a tracing mapping (endpoint, protocol, ...)"
)]
pub(super) struct RawTracing {
    pub endpoint: Option<String>,
    pub protocol: Option<OtlpProtocol>,
    pub headers: Option<RawHeaders>,
    pub service_name: Option<String>,
    pub sample_ratio: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping like {history: 20}")]
pub(super) struct RawWeb {
    pub history: Option<usize>,
}

/// `expect: {tools: 14, page_latency: 500ms}`: the minimum of unique items
/// per kind, and the page latency above which a page is slow.
#[derive(Debug, Default)]
pub(super) struct RawExpect {
    pub items: BTreeMap<Kind, u64>,
    pub page_latency: Option<RawDuration>,
}

const EXPECT_KEYS: &[&str] = &[
    "tools",
    "prompts",
    "resources",
    "resource_templates",
    "page_latency",
];

impl<'de> Deserialize<'de> for RawExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ExpectVisitor;
        impl<'de> Visitor<'de> for ExpectVisitor {
            type Value = RawExpect;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping like {tools: 14, page_latency: 500ms}")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawExpect, A::Error> {
                let mut out = RawExpect::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "page_latency" {
                        if out.page_latency.is_some() {
                            return Err(de::Error::duplicate_field("page_latency"));
                        }
                        out.page_latency = Some(map.next_value()?);
                    } else if let Ok(kind) = key.parse::<Kind>() {
                        if out.items.insert(kind, map.next_value()?).is_some() {
                            return Err(de::Error::duplicate_field(kind.label()));
                        }
                    } else {
                        return Err(de::Error::unknown_field(&key, EXPECT_KEYS));
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(ExpectVisitor)
    }
}

/// Whether a key was written at all, whatever its value (even null).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Present(pub bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d)?;
        Ok(Present(true))
    }
}

/// A humantime duration: `30s`, `1m30s`, `500ms`. A bare number is refused
/// because its unit would be a guess.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawDuration(pub Duration);

struct DurationVisitor {
    min: Duration,
}

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a duration such as 30s, 1m30s or 500ms")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Duration, E> {
        let d = super::types::parse_duration(s).map_err(E::custom)?;
        if d < self.min {
            return Err(E::custom(format!(
                "duration {s:?} is too short: at least {} is needed",
                humantime::format_duration(self.min)
            )));
        }
        Ok(d)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        Err(E::custom(format!(
            "a duration needs a unit: write {v}s or {v}ms, not {v}"
        )))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        Err(E::custom(format!(
            "a duration needs a unit and cannot be negative, not {v}"
        )))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        Err(E::custom(format!(
            "a duration needs a unit: write e.g. 1500ms, not {v}"
        )))
    }
}

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor {
            min: Duration::ZERO,
        })
        .map(RawDuration)
    }
}

/// A byte count: a plain integer, or a number with a unit (`512KiB`, `16MiB`,
/// `1MB`; K/M/G are powers of 1000, Ki/Mi/Gi of 1024).
#[derive(Debug, Clone, Copy)]
pub(super) struct ByteSize(pub u64);

pub fn parse_byte_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("invalid byte size {s:?} (write e.g. 65536, 512KiB or 16MiB)"))?;
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1000,
        "KiB" => 1 << 10,
        "MB" => 1000 * 1000,
        "MiB" => 1 << 20,
        "GB" => 1000 * 1000 * 1000,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown byte unit {other:?} in {s:?} (use B, KB, KiB, MB, MiB, GB or GiB)"
            ))
        }
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("byte size {s:?} is too large"))
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a byte count such as 65536 or 16MiB")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
                parse_byte_size(s).map_err(E::custom)
            }
        }
        d.deserialize_any(V).map(ByteSize)
    }
}

/// `schedule:` is a cron string or `{every: DURATION}`.
#[derive(Debug, Clone)]
pub(super) struct RawSchedule(pub Schedule);

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ScheduleKey {
    Every,
}

struct EveryValue(Duration);

impl<'de> Deserialize<'de> for EveryValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor { min: MIN_EVERY })
            .map(EveryValue)
    }
}

impl<'de> Deserialize<'de> for RawSchedule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Schedule;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a cron expression string or `{every: 30s}`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Schedule, E> {
                Schedule::cron(s).map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Schedule, A::Error> {
                let mut every = None;
                while let Some(ScheduleKey::Every) = map.next_key()? {
                    if every.is_some() {
                        return Err(de::Error::duplicate_field("every"));
                    }
                    every = Some(map.next_value::<EveryValue>()?.0);
                }
                every
                    .map(Schedule::Every)
                    .ok_or_else(|| de::Error::missing_field("every"))
            }
        }
        d.deserialize_any(V).map(RawSchedule)
    }
}

/// A header or environment value: a literal, `{env: VAR}` or `{file: PATH}`.
#[derive(Debug, Clone)]
pub(super) enum RawSecretValue {
    Literal(String),
    Env(String),
    File(PathBuf),
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum SecretKey {
    Env,
    File,
}

impl<'de> Deserialize<'de> for RawSecretValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawSecretValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, `{env: VARIABLE}` or `{file: PATH}`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawSecretValue, E> {
                Ok(RawSecretValue::Literal(s.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawSecretValue, E> {
                Ok(RawSecretValue::Literal(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawSecretValue, E> {
                Ok(RawSecretValue::Literal(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawSecretValue, E> {
                Ok(RawSecretValue::Literal(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawSecretValue, A::Error> {
                let Some(key) = map.next_key::<SecretKey>()? else {
                    return Err(de::Error::custom(
                        "expected exactly one of `env: VARIABLE` or `file: PATH`",
                    ));
                };
                let value = match key {
                    SecretKey::Env => RawSecretValue::Env(map.next_value()?),
                    SecretKey::File => RawSecretValue::File(map.next_value()?),
                };
                if map.next_key::<SecretKey>()?.is_some() {
                    return Err(de::Error::custom("give either `env:` or `file:`, not both"));
                }
                Ok(value)
            }
        }
        d.deserialize_any(V)
    }
}

/// A mapping that keeps the file's order and every entry, duplicates
/// included, so that resolving can point at the second of two equal keys.
#[derive(Debug, Clone)]
pub(super) struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

pub(super) type RawHeaders = OrderedMap<RawSecretValue>;

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of names to values")
            }
            fn visit_unit<E: de::Error>(self) -> Result<OrderedMap<V>, E> {
                Ok(OrderedMap(Vec::new()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedMap<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, V>()? {
                    entries.push((name, value));
                }
                Ok(OrderedMap(entries))
            }
        }
        d.deserialize_any(MapVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_byte_size("65536"), Ok(65536));
        assert_eq!(parse_byte_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_byte_size("1 MB"), Ok(1_000_000));
        assert_eq!(parse_byte_size("512KiB"), Ok(512 << 10));
        assert!(parse_byte_size("12 furlongs").is_err());
        assert!(parse_byte_size("MiB").is_err());
        assert!(parse_byte_size("99999999999999999GiB").is_err());
    }
}
