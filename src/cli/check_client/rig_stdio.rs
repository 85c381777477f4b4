//! A scenario over stdio: the client starts its server itself, so it is
//! handed a command — `mcp-exporter check-client --relay SOCKET` — whose
//! process only relays its stdin and stdout to a Unix socket in a private
//! directory of ours. Each connection there is one server launch: the stdio
//! tap (`mcp_tap::run_stdio`) runs a fresh `mcp-exporter simulate --transport
//! stdio` behind it and tells the watcher what passes.

use super::rig_setup::{queue, simulator_flags, RigError, RigOptions};
use super::scenarios::Setup;
use super::watch::{Observation, Watch, WatchTask};
use crate::tap::queue::ObserverQueue;
use mcp_tap::{run_stdio, ExchangeId, StdioTapSettings, TapEvent, TapStats, Tee};
use mcp_wire::transport::stdio::StdioSpec;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::UnixListener;

/// Server launches served per scenario; later ones are closed at once.
pub const MAX_LAUNCHES: u32 = 16;

pub struct StdioRig {
    _dir: tempfile::TempDir,
    accept: tokio::task::JoinHandle<()>,
    launches: Arc<Launches>,
    pub watch: WatchTask,
    /// The argv the client runs as its server.
    pub command: Vec<String>,
}

/// The launches of one scenario: served, refused, and their tasks.
#[derive(Default)]
struct Launches {
    refused: AtomicU32,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl StdioRig {
    pub async fn start(
        setup: &Setup,
        options: &RigOptions,
        watch: Watch,
    ) -> Result<StdioRig, RigError> {
        let exe = std::env::current_exe().map_err(RigError::Executable)?;
        let exe = exe.to_string_lossy().into_owned();
        // tempfile creates the directory readable by our user only.
        let dir = tempfile::Builder::new()
            .prefix("mcp-check-client-")
            .tempdir()
            .map_err(RigError::Listen)?;
        let socket = dir.path().join("relay.sock");
        let listener = UnixListener::bind(&socket).map_err(RigError::Listen)?;
        let mut args = vec!["simulate".to_string(), "--transport".into(), "stdio".into()];
        args.extend(simulator_flags(setup, options));
        let settings = server_settings(&exe, args);
        let (sender, receiver) = queue();
        let launches = Arc::new(Launches::default());
        let accept = tokio::spawn(accept_launches(
            listener,
            settings,
            Arc::new(sender),
            launches.clone(),
        ));
        Ok(StdioRig {
            _dir: dir,
            accept,
            launches,
            watch: WatchTask::spawn(receiver, watch),
            command: vec![
                exe,
                "check-client".into(),
                "--relay".into(),
                socket.to_string_lossy().into_owned(),
            ],
        })
    }

    /// Stop taking launches, let those running end (briefly: the client is
    /// gone, so their relays are closing), then stop watching.
    pub async fn finish(self) -> Observation {
        self.accept.abort();
        let tasks = std::mem::take(
            &mut *self
                .launches
                .tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for task in tasks {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(2), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        let mut seen = match self.watch.stop().await {
            Some(watch) => watch.finish(),
            None => Observation::default(),
        };
        seen.launches_refused = self.launches.refused.load(Ordering::Relaxed);
        seen
    }
}

/// The stdio tap's settings for a simulator started as `exe ARGS…`.
pub fn server_settings(exe: &str, args: Vec<String>) -> StdioTapSettings {
    let mut settings = StdioTapSettings::new(StdioSpec {
        command: exe.to_string(),
        args,
        env: Default::default(),
        cwd: None,
        inherit_env: false,
        scrubber: Default::default(),
    });
    settings.exit_grace = Duration::from_millis(300);
    settings
}

async fn accept_launches(
    listener: UnixListener,
    settings: StdioTapSettings,
    queue: Arc<ObserverQueue>,
    launches: Arc<Launches>,
) {
    let mut served = 0u32;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if served >= MAX_LAUNCHES {
            launches.refused.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            continue;
        }
        served += 1;
        let (input, output) = stream.into_split();
        let tee = Arc::new(Renumbered {
            queue: queue.clone(),
            base: u64::from(served) << 32,
        });
        let settings = settings.clone();
        let task = tokio::spawn(async move {
            let stats = Arc::new(TapStats::default());
            // A server that cannot start is seen as no answer at all.
            let _ = run_stdio(settings, tee, stats, input, output).await;
        });
        launches
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task);
    }
}

/// Every launch's stdio tap numbers its one exchange alike; each gets a
/// range of its own before the one observer sees them.
struct Renumbered {
    queue: Arc<ObserverQueue>,
    base: u64,
}

impl Tee for Renumbered {
    fn offer(&self, event: TapEvent) -> bool {
        self.queue.offer(renumber(event, self.base))
    }
}

fn renumber(event: TapEvent, base: u64) -> TapEvent {
    let id = |e: ExchangeId| ExchangeId(base + e.0);
    match event {
        TapEvent::Opened { exchange, at, head } => TapEvent::Opened {
            exchange: id(exchange),
            at,
            head,
        },
        TapEvent::Answered { exchange, at, head } => TapEvent::Answered {
            exchange: id(exchange),
            at,
            head,
        },
        TapEvent::Chunk {
            exchange,
            direction,
            bytes,
        } => TapEvent::Chunk {
            exchange: id(exchange),
            direction,
            bytes,
        },
        TapEvent::MessageEnd {
            exchange,
            direction,
            at,
            copy,
        } => TapEvent::MessageEnd {
            exchange: id(exchange),
            direction,
            at,
            copy,
        },
        TapEvent::LegacySession { exchange, session } => TapEvent::LegacySession {
            exchange: id(exchange),
            session,
        },
        TapEvent::Merged {
            exchange,
            kind,
            outcome,
            pages,
            items,
        } => TapEvent::Merged {
            exchange: id(exchange),
            kind,
            outcome,
            pages,
            items,
        },
        TapEvent::Closed { exchange, at, end } => TapEvent::Closed {
            exchange: id(exchange),
            at,
            end,
        },
    }
}
