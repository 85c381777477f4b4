//! One target: its endpoint, kinds, limits, and its references to others.

use super::http::HttpRole;
use super::{child, Resolver, Result};
use crate::config::endpoint::{EndpointConfig, StdioCommand};
use crate::config::expect::ExpectConfig;
use crate::config::locate::{yaml_path, At, Seg};
use crate::config::name_map::{NameMap, NameRewrite};
use crate::config::raw::{
    OrderedMap, RawExpect, RawNameMap, RawProtocols, RawReference, RawSecretValue, RawStdio,
    RawTarget,
};
use crate::config::types::{Defaults, ReferenceConfig, TargetConfig};
use mcp_listing::{Kind, ProtocolVersion};
use mcp_wire::secrets::SecretScrubber;
use std::collections::BTreeMap;

impl Resolver<'_> {
    pub(super) fn target(
        &mut self,
        i: usize,
        mut t: RawTarget,
        d: &Defaults,
    ) -> Result<(TargetConfig, Vec<RawReference>)> {
        let owner = yaml_path!["targets", i];
        let key = |k: &str| yaml_path!["targets", i, k];
        let who = format!("target `{}`", t.name);
        let protocol_version = self
            .optional_protocol_version(&key("protocol_version"), t.protocol_version.as_deref())?;
        let protocols = self.protocols(i, &who, t.protocols.take(), protocol_version.is_some())?;
        let endpoint = self.endpoint(i, &who, &mut t)?;
        let settings = self.settings(&owner, &who, &d.settings, t.take_settings())?;
        let forced_kinds = self.forced_kinds(i, &who, t.forced_kinds.take(), &settings.kinds)?;
        let whose = (settings.kinds.as_slice(), "this target's");
        let expect = self.expect(&owner, &who, t.expect.take(), whose)?;

        let target = TargetConfig {
            name: t.name,
            endpoint,
            protocol_version,
            protocols,
            settings,
            forced_kinds,
            expect,
            reference: Vec::new(),
            // Filled in once every section is resolved.
            known_secrets: SecretScrubber::default(),
            source: None,
            labels: BTreeMap::new(),
            allow: None,
        };
        Ok((target, t.reference.unwrap_or_default()))
    }

    /// `http` (an HTTP server) or `stdio` (a child), exactly one.
    fn endpoint(&mut self, i: usize, who: &str, t: &mut RawTarget) -> Result<EndpointConfig> {
        match (t.http.take(), t.stdio.take()) {
            (Some(_), Some(_)) => Err(self.error(
                &yaml_path!["targets", i, "stdio"],
                At::Key,
                format!("{who} has both `http` and `stdio`: give `http` for an HTTP server or `stdio` for a stdio server, not both"),
            )),
            (None, None) => Err(self.error(
                &yaml_path!["targets", i],
                At::Value,
                format!("{who} needs `http: {{url: ...}}` (an HTTP server) or `stdio: {{command: ...}}` (a stdio server)"),
            )),
            (Some(http), None) => {
                let at = yaml_path!["targets", i, "http"];
                let endpoint = self.http_endpoint(&at, who, http, HttpRole::Target)?;
                Ok(EndpointConfig::Http(endpoint))
            }
            (None, Some(stdio)) => self.stdio(i, who, stdio).map(EndpointConfig::Stdio),
        }
    }

    fn stdio(&self, i: usize, who: &str, raw: RawStdio) -> Result<StdioCommand> {
        if raw.command.trim().is_empty() {
            return Err(self.error(
                &yaml_path!["targets", i, "stdio", "command"],
                At::Value,
                format!("{who}: `command` is empty"),
            ));
        }
        let env = self.child_env(i, who, raw.env.unwrap_or_default())?;
        Ok(StdioCommand {
            command: raw.command,
            args: raw.args.unwrap_or_default(),
            env,
            cwd: raw.cwd.map(|p| self.file_path(p)),
            inherit_env: raw.inherit_env.unwrap_or(false),
        })
    }

    /// `forced_kinds:`, each one of the target's `kinds`, none twice.
    fn forced_kinds(
        &self,
        i: usize,
        who: &str,
        raw: Option<Vec<Kind>>,
        kinds: &[Kind],
    ) -> Result<Vec<Kind>> {
        let forced_kinds = raw.unwrap_or_default();
        self.no_duplicate_kinds(&yaml_path!["targets", i, "forced_kinds"], &forced_kinds)?;
        for (j, kind) in forced_kinds.iter().enumerate() {
            if !kinds.contains(kind) {
                return Err(self.error(
                    &yaml_path!["targets", i, "forced_kinds", j],
                    At::Value,
                    format!("{who}: forced kind `{kind}` is not in this target's `kinds`"),
                ));
            }
        }
        Ok(forced_kinds)
    }

    /// `expect:` of the target or source at `owner`, naming only `kinds`
    /// (`whose` kinds they are, in the error).
    pub(super) fn expect(
        &self,
        owner: &[Seg],
        who: &str,
        raw: Option<RawExpect>,
        (kinds, whose): (&[Kind], &str),
    ) -> Result<ExpectConfig> {
        let raw = raw.unwrap_or_default();
        if let Some(kind) = raw.items.keys().find(|k| !kinds.contains(k)) {
            return Err(self.error(
                &child(&child(owner, "expect"), kind.label()),
                At::Key,
                format!("{who}: `expect` names `{kind}`, which is not in {whose} `kinds`"),
            ));
        }
        Ok(ExpectConfig {
            items: raw.items,
            page_latency: raw.page_latency.map(|d| d.0),
        })
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
            vat.push(Seg::Index(j));
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
    fn name_map(&self, at: &[Seg], who: &str, raw: RawNameMap) -> Result<NameMap> {
        let key = |k: &str| child(at, k);
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

    /// A stdio target's `env:`, each value read now.
    fn child_env(
        &self,
        i: usize,
        who: &str,
        raw: OrderedMap<RawSecretValue>,
    ) -> Result<BTreeMap<String, String>> {
        let mut env = BTreeMap::new();
        for (name, value) in raw.0 {
            let at = yaml_path!["targets", i, "stdio", "env", &name];
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
            let at = yaml_path!["targets", i, "reference", j];
            let other = self.referenced_target(&at, &who, this, &r.target, targets, &out)?;
            let kinds = self.reference_kinds(&at, &who, this, other, r.kinds)?;
            let map = self.reference_map(&at, &who, &kinds, r.prefix.as_deref(), r.map)?;
            out.push(ReferenceConfig {
                target: r.target,
                kinds,
                prefix: r.prefix,
                map,
            });
        }
        Ok(out)
    }

    /// The target a reference names: another configured target, named once.
    fn referenced_target<'t>(
        &self,
        at: &[Seg],
        who: &str,
        this: &TargetConfig,
        name: &str,
        targets: &'t [TargetConfig],
        earlier: &[ReferenceConfig],
    ) -> Result<&'t TargetConfig> {
        let key = child(at, "target");
        if name == this.name {
            return Err(self.error(
                &key,
                At::Value,
                format!("{who} references itself; `reference` names the origin servers a gateway must contain"),
            ));
        }
        let Some(other) = targets.iter().find(|t| t.name == name) else {
            return Err(self.error(
                &key,
                At::Value,
                format!("{who} references unknown target `{name}`"),
            ));
        };
        if earlier.iter().any(|o| o.target == name) {
            return Err(self.error(
                &key,
                At::Value,
                format!("{who} references target `{name}` twice"),
            ));
        }
        Ok(other)
    }

    /// The kinds a reference compares: those given (each listed by both
    /// targets), else every kind the two have in common.
    fn reference_kinds(
        &self,
        at: &[Seg],
        who: &str,
        this: &TargetConfig,
        other: &TargetConfig,
        raw: Option<Vec<Kind>>,
    ) -> Result<Vec<Kind>> {
        let Some(raw) = raw else {
            let common: Vec<Kind> = this
                .settings
                .kinds
                .iter()
                .copied()
                .filter(|k| other.settings.kinds.contains(k))
                .collect();
            if common.is_empty() {
                return Err(self.error(
                    &child(at, "target"),
                    At::Value,
                    format!(
                        "{who} and `{}` list no kind in common; nothing to compare",
                        other.name
                    ),
                ));
            }
            return Ok(common);
        };
        let kinds_at = child(at, "kinds");
        let kinds = self.kinds(&kinds_at, raw)?;
        for (k, kind) in kinds.iter().enumerate() {
            if !this.settings.kinds.contains(kind) || !other.settings.kinds.contains(kind) {
                let mut kind_at = kinds_at.clone();
                kind_at.push(Seg::Index(k));
                return Err(self.error(
                    &kind_at,
                    At::Value,
                    format!(
                        "{who}: kind `{kind}` must be listed by both `{}` and `{}` to be compared",
                        this.name, other.name
                    ),
                ));
            }
        }
        Ok(kinds)
    }

    /// A reference's renaming: `prefix` for every kind or `map` per kind
    /// (compared kinds only), not both.
    fn reference_map(
        &self,
        at: &[Seg],
        who: &str,
        kinds: &[Kind],
        prefix: Option<&str>,
        raw: Option<BTreeMap<Kind, RawNameMap>>,
    ) -> Result<BTreeMap<Kind, NameMap>> {
        if prefix == Some("") {
            return Err(self.error(
                &child(at, "prefix"),
                At::Value,
                format!("{who}: `prefix` is empty; leave it out instead"),
            ));
        }
        let mut map = BTreeMap::new();
        let Some(raw_map) = raw else {
            return Ok(map);
        };
        if prefix.is_some() {
            return Err(self.error(
                &child(at, "map"),
                At::Key,
                format!("{who}: give `prefix` (every kind) or `map` (per kind), not both"),
            ));
        }
        for (kind, raw) in raw_map {
            let kind_at = child(&child(at, "map"), kind.label());
            if !kinds.contains(&kind) {
                return Err(self.error(
                    &kind_at,
                    At::Key,
                    format!("{who}: `map` names `{kind}`, which this reference does not compare"),
                ));
            }
            map.insert(kind, self.name_map(&kind_at, who, raw)?);
        }
        Ok(map)
    }
}
