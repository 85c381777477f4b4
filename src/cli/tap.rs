//! `mcp-exporter tap`: one tap without a configuration file — a transparent
//! proxy in front of one upstream MCP endpoint that shows which clients walk
//! the whole catalogue — with its own `/metrics`, status page and
//! `/api/clients` on `--web.listen-address`; or, with `--stdio -- CMD
//! ARGS…`, a wrapper a client starts in place of its stdio server
//! (docs/clients.md).

use super::serve::{serve_taps, ServeArgs};
use super::{FlagBytes, FlagDuration};
use crate::config::taps::{
    TapConfig, TapListener, TapMerge, TapOrigin, TapReport, TapRoute, TapRoutes, TapUpstream,
    DEFAULT_REPORT_MAX_BYTES, DEFAULT_UPSTREAM_TIMEOUT, TAP_LIMITS,
};
use crate::config::taps::{
    DEFAULT_ABANDON_AFTER, DEFAULT_CLIENT_IDLE, DEFAULT_INSPECT_BYTES, DEFAULT_LEARN_EVERY,
    DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CLIENT_ROUTES, DEFAULT_MAX_MERGED_BYTES, DEFAULT_MAX_ROUTES,
    DEFAULT_MAX_SESSIONS, DEFAULT_MERGE_PAGES_PER_SECOND, DEFAULT_MERGE_PAGE_BURST,
    DEFAULT_MERGE_REUSE_FOR,
};
use crate::config::TlsConfig;
use crate::config::TracingConfig;
use crate::tap::observe::ClientSinks;
use crate::tap::setup;
use crate::tap::stdio::{run as run_stdio_tap, StdioTapSpec};
use crate::telemetry::spans::TraceSink;
use mcp_observer::RouteRule;
use mcp_tap::apps::{AppError, AppRule};
use mcp_tap::StdioTapSettings;
use mcp_wire::transport::stdio::StdioSpec;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct TapArgs {
    /// Where clients connect in place of the upstream (`host:port`).
    #[arg(long, required_unless_present = "stdio", conflicts_with = "stdio")]
    pub listen: Option<String>,
    /// The upstream MCP endpoint, `http://` or `https://` (no credentials in
    /// it). Request paths are forwarded to its origin unchanged.
    #[arg(long, required_unless_present = "stdio", conflicts_with = "stdio")]
    pub upstream: Option<url::Url>,
    /// Wrap a stdio server: run `-- CMD ARGS…` and forward its stdin and
    /// stdout line by line (a client's config runs this command in place of
    /// the server's).
    #[arg(long, requires = "command")]
    pub stdio: bool,
    /// The stdio server's command and arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// A variable of our environment the stdio server gets (repeatable;
    /// besides PATH, HOME and LANG).
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Give the stdio server our whole environment.
    #[arg(long = "inherit-env")]
    pub inherit_env: bool,
    /// The tap's name: the `tap` label of its series.
    #[arg(long, default_value = "tap")]
    pub name: String,
    /// A listing whose handed-out cursor does not come back within this is
    /// `abandoned`.
    #[arg(long = "abandon-after", default_value_t = FlagDuration(DEFAULT_ABANDON_AFTER))]
    pub abandon_after: FlagDuration,
    /// A request header naming the client (a gateway's `X-Client-Id`, say);
    /// it takes precedence over `--app`, `clientInfo` and the User-Agent.
    #[arg(long = "client-header")]
    pub client_header: Option<http::HeaderName>,
    /// An app, `NAME=FROM[,FROM…]` (repeatable, first match wins): the
    /// clients connecting from these address ranges (`10.1.0.0/16`,
    /// `127.0.0.2`), and/or sending `user-agent:PRODUCT`, are the app NAME,
    /// whatever they call themselves (`desk=10.1.0.0/16`,
    /// `nightly=user-agent:report-bot`).
    #[arg(long = "app", value_name = "NAME=FROM", value_parser = parse_app)]
    pub apps: Vec<AppRule>,
    /// Client identities kept apart per tap; later ones count as `other`.
    #[arg(long = "max-clients", default_value_t = DEFAULT_MAX_CLIENTS)]
    pub max_clients: usize,
    /// Sessions the observer follows at once (a gateway's open sessions);
    /// past it the one quiet longest is forgotten and counted
    /// (`observer_full`). About 2 KB each with a listing in progress.
    #[arg(long = "max-sessions", default_value_t = DEFAULT_MAX_SESSIONS, value_parser = parse_positive)]
    pub max_sessions: usize,
    /// A client identity with no list request for this long is forgotten,
    /// its series with it (a dead client frees its `--max-clients` slot).
    #[arg(long = "client-idle", default_value_t = FlagDuration(DEFAULT_CLIENT_IDLE))]
    pub client_idle: FlagDuration,
    /// Client connections served at once. By default the tap's share of the
    /// open-file limit (a quarter of it); this may lower it, not raise it.
    #[arg(long = "max-connections", value_parser = parse_positive)]
    pub max_connections: Option<usize>,
    /// A route of the upstream, `[NAME=]PATH` (repeatable): a path
    /// (`alpha=/mcp/alpha`) or a pattern whose `{var}` segments match any
    /// one segment (`/servers/{id}/mcp`, `server-{id}=/servers/{id}/mcp`).
    /// Each route's clients are compared with that route's catalogue.
    #[arg(long = "route", value_name = "[NAME=]PATH", value_parser = parse_route)]
    pub routes: Vec<RouteRule>,
    /// Routes made from paths (a pattern's match, a path learned) besides
    /// the named ones; later ones count as `other`.
    #[arg(long = "max-routes", default_value_t = DEFAULT_MAX_ROUTES)]
    pub max_routes: usize,
    /// (client, route) pairs told apart; past it a client's further routes
    /// count as `other`.
    #[arg(long = "max-client-routes", default_value_t = DEFAULT_MAX_CLIENT_ROUTES)]
    pub max_client_routes: usize,
    /// A path no `--route` matches becomes a route of its own (`false`:
    /// it counts as `other`).
    #[arg(long = "learn-paths", default_value_t = true, action = clap::ArgAction::Set)]
    pub learn_paths: bool,
    /// Walk each route (the upstream's path, each `--route` path, each path
    /// clients use) with the walker's guards to learn its catalogue up
    /// front, again every `--learn-every`.
    #[arg(long = "learn-catalogue")]
    pub learn_catalogue: bool,
    /// How often `--learn-catalogue` walks each route again.
    #[arg(long = "learn-every", default_value_t = FlagDuration(DEFAULT_LEARN_EVERY))]
    pub learn_every: FlagDuration,
    /// Answer this client identity's first-page list requests with the whole
    /// catalogue, walked by the tap (repeatable; `all` for every client).
    /// Its upstream's page 1 goes unchanged whenever that walk is not complete.
    #[arg(long = "merge-pages", value_name = "CLIENT")]
    pub merge_pages: Vec<String>,
    /// Most bytes of one merged answer; past it page 1 goes unchanged.
    #[arg(long = "max-merged-bytes", default_value_t = FlagBytes(DEFAULT_MAX_MERGED_BYTES))]
    pub max_merged_bytes: FlagBytes,
    /// A request header whose value changes what the upstream answers (a
    /// tenant header), besides Authorization, Proxy-Authorization, Cookie,
    /// X-Api-Key, Api-Key and X-Auth-Token: a merged answer is reused only
    /// for the same values (repeatable).
    #[arg(long = "merge-credential-header", value_name = "NAME")]
    pub merge_credential_headers: Vec<http::HeaderName>,
    /// Page requests merging may send the upstream of its own at once...
    #[arg(long = "merge-page-burst", default_value_t = DEFAULT_MERGE_PAGE_BURST, value_parser = clap::value_parser!(u32).range(1..))]
    pub merge_page_burst: u32,
    /// ...and per second after that; past it page 1 goes unchanged.
    #[arg(long = "merge-pages-per-second", default_value_t = DEFAULT_MERGE_PAGES_PER_SECOND, value_parser = clap::value_parser!(u32).range(1..))]
    pub merge_pages_per_second: u32,
    /// How long a merged answer is reused for the same session and
    /// credentials (a `list_changed` ends it sooner); `0s`: walk every time.
    #[arg(long = "merge-reuse-for", default_value_t = FlagDuration(DEFAULT_MERGE_REUSE_FOR))]
    pub merge_reuse_for: FlagDuration,
    /// Most bytes of one message the tap reads (the message is forwarded whole).
    #[arg(long = "inspect-bytes", default_value_t = FlagBytes(DEFAULT_INSPECT_BYTES))]
    pub inspect_bytes: FlagBytes,
    /// Append one JSON object per client listing to this file.
    #[arg(long = "report")]
    pub report: Option<PathBuf>,
    /// The report file's bound; past it listings are left out.
    #[arg(long = "report.max-bytes", default_value_t = FlagBytes(DEFAULT_REPORT_MAX_BYTES))]
    pub report_max_bytes: FlagBytes,
    /// A log line per client listing (always on with `--stdio`).
    #[arg(long = "log.listings")]
    pub log_listings: bool,
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

/// `--route [NAME=]PATH`: a path starts with `/`, so a `=` before the
/// first `/` ends a name.
fn parse_route(s: &str) -> Result<RouteRule, String> {
    let (name, path) = match s.split_once('=') {
        Some((name, path)) if !name.starts_with('/') => (Some(name), path),
        _ => (None, s),
    };
    RouteRule::parse(name, path).map_err(|e| e.to_string())
}

/// `--app NAME=FROM[,FROM…]`: address ranges, and `user-agent:PRODUCT`.
fn parse_app(s: &str) -> Result<AppRule, String> {
    let Some((name, from)) = s.split_once('=') else {
        return Err("expected NAME=FROM[,FROM…] (`desk=10.1.0.0/16`)".into());
    };
    let mut ranges = Vec::new();
    let mut user_agent = None;
    for item in from.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.strip_prefix("user-agent:") {
            Some(product) => user_agent = Some(product),
            None => ranges.push(item.parse().map_err(|e: AppError| e.to_string())?),
        }
    }
    AppRule::new(name, ranges, user_agent).map_err(|e| e.to_string())
}

fn parse_positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s} is not a number above zero")),
    }
}

pub async fn main(args: TapArgs) -> ExitCode {
    if args.stdio {
        return stdio(args).await;
    }
    let (Some(listen), Some(upstream)) = (args.listen.clone(), args.upstream.clone()) else {
        return usage("--listen and --upstream are required without --stdio");
    };
    if args.max_routes == 0 || args.max_client_routes == 0 {
        return usage("--max-routes and --max-client-routes must be greater than zero");
    }
    let tap = tap_config(&args, listen, upstream);
    let serve = ServeArgs {
        listen_address: args.web_listen_address,
        web_config_file: args.web_config_file,
        ..ServeArgs::for_taps()
    };
    serve_taps(serve, vec![tap]).await
}

/// The flags as the one shape a tap starts from, as a configured tap's
/// keys are; what no flag sets is a configured tap's default.
fn tap_config(args: &TapArgs, listen: String, upstream: url::Url) -> TapConfig {
    TapConfig {
        name: args.name.clone(),
        origin: TapOrigin::Flags,
        listener: TapListener {
            address: listen,
            tls: None,
        },
        upstream: TapUpstream {
            url: upstream,
            tls: TlsConfig {
                ca_file: args.upstream_ca_file.clone(),
                insecure_skip_verify: args.upstream_insecure_skip_verify,
            },
            timeout: DEFAULT_UPSTREAM_TIMEOUT,
        },
        target: None,
        abandon_after: args.abandon_after.0,
        inspect_bytes: args.inspect_bytes.0,
        max_clients: args.max_clients,
        max_sessions: args.max_sessions,
        client_idle: args.client_idle.0,
        max_connections: args.max_connections,
        client_header: args.client_header.as_ref().map(|h| h.as_str().to_string()),
        apps: args.apps.clone(),
        merge: tap_merge(args),
        limits: TAP_LIMITS,
        report: tap_report(args),
        log_listings: args.log_listings,
        routes: TapRoutes {
            named: (args.routes.iter())
                .map(|rule| TapRoute {
                    rule: rule.clone(),
                    target: None,
                })
                .collect(),
            max_routes: args.max_routes,
            max_client_routes: args.max_client_routes,
            learn_paths: args.learn_paths,
            learn_every: args.learn_catalogue.then_some(args.learn_every.0),
        },
    }
}

fn tap_merge(args: &TapArgs) -> TapMerge {
    TapMerge {
        clients: args.merge_pages.clone(),
        max_merged_bytes: args.max_merged_bytes.0,
        credential_headers: (args.merge_credential_headers.iter())
            .map(|h| h.as_str().to_string())
            .collect(),
        page_burst: args.merge_page_burst,
        pages_per_second: args.merge_pages_per_second,
        reuse_for: args.merge_reuse_for.0,
    }
}

fn tap_report(args: &TapArgs) -> Option<TapReport> {
    args.report.clone().map(|path| TapReport {
        path,
        max_bytes: args.report_max_bytes.0,
    })
}

fn usage(message: &str) -> ExitCode {
    super::print_stderr(&format!("mcp-exporter tap: {message}\n"));
    ExitCode::from(2)
}

/// `--stdio`: the server behind us until it exits; we exit as it did.
async fn stdio(args: TapArgs) -> ExitCode {
    // A line per listing on stderr always: a stdio tap has no status page.
    let listings = match setup::listing_sinks(tap_report(&args).as_ref(), true) {
        Ok(l) => l,
        Err(e) => return usage(&e.to_string()),
    };
    let Some((command, rest)) = args.command.split_first() else {
        return usage("--stdio needs the server's command after --");
    };
    let env = args
        .env
        .iter()
        .filter_map(|name| Some((name.clone(), std::env::var(name).ok()?)))
        .collect();
    let server = StdioSpec {
        command: command.clone(),
        args: rest.to_vec(),
        env,
        cwd: None,
        inherit_env: args.inherit_env,
        scrubber: Default::default(),
    };
    let mut settings = StdioTapSettings::new(server);
    settings.inspect_bytes = args.inspect_bytes.usize();
    settings.merge = setup::merge_settings(&tap_merge(&args), &TAP_LIMITS);
    let traces = match TraceSink::from_settings(&TracingConfig::default()) {
        Ok(t) => t,
        Err(e) => return usage(&format!("tracing: {e}")),
    };
    let sinks = Arc::new(ClientSinks {
        metrics: None,
        traces: traces.clone(),
        book: Arc::default(),
        event_window: Duration::from_secs(3600),
    });
    let spec = StdioTapSpec {
        name: Arc::from(args.name.as_str()),
        settings,
        abandon_after: args.abandon_after.0,
        max_clients: args.max_clients,
        listings,
    };
    let status = run_stdio_tap(spec, sinks).await;
    traces.shutdown().await;
    match status {
        Ok(status) => exit_code(status),
        Err(e) => {
            super::print_stderr(&format!("mcp-exporter tap: {}\n", e.cause));
            ExitCode::from(127)
        }
    }
}

/// The server's exit status as ours: its code, or 128 + the signal.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::parse_route;

    /// A tap of the flags and one of the file with the same keys are one
    /// tap: every default is declared once.
    #[test]
    fn the_flags_default_as_a_configured_tap_does() {
        use super::{tap_config, TapArgs, TapOrigin};
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            tap: TapArgs,
        }
        let (listen, upstream) = ("127.0.0.1:9101", "http://127.0.0.1:8080/mcp");
        let cli = Cli::parse_from(["tap", "--listen", listen, "--upstream", upstream]);
        let flags = tap_config(&cli.tap, listen.into(), upstream.parse().unwrap());
        let text = format!(
            "taps:\n  - name: tap\n    listen: {listen}\n    upstream: {{url: {upstream}}}\n"
        );
        let loaded = crate::config::load_str(&text, "t.yaml").expect("loads");
        let file = loaded.config.taps[0].clone();
        assert_eq!(
            (file.origin, flags.origin),
            (TapOrigin::File, TapOrigin::Flags)
        );
        assert_eq!(
            flags,
            super::TapConfig {
                origin: TapOrigin::Flags,
                ..file
            }
        );
    }

    #[test]
    fn a_byte_flag_shows_its_default_as_the_configuration_writes_it() {
        use crate::cli::FlagBytes;
        for (bytes, shown) in [
            (8 << 20, "8MiB"),
            (3 << 30, "3GiB"),
            (1536, "1536"),
            (0, "0"),
            (2048, "2KiB"),
        ] {
            assert_eq!(FlagBytes(bytes).to_string(), shown);
            assert_eq!(shown.parse::<FlagBytes>(), Ok(FlagBytes(bytes)));
        }
    }

    #[test]
    fn an_app_flag_names_ranges_and_a_user_agent() {
        use super::parse_app;
        let desk = parse_app("desk=127.0.0.2,10.1.0.0/16").unwrap();
        assert_eq!(desk.name(), "desk");
        let apps = mcp_tap::apps::Apps::new(vec![
            desk,
            parse_app("nightly=user-agent:report-bot").unwrap(),
            parse_app("both=10.9.0.0/16, user-agent:x").unwrap(),
        ])
        .unwrap();
        let app = |peer: &str, ua: &str| {
            apps.app_of(Some(peer.parse().unwrap()), Some(ua.as_bytes()))
                .map(|c| c.name)
        };
        assert_eq!(app("10.1.3.4", "httpx").as_deref(), Some("desk"));
        assert_eq!(app("192.0.2.1", "report-bot/2").as_deref(), Some("nightly"));
        assert_eq!(app("10.9.0.1", "x/1").as_deref(), Some("both"));
        assert_eq!(app("10.9.0.1", "y/1"), None);
        for bad in [
            "desk",
            "desk=",
            "desk=10.0.0.0/40",
            "other=10.0.0.1",
            "=10.0.0.1",
        ] {
            assert!(parse_app(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_route_flag_is_a_path_with_an_optional_name() {
        let named = parse_route("alpha=/mcp/alpha").unwrap();
        assert_eq!(
            (named.name(), named.literal_path().as_deref()),
            (Some("alpha"), Some("/mcp/alpha"))
        );
        let pattern = parse_route("server-{id}=/servers/{id}/mcp").unwrap();
        assert!(!pattern.is_literal());
        let bare = parse_route("/q?a=b").unwrap();
        assert_eq!(bare.name(), None, "a `=` after the first `/` is the path's");
        assert_eq!(bare.literal_path().as_deref(), Some("/q"), "no query");
        assert!(parse_route("alpha=mcp")
            .unwrap_err()
            .contains("start with `/`"));
    }
}
