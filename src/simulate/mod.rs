//! Fault-injecting MCP server. (Being built on the `sim` branch.)

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {}

pub async fn main(_args: SimulateArgs) -> ExitCode {
    ExitCode::from(2)
}
