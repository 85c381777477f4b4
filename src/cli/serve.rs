//! `mcp-exporter [serve]`: load the config, start pollers and the web server.

use crate::baseline::BaselineStore;
use crate::config::taps::TapConfig;
use crate::config::web::WebServerConfig;
use crate::config::{self, LoadedConfig, TracingConfig};
use crate::poll::unix_now;
use crate::scheduler::{Service, Shard};
use crate::sinks::{Sinks, StatusStore};
use crate::tap::observe::ClientSinks;
use crate::tap::service::TapService;
use crate::telemetry::events::{BaselinesOpened, ConfigWarned, ExporterStarted, ReloadWithoutFile};
use crate::telemetry::metrics::{
    register_external_url, register_process_metrics, ClientMetrics, ConformanceMetrics,
    DiscoveryMetrics, ExporterMetrics, RenderMetrics, TapHealth, TargetMetrics, WebMetrics,
};
use crate::telemetry::spans::TraceSink;
use crate::web::server::{Server, ServerSettings};
use crate::web::{router, AppState};
use prometheus_client::registry::Registry;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Configuration file.
    #[arg(short = 'c', long = "config.file", default_value = "mcp-exporter.yaml")]
    pub config_file: PathBuf,
    /// Address for /metrics, /probe, the status page and the API.
    #[arg(long = "web.listen-address", default_value = "0.0.0.0:9733")]
    pub listen_address: String,
    /// Poll only the targets in shard i of n (stable hash of the name).
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// TLS and basic auth for our endpoints (Prometheus exporter-toolkit
    /// `web-config.yml`).
    #[arg(long = "web.config.file")]
    pub web_config_file: Option<PathBuf>,
    /// Allow `POST /-/reload` (SIGHUP always reloads).
    #[arg(long = "web.enable-lifecycle")]
    pub enable_lifecycle: bool,
    /// Client connections at most (default: 1024, at most half the open-file limit).
    #[arg(long = "web.max-connections")]
    pub max_connections: Option<usize>,
    /// `/probe` requests polling at once; they never take the scheduler's
    /// slots (`concurrency` in the config).
    #[arg(long = "probe.concurrency", default_value_t = crate::web::probe_budget::DEFAULT_PROBE_CONCURRENCY)]
    pub probe_concurrency: usize,
    /// `/probe` requests waiting for a slot; past it a request gets 503.
    #[arg(long = "probe.queue", default_value_t = crate::web::probe_budget::DEFAULT_PROBE_QUEUE)]
    pub probe_queue: usize,
    /// URL under which people reach this exporter (behind a proxy, say);
    /// alerts link to `<URL>/targets/NAME`. Default: http:// plus the
    /// listen address (the host name when listening on every address).
    #[arg(long = "web.external-url", value_parser = parse_external_url)]
    pub external_url: Option<String>,
    /// How long an event such as a silent shrink keeps its kind `degraded`
    /// (docs/verdict.md).
    #[arg(long = "verdict.event-window", default_value = "1h", value_parser = super::parse_duration)]
    pub event_window: std::time::Duration,
}

impl ServeArgs {
    /// The defaults of every flag, for `mcp-exporter tap` (which serves
    /// without a configuration file).
    pub(crate) fn for_taps() -> ServeArgs {
        ServeArgs {
            config_file: PathBuf::new(),
            listen_address: "0.0.0.0:9734".to_string(),
            shard: None,
            web_config_file: None,
            enable_lifecycle: false,
            max_connections: None,
            probe_concurrency: crate::web::probe_budget::DEFAULT_PROBE_CONCURRENCY,
            probe_queue: crate::web::probe_budget::DEFAULT_PROBE_QUEUE,
            external_url: None,
            event_window: Duration::from_secs(3600),
        }
    }
}

/// An absolute http(s) URL without credentials, query or fragment; kept
/// without its trailing slash so `/targets/NAME` can be appended.
fn parse_external_url(s: &str) -> Result<String, String> {
    let url = url::Url::parse(s).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("the external URL must be http or https".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the external URL must not carry credentials".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("the external URL must not have a query or fragment".into());
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// `http://ADDRESS`, with the host name in place of an unspecified address.
fn default_external_url(local: &std::net::SocketAddr) -> String {
    if local.ip().is_unspecified() {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        format!("http://{host}:{}", local.port())
    } else {
        format!("http://{local}")
    }
}

/// Why serving could not start: printed as `mcp-exporter: MESSAGE`, exit
/// status 2.
struct Unstartable(String);

pub async fn main(args: ServeArgs) -> ExitCode {
    match serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => unstartable(e),
    }
}

/// Load, build the sinks and the web server, bind, start polling, serve
/// until a shutdown signal.
async fn serve(args: ServeArgs) -> Result<(), Unstartable> {
    let loaded = load_config(&args.config_file)?;
    run(args, loaded, Vec::new(), true).await
}

/// `mcp-exporter tap`: the exporter with nothing to poll and one tap, its
/// own `/metrics`, status page and API on `args.listen_address`.
pub(crate) async fn serve_taps(args: ServeArgs, taps: Vec<TapConfig>) -> ExitCode {
    let empty = match config::load_str("", "mcp-exporter tap") {
        Ok(loaded) => loaded,
        Err(e) => return unstartable(Unstartable(e.to_string())),
    };
    match run(args, empty, taps, false).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => unstartable(e),
    }
}

fn unstartable(Unstartable(message): Unstartable) -> ExitCode {
    eprintln!("mcp-exporter: {message}");
    ExitCode::from(2)
}

/// Serve `loaded` (and `taps` besides the configured ones) until a shutdown
/// signal; `from_file`: SIGHUP and `/-/reload` read `args.config_file` again
/// (without a file there is nothing to reload, and SIGHUP is ignored).
async fn run(
    args: ServeArgs,
    loaded: LoadedConfig,
    taps: Vec<TapConfig>,
    from_file: bool,
) -> Result<(), Unstartable> {
    let traces = trace_sink(&loaded.config.tracing)?;
    let mut registry = Registry::default();
    let sinks = sinks(&loaded, traces.clone(), args.event_window, &mut registry);
    let web_metrics = WebMetrics::register(&mut registry);
    let server = web_server(&args, web_metrics.clone())?;
    let service = Service::new(loaded, args.config_file.clone(), args.shard, sinks);
    let listener = tokio::net::TcpListener::bind(&args.listen_address)
        .await
        .map_err(|e| Unstartable(format!("cannot listen on {}: {e}", args.listen_address)))?;
    let bound = listener.local_addr().ok();
    let local = bound
        .map(|a| a.to_string())
        .unwrap_or_else(|| args.listen_address.clone());
    let external_url = match (&args.external_url, bound) {
        (Some(u), _) => u.clone(),
        (None, Some(a)) => default_external_url(&a),
        (None, None) => format!("http://{local}"),
    };
    register_external_url(&mut registry, &external_url);
    register_process_metrics(&mut registry);
    let render_metrics = RenderMetrics::register(&mut registry);
    let probe_budget = Arc::new(crate::web::probe_budget::ProbeBudget::new(
        args.probe_concurrency,
        args.probe_queue,
        web_metrics.clone(),
    ));
    let tap_service = start_taps(
        &service,
        taps,
        &traces,
        args.event_window,
        web_metrics,
        &mut registry,
    )
    .await?;
    service.start();
    ExporterStarted {
        address: &local,
        // `mcp-exporter tap`: no configuration file to name.
        config: from_file.then_some(args.config_file.as_path()),
    }
    .emit();
    crate::telemetry::logging::announce_listening(&format!("{}://{local}", server.scheme()));

    tokio::spawn(reload_on_sighup(service.clone(), from_file));
    let app = router(AppState::new(
        service.clone(),
        Arc::new(registry),
        render_metrics,
        args.enable_lifecycle && from_file,
        probe_budget,
        tap_service.book(),
    ));
    let following = tokio::spawn(tap_service.clone().follow(service.clone()));
    server.serve(listener, app, shutdown_signal()).await;
    following.abort();
    tap_service.shut_down().await;
    service.shut_down().await;
    traces.shutdown().await;
    Ok(())
}

/// The configuration file, its warnings logged; its errors are printed
/// once, by [`main`].
fn load_config(path: &Path) -> Result<LoadedConfig, Unstartable> {
    let loaded = config::load_file(path).map_err(|e| Unstartable(e.to_string()))?;
    for warning in &loaded.warnings {
        ConfigWarned { warning }.emit();
    }
    Ok(loaded)
}

/// The OTLP span sink the `tracing:` section asks for (disabled without
/// an endpoint anywhere).
fn trace_sink(tc: &TracingConfig) -> Result<TraceSink, Unstartable> {
    TraceSink::from_settings(tc).map_err(|e| Unstartable(format!("tracing: {e}")))
}

/// Every sink of the scheduled polls, their families registered in
/// `registry`; baselines that cannot be read are logged and left out.
fn sinks(
    loaded: &LoadedConfig,
    traces: TraceSink,
    event_window: Duration,
    registry: &mut Registry,
) -> Sinks {
    let (baselines, problems) = BaselineStore::open(loaded.config.defaults.state_dir.as_deref());
    BaselinesOpened {
        problems: &problems,
        stale_temps_removed: baselines.stale_temps_removed(),
        dir: baselines.dir(),
    }
    .emit();
    let metrics = TargetMetrics::new(registry);
    let exporter = ExporterMetrics::new(
        registry,
        env!("CARGO_PKG_VERSION"),
        option_env!("MCP_EXPORTER_REVISION")
            .filter(|r| !r.is_empty())
            .unwrap_or("unknown"),
    );
    ExporterMetrics::register_stdio_orphans_killed(
        registry,
        mcp_wire::transport::process_tree::orphans_killed,
    );
    exporter.config_reloaded(true, unix_now());
    Sinks {
        baselines: Mutex::new(baselines),
        metrics,
        exporter,
        traces,
        status: StatusStore::new(loaded.config.web.history),
        event_window,
        conformance: ConformanceMetrics::register(registry),
        discovery: DiscoveryMetrics::register(registry),
        levels: Default::default(),
    }
}

/// The configured taps and `given` ones, their families in `registry`;
/// one that cannot start stops the start-up.
async fn start_taps(
    service: &Arc<Service>,
    given: Vec<TapConfig>,
    traces: &TraceSink,
    event_window: Duration,
    web: WebMetrics,
    registry: &mut Registry,
) -> Result<Arc<TapService>, Unstartable> {
    let taps = Arc::new(TapService::new(
        TapHealth::register(registry),
        Arc::new(ClientSinks {
            metrics: Some(ClientMetrics::register(registry)),
            traces: traces.clone(),
            book: Arc::default(),
            event_window,
        }),
        web,
    ));
    let configured = service.config().config.taps.clone();
    taps.start_all(&configured, &given)
        .await
        .map_err(|e| Unstartable(e.to_string()))?;
    Ok(taps)
}

/// Our HTTP(S) server: `--web.config.file` (TLS, basic auth) and the
/// connection cap.
fn web_server(args: &ServeArgs, metrics: WebMetrics) -> Result<Server, Unstartable> {
    let web_config = match &args.web_config_file {
        Some(path) => WebServerConfig::load(path)
            .map_err(|e| Unstartable(format!("--web.config.file: {e}")))?,
        None => Default::default(),
    };
    let mut server_settings = ServerSettings::new(web_config);
    if let Some(n) = args.max_connections {
        server_settings.max_connections = n.max(1);
    }
    Server::new(server_settings, metrics)
        .map_err(|e| Unstartable(format!("--web.config.file: {e}")))
}

async fn reload_on_sighup(service: Arc<Service>, from_file: bool) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            if !from_file {
                ReloadWithoutFile.emit();
                continue;
            }
            // Logged and counted by the service, whatever the outcome.
            let _ = service.reload().await;
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_urls_are_absolute_without_secrets_or_trailing_slash() {
        assert_eq!(
            parse_external_url("https://mcp.example.com/exporter/").as_deref(),
            Ok("https://mcp.example.com/exporter")
        );
        assert!(parse_external_url("https://u:p@mcp.example.com/").is_err());
        assert!(parse_external_url("https://mcp.example.com/?a=b").is_err());
        assert!(parse_external_url("ftp://mcp.example.com/").is_err());
        assert!(parse_external_url("/relative").is_err());
        let local: std::net::SocketAddr = "127.0.0.1:9733".parse().unwrap();
        assert_eq!(default_external_url(&local), "http://127.0.0.1:9733");
    }
}
