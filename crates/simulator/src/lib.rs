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
