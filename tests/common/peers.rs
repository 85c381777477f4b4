//! Process harness of the interop tests: where each SDK peer lives and how
//! it is started, commands run in their own process group to completion (a
//! child left behind fails the test), HTTP peers killed with their group on
//! drop, and `mcp-exporter probe --json` runs.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Bounds on the processes under test. They are about hangs, not speed: a
/// loaded 2-core CI machine takes seconds just to import the Python SDK.
pub const RUN_DEADLINE: Duration = Duration::from_secs(120);
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(60);
pub const GROUP_EXIT_DEADLINE: Duration = Duration::from_secs(10);
/// Passed to every probe as `--timeout`: generous so a slow start is not an error.
pub const PROBE_REQUEST_TIMEOUT: &str = "30s";

// ---------------------------------------------------------------------------
// Peers and what they list
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Everything,
    TypeScript,
    Python,
    Rmcp,
}

impl Peer {
    pub fn peers_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
    }

    /// A file that exists only once install-peers.sh has installed this peer.
    pub fn installed_marker(self) -> PathBuf {
        let dir = Self::peers_dir();
        match self {
            Peer::Everything => {
                dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            }
            Peer::TypeScript => dir.join("node_modules/@modelcontextprotocol/sdk/package.json"),
            Peer::Python => dir.join("python/.venv/bin/python"),
            Peer::Rmcp => dir.join("rmcp/target/debug/paginating-rmcp"),
        }
    }

    /// The command that serves stdio; `http_args` are appended for HTTP.
    pub fn command(self) -> Vec<String> {
        let dir = Self::peers_dir();
        let path = |p: &str| dir.join(p).to_string_lossy().into_owned();
        match self {
            Peer::Everything => vec![
                "node".into(),
                path("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            ],
            Peer::TypeScript => vec!["node".into(), path("ts/paginating-server.mjs")],
            Peer::Python => vec![
                path("python/.venv/bin/python"),
                path("python/paginating_server.py"),
            ],
            Peer::Rmcp => vec![path("rmcp/target/debug/paginating-rmcp")],
        }
    }

    pub fn server_info(self) -> (&'static str, &'static str) {
        match self {
            Peer::Everything => ("mcp-servers/everything", "2.0.0"),
            Peer::TypeScript => ("paginating-ts", "1.0.0"),
            Peer::Python => ("paginating-python", "1.0.0"),
            Peer::Rmcp => ("paginating-rmcp", "1.0.0"),
        }
    }
}

/// True when the peer is installed; otherwise says so loudly (or fails when
/// INTEROP_REQUIRE_PEERS is set, as CI should).
pub fn peer_installed(peer: Peer, test: &str) -> bool {
    let marker = peer.installed_marker();
    if marker.exists() {
        return true;
    }
    let message = format!(
        "interop test {test} SKIPPED: {peer:?} peer not installed ({} missing); run scripts/install-peers.sh",
        marker.display()
    );
    if std::env::var_os("INTEROP_REQUIRE_PEERS").is_some() {
        panic!("{message}");
    }
    eprintln!("\n========\n{message}\n========\n");
    false
}

pub fn exporter_bin() -> PathBuf {
    std::env::var_os("INTEROP_EXPORTER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcp-exporter")))
}

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

pub fn kill_group(pgid: u32, signal: i32) {
    // SAFETY: kill(2) takes no pointers; a negative pid signals the process
    // group this test created (each child is started with process_group(0)).
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

pub fn group_alive(pgid: u32) -> bool {
    // SAFETY: as in kill_group; signal 0 only checks whether any process of
    // the group still exists.
    unsafe { libc::kill(-(pgid as i32), 0) == 0 }
}

/// A finished command: status and everything it wrote.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
    pub fn describe(&self) -> String {
        format!(
            "status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

pub fn read_all(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs a command in its own process group to completion (bounded by
/// RUN_DEADLINE), then makes sure nothing it started is still running: a
/// child left behind fails the test after the group is killed.
pub fn run_to_completion(mut command: Command, what: &str) -> Finished {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let pgid = child.id();
    let stdout = read_all(child.stdout.take().expect("stdout is piped"));
    let stderr = read_all(child.stderr.take().expect("stderr is piped"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if started.elapsed() > RUN_DEADLINE {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let Some(status) = status else {
        kill_group(pgid, libc::SIGKILL);
        let _ = child.wait();
        panic!(
            "{what}: still running after {RUN_DEADLINE:?}; killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
            stdout.join().unwrap_or_default(),
            stderr.join().unwrap_or_default()
        );
    };
    let leaked_since = Instant::now();
    while group_alive(pgid) && leaked_since.elapsed() < GROUP_EXIT_DEADLINE {
        thread::sleep(Duration::from_millis(20));
    }
    let leaked = group_alive(pgid);
    if leaked {
        kill_group(pgid, libc::SIGKILL);
    }
    let finished = Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    assert!(
        !leaked,
        "{what}: left a process running {GROUP_EXIT_DEADLINE:?} after it exited\n{}",
        finished.describe()
    );
    finished
}

/// An HTTP peer started by a test; killed (with its process group) on drop.
pub struct HttpPeer {
    pub child: Child,
    /// e.g. `http://127.0.0.1:43817`
    pub base_url: String,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        kill_group(self.child.id(), libc::SIGKILL);
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local addr").port()
}

/// Starts a peer's HTTP server and waits until it says it is listening.
/// Our peers bind port 0 and print `listening on http://127.0.0.1:PORT`;
/// server-everything takes PORT from the environment and prints `... on port PORT`.
pub fn start_http_peer(peer: Peer, legacy_sse: bool) -> HttpPeer {
    let argv = peer.command();
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    let everything_port = match peer {
        Peer::Everything => {
            let port = free_port();
            command
                .arg(if legacy_sse { "sse" } else { "streamableHttp" })
                .env("PORT", port.to_string());
            Some(port)
        }
        _ => {
            assert!(!legacy_sse, "only server-everything serves legacy HTTP+SSE");
            command.args(["http", "0"]);
            None
        }
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {peer:?}: {e}"));
    let (lines_tx, lines) = mpsc::channel::<String>();
    let stderr = child.stderr.take().expect("stderr is piped");
    // Keeps draining stderr after readiness so the peer never blocks on a full pipe.
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let started = Instant::now();
    let base_url = loop {
        let left = STARTUP_DEADLINE.saturating_sub(started.elapsed());
        let line = match lines.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok(line) => line,
            Err(_) => {
                kill_group(child.id(), libc::SIGKILL);
                let status = child.wait();
                panic!("{peer:?} HTTP server not listening after {STARTUP_DEADLINE:?} (exit: {status:?}); stderr:\n{}", seen.join("\n"));
            }
        };
        match everything_port {
            Some(port) if line.ends_with(&format!("on port {port}")) => {
                break format!("http://127.0.0.1:{port}")
            }
            None => {
                if let Some(url) = line.strip_prefix("listening on ") {
                    break url.trim().to_string();
                }
            }
            _ => {}
        }
        seen.push(line);
    };
    HttpPeer { child, base_url }
}

/// Runs `mcp-exporter probe ... --json` and parses its one JSON object.
pub fn run_probe(args: &[String], what: &str) -> (Option<i32>, Value, Finished) {
    let mut command = Command::new(exporter_bin());
    command.arg("probe").args(args);
    let finished = run_to_completion(command, what);
    let report: Value = serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: --json output is not one JSON object ({e})\n{}",
            finished.describe()
        )
    });
    (finished.code(), report, finished)
}
