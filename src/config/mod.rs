//! The exporter's YAML configuration: schema, strict loading with
//! `FILE:LINE:COL:` errors, validation, secrets and the reload checksum.
//! docs/configuration.md documents every key.
//!
//! Files: `raw.rs` is the YAML as written, `resolve/` merges defaults and
//! checks the rules (`target.rs`, `settings.rs` for the keys `global:`
//! and a target share, `http.rs` for every `http:` block,
//! `limits.rs` for every `limits:` block, `sections.rs` for modules,
//! tracing and web), `locate.rs` finds a node's position for errors,
//! `parse_errors.rs` gathers every parse error of a file in one run,
//! `suggest.rs` names the key or value meant, `types.rs` is the resolved
//! result, with its shared shapes in `endpoint.rs` (an HTTP endpoint or a
//! stdio command), `limits.rs`, `tls.rs` and `expect.rs`.
//! `yaml_bounds.rs` bounds a YAML document (depth, nodes, alias
//! replays) on libyaml's events (`yaml_events.rs`) before yaml_serde reads
//! it; `yaml_span.rs` finds and blanks an entry in the text; `allow.rs`
//! compiles a module's `allow:`.

mod allow;
mod endpoint;
mod error;
mod expect;
mod known_secrets;
mod limits;
mod locate;
mod name_map;
mod parse_errors;
mod parser_message;
mod raw;
mod resolve;
mod schedule;
mod secret;
mod sources;
mod suggest;
pub mod taps;
mod tls;
mod types;
pub mod web;
mod yaml_bounds;
mod yaml_events;
mod yaml_span;

pub use allow::{AllowList, AllowPattern};
pub use endpoint::{EndpointConfig, HttpEndpoint, HttpSettings, StdioCommand};
pub use error::ConfigError;
pub use expect::ExpectConfig;
pub use limits::{LimitKey, Limits};
pub use name_map::{NameMap, NameRewrite};
pub use parser_message::sanitize as sanitize_parser_message;
pub use raw::parse_byte_size;
pub use schedule::{Schedule, MIN_EVERY};
pub use secret::{Secret, SecretSource};
pub use sources::{
    check_file_pattern, check_label, is_label_name, source_default, RegistrySource, SourceConfig,
    SourceEndpoint, SourceKind,
};
pub use tls::TlsConfig;
pub use types::parse_duration;
pub use types::{
    default, Config, ConformanceConfig, Defaults, OtlpProtocol, ProbeModule, ReferenceConfig,
    TargetConfig, TargetSettings, TracingConfig, WebConfig, MAX_DURATION, MAX_NAME_LEN,
};
pub use yaml_bounds::{check as check_yaml_bounds, YamlBoundError, YamlBoundProblem, YamlBounds};

use sha2::{Digest, Sha256};
use std::path::Path;

/// A configuration ready to use.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    /// SHA-256 (hex) of the file's bytes: a reload with an equal checksum
    /// changes nothing. Exported as a metric so rollouts can be checked.
    pub checksum: String,
    /// Each one line, `FILE:LINE:COL: warning: ...`. Log them at load.
    pub warnings: Vec<String>,
}

/// Read, parse and validate a configuration file. Relative paths in it
/// (token files, CA files, `state_dir`, `cwd`) are relative to its folder.
pub fn load_file(path: &Path) -> Result<LoadedConfig, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let origin = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|e| ConfigError::Invalid {
        origin: origin.clone(),
        message: format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    load(&text, &origin, path.parent())
}

/// Parse and validate configuration text. `origin` names it in messages
/// (usually a file name). Relative paths stay relative to the working
/// directory.
pub fn load_str(text: &str, origin: &str) -> Result<LoadedConfig, ConfigError> {
    load(text, origin, None)
}

fn load(text: &str, origin: &str, base_dir: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    // Before any YAML parser expands an alias or descends a bracket.
    yaml_bounds::check(text.as_bytes(), &YamlBounds::CONFIG).map_err(|e| ConfigError::At {
        origin: origin.to_string(),
        line: e.line,
        column: e.column,
        message: format!("the YAML document {e}"),
    })?;
    let raw: raw::RawFile = if is_blank(text) {
        // An empty document is null to the YAML parser; treat it as `{}`.
        raw::RawFile::default()
    } else {
        parse_errors::parse(text, origin)?
    };
    let mut resolver = resolve::Resolver::new(text, origin, base_dir);
    let config = resolver.resolve(raw)?;
    Ok(LoadedConfig {
        config,
        checksum: checksum(text.as_bytes()),
        warnings: resolver.warnings,
    })
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn checksum(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    })
}

#[cfg(test)]
mod sources_tests;
#[cfg(test)]
mod taps_tests;
#[cfg(test)]
mod tests;
