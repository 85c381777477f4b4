//! From the YAML as written (`raw.rs`) to the resolved [`Config`]: merges
//! `global:` into every target and module and enforces every rule that one
//! value cannot check on its own. Errors and warnings point at the offending
//! YAML node (see `locate.rs`).

use super::error::ConfigError;
use super::locate::{locate, locate_nth, yaml_path, At, Seg};
use super::raw::{
    RawFile, RawGlobal, RawHeaders, RawModule, RawReference, RawSecretValue, RawTarget, RawTls,
};
use super::schedule::Schedule;
use super::secret::{trim_trailing_newlines, Secret, SecretSource};
use super::types::{
    default, Config, Defaults, Endpoint, HttpTransport, Limits, ProbeModule, ReferenceConfig,
    TargetConfig, TlsConfig, TracingConfig, WebConfig, MAX_NAME_LEN, PROTOCOL_VERSIONS,
};
use crate::listing::Kind;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;
use url::Url;

/// Most polls kept per target; bounds the status store's memory.
const MAX_HISTORY: usize = 10_000;

const LITERAL_TOKEN: &str = "a literal `bearer_token` is not allowed in the configuration file: \
     put the token in an environment variable or a file and write `bearer_token_env: VARIABLE` \
     or `bearer_token_file: PATH`";

/// Headers the client sets itself; overriding them breaks the protocol.
const RESERVED_HEADERS: [&str; 7] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// Header names whose literal values are credentials.
const CREDENTIAL_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
];

pub(super) struct Resolver<'a> {
    text: &'a str,
    origin: &'a str,
    /// Relative paths in the file are relative to the file's folder.
    base_dir: Option<&'a Path>,
    pub warnings: Vec<String>,
}

type Result<T> = std::result::Result<T, ConfigError>;

/// The HTTP settings targets and modules share, as written.
struct RawHttp {
    transport: Option<HttpTransport>,
    headers: Option<RawHeaders>,
    bearer_token_env: Option<String>,
    bearer_token_file: Option<PathBuf>,
    tls: Option<RawTls>,
    max_redirects: Option<usize>,
}

struct Http {
    transport: HttpTransport,
    headers: Vec<(String, Secret)>,
    bearer_token: Option<SecretSource>,
    tls: TlsConfig,
    max_redirects: usize,
}

/// Per-target or per-module overrides of the global limits, as written.
struct RawLimits {
    timeout: Option<Duration>,
    page_timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    max_pages: Option<u32>,
    max_items: Option<u64>,
    max_response_bytes: Option<u64>,
    invalid_cursor_restarts: Option<u32>,
}

impl<'a> Resolver<'a> {
    pub fn new(text: &'a str, origin: &'a str, base_dir: Option<&'a Path>) -> Resolver<'a> {
        Resolver {
            text,
            origin,
            base_dir,
            warnings: Vec::new(),
        }
    }

    fn error(&self, path: &[Seg], at: At, message: impl Into<String>) -> ConfigError {
        self.error_nth(path, at, 0, message)
    }

    /// An error at the `nth` occurrence of the last key of `path`.
    fn error_nth(
        &self,
        path: &[Seg],
        at: At,
        nth: usize,
        message: impl Into<String>,
    ) -> ConfigError {
        let message = message.into();
        match locate_nth(self.text, path, at, nth) {
            Some((line, column)) => ConfigError::At {
                origin: self.origin.to_string(),
                line,
                column,
                message,
            },
            None => ConfigError::Invalid {
                origin: self.origin.to_string(),
                message,
            },
        }
    }

    fn warn(&mut self, path: &[Seg], at: At, message: impl AsRef<str>) {
        let message = message.as_ref();
        let line = match locate(self.text, path, at) {
            Some((line, column)) => format!("{}:{line}:{column}: warning: {message}", self.origin),
            None => format!("{}: warning: {message}", self.origin),
        };
        self.warnings.push(line);
    }

    fn file_path(&self, p: PathBuf) -> PathBuf {
        match self.base_dir {
            Some(base) if p.is_relative() => base.join(p),
            _ => p,
        }
    }

    pub fn resolve(&mut self, raw: RawFile) -> Result<Config> {
        let defaults = self.defaults(raw.global)?;
        self.check_target_names(&raw.targets)?;
        let mut targets = Vec::with_capacity(raw.targets.len());
        let mut references = Vec::with_capacity(raw.targets.len());
        for (i, target) in raw.targets.into_iter().enumerate() {
            let (resolved, refs) = self.target(i, target, &defaults)?;
            targets.push(resolved);
            references.push(refs);
        }
        for (i, refs) in references.into_iter().enumerate() {
            let resolved = self.references(i, refs, &targets)?;
            targets[i].reference = resolved;
        }
        let mut modules = BTreeMap::new();
        for (name, module) in raw.modules.0 {
            if modules.contains_key(&name) {
                return Err(self.error_nth(
                    &yaml_path!["modules", &name],
                    At::Key,
                    1,
                    format!("duplicate module name `{name}`"),
                ));
            }
            let resolved = self.module(&name, module, &defaults)?;
            modules.insert(name, resolved);
        }
        let tracing = self.tracing(raw.tracing)?;
        let web = self.web(raw.web)?;
        if targets.is_empty() && modules.is_empty() {
            self.warn(
                &[],
                At::Value,
                "no `targets` and no `modules`: nothing will be polled or probed",
            );
        }
        Ok(Config {
            defaults,
            targets,
            modules,
            tracing,
            web,
        })
    }

    fn defaults(&mut self, g: RawGlobal) -> Result<Defaults> {
        let at = |key: &str| yaml_path!["global", key];
        let kinds = match g.kinds {
            Some(kinds) => self.kinds(&at("kinds"), kinds)?,
            None => Kind::ALL.to_vec(),
        };
        if g.concurrency == Some(0) {
            return Err(self.error(
                &at("concurrency"),
                At::Value,
                "`concurrency` must be at least 1",
            ));
        }
        let backoff_max = g.backoff_max.map_or(default::BACKOFF_MAX, |d| d.0);
        if backoff_max.is_zero() {
            return Err(self.error(
                &at("backoff_max"),
                At::Value,
                "`backoff_max` must be greater than zero",
            ));
        }
        let stderr_tail_bytes = match g.stderr_tail_bytes {
            None => default::STDERR_TAIL_BYTES,
            Some(b) => usize::try_from(b.0).map_err(|_| {
                self.error(
                    &at("stderr_tail_bytes"),
                    At::Value,
                    "`stderr_tail_bytes` is too large",
                )
            })?,
        };
        let base = Limits {
            timeout: default::TIMEOUT,
            page_timeout: default::PAGE_TIMEOUT,
            connect_timeout: default::CONNECT_TIMEOUT,
            max_pages: default::MAX_PAGES,
            max_items: default::MAX_ITEMS,
            max_response_bytes: default::MAX_RESPONSE_BYTES,
            invalid_cursor_restarts: default::INVALID_CURSOR_RESTARTS,
        };
        let limits = self.limits(
            &yaml_path!["global"],
            "`global`",
            base,
            RawLimits {
                timeout: g.timeout.map(|d| d.0),
                page_timeout: g.page_timeout.map(|d| d.0),
                connect_timeout: g.connect_timeout.map(|d| d.0),
                max_pages: g.max_pages,
                max_items: g.max_items,
                max_response_bytes: g.max_response_bytes.map(|b| b.0),
                invalid_cursor_restarts: g.invalid_cursor_restarts,
            },
        )?;
        let schedule = g.schedule.map_or(Schedule::Every(default::EVERY), |s| s.0);
        let jitter = g.jitter.map_or(default::JITTER, |d| d.0);
        self.check_jitter(&yaml_path!["global"], "`global`", &schedule, jitter);
        Ok(Defaults {
            schedule,
            timeout: limits.timeout,
            page_timeout: limits.page_timeout,
            connect_timeout: limits.connect_timeout,
            max_pages: limits.max_pages,
            max_items: limits.max_items,
            max_response_bytes: limits.max_response_bytes,
            jitter,
            kinds,
            state_dir: g.state_dir.map(|p| self.file_path(p)),
            invalid_cursor_restarts: limits.invalid_cursor_restarts,
            concurrency: g.concurrency.unwrap_or(default::CONCURRENCY),
            backoff_max,
            invalid_cursor_probe: g
                .invalid_cursor_probe
                .unwrap_or(default::INVALID_CURSOR_PROBE),
            watch_list_changed: g.watch_list_changed.unwrap_or(default::WATCH_LIST_CHANGED),
            propagate_trace_context: g
                .propagate_trace_context
                .unwrap_or(default::PROPAGATE_TRACE_CONTEXT),
            stderr_tail_bytes,
        })
    }

    /// Merge `raw` over `base`; every bound must be positive.
    fn limits(&mut self, owner: &[Seg], who: &str, base: Limits, raw: RawLimits) -> Result<Limits> {
        let key = |k: &str| {
            let mut p = owner.to_vec();
            p.push(Seg::from(k));
            p
        };
        let zero = |this: &Self, k: &str| {
            this.error(
                &key(k),
                At::Value,
                format!("{who}: `{k}` must be greater than zero"),
            )
        };
        let limits = Limits {
            timeout: raw.timeout.unwrap_or(base.timeout),
            page_timeout: raw.page_timeout.unwrap_or(base.page_timeout),
            connect_timeout: raw.connect_timeout.unwrap_or(base.connect_timeout),
            max_pages: raw.max_pages.unwrap_or(base.max_pages),
            max_items: raw.max_items.unwrap_or(base.max_items),
            max_response_bytes: raw.max_response_bytes.unwrap_or(base.max_response_bytes),
            invalid_cursor_restarts: raw
                .invalid_cursor_restarts
                .unwrap_or(base.invalid_cursor_restarts),
        };
        if limits.timeout.is_zero() {
            return Err(zero(self, "timeout"));
        }
        if limits.page_timeout.is_zero() {
            return Err(zero(self, "page_timeout"));
        }
        if limits.connect_timeout.is_zero() {
            return Err(zero(self, "connect_timeout"));
        }
        if limits.max_pages == 0 {
            return Err(zero(self, "max_pages"));
        }
        if limits.max_items == 0 {
            return Err(zero(self, "max_items"));
        }
        if limits.max_response_bytes == 0 {
            return Err(zero(self, "max_response_bytes"));
        }
        if limits.page_timeout > limits.timeout {
            let k = if raw.page_timeout.is_some() {
                "page_timeout"
            } else {
                "timeout"
            };
            self.warn(
                &key(k),
                At::Key,
                format!(
                    "{who}: page_timeout ({}) is longer than the whole-listing timeout ({}); the listing deadline will cut pages short",
                    humantime::format_duration(limits.page_timeout),
                    humantime::format_duration(limits.timeout)
                ),
            );
        }
        Ok(limits)
    }

    fn check_jitter(&mut self, owner: &[Seg], who: &str, schedule: &Schedule, jitter: Duration) {
        if let Some(period) = schedule.period() {
            if jitter >= period {
                let mut p = owner.to_vec();
                p.push(Seg::from("jitter"));
                self.warn(
                    &p,
                    At::Key,
                    format!(
                        "{who}: jitter ({}) is not shorter than the poll period ({}); polls will drift and may be skipped",
                        humantime::format_duration(jitter),
                        humantime::format_duration(period)
                    ),
                );
            }
        }
    }

    fn kinds(&self, at: &[Seg], kinds: Vec<Kind>) -> Result<Vec<Kind>> {
        if kinds.is_empty() {
            return Err(self.error(
                at,
                At::Value,
                "`kinds` is empty: list at least one of tools, prompts, resources, resource_templates",
            ));
        }
        self.no_duplicate_kinds(at, &kinds)?;
        Ok(kinds)
    }

    fn no_duplicate_kinds(&self, at: &[Seg], kinds: &[Kind]) -> Result<()> {
        for (i, kind) in kinds.iter().enumerate() {
            if kinds[..i].contains(kind) {
                let mut p = at.to_vec();
                p.push(Seg::Index(i));
                return Err(self.error(&p, At::Value, format!("kind `{kind}` is listed twice")));
            }
        }
        Ok(())
    }

    fn check_name(&self, at: &[Seg], pos: At, what: &str, name: &str) -> Result<()> {
        let mut chars = name.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let rest_ok =
            chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
        if !first_ok || !rest_ok {
            return Err(self.error(
                at,
                pos,
                format!(
                    "{what} name {name:?} is not allowed: it must match [a-zA-Z_][a-zA-Z0-9_.:-]* (it becomes a label value)"
                ),
            ));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(self.error(
                at,
                pos,
                format!(
                    "{what} name is {} characters long; at most {MAX_NAME_LEN} are allowed",
                    name.len()
                ),
            ));
        }
        Ok(())
    }

    fn check_target_names(&self, targets: &[RawTarget]) -> Result<()> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            let at = yaml_path!["targets", i, "name"];
            self.check_name(&at, At::Value, "target", &t.name)?;
            if let Some(first) = seen.insert(&t.name, i) {
                let first_line =
                    locate(self.text, &yaml_path!["targets", first, "name"], At::Value)
                        .map(|(line, _)| format!(" (first defined on line {line})"))
                        .unwrap_or_default();
                return Err(self.error(
                    &at,
                    At::Value,
                    format!("duplicate target name `{}`{first_line}", t.name),
                ));
            }
        }
        Ok(())
    }

    fn check_protocol_version(&self, at: &[Seg], version: &Option<String>) -> Result<()> {
        if let Some(v) = version {
            if !PROTOCOL_VERSIONS.contains(&v.as_str()) {
                return Err(self.error(
                    at,
                    At::Value,
                    format!(
                        "unknown protocol_version {v:?}; expected one of {}",
                        PROTOCOL_VERSIONS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn target(
        &mut self,
        i: usize,
        t: RawTarget,
        d: &Defaults,
    ) -> Result<(TargetConfig, Vec<RawReference>)> {
        let owner = yaml_path!["targets", i];
        let key = |k: &str| yaml_path!["targets", i, k];
        let who = format!("target `{}`", t.name);
        if t.bearer_token.0 {
            return Err(self.error(
                &key("bearer_token"),
                At::Key,
                format!("{who}: {LITERAL_TOKEN}"),
            ));
        }
        self.check_protocol_version(&key("protocol_version"), &t.protocol_version)?;

        let endpoint = match (t.url, t.command) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    &key("command"),
                    At::Key,
                    format!("{who} has both `url` and `command`: give `url` for an HTTP server or `command` for a stdio server, not both"),
                ))
            }
            (None, None) => {
                return Err(self.error(
                    &owner,
                    At::Value,
                    format!("{who} needs `url` (an HTTP server) or `command` (a stdio server)"),
                ))
            }
            (Some(url), None) => {
                for (present, k) in [
                    (t.args.is_some(), "args"),
                    (t.env.is_some(), "env"),
                    (t.cwd.is_some(), "cwd"),
                ] {
                    if present {
                        return Err(self.error(
                            &key(k),
                            At::Key,
                            format!("{who}: `{k}` applies to stdio targets (with `command`), not to a `url`"),
                        ));
                    }
                }
                let url = self.url(&key("url"), &who, &url)?;
                let http = self.http(
                    &owner,
                    &who,
                    Some(&url),
                    RawHttp {
                        transport: t.transport,
                        headers: t.headers,
                        bearer_token_env: t.bearer_token_env,
                        bearer_token_file: t.bearer_token_file,
                        tls: t.tls,
                        max_redirects: t.max_redirects,
                    },
                )?;
                Endpoint::Http {
                    url,
                    transport: http.transport,
                    headers: http.headers,
                    bearer_token: http.bearer_token,
                    tls: http.tls,
                    max_redirects: http.max_redirects,
                }
            }
            (None, Some(command)) => {
                for (present, k) in [
                    (t.transport.is_some(), "transport"),
                    (t.headers.is_some(), "headers"),
                    (t.bearer_token_env.is_some(), "bearer_token_env"),
                    (t.bearer_token_file.is_some(), "bearer_token_file"),
                    (t.tls.is_some(), "tls"),
                    (t.max_redirects.is_some(), "max_redirects"),
                ] {
                    if present {
                        return Err(self.error(
                            &key(k),
                            At::Key,
                            format!("{who}: `{k}` applies to HTTP targets (with `url`), not to a `command`"),
                        ));
                    }
                }
                if command.trim().is_empty() {
                    return Err(self.error(&key("command"), At::Value, format!("{who}: `command` is empty")));
                }
                let mut env = BTreeMap::new();
                for (name, value) in t.env.unwrap_or_default().0 {
                    let at = yaml_path!["targets", i, "env", &name];
                    if env.contains_key(&name) {
                        return Err(self.error_nth(
                            &at,
                            At::Key,
                            1,
                            format!("{who}: environment variable `{name}` is given twice"),
                        ));
                    }
                    if name.is_empty() || name.contains(['=', '\0']) {
                        return Err(self.error(
                            &at,
                            At::Key,
                            format!("{who}: environment variable name {name:?} is not allowed"),
                        ));
                    }
                    let value = self.secret_value(&at, &format!("{who}: env `{name}`"), value)?;
                    env.insert(name, value.expose().to_string());
                }
                Endpoint::Stdio {
                    command,
                    args: t.args.unwrap_or_default(),
                    env,
                    cwd: t.cwd.map(|p| self.file_path(p)),
                }
            }
        };

        let kinds = match t.kinds {
            Some(kinds) => self.kinds(&key("kinds"), kinds)?,
            None => d.kinds.clone(),
        };
        let forced_kinds = t.forced_kinds.unwrap_or_default();
        self.no_duplicate_kinds(&key("forced_kinds"), &forced_kinds)?;
        for (j, kind) in forced_kinds.iter().enumerate() {
            if !kinds.contains(kind) {
                return Err(self.error(
                    &yaml_path!["targets", i, "forced_kinds", j],
                    At::Value,
                    format!("{who}: forced kind `{kind}` is not in this target's `kinds`"),
                ));
            }
        }
        let expect = t.expect.unwrap_or_default();
        for kind in expect.keys() {
            if !kinds.contains(kind) {
                return Err(self.error(
                    &yaml_path!["targets", i, "expect", kind.label()],
                    At::Key,
                    format!(
                        "{who}: `expect` names `{kind}`, which is not in this target's `kinds`"
                    ),
                ));
            }
        }

        let limits = self.limits(
            &owner,
            &who,
            d.limits(),
            RawLimits {
                timeout: t.timeout.map(|x| x.0),
                page_timeout: t.page_timeout.map(|x| x.0),
                connect_timeout: t.connect_timeout.map(|x| x.0),
                max_pages: t.max_pages,
                max_items: t.max_items,
                max_response_bytes: t.max_response_bytes.map(|x| x.0),
                invalid_cursor_restarts: t.invalid_cursor_restarts,
            },
        )?;
        let overridden = t.schedule.is_some() || t.jitter.is_some();
        let schedule = t.schedule.map_or_else(|| d.schedule.clone(), |s| s.0);
        let jitter = t.jitter.map_or(d.jitter, |x| x.0);
        if overridden {
            self.check_jitter(&owner, &who, &schedule, jitter);
        }

        let target = TargetConfig {
            name: t.name,
            endpoint,
            protocol_version: t.protocol_version,
            schedule,
            kinds,
            forced_kinds,
            limits,
            jitter,
            invalid_cursor_probe: t.invalid_cursor_probe.unwrap_or(d.invalid_cursor_probe),
            watch_list_changed: t.watch_list_changed.unwrap_or(d.watch_list_changed),
            propagate_trace_context: t
                .propagate_trace_context
                .unwrap_or(d.propagate_trace_context),
            expect,
            reference: Vec::new(),
        };
        Ok((target, t.reference.unwrap_or_default()))
    }

    fn references(
        &self,
        i: usize,
        refs: Vec<RawReference>,
        targets: &[TargetConfig],
    ) -> Result<Vec<ReferenceConfig>> {
        let this = &targets[i];
        let who = format!("target `{}`", this.name);
        let mut out: Vec<ReferenceConfig> = Vec::with_capacity(refs.len());
        for (j, r) in refs.into_iter().enumerate() {
            let key = |k: &str| yaml_path!["targets", i, "reference", j, k];
            if r.target == this.name {
                return Err(self.error(
                    &key("target"),
                    At::Value,
                    format!("{who} references itself; `reference` names the origin servers a gateway must contain"),
                ));
            }
            let Some(other) = targets.iter().find(|t| t.name == r.target) else {
                return Err(self.error(
                    &key("target"),
                    At::Value,
                    format!("{who} references unknown target `{}`", r.target),
                ));
            };
            if out.iter().any(|o| o.target == r.target) {
                return Err(self.error(
                    &key("target"),
                    At::Value,
                    format!("{who} references target `{}` twice", r.target),
                ));
            }
            let kinds = match r.kinds {
                Some(kinds) => {
                    let kinds = self.kinds(&key("kinds"), kinds)?;
                    for (k, kind) in kinds.iter().enumerate() {
                        if !this.kinds.contains(kind) || !other.kinds.contains(kind) {
                            return Err(self.error(
                                &yaml_path!["targets", i, "reference", j, "kinds", k],
                                At::Value,
                                format!("{who}: kind `{kind}` must be listed by both `{}` and `{}` to be compared", this.name, other.name),
                            ));
                        }
                    }
                    kinds
                }
                None => {
                    let common: Vec<Kind> = this
                        .kinds
                        .iter()
                        .copied()
                        .filter(|k| other.kinds.contains(k))
                        .collect();
                    if common.is_empty() {
                        return Err(self.error(
                            &key("target"),
                            At::Value,
                            format!(
                                "{who} and `{}` list no kind in common; nothing to compare",
                                other.name
                            ),
                        ));
                    }
                    common
                }
            };
            if r.prefix.as_deref() == Some("") {
                return Err(self.error(
                    &key("prefix"),
                    At::Value,
                    format!("{who}: `prefix` is empty; leave it out instead"),
                ));
            }
            out.push(ReferenceConfig {
                target: r.target,
                kinds,
                prefix: r.prefix,
            });
        }
        Ok(out)
    }

    fn url(&self, at: &[Seg], who: &str, raw: &str) -> Result<Url> {
        // The URL is not echoed: its query may hold a key.
        let url = Url::parse(raw.trim())
            .map_err(|e| self.error(at, At::Value, format!("{who}: invalid `url`: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(self.error(
                at,
                At::Value,
                format!(
                    "{who}: `url` must be http:// or https://, not {}://",
                    url.scheme()
                ),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(self.error(
                at,
                At::Value,
                format!("{who}: credentials in the `url` are not allowed (they would show wherever the URL does); use `bearer_token_env`, `bearer_token_file` or `headers` with `{{env: ...}}`"),
            ));
        }
        Ok(url)
    }

    fn http(&mut self, owner: &[Seg], who: &str, url: Option<&Url>, raw: RawHttp) -> Result<Http> {
        let key = |k: &str| {
            let mut p = owner.to_vec();
            p.push(Seg::from(k));
            p
        };
        let headers = match raw.headers {
            Some(h) => self.headers(&key("headers"), who, h)?,
            None => Vec::new(),
        };
        let bearer_token = match (raw.bearer_token_env, raw.bearer_token_file) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    &key("bearer_token_file"),
                    At::Key,
                    format!("{who}: give `bearer_token_env` or `bearer_token_file`, not both"),
                ))
            }
            (Some(var), None) => {
                if var.is_empty() || var.contains(['=', '\0']) {
                    return Err(self.error(
                        &key("bearer_token_env"),
                        At::Value,
                        format!("{who}: `bearer_token_env` must name an environment variable"),
                    ));
                }
                Some(SecretSource::Env(var))
            }
            (None, Some(file)) => Some(SecretSource::File(self.file_path(file))),
            (None, None) => None,
        };
        if bearer_token.is_some()
            && headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            let k = if key_present(self.text, &key("bearer_token_env")) {
                "bearer_token_env"
            } else {
                "bearer_token_file"
            };
            return Err(self.error(
                &key(k),
                At::Key,
                format!(
                    "{who}: both an `Authorization` header and a bearer token are set; keep one"
                ),
            ));
        }
        let raw_tls = raw.tls.unwrap_or_default();
        let tls = TlsConfig {
            ca_file: raw_tls.ca_file.map(|p| self.file_path(p)),
            insecure_skip_verify: raw_tls.insecure_skip_verify.unwrap_or(false),
        };
        let tls_key = key("tls");
        if tls.insecure_skip_verify {
            let mut p = tls_key.clone();
            p.push(Seg::from("insecure_skip_verify"));
            self.warn(
                &p,
                At::Key,
                format!("{who}: TLS CERTIFICATE VERIFICATION IS OFF (insecure_skip_verify): anyone on the network path can impersonate this server and read the credentials sent to it"),
            );
        }
        if let Some(url) = url {
            let plain = url.scheme() == "http" && !is_loopback(url);
            if plain && bearer_token.is_some() {
                self.warn(
                    &key("url"),
                    At::Value,
                    format!(
                        "{who}: the bearer token is sent over plain http:// to a non-loopback host"
                    ),
                );
            }
            if url.scheme() == "http" && (tls.ca_file.is_some() || tls.insecure_skip_verify) {
                self.warn(
                    &tls_key,
                    At::Key,
                    format!("{who}: `tls` has no effect on an http:// URL"),
                );
            }
        }
        Ok(Http {
            transport: raw.transport.unwrap_or_default(),
            headers,
            bearer_token,
            tls,
            max_redirects: raw.max_redirects.unwrap_or(default::MAX_REDIRECTS),
        })
    }

    fn headers(&mut self, at: &[Seg], who: &str, raw: RawHeaders) -> Result<Vec<(String, Secret)>> {
        let mut out: Vec<(String, Secret)> = Vec::with_capacity(raw.0.len());
        for (name, value) in raw.0 {
            let mut p = at.to_vec();
            p.push(Seg::from(&name));
            if name.is_empty() || !name.bytes().all(is_header_name_byte) {
                return Err(self.error(
                    &p,
                    At::Key,
                    format!("{who}: {name:?} is not a valid HTTP header name"),
                ));
            }
            let lower = name.to_ascii_lowercase();
            if RESERVED_HEADERS.contains(&lower.as_str()) {
                return Err(self.error(
                    &p,
                    At::Key,
                    format!("{who}: header `{name}` is set by the exporter itself and cannot be configured"),
                ));
            }
            if let Some((first, _)) = out.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                // Same spelling: the second occurrence of the key; else this key.
                let nth = usize::from(*first == name);
                return Err(self.error_nth(
                    &p,
                    At::Key,
                    nth,
                    format!("{who}: header `{name}` is given twice"),
                ));
            }
            if matches!(value, RawSecretValue::Literal(_))
                && CREDENTIAL_HEADERS.contains(&lower.as_str())
            {
                self.warn(
                    &p,
                    At::Key,
                    format!("{who}: header `{name}` has a literal value in the configuration file; prefer `{{env: VARIABLE}}` or `{{file: PATH}}`"),
                );
            }
            let secret = self.secret_value(&p, &format!("{who}: header `{name}`"), value)?;
            if secret.expose().contains(['\r', '\n', '\0']) {
                return Err(self.error(
                    &p,
                    At::Value,
                    format!("{who}: the value of header `{name}` contains a line break or NUL"),
                ));
            }
            out.push((name, secret));
        }
        Ok(out)
    }

    /// Resolve a literal / `{env:}` / `{file:}` value now (load time).
    fn secret_value(&self, at: &[Seg], what: &str, value: RawSecretValue) -> Result<Secret> {
        match value {
            RawSecretValue::Literal(s) => Ok(Secret::new(s)),
            RawSecretValue::Env(var) => match std::env::var(&var) {
                Ok(v) => Ok(Secret::new(v)),
                Err(_) => Err(self.error(
                    at,
                    At::Value,
                    format!("{what}: environment variable `{var}` is not set (or not UTF-8)"),
                )),
            },
            RawSecretValue::File(path) => {
                let path = self.file_path(path);
                match std::fs::read_to_string(&path) {
                    Ok(text) => Ok(Secret::new(trim_trailing_newlines(&text))),
                    Err(e) => Err(self.error(
                        at,
                        At::Value,
                        format!("{what}: cannot read {}: {e}", path.display()),
                    )),
                }
            }
        }
    }

    fn module(&mut self, name: &str, m: RawModule, d: &Defaults) -> Result<ProbeModule> {
        let owner = yaml_path!["modules", name];
        let key = |k: &str| yaml_path!["modules", name, k];
        let who = format!("module `{name}`");
        self.check_name(&owner, At::Key, "module", name)?;
        if m.bearer_token.0 {
            return Err(self.error(
                &key("bearer_token"),
                At::Key,
                format!("{who}: {LITERAL_TOKEN}"),
            ));
        }
        if m.allow.is_empty() {
            return Err(self.error(
                &key("allow"),
                At::Value,
                format!("{who}: `allow` is empty, so nothing could be probed with it"),
            ));
        }
        for (j, pattern) in m.allow.iter().enumerate() {
            let rest = pattern
                .strip_prefix("https://")
                .or_else(|| pattern.strip_prefix("http://"));
            let has_path = rest.is_some_and(|r| r.find('/').is_some_and(|slash| slash > 0));
            if !has_path {
                return Err(self.error(
                    &yaml_path!["modules", name, "allow", j],
                    At::Value,
                    format!("{who}: allow pattern {pattern:?} must start with http:// or https:// and include a path (at least a `/` after the host), so that it cannot match other hosts"),
                ));
            }
        }
        self.check_protocol_version(&key("protocol_version"), &m.protocol_version)?;
        let http = self.http(
            &owner,
            &who,
            None,
            RawHttp {
                transport: m.transport,
                headers: m.headers,
                bearer_token_env: m.bearer_token_env,
                bearer_token_file: m.bearer_token_file,
                tls: m.tls,
                max_redirects: m.max_redirects,
            },
        )?;
        let limits = self.limits(
            &owner,
            &who,
            d.limits(),
            RawLimits {
                timeout: m.timeout.map(|x| x.0),
                page_timeout: m.page_timeout.map(|x| x.0),
                connect_timeout: m.connect_timeout.map(|x| x.0),
                max_pages: m.max_pages,
                max_items: m.max_items,
                max_response_bytes: m.max_response_bytes.map(|x| x.0),
                invalid_cursor_restarts: m.invalid_cursor_restarts,
            },
        )?;
        let kinds = match m.kinds {
            Some(kinds) => self.kinds(&key("kinds"), kinds)?,
            None => d.kinds.clone(),
        };
        Ok(ProbeModule {
            name: name.to_string(),
            allow: m.allow,
            transport: http.transport,
            headers: http.headers,
            bearer_token: http.bearer_token,
            tls: http.tls,
            max_redirects: http.max_redirects,
            limits,
            kinds,
            protocol_version: m.protocol_version,
        })
    }

    fn tracing(&mut self, t: super::raw::RawTracing) -> Result<TracingConfig> {
        let key = |k: &str| yaml_path!["tracing", k];
        if let Some(endpoint) = &t.endpoint {
            match Url::parse(endpoint) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                Ok(_) => {
                    return Err(self.error(
                        &key("endpoint"),
                        At::Value,
                        "tracing `endpoint` must be an http:// or https:// URL",
                    ))
                }
                Err(e) => {
                    return Err(self.error(
                        &key("endpoint"),
                        At::Value,
                        format!("tracing `endpoint` is not a valid URL: {e}"),
                    ))
                }
            }
        }
        if let Some(ratio) = t.sample_ratio {
            if !(0.0..=1.0).contains(&ratio) {
                return Err(self.error(
                    &key("sample_ratio"),
                    At::Value,
                    "tracing `sample_ratio` must be between 0.0 and 1.0",
                ));
            }
        }
        if t.service_name
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            return Err(self.error(
                &key("service_name"),
                At::Value,
                "tracing `service_name` is empty",
            ));
        }
        let headers = match t.headers {
            Some(h) => self.headers(&key("headers"), "tracing", h)?,
            None => Vec::new(),
        };
        Ok(TracingConfig {
            endpoint: t.endpoint,
            protocol: t.protocol.map(|p| p.label().to_string()),
            headers,
            service_name: t.service_name,
            sample_ratio: t.sample_ratio,
        })
    }

    fn web(&self, w: super::raw::RawWeb) -> Result<WebConfig> {
        let history = w.history.unwrap_or(default::WEB_HISTORY);
        if !(1..=MAX_HISTORY).contains(&history) {
            return Err(self.error(
                &yaml_path!["web", "history"],
                At::Value,
                format!("web `history` must be between 1 and {MAX_HISTORY}"),
            ));
        }
        Ok(WebConfig { history })
    }
}

fn key_present(text: &str, path: &[Seg]) -> bool {
    locate(text, path, At::Key).is_some()
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// RFC 9110 `tchar`.
fn is_header_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
