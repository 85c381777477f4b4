//! The command line. Each subcommand lives in its own module; main only parses.

use clap::{Parser, Subcommand};
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
}

#[derive(Subcommand)]
enum Command {
    /// List one server now and show every page.
    Probe(mcp_exporter::cli::probe::ProbeArgs),
    /// Run a fault-injecting MCP server (tests, demos, alert drills).
    Simulate(mcp_exporter::simulate::SimulateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    match cli.command {
        Some(Command::Probe(args)) => runtime.block_on(mcp_exporter::cli::probe::main(args)),
        Some(Command::Simulate(args)) => runtime.block_on(mcp_exporter::simulate::main(args)),
        None => ExitCode::SUCCESS,
    }
}
