//! The MCP SDK peers `scripts/install-peers.sh` installs under
//! `tests/peers`: where each lives, whether it is installed, how it is
//! started, and `mcp-exporter probe --json` against it.

use crate::ports::free_port;
use crate::process::{run_leaving_nothing, Finished, Proc};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// Passed to every probe as `--timeout`: generous so a slow start is not an error.
pub const PROBE_REQUEST_TIMEOUT: &str = "30s";

/// `tests/peers`.
pub fn peers_dir() -> PathBuf {
    crate::repo_path("tests/peers")
}

/// A path under `tests/peers`, as a string for an argv.
pub fn peer_path(relative: &str) -> String {
    peers_dir().join(relative).to_string_lossy().into_owned()
}

/// True when every marker file (under `tests/peers`) exists. Otherwise the
/// test is skipped with a loud banner, or fails when
/// `INTEROP_REQUIRE_PEERS` is set (as `scripts/test` does).
pub fn installed(test: &str, markers: &[&str]) -> bool {
    let missing: Vec<String> = markers
        .iter()
        .map(|m| peers_dir().join(m))
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let message = format!(
        "{test} SKIPPED: peer not installed ({} missing); run scripts/install-peers.sh",
        missing.join(", ")
    );
    assert!(
        std::env::var_os("INTEROP_REQUIRE_PEERS").is_none(),
        "{message}"
    );
    eprintln!("\n========\n{message}\n========\n");
    false
}

/// The SDK peers of tests/interop.rs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Everything,
    TypeScript,
    Python,
    Rmcp,
}

impl Peer {
    /// A file (under `tests/peers`) that exists only once install-peers.sh
    /// has installed this peer.
    pub fn installed_marker(self) -> &'static str {
        match self {
            Peer::Everything => {
                "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
            }
            Peer::TypeScript => "node_modules/@modelcontextprotocol/sdk/package.json",
            Peer::Python => "python/.venv/bin/python",
            Peer::Rmcp => "rmcp/target/debug/paginating-rmcp",
        }
    }

    /// True when installed; see [`installed`].
    pub fn installed(self, test: &str) -> bool {
        installed(test, &[self.installed_marker()])
    }

    /// The command that serves stdio; `http_args` are appended for HTTP.
    pub fn command(self) -> Vec<String> {
        match self {
            Peer::Everything => vec![
                "node".into(),
                peer_path("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            ],
            Peer::TypeScript => vec!["node".into(), peer_path("ts/paginating-server.mjs")],
            Peer::Python => vec![
                peer_path("python/.venv/bin/python"),
                peer_path("python/paginating_server.py"),
            ],
            Peer::Rmcp => vec![peer_path("rmcp/target/debug/paginating-rmcp")],
        }
    }

    /// `serverInfo` (name, version) it answers with.
    pub fn server_info(self) -> (&'static str, &'static str) {
        match self {
            Peer::Everything => ("mcp-servers/everything", "2.0.0"),
            Peer::TypeScript => ("paginating-ts", "1.0.0"),
            Peer::Python => ("paginating-python", "1.0.0"),
            Peer::Rmcp => ("paginating-rmcp", "1.0.0"),
        }
    }
}

/// Starts a peer's HTTP server; killed with its group on drop. Our peers
/// bind port 0 and print `listening on http://127.0.0.1:PORT`.
/// server-everything takes its port from `PORT` and prints `... on port
/// PORT`: a port picked free a moment before, so another process can take
/// it first, and then it is tried again on a new one (three times).
pub fn start_http_peer(peer: Peer, legacy_sse: bool) -> Proc {
    let argv = peer.command();
    let what = format!("{peer:?} HTTP server");
    if peer != Peer::Everything {
        assert!(!legacy_sse, "only server-everything serves legacy HTTP+SSE");
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).args(["http", "0"]);
        return Proc::spawn(&what, command);
    }
    let mut failures = Vec::new();
    for _attempt in 0..3 {
        let port = free_port();
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .arg(if legacy_sse { "sse" } else { "streamableHttp" })
            .env("PORT", port.to_string());
        match Proc::try_spawn(&what, command, everything_url) {
            Ok(server) if server.url.ends_with(&format!(":{port}")) => return server,
            Ok(server) => failures.push(format!("listens on {}, not :{port}", server.url)),
            Err(e) => failures.push(e),
        }
    }
    panic!("{}", failures.join("\n\n"));
}

/// `http://127.0.0.1:PORT` from server-everything's `... on port PORT`.
fn everything_url(line: &str) -> Option<String> {
    let port: u16 = line.rsplit_once("on port ")?.1.trim().parse().ok()?;
    Some(format!("http://127.0.0.1:{port}"))
}

/// `mcp-exporter probe ARGS...` (which must include `--json`) to
/// completion, leaving no process of its group behind (a stdio server it
/// did not reap fails the test): exit code, report, and the whole run.
pub fn run_probe(args: &[String], what: &str) -> (Option<i32>, Value, Finished) {
    let mut command = Command::new(crate::exporter_bin());
    command.arg("probe").args(args);
    let finished = run_leaving_nothing(command, what);
    let report: Value = serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: --json output is not one JSON object ({e})\n{}",
            finished.describe()
        )
    });
    (finished.code(), report, finished)
}
