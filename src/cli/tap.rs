//! `mcp-exporter tap`: one tap without a configuration file — a transparent
//! proxy in front of one upstream MCP endpoint that shows which clients walk
//! the whole catalogue — with its own `/metrics`, status page and
//! `/api/clients` on `--web.listen-address`.

use super::serve::{serve_taps, ServeArgs};
use crate::tap::queue::QueueBudget;
use crate::tap::run::TapSpec;
use mcp_tap::{MergeClients, MergeSettings, TapLimits, TapSettings, UpstreamTls};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct TapArgs {
    /// Where clients connect in place of the upstream (`host:port`).
    #[arg(long)]
    pub listen: String,
    /// The upstream MCP endpoint, `http://` or `https://` (no credentials in
    /// it). Request paths are forwarded to its origin unchanged.
    #[arg(long)]
    pub upstream: url::Url,
    /// The tap's name: the `tap` label of its series.
    #[arg(long, default_value = "tap")]
    pub name: String,
    /// A listing whose handed-out cursor does not come back within this is
    /// `abandoned`.
    #[arg(long = "abandon-after", default_value = "30s", value_parser = super::parse_duration)]
    pub abandon_after: Duration,
    /// A request header naming the client (a gateway's `X-Client-Id`, say);
    /// it takes precedence over `clientInfo` and the User-Agent.
    #[arg(long = "client-header")]
    pub client_header: Option<http::HeaderName>,
    /// Client identities kept apart per tap; later ones count as `other`.
    #[arg(long = "max-clients", default_value_t = DEFAULT_MAX_CLIENTS)]
    pub max_clients: usize,
    /// Answer this client identity's first-page list requests with the whole
    /// catalogue, walked by the tap (repeatable; `all` for every client).
    /// Its upstream's page 1 goes unchanged whenever that walk is not complete.
    #[arg(long = "merge-pages", value_name = "CLIENT")]
    pub merge_pages: Vec<String>,
    /// Most bytes of one merged answer; past it page 1 goes unchanged.
    #[arg(long = "max-merged-bytes", default_value = "8MiB", value_parser = parse_bytes)]
    pub max_merged_bytes: usize,
    /// Most bytes of one message the tap reads (the message is forwarded whole).
    #[arg(long = "inspect-bytes", default_value = "4MiB", value_parser = parse_bytes)]
    pub inspect_bytes: usize,
    /// PEM roots to trust for an `https://` upstream, besides the system's.
    #[arg(long = "upstream.ca-file")]
    pub upstream_ca_file: Option<PathBuf>,
    /// Accept any certificate from an `https://` upstream.
    #[arg(long = "upstream.insecure-skip-verify")]
    pub upstream_insecure_skip_verify: bool,
    /// Address for the tap's `/metrics`, status page and `/api/clients`.
    #[arg(long = "web.listen-address", default_value = "0.0.0.0:9734")]
    pub web_listen_address: String,
    /// TLS and basic auth for those endpoints (exporter-toolkit `web-config.yml`).
    #[arg(long = "web.config.file")]
    pub web_config_file: Option<PathBuf>,
}

/// Client identities kept apart per tap by default.
pub const DEFAULT_MAX_CLIENTS: usize = 64;

fn parse_bytes(s: &str) -> Result<usize, String> {
    let n = crate::config::parse_byte_size(s)?;
    usize::try_from(n).map_err(|_| format!("{s} is too large"))
}

pub async fn main(args: TapArgs) -> ExitCode {
    let spec = spec(&args);
    let serve = ServeArgs {
        listen_address: args.web_listen_address,
        web_config_file: args.web_config_file,
        ..ServeArgs::for_taps()
    };
    serve_taps(serve, vec![spec]).await
}

fn spec(args: &TapArgs) -> TapSpec {
    let mut settings = TapSettings::new(args.upstream.clone());
    settings.upstream_tls = UpstreamTls {
        ca_file: args.upstream_ca_file.clone(),
        insecure_skip_verify: args.upstream_insecure_skip_verify,
    };
    settings.client_header = args.client_header.clone();
    settings.merge = MergeSettings {
        clients: merge_clients(&args.merge_pages),
        max_merged_bytes: args.max_merged_bytes,
        ..MergeSettings::default()
    };
    settings.limits = TapLimits {
        inspect_bytes: args.inspect_bytes,
        ..TapLimits::default()
    };
    TapSpec {
        name: Arc::from(args.name.as_str()),
        listen: args.listen.clone(),
        settings,
        queue: QueueBudget::default(),
        abandon_after: args.abandon_after,
        max_clients: args.max_clients,
    }
}

/// `--merge-pages`: nobody, `all`, or the identities named (compared as the
/// tap labels them).
pub fn merge_clients(names: &[String]) -> MergeClients {
    if names.is_empty() {
        MergeClients::Nobody
    } else if names.iter().any(|n| n == "all") {
        MergeClients::All
    } else {
        MergeClients::Named(names.iter().map(|n| mcp_tap::identity::label(n)).collect())
    }
}
