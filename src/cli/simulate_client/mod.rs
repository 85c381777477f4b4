//! `mcp-exporter simulate-client`: a scripted MCP client for the demo and
//! for drills of the tap's alerts. It announces the `clientInfo` name it is
//! given and lists as one kind of real client does: walking every page, or
//! reading page 1 only, or sending a cursor it was never handed. Each round
//! is one session (initialize, the lists, DELETE); one JSON line per
//! listing goes to stdout.

mod http_message;
mod listing;

use http_message::{Connection, RoundError};
use listing::{Behaviour, Listed};
use mcp_listing::Kind;
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(group(
    clap::ArgGroup::new("behaviour")
        .required(true)
        .args(["walk", "first_page_only", "garbage_cursor"])
))]
pub struct SimulateClientArgs {
    /// The MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:9101/mcp.
    #[arg(long)]
    pub url: url::Url,
    /// The `clientInfo.name` it announces.
    #[arg(long, default_value = "simulated-client")]
    pub name: String,
    /// The `clientInfo.version` it announces.
    #[arg(long = "client-version", default_value = "1.0.0")]
    pub client_version: String,
    /// Follow nextCursor to the end of every list.
    #[arg(long)]
    pub walk: bool,
    /// Read page 1 only, as apps that never loop do.
    #[arg(long)]
    pub first_page_only: bool,
    /// After page 1, send a cursor no server handed out.
    #[arg(long)]
    pub garbage_cursor: bool,
    /// Kinds to list each round (repeatable).
    #[arg(long = "kind", default_value = "tools")]
    pub kinds: Vec<Kind>,
    /// Start a round this often; without it, one round and exit.
    #[arg(long, value_parser = super::parse_duration)]
    pub every: Option<Duration>,
    /// Per request (and connect) timeout.
    #[arg(long, default_value = "10s", value_parser = super::parse_duration)]
    pub timeout: Duration,
}

impl SimulateClientArgs {
    fn behaviour(&self) -> Behaviour {
        if self.walk {
            Behaviour::Walk
        } else if self.first_page_only {
            Behaviour::FirstPageOnly
        } else {
            Behaviour::GarbageCursor
        }
    }
}

pub async fn main(args: SimulateClientArgs) -> ExitCode {
    loop {
        let outcome = round(&args).await;
        if let Err(e) = &outcome {
            super::print_stderr(&format!(
                "mcp-exporter simulate-client {}: {e}\n",
                args.name
            ));
        }
        match args.every {
            Some(every) => tokio::time::sleep(every).await,
            None if outcome.is_ok() => return ExitCode::SUCCESS,
            None => return ExitCode::FAILURE,
        }
    }
}

/// One session: initialize, every kind listed, DELETE.
async fn round(args: &SimulateClientArgs) -> Result<(), RoundError> {
    let mut conn = Connection::new(args.url.clone(), args.timeout)?;
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": args.name, "version": args.client_version},
    });
    let answer = conn.request("initialize", params).await?;
    if let Some(code) = answer
        .pointer("/error/code")
        .and_then(serde_json::Value::as_i64)
    {
        return Err(RoundError::Rpc(code));
    }
    conn.notify("notifications/initialized").await?;
    for &kind in &args.kinds {
        let listed = listing::list(&mut conn, kind, args.behaviour()).await?;
        print_listed(&args.name, &listed);
    }
    conn.delete().await;
    Ok(())
}

fn print_listed(name: &str, listed: &Listed) {
    let line = json!({"client": name, "listing": listed});
    super::print_stdout(&format!("{line}\n"));
}
