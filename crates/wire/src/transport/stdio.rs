//! stdio: the server is our child process; one JSON message per line.
//! stdout lines that are not JSON are protocol defects, not crashes; stderr
//! is logging and only its tail is kept. The child is always reaped.

use super::channel::{self, Channel, Inbound, InboundTx, Link, OverChannel};
use super::process_tree::{
    forget_leader, kill_tagged, kill_tagged_in_background, new_tag, register_leader, release_tag,
    TREE_TAG_VAR,
};
use super::{CloseInfo, ExchangeError, SubscriptionPath};
use crate::secrets::SecretScrubber;
use futures_util::future::BoxFuture;
use mcp_listing::TransportKind;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How to start the server.
#[derive(Clone)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Pass the exporter's whole environment on. Off for configured targets
    /// unless they opt in: other targets' tokens live in that environment.
    pub inherit_env: bool,
    /// Every secret the configuration knows; scrubbed from the stderr tail.
    pub scrubber: SecretScrubber,
}

/// What a child gets from the exporter's environment when it does not
/// inherit the whole of it (its own `env:` comes on top).
pub const MINIMAL_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

impl std::fmt::Debug for StdioSpec {
    // Env values may be secrets: show names only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioSpec")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("inherit_env", &self.inherit_env)
            .finish()
    }
}

/// How a message reaches the child: one line on its stdin. Holds the child
/// too, whose exit status explains an ended stdout.
pub(crate) struct StdinLink {
    stdin: Option<ChildStdin>,
    child: Option<Child>,
}

impl Link for StdinLink {
    const UNIT: &'static str = "line";
    const KIND: TransportKind = TransportKind::Stdio;
    const LISTEN: SubscriptionPath = SubscriptionPath::InBand;

    async fn send(&mut self, mut body: Vec<u8>) -> Result<(), ExchangeError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(ExchangeError::transport("stdin closed"));
        };
        body.push(b'\n');
        stdin
            .write_all(&body)
            .await
            .map_err(|e| ExchangeError::transport(format!("writing to server stdin: {e}")))?;
        stdin
            .flush()
            .await
            .map_err(|e| ExchangeError::transport(format!("writing to server stdin: {e}")))
    }

    fn ended(&mut self, _why: &str, _before_send: bool) -> ExchangeError {
        let status = self
            .child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        ExchangeError::transport(format!("server closed stdout{status}"))
    }
}

pub struct StdioTransport {
    channel: Channel<StdinLink>,
    pid: Option<u32>,
    stderr_tail: Arc<Mutex<StderrTail>>,
    tail_keep: usize,
    /// In the environment of the child and all it starts (see process_tree).
    tree_tag: String,
    /// The pipe readers: ended at close, so a descendant that keeps our
    /// pipes open cannot keep their fds (or tasks) alive.
    readers: Vec<tokio::task::JoinHandle<()>>,
    scrubber: SecretScrubber,
}

/// The server's command: a minimal environment unless `inherit_env`, the
/// tree tag every descendant inherits, piped stdio, its own process group.
pub fn command(spec: &StdioSpec, tree_tag: &str) -> Command {
    let mut cmd = Command::new(&spec.command);
    if !spec.inherit_env {
        cmd.env_clear();
        for name in MINIMAL_ENV {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
    }
    cmd.args(&spec.args)
        .envs(&spec.env)
        .env(TREE_TAG_VAR, tree_tag)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Own process group: launchers like npx or uvx start grandchildren
    // that must die with the server.
    #[cfg(unix)]
    cmd.process_group(0);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    cmd
}

/// Drain stderr in the background, keeping its last `keep` bytes (plus a
/// margin, so that a secret straddling the start of the tail is seen whole
/// and scrubbed before the cut).
fn keep_stderr_tail(
    stderr: ChildStderr,
    keep: usize,
    scrubber: &SecretScrubber,
) -> (Arc<Mutex<StderrTail>>, tokio::task::JoinHandle<()>) {
    let margin = scrubber.longest().saturating_sub(1);
    let tail = Arc::new(Mutex::new(StderrTail {
        bytes: VecDeque::with_capacity(keep.saturating_add(margin).min(1 << 20)),
        cut: false,
    }));
    let reader = tokio::spawn(drain_stderr(
        stderr,
        tail.clone(),
        keep.saturating_add(margin),
    ));
    (tail, reader)
}

impl StdioTransport {
    pub async fn spawn(
        spec: &StdioSpec,
        max_response_bytes: u64,
        stderr_tail_bytes: usize,
    ) -> Result<StdioTransport, ExchangeError> {
        let tree_tag = new_tag();
        let mut cmd = command(spec, &tree_tag);
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                release_tag(&tree_tag);
                return Err(ExchangeError::transport(format!(
                    "cannot start {:?}: {e}",
                    spec.command
                )));
            }
        };
        let pid = child.id();
        if let Some(pid) = pid {
            register_leader(pid);
        }
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Unreachable (`command` pipes all three); the child is killed
            // on drop and tokio reaps it.
            if let Some(pid) = pid {
                forget_leader(pid);
            }
            release_tag(&tree_tag);
            return Err(ExchangeError::transport("child pipes missing"));
        };
        let (tx, rx) = channel::inbound(max_response_bytes);
        let stdout_reader = tokio::spawn(read_stdout(stdout, tx, max_response_bytes));
        let (tail, stderr_reader) = keep_stderr_tail(stderr, stderr_tail_bytes, &spec.scrubber);
        let link = StdinLink {
            stdin: Some(stdin),
            child: Some(child),
        };
        Ok(StdioTransport {
            channel: Channel::new(link, rx, max_response_bytes),
            pid,
            stderr_tail: tail,
            tail_keep: stderr_tail_bytes,
            tree_tag,
            readers: vec![stdout_reader, stderr_reader],
            scrubber: spec.scrubber.clone(),
        })
    }

    /// The child's pid (its process group id too).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Close stdin, give the server a moment, then SIGTERM, then SIGKILL
    /// the whole process group; always reap.
    pub async fn close(mut self) -> CloseInfo {
        drop(self.channel.link.stdin.take());
        let mut info = CloseInfo::default();
        if let Some(mut child) = self.channel.link.child.take() {
            let status = match tokio::time::timeout(Duration::from_millis(500), child.wait()).await
            {
                Ok(Ok(s)) => Some(s),
                _ => {
                    signal_group(self.pid, libc::SIGTERM);
                    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                        Ok(Ok(s)) => Some(s),
                        _ => {
                            signal_group(self.pid, libc::SIGKILL);
                            child.wait().await.ok()
                        }
                    }
                }
            };
            // Grandchildren may linger after the leader exited, in its
            // group or (after setsid) outside it.
            signal_group(self.pid, libc::SIGKILL);
            // Scanning /proc (and reaping) blocks briefly: off the runtime.
            if let Some(pid) = self.pid {
                forget_leader(pid);
            }
            let tag = self.tree_tag.clone();
            let _ = tokio::task::spawn_blocking(move || kill_tagged(&tag)).await;
            release_tag(&self.tree_tag);
            info.exit_status = status.map(|s| s.to_string());
        }
        // With the whole tree dead the pipes reach EOF; let the stderr
        // reader take what is left, briefly, then end both readers anyway.
        if let Some(stderr_reader) = self.readers.pop() {
            let abort = stderr_reader.abort_handle();
            if tokio::time::timeout(Duration::from_millis(200), stderr_reader)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        for reader in self.readers.drain(..) {
            reader.abort();
        }
        info.stderr_tail = Some(self.stderr_tail_text()).filter(|s| !s.is_empty());
        info
    }

    /// The last stderr bytes, every known secret scrubbed before the cut.
    pub fn stderr_tail_text(&self) -> String {
        let tail = match self.stderr_tail.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (a, b) = tail.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        // Once bytes were dropped, the first `margin` kept bytes may be the
        // end of a secret whose start is gone: never show them.
        let head = if tail.cut {
            self.scrubber.longest().saturating_sub(1).min(bytes.len())
        } else {
            0
        };
        let text = String::from_utf8_lossy(&bytes[head..]);
        self.scrubber.scrub_tail(&text, self.tail_keep, false)
    }
}

impl OverChannel for StdioTransport {
    type Link = StdinLink;

    fn channel(&mut self) -> &mut Channel<StdinLink> {
        &mut self.channel
    }

    fn shut(self: Box<Self>) -> BoxFuture<'static, CloseInfo> {
        Box::pin((*self).close())
    }
}

impl Drop for StdioTransport {
    // A transport dropped without close() (a cancelled poll) still must not
    // leave its process group behind; kill_on_drop covers only the leader.
    fn drop(&mut self) {
        if self.channel.link.child.is_some() {
            signal_group(self.pid, libc::SIGKILL);
            // tokio's own reaper waits for the leader (kill_on_drop).
            if let Some(pid) = self.pid {
                forget_leader(pid);
            }
            kill_tagged_in_background(self.tree_tag.clone());
        }
        release_tag(&self.tree_tag);
        for reader in &self.readers {
            reader.abort();
        }
    }
}

fn signal_group(pid: Option<u32>, signal: i32) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group we
        // created for this child; it has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// Read newline-delimited messages, never buffering more than `limit` bytes
/// of one line: an oversized line is reported once and skipped.
async fn read_stdout(stdout: ChildStdout, tx: InboundTx, limit: u64) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut overflow = false;
    while let Ok(buf) = reader.fill_buf().await {
        if buf.is_empty() {
            break;
        }
        let (chunk, newline) = match memchr(buf) {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        if !overflow {
            if (line.len() + chunk.len()) as u64 > limit {
                overflow = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            // An oversized line is skipped; the next one is read as usual.
            let msg = if overflow {
                Some(Inbound::TooLarge { stream_over: false })
            } else {
                parse_line(&line)
            };
            overflow = false;
            line.clear();
            if let Some(msg) = msg {
                if !tx.send(msg).await {
                    return;
                }
            }
        }
    }
    tx.send(Inbound::Ended(String::new())).await;
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

fn parse_line(line: &[u8]) -> Option<Inbound> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return None;
    }
    Some(match serde_json::from_slice(trimmed) {
        Ok(v) => Inbound::Message(v, line.len() as u64),
        Err(_) => Inbound::Defect,
    })
}

/// The last bytes a child wrote to stderr; `cut` once older ones were dropped.
struct StderrTail {
    bytes: VecDeque<u8>,
    cut: bool,
}

async fn drain_stderr(stderr: ChildStderr, tail: Arc<Mutex<StderrTail>>, keep: usize) {
    let mut reader = BufReader::new(stderr);
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut t = match tail.lock() {
                    Ok(t) => t,
                    Err(poisoned) => poisoned.into_inner(),
                };
                t.bytes.extend(&buf[..n]);
                let excess = t.bytes.len().saturating_sub(keep);
                if excess > 0 {
                    t.bytes.drain(..excess);
                    t.cut = true;
                }
            }
        }
    }
}
