//! The command line only: parse, set up logging, hand over to a subcommand.

use clap::{Parser, Subcommand};
use mcp_exporter::cli::{
    check, check_client, check_config, discover, probe, serve, simulate_client, tap,
};
use mcp_exporter::telemetry::logging;
use mcp_wire::transport::process_tree;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mcp-exporter",
    version,
    about = "Proves MCP servers and gateways hand out their whole catalogue"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: serve::ServeArgs,
    /// Only log messages with this severity or above (as Prometheus
    /// exporters name it; `RUST_LOG` overrides it).
    #[arg(long = "log.level", value_enum, default_value = "info", global = true)]
    log_level: logging::LogLevel,
    /// Output format of log messages: `logfmt` as Prometheus exporters
    /// write it, `json`, or `text` (tracing's, for people at a terminal).
    #[arg(
        long = "log.format",
        value_enum,
        default_value = "logfmt",
        global = true
    )]
    log_format: logging::LogFormat,
}

#[derive(Subcommand)]
enum Command {
    /// Poll the configured targets and serve /metrics (the default).
    Serve(serve::ServeArgs),
    /// List one server now and show every page.
    Probe(probe::ProbeArgs),
    /// Check one server's pagination against the spec, rule by rule (CI-friendly).
    Check(check::CheckArgs),
    /// Grade an MCP client's pagination: run it against simulated servers, scenario by scenario (CI-friendly).
    CheckClient(check_client::CheckClientArgs),
    /// Validate a configuration file.
    CheckConfig(check_config::CheckConfigArgs),
    /// Refresh every discovery source once and show what it would yield and leave out, without polling.
    Discover(discover::DiscoverArgs),
    /// Put a transparent proxy in front of one MCP server and see which clients read the whole catalogue.
    Tap(tap::TapArgs),
    /// Run a fault-injecting MCP server (tests, demos, alert drills).
    Simulate(mcp_simulator::SimulateArgs),
    /// Run a scripted MCP client that walks every page or reads page 1 only (demos, tap drills).
    SimulateClient(simulate_client::SimulateClientArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // No arguments and no mcp-exporter.yaml here: a person trying the
    // command, not a service; tell them where to start.
    if std::env::args_os().len() == 1 && !cli.serve.config_file.exists() {
        mcp_exporter::cli::print_stderr(mcp_exporter::cli::FIRST_STEPS);
        return ExitCode::from(2);
    }
    logging::init(cli.log_level, cli.log_format);
    mcp_exporter::heap::configure();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-exporter: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    if !matches!(
        cli.command,
        Some(Command::CheckConfig(_))
            | Some(Command::Simulate(_))
            | Some(Command::SimulateClient(_))
            | Some(Command::Discover(_))
    ) {
        // Orphans of stdio servers' trees become our children, to be killed
        // when their server closes (see process_tree).
        if let Err(e) = process_tree::adopt_orphans() {
            mcp_exporter::telemetry::events::OrphanAdoptionUnavailable { error: &e }.emit();
        }
    }
    match cli.command {
        None => runtime.block_on(serve::main(cli.serve)),
        Some(Command::Serve(args)) => runtime.block_on(serve::main(args)),
        Some(Command::Probe(args)) => runtime.block_on(probe::main(args)),
        Some(Command::Check(args)) => runtime.block_on(check::main(args)),
        Some(Command::CheckClient(args)) => runtime.block_on(check_client::main(args)),
        Some(Command::CheckConfig(args)) => check_config::main(args),
        Some(Command::Discover(args)) => runtime.block_on(discover::main(args)),
        Some(Command::Tap(args)) => runtime.block_on(tap::main(args)),
        Some(Command::Simulate(args)) => runtime.block_on(mcp_simulator::main(args)),
        Some(Command::SimulateClient(args)) => runtime.block_on(simulate_client::main(args)),
    }
}
