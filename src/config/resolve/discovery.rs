//! The `discovery:` section: each source's name, module, kind and what its
//! targets get besides the module.

use super::http::HttpRole;
use super::limits::Applies;
use super::{child, Resolver, Result};
use crate::config::limits::{LimitKey, Limits};
use crate::config::locate::{locate, yaml_path, At, Seg};
use crate::config::raw::{
    OrderedMap, RawDuration, RawFileSd, RawHttp, RawHttpSd, RawLimits, RawRegistry, RawSource,
};
use crate::config::sources::{
    check_file_pattern, check_label, source_default, RegistrySource, SourceConfig, SourceEndpoint,
    SourceKind,
};
use crate::config::types::{Defaults, ProbeModule};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

/// What a fetched source (`http_sd`, `registry`) takes where it says
/// nothing, and which `limits:` keys apply to it.
struct Fetched {
    limits: Limits,
    applies: Applies,
    refresh: Duration,
}

/// `http_sd`: one GET an answer.
const HTTP_SD: Fetched = Fetched {
    limits: source_default::HTTP_SD_LIMITS,
    applies: Applies {
        keys: &[
            LimitKey::Timeout,
            LimitKey::ConnectTimeout,
            LimitKey::MaxResponseBytes,
        ],
        place: "`http_sd`",
    },
    refresh: source_default::HTTP_SD_REFRESH,
};

/// `registry`: a walk of pages.
const REGISTRY: Fetched = Fetched {
    limits: source_default::REGISTRY_LIMITS,
    applies: Applies {
        keys: &[
            LimitKey::Timeout,
            LimitKey::PageTimeout,
            LimitKey::ConnectTimeout,
            LimitKey::MaxResponseBytes,
            LimitKey::MaxPages,
        ],
        place: "`registry`",
    },
    refresh: source_default::REGISTRY_REFRESH,
};

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
        let (schedule, jitter) = self.timing(
            &owner,
            &who,
            (s.schedule, s.jitter),
            (&d.settings.schedule, d.settings.jitter),
        );
        let whose = format!("module `{}`'s", module.name);
        let expect = self.expect(&owner, &who, s.expect, (&module.kinds, &whose))?;
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
        http_sd: Option<RawHttpSd>,
        registry: Option<RawRegistry>,
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

    fn http_sd(&mut self, i: usize, who: &str, h: RawHttpSd) -> Result<(SourceKind, Duration)> {
        let at = yaml_path!["discovery", i, "http_sd"];
        let (endpoint, every) =
            self.fetched(&at, who, (h.http, h.limits, h.refresh_interval), &HTTP_SD)?;
        Ok((SourceKind::HttpSd(endpoint), every))
    }

    fn registry(&mut self, i: usize, who: &str, r: RawRegistry) -> Result<(SourceKind, Duration)> {
        let at = yaml_path!["discovery", i, "registry"];
        let (endpoint, every) =
            self.fetched(&at, who, (r.http, r.limits, r.refresh_interval), &REGISTRY)?;
        if endpoint.http.url.query().is_some() || endpoint.http.url.fragment().is_some() {
            return Err(self.error(
                &yaml_path!["discovery", i, "registry", "http", "url"],
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
        Ok((
            SourceKind::Registry(RegistrySource {
                endpoint,
                search: r.search.filter(|s| !s.is_empty()),
                limit,
            }),
            every,
        ))
    }

    /// A fetched source's endpoint (its own credentials and TLS), its
    /// limits and its refresh interval, each over `d`'s.
    fn fetched(
        &mut self,
        at: &[Seg],
        who: &str,
        (http, limits, refresh): (RawHttp, Option<RawLimits>, Option<RawDuration>),
        d: &Fetched,
    ) -> Result<(SourceEndpoint, Duration)> {
        let http = self.http_endpoint(&child(at, "http"), who, http, HttpRole::Source)?;
        let limits = self.limits(at, who, d.limits, limits, &d.applies)?;
        let every = self.refresh_interval(at, who, refresh, d.refresh)?;
        Ok((SourceEndpoint { http, limits }, every))
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
