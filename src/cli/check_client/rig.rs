//! One scenario's server side, whatever the transport: a fresh simulated
//! server behind the tap, watched. Over HTTP both live in this process
//! (rig_http.rs); over stdio the client starts the server itself, through
//! a relay back to us (rig_stdio.rs).

use super::client::Endpoint;
use super::rig_http::HttpRig;
use super::rig_setup::{RigError, RigOptions, Transport};
use super::rig_stdio::StdioRig;
use super::scenarios::Setup;
use super::watch::{Observation, Progress, Watch, WatchTask};
use tokio::sync::watch;

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
