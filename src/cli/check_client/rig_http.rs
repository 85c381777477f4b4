//! A scenario over HTTP: a fresh simulated server on a loopback port of its
//! own, and the tap in front of it on another (or on the fixed address of
//! serving mode), both in this process. The client gets the tap's URL.

use super::rig_setup::{knobs, queue, simulator_flags, RigError, RigOptions, Transport};
use super::scenarios::Setup;
use super::watch::{Observation, Watch, WatchTask};
use mcp_simulator::{InProcessLimits, InProcessServer};
use mcp_tap::{Tap, TapLimits, TapSettings, TapStats};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The tap's and the simulator's bounds: a client under test is not trusted.
const MAX_CONNECTIONS: usize = 64;
const MAX_SESSIONS: usize = 256;

pub struct HttpRig {
    _server: InProcessServer,
    stop_tap: oneshot::Sender<()>,
    tap: tokio::task::JoinHandle<()>,
    pub watch: WatchTask,
    pub url: String,
}

impl HttpRig {
    pub async fn start(
        setup: &Setup,
        options: &RigOptions,
        watch: Watch,
    ) -> Result<HttpRig, RigError> {
        let knobs = knobs(&simulator_flags(setup, options))?;
        let legacy_sse = options.transport == Transport::Sse;
        let limits = InProcessLimits {
            max_sessions: MAX_SESSIONS,
            session_idle: Duration::from_secs(300),
        };
        let server = InProcessServer::start(&knobs, legacy_sse, limits).await?;
        let upstream =
            url::Url::parse(&server.endpoint()).map_err(|e| RigError::Flags(e.to_string()))?;
        let (sender, receiver) = queue();
        let tap = Tap::new(
            tap_settings(upstream),
            Arc::new(sender),
            Arc::new(TapStats::default()),
        )?;
        let address = options
            .listen
            .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(RigError::Listen)?;
        let bound = listener.local_addr().map_err(RigError::Listen)?;
        let path = if legacy_sse { "/sse" } else { "/mcp" };
        let (stop_tap, stopped) = oneshot::channel::<()>();
        let tap = tokio::spawn(async move {
            tap.serve(listener, async {
                let _ = stopped.await;
            })
            .await;
        });
        Ok(HttpRig {
            _server: server,
            stop_tap,
            tap,
            watch: WatchTask::spawn(receiver, watch),
            url: format!("http://{bound}{path}"),
        })
    }

    /// Stop the tap (its listener closes at once; open exchanges get a
    /// short grace), then the watch.
    pub async fn finish(self) -> Observation {
        let _ = self.stop_tap.send(());
        let abort = self.tap.abort_handle();
        if tokio::time::timeout(Duration::from_secs(2), self.tap)
            .await
            .is_err()
        {
            abort.abort();
        }
        match self.watch.stop().await {
            Some(watch) => watch.finish(),
            None => Observation::default(),
        }
    }
}

fn tap_settings(upstream: url::Url) -> TapSettings {
    let mut settings = TapSettings::new(upstream);
    settings.limits = TapLimits {
        max_connections: MAX_CONNECTIONS,
        header_read_timeout: Duration::from_secs(10),
        upstream_idle_connections: 8,
        shutdown_grace: Duration::from_millis(300),
        ..TapLimits::default()
    };
    settings
}
