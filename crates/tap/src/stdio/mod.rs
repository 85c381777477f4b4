//! The stdio tap (issue 33): a client starts the tap in place of a stdio
//! server; the tap starts the server as the exporter starts stdio targets
//! (the wire crate's command: minimal environment unless told otherwise,
//! its own process group, every process it starts tagged and killed at
//! the end) with its stderr passed straight through, forwards
//! newline-delimited JSON both ways byte for byte, tells the observer what
//! passed (one exchange, `RequestMethod::Stdio`, each line a message),
//! merges for the clients named, and ends with the server's exit status.
//!
//! When the client closes stdin, merges in progress finish, the server's
//! stdin closes, and a server that does not exit within `exit_grace` gets
//! SIGTERM, then SIGKILL. A server that exits first ends the tap.
//!
//! `pumps` moves the bytes (cut into lines by `lines` when merging),
//! `pages` walks for merges over the pipes, `routes` sends the server's
//! answers to the merges that asked; `shared` is what they all hold.

mod lines;
mod pages;
mod pumps;
mod routes;
mod shared;

use crate::copy::Copier;
use crate::event::{
    BodyFraming, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod, ResponseHead,
    TapEvent, Tee,
};
use crate::exchange_tee::Exchange;
use crate::merge::Merges;
use crate::settings::{MergeClients, MergeSettings, TapError};
use crate::stats::TapStats;
use mcp_wire::transport::process_tree;
use mcp_wire::transport::stdio::{command, StdioSpec};
use routes::Routes;
use shared::{ClientOut, Shared};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStdin};

/// How the stdio tap runs its server.
#[derive(Debug, Clone)]
pub struct StdioTapSettings {
    /// The server's command, arguments and environment.
    pub server: StdioSpec,
    /// Most bytes of one line copied for the observer.
    pub inspect_bytes: usize,
    /// Whose first-page list requests are merged (lines are held whole
    /// only when some client is).
    pub merge: MergeSettings,
    /// After stdin closes, how long the server has to exit before SIGTERM,
    /// and again before SIGKILL.
    pub exit_grace: Duration,
}

impl StdioTapSettings {
    pub fn new(server: StdioSpec) -> StdioTapSettings {
        StdioTapSettings {
            server,
            inspect_bytes: crate::settings::TapLimits::DEFAULT.inspect_bytes,
            merge: MergeSettings::DEFAULT,
            exit_grace: Duration::from_secs(2),
        }
    }
}

/// Run the server behind `input` (the client's lines) and `output` (where
/// the client reads): until the server exits, or the client closes `input`
/// and the server is stopped. The server's exit status.
pub async fn run_stdio<I, O>(
    settings: StdioTapSettings,
    tee: Arc<dyn Tee>,
    stats: Arc<TapStats>,
    input: I,
    output: O,
) -> Result<ExitStatus, TapError>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let tag = process_tree::new_tag();
    let mut cmd = command(&settings.server, &tag);
    // The client keeps the server's log: its stderr is the tap's.
    cmd.stderr(Stdio::inherit());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            process_tree::release_tag(&tag);
            return Err(TapError::ServerStart(e.kind()));
        }
    };
    let pid = child.id();
    if let Some(pid) = pid {
        process_tree::register_leader(pid);
    }
    let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
    stats.request(RequestMethod::Stdio);
    let shared = Arc::new(shared(&settings, tee, stats, stdin, Box::pin(output)));
    let merging = shared.merges.is_some();
    let server = tokio::spawn(pumps::server(shared.clone(), stdout, merging));
    let client = pumps::client(shared.clone(), input, merging);
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        () = client => stop(&mut child, pid, settings.exit_grace).await,
    };
    // What the server wrote before it went is still the client's, and so
    // are the answers of merges under way.
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    shared.merges_done().await;
    if let Some(pid) = pid {
        process_tree::forget_leader(pid);
    }
    let tree = tag.clone();
    let _ = tokio::task::spawn_blocking(move || process_tree::kill_tagged(&tree)).await;
    process_tree::release_tag(&tag);
    shared.exchange.ended(ExchangeEnd::Completed);
    status.ok_or(TapError::ServerStart(std::io::ErrorKind::Other))
}

fn shared(
    settings: &StdioTapSettings,
    tee: Arc<dyn Tee>,
    stats: Arc<TapStats>,
    stdin: Option<ChildStdin>,
    output: Pin<Box<dyn AsyncWrite + Send>>,
) -> Shared {
    let exchange = Exchange::open(ExchangeId(1), tee, stats, || TapEvent::Opened {
        exchange: ExchangeId(1),
        at: Instant::now(),
        head: RequestHead {
            method: RequestMethod::Stdio,
            session: None,
            user_agent: None,
            client_header: None,
            framing: BodyFraming::Lines,
            path: None,
            peer: None,
        },
    });
    // No answer head on a pipe: status 0 says so.
    exchange.offer(TapEvent::Answered {
        exchange: ExchangeId(1),
        at: Instant::now(),
        head: ResponseHead {
            status: 0,
            framing: BodyFraming::Lines,
            session: None,
        },
    });
    let merges = (settings.merge.clients != MergeClients::Nobody)
        .then(|| Merges::new(settings.merge.clone(), &crate::apps::Apps::default()));
    Shared {
        exchange,
        inspect_bytes: settings.inspect_bytes,
        merges,
        client: Mutex::new(None),
        stdin: tokio::sync::Mutex::new(stdin),
        out: tokio::sync::Mutex::new(ClientOut {
            writer: output,
            copier: Copier::new(
                BodyFraming::Lines,
                Direction::FromUpstream,
                settings.inspect_bytes,
            ),
        }),
        routes: Mutex::new(Routes::default()),
        merging: Mutex::new(Vec::new()),
    }
}

/// The client closed stdin (its stdin pump has closed the server's): the
/// server's exit, waited for `grace`, then asked for with SIGTERM, then
/// forced with SIGKILL.
async fn stop(child: &mut Child, pid: Option<u32>, grace: Duration) -> Option<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return status.ok();
    }
    signal_group(pid, libc::SIGTERM);
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return status.ok();
    }
    signal_group(pid, libc::SIGKILL);
    child.wait().await.ok()
}

fn signal_group(pid: Option<u32>, signal: i32) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) takes no pointers; the negative pid names the
        // process group of our own child (it was started as its leader).
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}
