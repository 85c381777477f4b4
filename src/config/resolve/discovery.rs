//! The `discovery:` section: each source's name, module, kind and what its
//! targets get besides the module.

use super::http::RawHttp;
use super::{child, Resolver, Result, LITERAL_TOKEN};
use crate::config::locate::{locate, yaml_path, At, Seg};
use crate::config::raw::{OrderedMap, RawDuration, RawFileSd, RawSource, RawSourceHttp};
use crate::config::sources::{
    check_file_pattern, check_label, source_default, RegistrySource, SourceConfig, SourceEndpoint,
    SourceKind,
};
use crate::config::types::{Defaults, ProbeModule};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

/// The endpoint keys of a `RawHttpSd` or `RawRegistry` as a `RawHttp`:
/// a source's own credentials and TLS. No redirects: a source's answer
/// comes from where it is configured.
macro_rules! source_http {
    ($raw:expr) => {
        RawHttp {
            transport: None,
            headers: $raw.headers.take(),
            bearer_token_env: $raw.bearer_token_env.take(),
            bearer_token_file: $raw.bearer_token_file.take(),
            tls: $raw.tls.take(),
            max_redirects: Some(0),
        }
    };
}

impl Resolver<'_> {
    pub(super) fn sources(
        &mut self,
        raw: Vec<RawSource>,
        modules: &BTreeMap<String, ProbeModule>,
        d: &Defaults,
    ) -> Result<Vec<SourceConfig>> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(raw.len());
        for (i, source) in raw.into_iter().enumerate() {
            let at = yaml_path!["discovery", i, "name"];
            self.check_name(&at, At::Value, "discovery source", &source.name)?;
            if let Some(first) = seen.insert(source.name.clone(), i) {
                let first_line = locate(
                    self.text,
                    &yaml_path!["discovery", first, "name"],
                    At::Value,
                )
                .map(|(line, _)| format!(" (first defined on line {line})"))
                .unwrap_or_default();
                return Err(self.error(
                    &at,
                    At::Value,
                    format!(
                        "duplicate discovery source name `{}`{first_line}",
                        source.name
                    ),
                ));
            }
            out.push(self.source(i, source, modules, d)?);
        }
        Ok(out)
    }

    fn source(
        &mut self,
        i: usize,
        s: RawSource,
        modules: &BTreeMap<String, ProbeModule>,
        d: &Defaults,
    ) -> Result<SourceConfig> {
        let owner = yaml_path!["discovery", i];
        let key = |k: &str| child(&owner, k);
        let who = format!("discovery source `{}`", s.name);
        let Some(module) = modules.get(&s.module) else {
            let known: Vec<&str> = modules.keys().map(String::as_str).collect();
            let hint = if known.is_empty() {
                "there is no `modules:` section; discovered targets take their allow list, credentials and limits from a module".to_string()
            } else {
                format!("modules are: {}", known.join(", "))
            };
            return Err(self.error(
                &key("module"),
                At::Value,
                format!("{who}: no module named `{}` ({hint})", s.module),
            ));
        };
        let (kind, refresh_interval) =
            self.source_kind(i, &who, s.file_sd, s.http_sd, s.registry)?;
        let overridden = s.schedule.is_some() || s.jitter.is_some();
        let schedule = s.schedule.map_or_else(|| d.schedule.clone(), |x| x.0);
        let jitter = s.jitter.map_or(d.jitter, |x| x.0);
        if overridden {
            self.check_schedule(&owner, &who, &schedule, jitter);
        }
        let raw_expect = s.expect.unwrap_or_default();
        let expect_page_latency = raw_expect.page_latency.map(|d| d.0);
        let expect = raw_expect.items;
        if let Some(kind) = expect.keys().find(|k| !module.kinds.contains(k)) {
            return Err(self.error(
                &yaml_path!["discovery", i, "expect", kind.label()],
                At::Key,
                format!(
                    "{who}: `expect` names `{kind}`, which is not in module `{}`'s `kinds`",
                    module.name
                ),
            ));
        }
        let labels = self.source_labels(&key("labels"), &who, s.labels)?;
        let max_targets = s.max_targets.unwrap_or(source_default::MAX_TARGETS);
        if max_targets == 0 {
            return Err(self.error(
                &key("max_targets"),
                At::Value,
                format!("{who}: `max_targets` must be at least 1"),
            ));
        }
        Ok(SourceConfig {
            name: s.name,
            module: s.module,
            kind,
            refresh_interval,
            max_targets,
            schedule,
            jitter,
            expect_page_latency,
            expect,
            labels,
        })
    }

    /// Exactly one of `file_sd`, `http_sd`, `registry`, and its refresh
    /// interval.
    fn source_kind(
        &mut self,
        i: usize,
        who: &str,
        file_sd: Option<RawFileSd>,
        http_sd: Option<RawSourceHttp>,
        registry: Option<RawSourceHttp>,
    ) -> Result<(SourceKind, Duration)> {
        let owner = yaml_path!["discovery", i];
        let given = [
            ("file_sd", file_sd.is_some()),
            ("http_sd", http_sd.is_some()),
            ("registry", registry.is_some()),
        ];
        let named: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(k, _)| *k).collect();
        if named.len() > 1 {
            return Err(self.error(
                &child(&owner, named[1]),
                At::Key,
                format!(
                    "{who} has both `{}` and `{}`: give exactly one of file_sd, http_sd, registry",
                    named[0], named[1]
                ),
            ));
        }
        if let Some(f) = file_sd {
            return self.file_sd(i, who, f);
        }
        if let Some(h) = http_sd {
            return self.http_sd(i, who, h);
        }
        if let Some(r) = registry {
            return self.registry(i, who, r);
        }
        Err(self.error(
            &owner,
            At::Value,
            format!("{who} needs one of `file_sd`, `http_sd` or `registry`"),
        ))
    }

    fn refresh_interval(
        &self,
        at: &[Seg],
        who: &str,
        raw: Option<RawDuration>,
        default: Duration,
    ) -> Result<Duration> {
        let every = raw.map_or(default, |d| d.0);
        if every < source_default::MIN_REFRESH {
            return Err(self.error(
                &child(at, "refresh_interval"),
                At::Value,
                format!("{who}: `refresh_interval` must be at least 1s"),
            ));
        }
        Ok(every)
    }

    fn file_sd(&mut self, i: usize, who: &str, f: RawFileSd) -> Result<(SourceKind, Duration)> {
        let at = yaml_path!["discovery", i, "file_sd"];
        if f.files.is_empty() {
            return Err(self.error(
                &child(&at, "files"),
                At::Value,
                format!("{who}: `file_sd.files` is empty"),
            ));
        }
        let mut files = Vec::with_capacity(f.files.len());
        for (j, pattern) in f.files.iter().enumerate() {
            if let Err(why) = check_file_pattern(pattern) {
                return Err(self.error(
                    &yaml_path!["discovery", i, "file_sd", "files", j],
                    At::Value,
                    format!("{who}: file pattern {pattern:?} {why}"),
                ));
            }
            files.push(self.file_path(PathBuf::from(pattern)));
        }
        let max_file_bytes = self.positive_bytes(
            &child(&at, "max_file_bytes"),
            who,
            "max_file_bytes",
            f.max_file_bytes.map(|b| b.0),
        )?;
        let every = self.refresh_interval(
            &at,
            who,
            f.refresh_interval,
            source_default::FILE_SD_REFRESH,
        )?;
        Ok((
            SourceKind::FileSd {
                files,
                max_file_bytes,
            },
            every,
        ))
    }

    fn http_sd(
        &mut self,
        i: usize,
        who: &str,
        mut h: RawSourceHttp,
    ) -> Result<(SourceKind, Duration)> {
        let at = yaml_path!["discovery", i, "http_sd"];
        let registry_only = [
            ("search", h.search.is_some()),
            ("limit", h.limit.is_some()),
            ("page_timeout", h.page_timeout.is_some()),
            ("max_pages", h.max_pages.is_some()),
        ];
        if let Some((key, _)) = registry_only.iter().find(|(_, given)| *given) {
            return Err(self.error(
                &child(&at, key),
                At::Key,
                format!("{who}: `{key}` is a key of `registry`, not of `http_sd`"),
            ));
        }
        let one_answer = (h.timeout, source_default::HTTP_TIMEOUT);
        let endpoint = self.source_endpoint(&at, who, &mut h, "timeout", one_answer)?;
        let every = self.refresh_interval(
            &at,
            who,
            h.refresh_interval,
            source_default::HTTP_SD_REFRESH,
        )?;
        Ok((SourceKind::HttpSd(endpoint), every))
    }

    fn registry(
        &mut self,
        i: usize,
        who: &str,
        mut r: RawSourceHttp,
    ) -> Result<(SourceKind, Duration)> {
        let at = yaml_path!["discovery", i, "registry"];
        let one_page = (r.page_timeout, source_default::REGISTRY_PAGE_TIMEOUT);
        let endpoint = self.source_endpoint(&at, who, &mut r, "page_timeout", one_page)?;
        if endpoint.url.query().is_some() || endpoint.url.fragment().is_some() {
            return Err(self.error(
                &child(&at, "url"),
                At::Value,
                format!("{who}: the registry `url` is its base (e.g. https://registry.example); it must not have a query or fragment: the walk adds `/v0.1/servers` and its own query"),
            ));
        }
        let limit = r.limit.unwrap_or(source_default::REGISTRY_LIMIT);
        if !(1..=source_default::REGISTRY_LIMIT).contains(&limit) {
            return Err(self.error(
                &child(&at, "limit"),
                At::Value,
                format!(
                    "{who}: `limit` must be between 1 and {} (the registry API's maximum page size)",
                    source_default::REGISTRY_LIMIT
                ),
            ));
        }
        let max_pages = r.max_pages.unwrap_or(source_default::REGISTRY_MAX_PAGES);
        if max_pages == 0 {
            return Err(self.error(
                &child(&at, "max_pages"),
                At::Value,
                format!("{who}: `max_pages` must be greater than zero"),
            ));
        }
        let walk_timeout = self.positive_duration(
            &at,
            who,
            "timeout",
            r.timeout,
            source_default::REGISTRY_TIMEOUT,
        )?;
        let every = self.refresh_interval(
            &at,
            who,
            r.refresh_interval,
            source_default::REGISTRY_REFRESH,
        )?;
        Ok((
            SourceKind::Registry(RegistrySource {
                endpoint,
                search: r.search.filter(|s| !s.is_empty()),
                limit,
                walk_timeout,
                max_pages,
            }),
            every,
        ))
    }

    /// A source's HTTP endpoint: its URL, its own credentials and TLS, its
    /// byte cap, and `answer_key` (with its value and default) bounding one
    /// answer.
    fn source_endpoint(
        &mut self,
        at: &[Seg],
        who: &str,
        raw: &mut RawSourceHttp,
        answer_key: &str,
        (answer_timeout, answer_default): (Option<RawDuration>, Duration),
    ) -> Result<SourceEndpoint> {
        if raw.bearer_token.0 {
            return Err(self.error(
                &child(at, "bearer_token"),
                At::Key,
                format!("{who}: {LITERAL_TOKEN}"),
            ));
        }
        let url = self.url(&child(at, "url"), who, &raw.url)?;
        let http = self.http(at, who, Some(&url), source_http!(raw))?;
        Ok(SourceEndpoint {
            url,
            headers: http.headers,
            bearer_token: http.bearer_token,
            tls: http.tls,
            timeout: self.positive_duration(at, who, answer_key, answer_timeout, answer_default)?,
            connect_timeout: self.positive_duration(
                at,
                who,
                "connect_timeout",
                raw.connect_timeout,
                source_default::CONNECT_TIMEOUT,
            )?,
            max_response_bytes: self.positive_bytes(
                &child(at, "max_response_bytes"),
                who,
                "max_response_bytes",
                raw.max_response_bytes.map(|b| b.0),
            )?,
        })
    }

    fn positive_duration(
        &self,
        owner: &[Seg],
        who: &str,
        key: &str,
        raw: Option<RawDuration>,
        default: Duration,
    ) -> Result<Duration> {
        let d = raw.map_or(default, |d| d.0);
        if d.is_zero() {
            return Err(self.error(
                &child(owner, key),
                At::Value,
                format!("{who}: `{key}` must be greater than zero"),
            ));
        }
        Ok(d)
    }

    fn positive_bytes(&self, at: &[Seg], who: &str, key: &str, raw: Option<u64>) -> Result<u64> {
        let n = raw.unwrap_or(source_default::MAX_BYTES);
        if n == 0 {
            return Err(self.error(
                at,
                At::Value,
                format!("{who}: `{key}` must be greater than zero"),
            ));
        }
        Ok(n)
    }

    /// `labels:` of a source: Prometheus label names, not meta (`__`) or
    /// reserved ones, bounded values.
    fn source_labels(
        &self,
        at: &[Seg],
        who: &str,
        raw: Option<OrderedMap<String>>,
    ) -> Result<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        let raw = raw.map(|m| m.0).unwrap_or_default();
        if raw.len() > source_default::MAX_LABELS {
            return Err(self.error(
                at,
                At::Value,
                format!("{who}: more than {} `labels`", source_default::MAX_LABELS),
            ));
        }
        for (name, value) in raw {
            let p = child(at, &name);
            if let Err(why) = check_label(&name, &value) {
                return Err(self.error(&p, At::Key, format!("{who}: {why}")));
            }
            if out.insert(name.clone(), value).is_some() {
                return Err(self.error_nth(
                    &p,
                    At::Key,
                    1,
                    format!("{who}: label `{name}` is given twice"),
                ));
            }
        }
        Ok(out)
    }
}
