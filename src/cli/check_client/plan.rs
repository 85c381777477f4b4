//! What a run against a client command is: the client, the server side's
//! setup, the scenarios and kinds, and the bounds on each scenario.

use super::client::ClientCommand;
use super::rig_setup::RigOptions;
use super::scenarios::ClientScenario;
use mcp_listing::Kind;
use std::time::Duration;

/// Bounds on what one client may make the harness do in one scenario.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// List requests before the client is stopped (and graded as looping).
    pub max_requests: u64,
    /// Sessions (`initialize`s; over stdio, server launches) before it is stopped.
    pub max_sessions: u32,
    /// Each scenario's deadline.
    pub deadline: Duration,
}

/// Everything a run of `check-client -- CMD` needs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub client: ClientCommand,
    pub rig: RigOptions,
    pub scenarios: Vec<ClientScenario>,
    pub kinds: Vec<Kind>,
    pub limits: Limits,
}
