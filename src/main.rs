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
        Some(Command::Simulate(args)) => runtime.block_on(mcp_exporter::simulate::main(args)),
        None => ExitCode::SUCCESS,
    }
}
