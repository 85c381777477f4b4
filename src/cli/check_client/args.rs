//! The command line of `check-client`, and the plan it stands for.

use super::client::ClientCommand;
use super::plan::{Limits, Plan};
use super::rig_setup::{RigOptions, Transport};
use super::scenarios::ClientScenario;
use mcp_listing::{Kind, ProtocolVersion};
use mcp_simulator::config::ResponseMode;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct CheckClientArgs {
    /// How the client reaches its server: Streamable HTTP, legacy HTTP+SSE,
    /// or stdio (the client starts the server itself).
    #[arg(long, value_enum, default_value = "http")]
    pub transport: TransportArg,
    /// Streamable HTTP: answer with JSON bodies or with event streams.
    #[arg(long, value_enum, default_value = "json")]
    pub response: ResponseMode,
    /// Force the protocol version the simulated server answers
    /// (2025-06-18, 2025-11-25, 2026-07-28); without it the client's is used.
    #[arg(long)]
    pub protocol: Option<ProtocolVersion>,
    /// Scenarios to play (repeatable, or a comma list); every one by default.
    #[arg(long = "scenario", value_delimiter = ',')]
    pub scenarios: Vec<ClientScenario>,
    /// The list methods the client is expected to call, by kind
    /// (tools, prompts, resources, resource_templates).
    #[arg(long = "kind", value_delimiter = ',', default_value = "tools")]
    pub kinds: Vec<Kind>,
    /// Each scenario's deadline (default 30s; 5m when serving); past it the
    /// client's whole process tree is killed.
    #[arg(long, value_parser = crate::cli::parse_duration)]
    pub deadline: Option<Duration>,
    /// List requests in one scenario before the client is stopped as looping.
    #[arg(long = "max-requests", default_value_t = 10_000)]
    pub max_requests: u64,
    /// Sessions (or stdio server launches) in one scenario before the
    /// client is stopped.
    #[arg(long = "max-sessions", default_value_t = 64)]
    pub max_sessions: u32,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as JUnit XML (one test case per scenario).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A variable of our environment the client gets (repeatable; besides
    /// PATH, HOME and LANG).
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Give the client our whole environment.
    #[arg(long = "inherit-env")]
    pub inherit_env: bool,
    /// Be the server an app is pointed at, instead of running a client:
    /// `stdio` (the app's MCP configuration launches this command; each
    /// launch plays the next scenario) or `http` (a listener on --listen
    /// playing the scenarios one after another).
    #[arg(long, value_enum, conflicts_with = "command")]
    pub serve: Option<ServeMode>,
    /// `--serve stdio`: the private file that keeps the next scenario and
    /// the grades so far.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// When serving: append each scenario's grade to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// `--serve http`: the address clients connect to.
    #[arg(long, default_value = "127.0.0.1:8931")]
    pub listen: std::net::SocketAddr,
    /// The relay a client under test starts as its stdio server (internal).
    #[arg(long, hide = true, value_name = "SOCKET")]
    pub relay: Option<PathBuf>,
    /// The client's command and arguments, after `--`; `{url}` and
    /// `{command}` in them are filled in.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportArg {
    Http,
    Sse,
    Stdio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeMode {
    Stdio,
    Http,
}

/// The default deadline of a scenario a client command plays.
pub const RUN_DEADLINE: Duration = Duration::from_secs(30);
/// The default deadline of a scenario an app plays (a person is acting).
pub const SERVE_DEADLINE: Duration = Duration::from_secs(300);

impl CheckClientArgs {
    pub fn transport(&self) -> Transport {
        match self.transport {
            TransportArg::Http => Transport::Http(self.response),
            TransportArg::Sse => Transport::Sse,
            TransportArg::Stdio => Transport::Stdio,
        }
    }

    /// The scenarios asked for (all by default), in play order, leaving out
    /// those that do not play under a forced protocol version.
    pub fn scenarios(&self) -> Vec<ClientScenario> {
        ClientScenario::ALL
            .into_iter()
            .filter(|s| self.scenarios.is_empty() || self.scenarios.contains(s))
            .filter(|s| s.plays_under(self.protocol))
            .collect()
    }

    pub fn kinds(&self) -> Vec<Kind> {
        let mut kinds: Vec<Kind> = Vec::new();
        for kind in &self.kinds {
            if !kinds.contains(kind) {
                kinds.push(*kind);
            }
        }
        kinds
    }

    pub fn limits(&self, default_deadline: Duration) -> Limits {
        Limits {
            max_requests: self.max_requests.max(1),
            max_sessions: self.max_sessions.max(1),
            deadline: self.deadline.unwrap_or(default_deadline),
        }
    }

    /// The plan of a run against the client command; `Err` names what is
    /// missing.
    pub fn plan(&self) -> Result<Plan, String> {
        if self.command.is_empty() {
            return Err("the client's command goes after `--` (or use --serve)".into());
        }
        let scenarios = self.scenarios();
        if scenarios.is_empty() {
            return Err("no scenario plays under this --protocol".into());
        }
        let env = self
            .env
            .iter()
            .filter_map(|name| Some((name.clone(), std::env::var(name).ok()?)))
            .collect();
        Ok(Plan {
            client: ClientCommand {
                argv: self.command.clone(),
                env,
                inherit_env: self.inherit_env,
            },
            rig: RigOptions {
                transport: self.transport(),
                protocol: self.protocol,
                listen: None,
            },
            scenarios,
            kinds: self.kinds(),
            limits: self.limits(RUN_DEADLINE),
        })
    }
}
