//! Resolving where and how to export spans from the config's `tracing:`
//! section ([`TracingConfig`], the one type) plus the standard
//! OpenTelemetry environment variables. Pure: the environment is passed in
//! as a lookup function so tests never touch the process environment.

use super::error::TracingError;
use super::redact::redacted_endpoint;
use super::sampler::Sampler;
use crate::config::{OtlpProtocol, Secret, TracingConfig};

/// Everything needed to start the exporter, after config and env merged.
#[derive(Clone, PartialEq)]
pub struct Resolved {
    /// Full URL the exporter is given (for HTTP it includes `/v1/traces`).
    pub endpoint: String,
    pub protocol: OtlpProtocol,
    /// Headers from the config only: the OTLP exporter itself merges
    /// `OTEL_EXPORTER_OTLP[_TRACES]_HEADERS`, so they are not repeated here.
    pub headers: Vec<(String, String)>,
    pub service_name: String,
    pub sampler: Sampler,
    /// Spans allowed to wait for export before new polls are dropped.
    pub max_queue_spans: usize,
    /// Spans per export request.
    pub max_batch_spans: usize,
}

impl std::fmt::Debug for Resolved {
    // Header values are secrets: print names only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("endpoint", &redacted_endpoint(&self.endpoint))
            .field("protocol", &self.protocol)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("service_name", &self.service_name)
            .field("sampler", &self.sampler)
            .field("max_queue_spans", &self.max_queue_spans)
            .field("max_batch_spans", &self.max_batch_spans)
            .finish()
    }
}

pub const DEFAULT_SERVICE_NAME: &str = "mcp-exporter";
pub const DEFAULT_MAX_QUEUE_SPANS: usize = 8192;
pub const DEFAULT_MAX_BATCH_SPANS: usize = 512;
const TRACES_PATH: &str = "/v1/traces";

/// Merge config and env. `Ok(None)` means tracing is off: no endpoint
/// anywhere, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
pub fn resolve(
    cfg: &TracingConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Resolved>, TracingError> {
    let env = |name: &str| {
        env(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };

    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none")) {
        return Ok(None);
    }

    let protocol = resolve_protocol(cfg, &env)?;
    let Some(endpoint) = resolve_endpoint(cfg, &env, protocol)? else {
        return Ok(None);
    };
    check_header_names(&cfg.headers)?;
    let service_name = resolve_service_name(cfg, &env);

    let sampler = match cfg.sample_ratio {
        Some(ratio) => Sampler::ratio(ratio, "tracing.sample_ratio")?,
        None => Sampler::from_env(
            env("OTEL_TRACES_SAMPLER").as_deref(),
            env("OTEL_TRACES_SAMPLER_ARG").as_deref(),
        )?,
    };

    let max_queue_spans = env_usize(&env, "OTEL_BSP_MAX_QUEUE_SIZE", DEFAULT_MAX_QUEUE_SPANS)?;
    let max_batch_spans = env_usize(
        &env,
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
        DEFAULT_MAX_BATCH_SPANS,
    )?
    .min(max_queue_spans);

    Ok(Some(Resolved {
        endpoint,
        protocol,
        headers: cfg
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
        service_name,
        sampler,
        max_queue_spans,
        max_batch_spans,
    }))
}

/// Config first, then the signal-specific variable (used as-is, per the
/// OTLP exporter spec), then the generic base variable; `None` when none
/// is set.
fn resolve_endpoint(
    cfg: &TracingConfig,
    env: &dyn Fn(&str) -> Option<String>,
    protocol: OtlpProtocol,
) -> Result<Option<String>, TracingError> {
    let cfg_endpoint = cfg
        .endpoint
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty());
    let endpoint = if let Some(base) = cfg_endpoint {
        with_traces_path(check_url(base, "tracing.endpoint")?, protocol)
    } else if let Some(full) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        check_url(&full, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")?;
        full
    } else if let Some(base) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
        with_traces_path(check_url(&base, "OTEL_EXPORTER_OTLP_ENDPOINT")?, protocol)
    } else {
        return Ok(None);
    };
    Ok(Some(endpoint))
}

/// Header names safe to send as gRPC metadata and HTTP headers alike.
fn check_header_names(headers: &[(String, Secret)]) -> Result<(), TracingError> {
    for (name, _) in headers {
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !valid {
            return Err(TracingError::InvalidHeader(name.clone()));
        }
    }
    Ok(())
}

/// Config, then `OTEL_SERVICE_NAME`, then `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES`, then our default.
fn resolve_service_name(cfg: &TracingConfig, env: &dyn Fn(&str) -> Option<String>) -> String {
    cfg.service_name
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| env("OTEL_SERVICE_NAME"))
        .or_else(|| {
            env("OTEL_RESOURCE_ATTRIBUTES").and_then(|attrs| {
                attrs.split(',').find_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    (k.trim() == "service.name" && !v.trim().is_empty())
                        .then(|| v.trim().to_string())
                })
            })
        })
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string())
}

fn resolve_protocol(
    cfg: &TracingConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OtlpProtocol, TracingError> {
    if let Some(p) = cfg.protocol {
        return Ok(p);
    }
    let (value, source) = if let Some(p) = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
        (p, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    } else if let Some(p) = env("OTEL_EXPORTER_OTLP_PROTOCOL") {
        (p, "OTEL_EXPORTER_OTLP_PROTOCOL")
    } else {
        // The OTLP exporter spec's default.
        return Ok(OtlpProtocol::HttpProtobuf);
    };
    match value.trim() {
        // What some SDKs call http/protobuf.
        "http" => Ok(OtlpProtocol::HttpProtobuf),
        other => other
            .parse()
            .map_err(|_| TracingError::UnsupportedProtocol {
                setting: source,
                value: other.to_string(),
            }),
    }
}

fn env_usize(
    env: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    default: usize,
) -> Result<usize, TracingError> {
    match env(name) {
        None => Ok(default),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(TracingError::InvalidNumber {
                setting: name,
                value: v,
            }),
        },
    }
}

/// Only http(s) URLs with a host; the error never repeats the URL, which
/// may carry credentials.
fn check_url<'a>(raw: &'a str, source: &'static str) -> Result<&'a str, TracingError> {
    let url = url::Url::parse(raw).map_err(|e| TracingError::InvalidEndpoint {
        setting: source,
        reason: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(TracingError::InvalidEndpoint {
            setting: source,
            reason: format!("scheme must be http or https, not {:?}", url.scheme()),
        });
    }
    if url.host_str().is_none() {
        return Err(TracingError::InvalidEndpoint {
            setting: source,
            reason: "no host".into(),
        });
    }
    Ok(raw)
}

/// gRPC ignores the path; HTTP posts to `<base>/v1/traces` (query kept).
fn with_traces_path(base: &str, protocol: OtlpProtocol) -> String {
    match (protocol, url::Url::parse(base)) {
        (OtlpProtocol::HttpProtobuf, Ok(mut url)) => {
            let path = url.path().trim_end_matches('/').to_string();
            if !path.ends_with(TRACES_PATH) {
                url.set_path(&format!("{path}{TRACES_PATH}"));
            }
            url.to_string()
        }
        // Already validated by `check_url`; gRPC keeps the URL as given.
        _ => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// What the default configuration resolves to under `vars`.
    fn resolved_from_env(vars: &[(&str, &str)]) -> Resolved {
        resolved(&TracingConfig::default(), vars)
    }

    /// What `cfg` resolves to under `vars`, tracing on.
    fn resolved(cfg: &TracingConfig, vars: &[(&str, &str)]) -> Resolved {
        resolve(cfg, &env_of(vars)).unwrap().unwrap()
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn nothing_configured_is_disabled() {
        let r = resolve(&TracingConfig::default(), &env_of(&[])).unwrap();
        assert!(r.is_none());
    }

    #[test]
    fn generic_env_endpoint_gets_traces_path_for_http() {
        let r = resolved_from_env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")]);
        assert_eq!(r.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(r.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(r.service_name, DEFAULT_SERVICE_NAME);
        assert_eq!(r.sampler, Sampler::AlwaysOn);
    }

    #[test]
    fn signal_env_endpoint_is_used_as_is_and_beats_generic() {
        let r = resolved_from_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9999/custom"),
        ]);
        assert_eq!(r.endpoint, "http://b:9999/custom");
    }

    #[test]
    fn config_beats_env_and_grpc_keeps_path() {
        let cfg = TracingConfig {
            endpoint: Some("http://cfg:4317".into()),
            protocol: Some(OtlpProtocol::Grpc),
            service_name: Some("svc".into()),
            sample_ratio: Some(0.25),
            ..Default::default()
        };
        let r = resolved(
            &cfg,
            &[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://env:1/v1/traces",
                ),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_SERVICE_NAME", "envsvc"),
                ("OTEL_TRACES_SAMPLER", "always_off"),
            ],
        );
        assert_eq!(r.endpoint, "http://cfg:4317");
        assert_eq!(r.protocol, OtlpProtocol::Grpc);
        assert_eq!(r.service_name, "svc");
        assert_eq!(r.sampler, Sampler::Ratio(0.25));
    }

    #[test]
    fn env_protocol_sampler_and_service_name() {
        let r = resolved_from_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "team=x, service.name=from-attrs",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.5"),
        ]);
        assert_eq!(r.endpoint, "http://c:4317");
        assert_eq!(r.service_name, "from-attrs");
        assert_eq!(r.sampler, Sampler::Ratio(0.5));
    }

    #[test]
    fn sdk_disabled_and_exporter_none_turn_tracing_off() {
        for (k, v) in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ] {
            let r = resolve(
                &TracingConfig::default(),
                &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), (k, v)]),
            )
            .unwrap();
            assert!(r.is_none(), "{k}={v}");
        }
    }

    #[test]
    fn bad_values_are_errors_that_do_not_echo_the_url() {
        let cfg = TracingConfig {
            endpoint: Some("ftp://user:hunter2@c:21".into()),
            ..Default::default()
        };
        let err = resolve(&cfg, &env_of(&[])).unwrap_err().to_string();
        assert!(err.contains("tracing.endpoint"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");

        let cfg = TracingConfig {
            endpoint: Some("http://c:4318".into()),
            ..Default::default()
        };
        assert!(matches!(
            resolve(
                &cfg,
                &env_of(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])
            ),
            Err(TracingError::UnsupportedProtocol { .. })
        ));

        let cfg = TracingConfig {
            endpoint: Some("http://c:4318".into()),
            headers: vec![("bad header".into(), Secret::new("v"))],
            ..Default::default()
        };
        assert!(matches!(
            resolve(&cfg, &env_of(&[])),
            Err(TracingError::InvalidHeader(_))
        ));
    }

    #[test]
    fn debug_output_hides_header_values_and_credentials() {
        let cfg = TracingConfig {
            endpoint: Some("https://user:pw@c:4318/base?token=abc".into()),
            headers: vec![("authorization".into(), Secret::new("Bearer topsecret"))],
            ..Default::default()
        };
        let r = resolved(&cfg, &[]);
        let dbg = format!("{r:?}");
        assert!(!dbg.contains("topsecret"), "{dbg}");
        assert!(!dbg.contains("pw"), "{dbg}");
        assert!(!dbg.contains("token"), "{dbg}");
        assert!(dbg.contains("https://c:4318"), "{dbg}");
    }
}
