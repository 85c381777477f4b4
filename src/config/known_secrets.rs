//! Every secret value a configuration knows, gathered once at load into one
//! [`SecretScrubber`] that each target and module shares.

use super::sources::SourceKind;
use super::types::{Config, EndpointConfig};
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
            EndpointConfig::Http {
                headers,
                bearer_token,
                ..
            } => {
                values.extend(headers.iter().map(|(_, v)| v.expose().to_string()));
                values.extend(
                    bearer_token
                        .as_ref()
                        .and_then(|s| s.read().ok())
                        .map(|s| s.expose().to_string()),
                );
            }
            EndpointConfig::Stdio { env, .. } => values.extend(env.values().cloned()),
        }
    }
    for m in config.modules.values() {
        values.extend(m.headers.iter().map(|(_, v)| v.expose().to_string()));
        values.extend(
            m.bearer_token
                .as_ref()
                .and_then(|s| s.read().ok())
                .map(|s| s.expose().to_string()),
        );
    }
    for source in &config.discovery {
        let endpoint = match &source.kind {
            SourceKind::FileSd { .. } => continue,
            SourceKind::HttpSd(endpoint) => endpoint,
            SourceKind::Registry(registry) => &registry.endpoint,
        };
        values.extend(endpoint.headers.iter().map(|(_, v)| v.expose().to_string()));
        values.extend(
            endpoint
                .bearer_token
                .as_ref()
                .and_then(|s| s.read().ok())
                .map(|s| s.expose().to_string()),
        );
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
