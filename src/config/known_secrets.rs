//! Every secret value a configuration knows, gathered once at load into one
//! [`SecretScrubber`] that each target and module shares.

use super::endpoint::EndpointConfig;
use super::sources::SourceKind;
use super::types::Config;
use mcp_wire::secrets::SecretScrubber;

/// Gather the secrets of `config` and hand the set to every target and module.
/// Tokens read from env or files are read now too: a stdio child printing its
/// environment, or a server echoing a header, must not show another target's
/// token. A token file rotated later is still scrubbed for its own target
/// (the poll reads it and adds it).
pub(super) fn attach(config: &mut Config) {
    let mut values: Vec<String> = Vec::new();
    for t in &config.targets {
        match &t.endpoint {
            EndpointConfig::Http(http) => values.extend(http.settings.secret_values()),
            EndpointConfig::Stdio(stdio) => values.extend(stdio.env.values().cloned()),
        }
    }
    for m in config.modules.values() {
        values.extend(m.http.secret_values());
    }
    for source in &config.discovery {
        let endpoint = match &source.kind {
            SourceKind::FileSd { .. } => continue,
            SourceKind::HttpSd(endpoint) => endpoint,
            SourceKind::Registry(registry) => &registry.endpoint,
        };
        values.extend(endpoint.http.settings.secret_values());
    }
    values.extend(
        config
            .tracing
            .headers
            .iter()
            .map(|(_, v)| v.expose().to_string()),
    );
    let scrubber = SecretScrubber::new(values);
    for t in &mut config.targets {
        t.known_secrets = scrubber.clone();
    }
    for m in config.modules.values_mut() {
        m.known_secrets = scrubber.clone();
    }
    config.known_secrets = scrubber;
}
