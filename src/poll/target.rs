//! The target one poll polls, and the one builder that makes it: from a
//! configured target (scheduler, `/probe`, `probe --config.file`) and from
//! `probe` command-line flags alike. Secrets are read here, at poll time, so
//! a rotated token file needs no reload; every secret value is remembered so
//! it can be scrubbed from anything the poll keeps.

use crate::config::{AllowList, ConfigError, EndpointConfig, HttpEndpoint, Secret, TargetConfig};
use mcp_listing::{HttpMode, Kind, ProtocolVersion, TransportKind, WalkLimits};
use mcp_wire::secrets::SecretScrubber;
use mcp_wire::session::Endpoint;
use mcp_wire::transport::http::HttpSpec;
use mcp_wire::transport::scope::{CredentialScope, UrlAllow};
use mcp_wire::transport::stdio::StdioSpec;
use mcp_wire::transport::TransportLimits;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything needed to poll one target once.
#[derive(Debug, Clone)]
pub struct PollTarget {
    pub name: String,
    pub endpoint: Endpoint,
    pub protocol: Option<ProtocolVersion>,
    pub kinds: Vec<Kind>,
    /// Kinds listed even when the server does not advertise them.
    pub forced_kinds: Vec<Kind>,
    /// `modern` is decided by the session; the poll sets it.
    pub walk: WalkLimits,
    pub transport: TransportLimits,
    /// After a complete multi-page listing, send one garbage cursor and
    /// record how the server answers.
    pub garbage_cursor_check: bool,
    /// Every secret to scrub from anything the report keeps: this target's
    /// and every other one the configuration knows.
    pub secrets: SecretScrubber,
}

/// Why a target could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// A secret (token file, env var) could not be read.
    #[error("{0}")]
    Secret(ConfigError),
    #[error("{0}")]
    Config(ConfigError),
    #[error("{path}: no target named {name:?}")]
    NoSuchTarget { path: PathBuf, name: String },
}

impl PollTarget {
    /// The poll inputs of a configured target; fails only when a secret is
    /// unreadable.
    pub fn from_config(
        target: &TargetConfig,
        stderr_tail_bytes: usize,
    ) -> Result<PollTarget, TargetError> {
        let builder = match &target.endpoint {
            EndpointConfig::Stdio(stdio) => TargetBuilder::stdio(
                &target.name,
                &stdio.command,
                &stdio.args,
                &stdio.env,
                stdio.cwd.clone(),
            )
            .inherit_env(stdio.inherit_env),
            EndpointConfig::Http(http) => {
                let bearer = match &http.settings.bearer_token {
                    Some(source) => Some(source.read().map_err(TargetError::Secret)?),
                    None => None,
                };
                TargetBuilder::http(
                    &target.name,
                    http_spec(http, bearer),
                    http.settings.transport,
                )
                .credential_scope(match &target.allow {
                    Some(allow) => CredentialScope::Allowed(Arc::clone(allow) as Arc<dyn UrlAllow>),
                    None => CredentialScope::UnderTarget,
                })
            }
        };
        Ok(builder
            // Every secret of the configuration, not only this target's.
            .known_secrets(&target.known_secrets)
            .protocol(target.protocol_version)
            .kinds(target.settings.kinds.clone(), target.forced_kinds.clone())
            .limits(
                target.settings.limits.walk_limits(),
                target.settings.limits.transport_limits(stderr_tail_bytes),
            )
            .garbage_cursor_check(target.settings.invalid_cursor_probe)
            .build())
    }

    /// `probe --config.file F --target NAME`: one configured target.
    pub fn from_config_file(path: &Path, name: &str) -> Result<PollTarget, TargetError> {
        let loaded = crate::config::load_file(path).map_err(TargetError::Config)?;
        let target = loaded
            .config
            .target(name)
            .ok_or_else(|| TargetError::NoSuchTarget {
                path: path.to_path_buf(),
                name: name.to_string(),
            })?;
        PollTarget::from_config(target, loaded.config.defaults.stderr_tail_bytes)
    }

    /// The transport a poll that fails before connecting is reported under:
    /// stdio, or the HTTP transport tried first.
    pub fn nominal_transport(&self) -> TransportKind {
        nominal_transport(matches!(self.endpoint, Endpoint::Stdio(_)))
    }
}

/// The transport reported for a configured target that never got as far as
/// a session (unreadable secret, hard deadline).
pub fn nominal_transport(stdio: bool) -> TransportKind {
    if stdio {
        TransportKind::Stdio
    } else {
        TransportKind::StreamableHttp
    }
}

/// The wire's view of a configured HTTP endpoint, with its token as read
/// for this poll: the one place secrets of an endpoint are exposed.
fn http_spec(http: &HttpEndpoint, bearer_token: Option<Secret>) -> HttpSpec {
    let settings = &http.settings;
    HttpSpec {
        url: Some(http.url.clone()),
        headers: settings
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
        bearer_token: bearer_token.map(|b| b.expose().to_string()),
        ca_file: settings.tls.ca_file.clone(),
        insecure_skip_verify: settings.tls.insecure_skip_verify,
        max_redirects: settings.max_redirects,
        scope: CredentialScope::UnderTarget,
    }
}

/// The one way to a [`PollTarget`]. Starts from the endpoint (which decides
/// what counts as a secret); everything else has the walker's and
/// transport's defaults until set.
#[derive(Debug)]
pub struct TargetBuilder {
    target: PollTarget,
}

impl TargetBuilder {
    /// A server started as a child; its environment values are secrets.
    pub fn stdio(
        name: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    ) -> TargetBuilder {
        let secrets = SecretScrubber::new(env.values().cloned());
        Self::with_endpoint(
            name,
            Endpoint::Stdio(StdioSpec {
                command: command.to_string(),
                args: args.to_vec(),
                env: env.clone(),
                cwd,
                // Ad hoc commands (the CLI) run as if started by hand;
                // configured targets get the minimal environment.
                inherit_env: true,
                scrubber: Default::default(),
            }),
            secrets,
        )
    }

    /// An HTTP server spoken to in `mode`; header values and the bearer
    /// token are secrets.
    pub fn http(name: &str, spec: HttpSpec, mode: HttpMode) -> TargetBuilder {
        let secrets = SecretScrubber::new(
            spec.headers
                .iter()
                .map(|(_, v)| v.clone())
                .chain(spec.bearer_token.clone()),
        );
        Self::with_endpoint(name, Endpoint::Http { spec, mode }, secrets)
    }

    fn with_endpoint(name: &str, endpoint: Endpoint, secrets: SecretScrubber) -> TargetBuilder {
        TargetBuilder {
            target: PollTarget {
                name: name.to_string(),
                endpoint,
                protocol: None,
                kinds: Kind::ALL.to_vec(),
                forced_kinds: Vec::new(),
                walk: WalkLimits::default(),
                transport: TransportLimits::default(),
                garbage_cursor_check: false,
                secrets,
            },
        }
    }

    /// Whether a stdio child gets the exporter's whole environment.
    pub fn inherit_env(mut self, inherit: bool) -> TargetBuilder {
        if let Endpoint::Stdio(spec) = &mut self.target.endpoint {
            spec.inherit_env = inherit;
        }
        self
    }

    /// Where else than its URL an HTTP target's requests may go (an SSE
    /// endpoint, a redirect); its own origin and directory until set.
    pub fn credential_scope(mut self, scope: CredentialScope) -> TargetBuilder {
        if let Endpoint::Http { spec, .. } = &mut self.target.endpoint {
            spec.scope = scope;
        }
        self
    }

    /// Scrub every secret the configuration knows from what this target's
    /// child writes and from details we keep.
    pub fn known_secrets(mut self, known: &SecretScrubber) -> TargetBuilder {
        self.target.secrets = self.target.secrets.with(known.values());
        if let Endpoint::Stdio(spec) = &mut self.target.endpoint {
            spec.scrubber = known.clone();
        }
        self
    }

    /// Use this protocol version instead of negotiating.
    pub fn protocol(mut self, protocol: Option<ProtocolVersion>) -> TargetBuilder {
        self.target.protocol = protocol;
        self
    }

    pub fn kinds(mut self, kinds: Vec<Kind>, forced: Vec<Kind>) -> TargetBuilder {
        self.target.kinds = kinds;
        self.target.forced_kinds = forced;
        self
    }

    pub fn limits(mut self, walk: WalkLimits, transport: TransportLimits) -> TargetBuilder {
        self.target.walk = walk;
        self.target.transport = transport;
        self
    }

    pub fn garbage_cursor_check(mut self, on: bool) -> TargetBuilder {
        self.target.garbage_cursor_check = on;
        self
    }

    pub fn build(self) -> PollTarget {
        self.target
    }
}

/// A module's `allow` is the wire's allow list for the targets bound to it.
impl UrlAllow for AllowList {
    fn allows(&self, url: &url::Url) -> bool {
        AllowList::allows(self, url)
    }
}
