//! From the YAML as written (`raw.rs`) to the resolved [`Config`]: merges
//! `global:` into every target and module and enforces every rule that one
//! value cannot check on its own. Errors and warnings point at the offending
//! YAML node (see `locate.rs`).

mod discovery;
mod http;
mod limits;
mod sections;
mod settings;
mod taps;
mod target;

use super::error::ConfigError;
use super::locate::{locate, locate_nth, yaml_path, At, Seg};
use super::raw::{RawFile, RawGlobal, RawTarget};
use super::schedule::Schedule;
use super::types::{default, Config, Defaults, TargetSettings, MAX_NAME_LEN};
use mcp_listing::{Kind, ProtocolVersion};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why `bearer_token:` is refused (every `http:` block).
const LITERAL_TOKEN: &str = "a literal `bearer_token` is not allowed in the configuration file: \
     put the token in an environment variable or a file and write `bearer_token_env: VARIABLE` \
     or `bearer_token_file: PATH`";

pub(super) struct Resolver<'a> {
    text: &'a str,
    origin: &'a str,
    /// Relative paths in the file are relative to the file's folder.
    base_dir: Option<&'a Path>,
    pub warnings: Vec<String>,
}

type Result<T> = std::result::Result<T, ConfigError>;

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
        let message = crate::config::parser_message::cap(&message.into());
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
        let discovery = self.sources(raw.discovery, &modules, &defaults)?;
        let taps = self.taps(raw.taps, &targets)?;
        let tracing = self.tracing(raw.tracing)?;
        let web = self.web(raw.web)?;
        if targets.is_empty() && modules.is_empty() && taps.is_empty() {
            self.warn(
                &[],
                At::Value,
                "no `targets` and no `modules`: nothing will be polled or probed",
            );
        }
        let mut config = Config {
            defaults,
            targets,
            modules,
            discovery,
            taps,
            tracing,
            web,
            known_secrets: Default::default(),
        };
        crate::config::known_secrets::attach(&mut config);
        Ok(config)
    }

    fn defaults(&mut self, mut g: RawGlobal) -> Result<Defaults> {
        let at = |key: &str| yaml_path!["global", key];
        let settings = self.settings(
            &yaml_path!["global"],
            "`global`",
            &TargetSettings::default(),
            g.take_settings(),
        )?;
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
        Ok(Defaults {
            settings,
            state_dir: g.state_dir.map(|p| self.file_path(p)),
            concurrency: g.concurrency.unwrap_or(default::CONCURRENCY),
            backoff_max,
            stderr_tail_bytes,
            baseline_retention: g
                .baseline_retention
                .map_or(default::BASELINE_RETENTION, |d| d.0),
        })
    }

    fn check_schedule(&mut self, owner: &[Seg], who: &str, schedule: &Schedule, jitter: Duration) {
        // A cron such as `0 0 30 2 *` (February 30th) parses but never fires.
        if matches!(schedule, Schedule::Cron { .. })
            && schedule.next_after(chrono::Utc::now()).is_none()
        {
            self.warn(
                &child(owner, "schedule"),
                At::Value,
                format!("{who}: this cron schedule matches no date (such as February 30th) and never fires; nothing will be polled"),
            );
        }
        if let Some(period) = schedule.period() {
            if jitter >= period {
                self.warn(
                    &child(owner, "jitter"),
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

    fn protocol_version(&self, at: &[Seg], version: &str) -> Result<ProtocolVersion> {
        version.parse().map_err(|_| {
            self.error(
                at,
                At::Value,
                format!(
                    "unknown protocol_version {version:?}; expected one of {}",
                    ProtocolVersion::LABELS.join(", ")
                ),
            )
        })
    }

    fn optional_protocol_version(
        &self,
        at: &[Seg],
        version: Option<&str>,
    ) -> Result<Option<ProtocolVersion>> {
        version.map(|v| self.protocol_version(at, v)).transpose()
    }
}

/// `at` with one more key.
fn child(at: &[Seg], key: &str) -> Vec<Seg> {
    let mut p = at.to_vec();
    p.push(Seg::from(key));
    p
}
