//! One target: its endpoint, kinds, limits, and its references to others.

use super::http::RawHttp;
use super::{RawLimits, Resolver, Result, LITERAL_TOKEN};
use crate::config::locate::{yaml_path, At};
use crate::config::name_map::{NameMap, NameRewrite};
use crate::config::raw::{
    OrderedMap, RawNameMap, RawProtocols, RawReference, RawSecretValue, RawTarget,
};
use crate::config::types::{Defaults, EndpointConfig, ReferenceConfig, TargetConfig};
use mcp_listing::{Kind, ProtocolVersion};
use mcp_wire::secrets::SecretScrubber;
use std::collections::BTreeMap;

impl Resolver<'_> {
    pub(super) fn target(
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
        let protocol_version = self
            .optional_protocol_version(&key("protocol_version"), t.protocol_version.as_deref())?;
        let protocols = self.protocols(i, &who, t.protocols, protocol_version.is_some())?;

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
                self.refuse_keys(
                    i,
                    &who,
                    &[
                        (t.args.is_some(), "args"),
                        (t.env.is_some(), "env"),
                        (t.cwd.is_some(), "cwd"),
                        (t.inherit_env.is_some(), "inherit_env"),
                    ],
                    "applies to stdio targets (with `command`), not to a `url`",
                )?;
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
                EndpointConfig::Http {
                    url,
                    transport: http.transport,
                    headers: http.headers,
                    bearer_token: http.bearer_token,
                    tls: http.tls,
                    max_redirects: http.max_redirects,
                }
            }
            (None, Some(command)) => {
                self.refuse_keys(
                    i,
                    &who,
                    &[
                        (t.transport.is_some(), "transport"),
                        (t.headers.is_some(), "headers"),
                        (t.bearer_token_env.is_some(), "bearer_token_env"),
                        (t.bearer_token_file.is_some(), "bearer_token_file"),
                        (t.tls.is_some(), "tls"),
                        (t.max_redirects.is_some(), "max_redirects"),
                    ],
                    "applies to HTTP targets (with `url`), not to a `command`",
                )?;
                if command.trim().is_empty() {
                    return Err(self.error(&key("command"), At::Value, format!("{who}: `command` is empty")));
                }
                let env = self.child_env(i, &who, t.env.unwrap_or_default())?;
                EndpointConfig::Stdio {
                    command,
                    args: t.args.unwrap_or_default(),
                    env,
                    cwd: t.cwd.map(|p| self.file_path(p)),
                    inherit_env: t.inherit_env.unwrap_or(false),
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
        let conformance = self.conformance(
            &yaml_path!["targets", i, "conformance"],
            &who,
            d.conformance,
            t.conformance,
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
            protocol_version,
            protocols,
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
            metrics_detail: t.metrics.and_then(|m| m.detail).unwrap_or(d.metrics_detail),
            conformance,
            // Filled in once every section is resolved.
            known_secrets: SecretScrubber::default(),
        };
        Ok((target, t.reference.unwrap_or_default()))
    }

    /// `protocols:` checked and ordered newest first (the primary first).
    fn protocols(
        &self,
        i: usize,
        who: &str,
        raw: Option<RawProtocols>,
        pinned: bool,
    ) -> Result<Vec<ProtocolVersion>> {
        let at = yaml_path!["targets", i, "protocols"];
        let Some(raw) = raw else {
            return Ok(Vec::new());
        };
        if pinned {
            return Err(self.error(
                &at,
                At::Key,
                format!("{who}: give `protocols` or `protocol_version`, not both"),
            ));
        }
        let written: Vec<String> = match raw {
            RawProtocols::AllSupported => ProtocolVersion::LABELS.map(String::from).to_vec(),
            RawProtocols::List(list) => list,
        };
        let mut versions = Vec::with_capacity(written.len());
        for (j, v) in written.iter().enumerate() {
            let mut vat = at.to_vec();
            vat.push(crate::config::locate::Seg::Index(j));
            let version = self.protocol_version(&vat, v)?;
            if versions.contains(&version) {
                return Err(self.error(
                    &vat,
                    At::Value,
                    format!("{who}: protocol version {v} is listed twice in `protocols`"),
                ));
            }
            versions.push(version);
        }
        if versions.len() < 2 {
            return Err(self.error(
                &at,
                At::Value,
                format!("{who}: `protocols` needs at least two versions to compare; pin one with `protocol_version`"),
            ));
        }
        versions.sort_unstable_by(|a, b| b.cmp(a));
        Ok(versions)
    }

    /// One kind's `map:` entry of a reference, compiled.
    fn name_map(
        &self,
        at: &[crate::config::locate::Seg],
        who: &str,
        raw: RawNameMap,
    ) -> Result<NameMap> {
        let key = |k: &str| {
            let mut p = at.to_vec();
            p.push(crate::config::locate::Seg::Key(k.to_string()));
            p
        };
        for (value, name) in [
            (&raw.strip_prefix, "strip_prefix"),
            (&raw.prefix, "prefix"),
            (&raw.regex, "regex"),
        ] {
            if value.as_deref() == Some("") {
                return Err(self.error(
                    &key(name),
                    At::Value,
                    format!("{who}: `{name}` is empty; leave it out instead"),
                ));
            }
        }
        let rewrite = match (raw.regex, raw.replace) {
            (Some(pattern), Some(replace)) => {
                let regex = NameMap::compile(&pattern).map_err(|why| {
                    self.error(&key("regex"), At::Value, format!("{who}: `regex` {why}"))
                })?;
                Some(NameRewrite { regex, replace })
            }
            (Some(_), None) => {
                return Err(self.error(
                    &key("regex"),
                    At::Key,
                    format!("{who}: `regex` needs `replace` (use \"\" to delete the match)"),
                ))
            }
            (None, Some(_)) => {
                return Err(self.error(
                    &key("replace"),
                    At::Key,
                    format!("{who}: `replace` needs `regex`"),
                ))
            }
            (None, None) => None,
        };
        if raw.separator.is_some() && raw.prefix.is_none() {
            return Err(self.error(
                &key("separator"),
                At::Key,
                format!("{who}: `separator` joins `prefix` and the name; give `prefix` too"),
            ));
        }
        Ok(NameMap {
            strip_prefix: raw.strip_prefix,
            rewrite,
            prefix: raw.prefix,
            separator: raw.separator,
        })
    }

    /// Error at the first key of `keys` that is present: "WHO: `KEY` WHY".
    fn refuse_keys(&self, i: usize, who: &str, keys: &[(bool, &str)], why: &str) -> Result<()> {
        match keys.iter().find(|(present, _)| *present) {
            Some((_, k)) => Err(self.error(
                &yaml_path!["targets", i, *k],
                At::Key,
                format!("{who}: `{k}` {why}"),
            )),
            None => Ok(()),
        }
    }

    /// A stdio target's `env:`, each value read now.
    fn child_env(
        &self,
        i: usize,
        who: &str,
        raw: OrderedMap<RawSecretValue>,
    ) -> Result<BTreeMap<String, String>> {
        let mut env = BTreeMap::new();
        for (name, value) in raw.0 {
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
        Ok(env)
    }

    pub(super) fn references(
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
            let mut map = std::collections::BTreeMap::new();
            if let Some(raw_map) = r.map {
                if r.prefix.is_some() {
                    return Err(self.error(
                        &key("map"),
                        At::Key,
                        format!("{who}: give `prefix` (every kind) or `map` (per kind), not both"),
                    ));
                }
                for (kind, raw) in raw_map {
                    let at = yaml_path!["targets", i, "reference", j, "map", kind.label()];
                    if !kinds.contains(&kind) {
                        return Err(self.error(
                            &at,
                            At::Key,
                            format!("{who}: `map` names `{kind}`, which this reference does not compare"),
                        ));
                    }
                    map.insert(kind, self.name_map(&at, &who, raw)?);
                }
            }
            out.push(ReferenceConfig {
                target: r.target,
                kinds,
                prefix: r.prefix,
                map,
            });
        }
        Ok(out)
    }
}
