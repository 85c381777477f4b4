//! From a configured target to what one poll needs. Secrets are read here,
//! at poll time, so a rotated token file needs no reload.

use crate::config::{Endpoint as ConfigEndpoint, HttpTransport, TargetConfig};
use crate::mcp::session::{Endpoint, HttpMode};
use crate::mcp::transport::http::HttpSpec;
use crate::mcp::transport::stdio::StdioSpec;
use crate::mcp::transport::TransportLimits;
use crate::probe::ProbeTarget;

/// Build the poll inputs for `target`; fails only when a secret is unreadable.
pub fn probe_target(
    target: &TargetConfig,
    stderr_tail_bytes: usize,
) -> Result<ProbeTarget, String> {
    let mut secrets = Vec::new();
    let endpoint = match &target.endpoint {
        ConfigEndpoint::Stdio {
            command,
            args,
            env,
            cwd,
            inherit_env,
        } => {
            secrets.extend(env.values().cloned());
            Endpoint::Stdio(StdioSpec {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                cwd: cwd.clone(),
                inherit_env: *inherit_env,
                scrubber: target.known_secrets.clone(),
            })
        }
        ConfigEndpoint::Http {
            url,
            transport,
            headers,
            bearer_token,
            tls,
            max_redirects,
        } => {
            let bearer = match bearer_token {
                Some(source) => Some(source.read().map_err(|e| e.to_string())?),
                None => None,
            };
            let headers: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.clone(), v.expose().to_string()))
                .collect();
            secrets.extend(headers.iter().map(|(_, v)| v.clone()));
            secrets.extend(bearer.as_ref().map(|b| b.expose().to_string()));
            Endpoint::Http {
                spec: HttpSpec {
                    url: Some(url.clone()),
                    headers,
                    bearer_token: bearer.map(|b| b.expose().to_string()),
                    ca_file: tls.ca_file.clone(),
                    insecure_skip_verify: tls.insecure_skip_verify,
                    max_redirects: *max_redirects,
                },
                mode: match transport {
                    HttpTransport::Auto => HttpMode::Auto,
                    HttpTransport::StreamableHttp => HttpMode::StreamableHttp,
                    HttpTransport::Sse => HttpMode::Sse,
                },
            }
        }
    };
    // Every secret of the configuration, not only this target's.
    secrets.extend(target.known_secrets.values().map(str::to_string));
    Ok(ProbeTarget {
        name: target.name.clone(),
        endpoint,
        protocol: target.protocol_version.clone(),
        kinds: target.kinds.clone(),
        forced_kinds: target.forced_kinds.clone(),
        walk: target.walk_limits(false),
        transport: TransportLimits {
            max_response_bytes: target.limits.max_response_bytes,
            connect_timeout: target.limits.connect_timeout,
            stderr_tail_bytes,
        },
        invalid_cursor_probe: target.invalid_cursor_probe,
        secrets,
    })
}

/// `probe --config.file F --target NAME`: one configured target.
pub fn probe_target_from_file(path: &std::path::Path, name: &str) -> Result<ProbeTarget, String> {
    let loaded = crate::config::load_file(path).map_err(|e| e.to_string())?;
    let target = loaded
        .config
        .target(name)
        .ok_or_else(|| format!("{}: no target named {name:?}", path.display()))?;
    probe_target(target, loaded.config.defaults.stderr_tail_bytes)
}
