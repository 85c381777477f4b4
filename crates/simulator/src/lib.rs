//! `mcp-exporter simulate`: a fault-injecting MCP server for tests, demos,
//! benchmarks and alert drills. Every scenario misbehaves deterministically
//! on the wire; docs/simulator.md says what a correct client observes.
//!
//! Layout: `scenario` (names), `behaviour` (what a scenario may change;
//! `behaviour/scenarios.rs` says what each one does, one place per
//! scenario), `config` (knobs, YAML), `engine` + `pages` (what to answer),
//! `reply` (what to write), `catalogue` + `cursor` (items and opaque
//! cursors), `per_kind`, `wire` (timed writes), `subscriptions` (2026-07-28
//! `subscriptions/listen` streams), one file per transport: `stdio`,
//! `http`, `sse`, and `registry` (the MCP Registry list API over the
//! virtual servers, served beside them over HTTP).

mod app;
mod behaviour;
mod catalogue;
pub mod config;
mod cursor;
mod echo;
mod engine;
mod http;
mod pages;
mod per_kind;
mod registry;
mod reply;
pub mod scenario;
mod sse;
mod stdio;
mod subscriptions;
mod wire;

pub use catalogue::identity as item_identity;
use config::{Knobs, ServerConfig};
use registry::config::RegistryKnobs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// How the simulator serves: the server side's choice of transport, not the
/// client's (`mcp_wire`'s transport kinds). The flag stays `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServingMode {
    /// Newline-delimited JSON on stdin/stdout.
    Stdio,
    /// Streamable HTTP: POST /mcp (or /mcp/<name> with --scenarios).
    Http,
    /// Legacy HTTP+SSE: GET /sse, POST /messages?sessionId=...
    Sse,
}

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// How to serve.
    #[arg(long, value_enum, default_value = "stdio")]
    pub transport: ServingMode,
    /// HTTP listen address (port 0 picks a free port; the bound address is
    /// printed to stderr as `listening on http://ADDR`).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// Serve many virtual servers from a YAML file at /mcp/<name>.
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Set TCP_NODELAY on accepted sockets (off by default to reproduce
    /// the priming-event stall of real SDK servers).
    #[arg(long)]
    pub tcp_nodelay: bool,
    /// HTTP sessions idle this long are forgotten.
    #[arg(long, default_value_t = 300)]
    pub session_idle_secs: u64,
    /// Most HTTP sessions kept at once (least recently used evicted).
    #[arg(long, default_value_t = 10_000)]
    pub max_sessions: usize,
    #[command(flatten)]
    pub knobs: Knobs,
}

pub async fn main(args: SimulateArgs) -> ExitCode {
    let (configs, registry, single) = match &args.scenarios {
        Some(path) => match config::load_scenarios(path, &args.knobs) {
            Ok(c) => (c.servers, c.registry, false),
            Err(e) => return usage_error(&e.to_string()),
        },
        None => match (
            ServerConfig::resolve(&args.knobs, "default"),
            RegistryKnobs::default().resolve(),
        ) {
            (Ok(c), Ok(registry)) => (vec![c], registry, true),
            (Err(e), _) => return usage_error(&e.to_string()),
            (_, Err(e)) => return usage_error(&e.to_string()),
        },
    };
    match args.transport {
        ServingMode::Stdio => {
            if !single {
                return usage_error("--scenarios needs --transport http or sse");
            }
            let Some(cfg) = configs.into_iter().next() else {
                return usage_error("no server configured");
            };
            stdio::run(Arc::new(engine::VirtualServer::new(cfg))).await
        }
        ServingMode::Http | ServingMode::Sse => {
            let opts = app::HttpOptions {
                listen: args.listen.clone(),
                tcp_nodelay: args.tcp_nodelay,
                legacy_sse: args.transport == ServingMode::Sse,
                session_idle: Duration::from_secs(args.session_idle_secs.max(1)),
                max_sessions: args.max_sessions.max(1),
                seed: args.knobs.seed.unwrap_or(0),
            };
            http::serve(configs, registry, single, opts).await
        }
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("mcp-exporter simulate: {msg}");
    ExitCode::from(2)
}

/// A simulated server serving HTTP inside the caller's runtime, on a
/// loopback port of its own (`check-client` starts a fresh one per
/// scenario). Dropping it stops the listener.
pub struct InProcessServer {
    addr: std::net::SocketAddr,
    legacy_sse: bool,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

/// Bounds of an [`InProcessServer`], whose client is not trusted.
#[derive(Debug, Clone, Copy)]
pub struct InProcessLimits {
    /// HTTP sessions kept at once (least recently used evicted).
    pub max_sessions: usize,
    pub session_idle: Duration,
}

/// Why an in-process server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] config::SimulatorConfigError),
    #[error("cannot listen on a loopback port: {0}")]
    Listen(std::io::Error),
}

impl InProcessServer {
    /// One virtual server of `knobs` on `127.0.0.1:0`, Streamable HTTP at
    /// `/mcp` or (when `legacy_sse`) HTTP+SSE at `/sse`.
    pub async fn start(
        knobs: &Knobs,
        legacy_sse: bool,
        limits: InProcessLimits,
    ) -> Result<InProcessServer, StartError> {
        let cfg = ServerConfig::resolve(knobs, "default")?;
        let registry = RegistryKnobs::default()
            .resolve()
            .map_err(config::SimulatorConfigError::from)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(StartError::Listen)?;
        let addr = listener.local_addr().map_err(StartError::Listen)?;
        let opts = app::HttpOptions {
            listen: addr.to_string(),
            tcp_nodelay: false,
            legacy_sse,
            session_idle: limits.session_idle,
            max_sessions: limits.max_sessions.max(1),
            seed: knobs.seed.unwrap_or(0),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        let task = tokio::spawn(async move {
            // An accept loop that fails has no one to tell: the client
            // sees connections refused, which the harness reports.
            let _ = http::serve_on(listener, vec![cfg], registry, true, opts, shutdown).await;
        });
        Ok(InProcessServer {
            addr,
            legacy_sse,
            stop: Some(stop),
            task,
        })
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// The MCP endpoint a client connects to.
    pub fn endpoint(&self) -> String {
        let path = if self.legacy_sse { "/sse" } else { "/mcp" };
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Streams a gone client left open must not keep the task.
        self.task.abort();
    }
}
