//! How every scenario's server side is set up: the transport, a forced
//! protocol version, serving mode's fixed address; the simulator's flags
//! for a scenario; the queue between the tap and the watcher.

use super::scenarios::Setup;
use crate::tap::queue::{observer_queue, ObserverQueue, QueueBudget};
use mcp_listing::ProtocolVersion;
use mcp_simulator::config::{Knobs, ResponseMode};
use std::net::SocketAddr;

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
