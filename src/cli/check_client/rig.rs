//! One scenario's server side, whatever the transport: a fresh simulated
//! server behind the tap, watched. Over HTTP both live in this process
//! (rig_http.rs); over stdio the client starts the server itself, through
//! a relay back to us (rig_stdio.rs).

use super::client::Endpoint;
use super::rig_http::HttpRig;
use super::rig_stdio::StdioRig;
use super::scenarios::Setup;
use super::watch::{Observation, Progress, Watch, WatchTask};
use crate::tap::queue::{observer_queue, ObserverQueue, QueueBudget};
use mcp_listing::ProtocolVersion;
use mcp_simulator::config::{Knobs, ResponseMode};
use std::net::SocketAddr;
use tokio::sync::watch;

/// How the client reaches its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP, answering with JSON bodies or event streams.
    Http(ResponseMode),
    /// The legacy HTTP+SSE transport.
    Sse,
    Stdio,
}

impl Transport {
    pub fn label(self) -> &'static str {
        match self {
            Transport::Http(ResponseMode::Json) => "http (json answers)",
            Transport::Http(ResponseMode::Sse) => "http (event-stream answers)",
            Transport::Sse => "sse (legacy HTTP+SSE)",
            Transport::Stdio => "stdio",
        }
    }
}

/// What every scenario's server is set up with.
#[derive(Debug, Clone)]
pub struct RigOptions {
    pub transport: Transport,
    /// The version the simulator forces (else the client's is negotiated).
    pub protocol: Option<ProtocolVersion>,
    /// Serving mode over HTTP: the fixed address people point clients at.
    pub listen: Option<SocketAddr>,
}

/// Why a scenario's server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum RigError {
    #[error("the simulated server: {0}")]
    Simulator(#[from] mcp_simulator::StartError),
    #[error("the simulator's flags: {0}")]
    Flags(String),
    #[error("the tap: {0}")]
    Tap(#[from] mcp_tap::TapError),
    #[error("cannot listen: {0}")]
    Listen(std::io::Error),
    #[error("cannot find our own executable: {0}")]
    Executable(std::io::Error),
}

/// The simulator flags of one scenario under `options`.
pub fn simulator_flags(setup: &Setup, options: &RigOptions) -> Vec<String> {
    let mut flags: Vec<String> = setup.flags.iter().map(|f| f.to_string()).collect();
    match options.transport {
        Transport::Http(_) if setup.sse_answers => {
            flags.extend(["--response".into(), "sse".into()])
        }
        Transport::Http(ResponseMode::Sse) => flags.extend(["--response".into(), "sse".into()]),
        _ => {}
    }
    if let (Some(v), false) = (options.protocol, setup.modern) {
        flags.extend(["--protocol".into(), v.label().into()]);
    }
    flags
}

/// The simulator's knobs from its flags, read as `simulate` reads them.
pub fn knobs(flags: &[String]) -> Result<Knobs, RigError> {
    #[derive(clap::Parser)]
    #[command(no_binary_name = true)]
    struct SimulatorFlags {
        #[command(flatten)]
        knobs: Knobs,
    }
    use clap::Parser;
    SimulatorFlags::try_parse_from(flags)
        .map(|f| f.knobs)
        .map_err(|e| RigError::Flags(e.kind().to_string()))
}

/// The queue a scenario's tap feeds and its watcher drains.
pub fn queue() -> (ObserverQueue, crate::tap::queue::QueueReceiver) {
    observer_queue(QueueBudget::default())
}

/// One scenario's server side.
pub enum Rig {
    Http(HttpRig),
    Stdio(StdioRig),
}

impl Rig {
    pub async fn start(setup: &Setup, options: &RigOptions, watch: Watch) -> Result<Rig, RigError> {
        match options.transport {
            Transport::Stdio => Ok(Rig::Stdio(StdioRig::start(setup, options, watch).await?)),
            _ => Ok(Rig::Http(HttpRig::start(setup, options, watch).await?)),
        }
    }

    pub fn endpoint(&self) -> Endpoint {
        match self {
            Rig::Http(rig) => Endpoint::Url(rig.url.clone()),
            Rig::Stdio(rig) => Endpoint::Command(rig.command.clone()),
        }
    }

    pub fn progress(&self) -> watch::Receiver<Progress> {
        self.watch().progress.clone()
    }

    fn watch(&self) -> &WatchTask {
        match self {
            Rig::Http(rig) => &rig.watch,
            Rig::Stdio(rig) => &rig.watch,
        }
    }

    /// Stop serving and watching: what was seen.
    pub async fn finish(self) -> Observation {
        match self {
            Rig::Http(rig) => rig.finish().await,
            Rig::Stdio(rig) => rig.finish().await,
        }
    }
}
