//! Real MCP SDK clients listing tools the way their users do
//! (`tests/peers/clients/*`, installed by `scripts/install-peers.sh`): each
//! is run to completion and prints what it saw as one JSON object.

use crate::peers::{installed, peer_path};
use crate::process::run;
use serde_json::Value;
use std::process::Command;

/// A real client, as its users call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkClient {
    /// Python `mcp` 2.x `ClientSession.list_tools()` once: page 1 only.
    Python,
    /// TypeScript SDK 1.x `Client.listTools()` once: page 1 only.
    TypeScript1,
    /// TypeScript SDK 2.x `@modelcontextprotocol/client` `listTools()`: walks.
    TypeScript2,
    /// fastmcp 4 `Client.list_tools()`: walks.
    FastMcp,
}

/// Which HTTP transport a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientTransport {
    /// Streamable HTTP (`POST /mcp`).
    Http,
    /// Legacy HTTP+SSE (`GET /sse`, then POSTs to the announced URL).
    Sse,
}

impl ClientTransport {
    fn flag(self) -> &'static str {
        match self {
            ClientTransport::Http => "http",
            ClientTransport::Sse => "sse",
        }
    }
}

/// What a client printed: the tools it saw.
#[derive(Debug, Clone)]
pub struct ClientSaw {
    pub count: usize,
    pub names: Vec<String>,
}

impl SdkClient {
    pub const ALL: [SdkClient; 4] = [
        SdkClient::Python,
        SdkClient::TypeScript1,
        SdkClient::TypeScript2,
        SdkClient::FastMcp,
    ];

    /// Whether one `list tools` call of this client follows `nextCursor`.
    pub fn walks(self) -> bool {
        matches!(self, SdkClient::TypeScript2 | SdkClient::FastMcp)
    }

    /// A file (under `tests/peers`) that exists once the client's SDK is installed.
    pub fn installed_marker(self) -> &'static str {
        match self {
            SdkClient::Python => "python/.venv/bin/python",
            SdkClient::TypeScript1 => "node_modules/@modelcontextprotocol/sdk/package.json",
            SdkClient::TypeScript2 => "node_modules/@modelcontextprotocol/client/package.json",
            SdkClient::FastMcp => "fastmcp/.venv/bin/python",
        }
    }

    /// True when installed; see [`installed`].
    pub fn installed(self, test: &str) -> bool {
        installed(test, &[self.installed_marker()])
    }

    fn argv(self) -> Vec<String> {
        match self {
            SdkClient::Python => vec![
                peer_path("python/.venv/bin/python"),
                peer_path("clients/python_list_tools.py"),
            ],
            SdkClient::TypeScript1 => vec!["node".into(), peer_path("clients/ts1-list-tools.mjs")],
            SdkClient::TypeScript2 => vec!["node".into(), peer_path("clients/ts2-list-tools.mjs")],
            SdkClient::FastMcp => vec![
                peer_path("fastmcp/.venv/bin/python"),
                peer_path("clients/fastmcp_list_tools.py"),
            ],
        }
    }

    /// Runs the client once over stdio against `server` (a command and its
    /// arguments, which the client starts), announcing `name` (`None`: the
    /// SDK's default). Fails the test if the client fails; what it printed
    /// to stderr (the server's, passed through) comes back too.
    pub fn list_tools_stdio(self, server: &[String], name: Option<&str>) -> (ClientSaw, String) {
        let argv = self.argv();
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).args(["--transport", "stdio"]);
        if let Some(name) = name {
            command.args(["--name", name]);
        }
        command.arg("--").args(server);
        let what = format!("{self:?} client over stdio to {server:?}");
        let finished = run(command, &what);
        assert!(finished.success(), "{what}: {}", finished.describe());
        (saw(&finished.stdout, &what), finished.stderr)
    }

    /// Runs the client once against `url` (the MCP endpoint: `/mcp` for
    /// Streamable HTTP, `/sse` for legacy), announcing `name` as its
    /// `clientInfo.name` (`None`: the SDK's own default). Fails the test if
    /// the client fails.
    pub fn list_tools(
        self,
        url: &str,
        transport: ClientTransport,
        name: Option<&str>,
    ) -> ClientSaw {
        self.list_tools_with(url, transport, name, &[])
    }

    /// [`SdkClient::list_tools`] with the client's own further flags (the
    /// Python client's `--source-address ADDR` and `--walk`).
    pub fn list_tools_with(
        self,
        url: &str,
        transport: ClientTransport,
        name: Option<&str>,
        flags: &[&str],
    ) -> ClientSaw {
        let argv = self.argv();
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .args(["--url", url, "--transport", transport.flag()])
            .args(flags);
        if let Some(name) = name {
            command.args(["--name", name]);
        }
        let what = format!("{self:?} client against {url} ({transport:?})");
        let finished = run(command, &what);
        assert!(finished.success(), "{what}: {}", finished.describe());
        saw(&finished.stdout, &what)
    }
}

/// What a client printed on stdout: one JSON object with its tools.
fn saw(stdout: &str, what: &str) -> ClientSaw {
    let saw: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{what}: stdout is not one JSON object ({e}): {stdout}"));
    let names: Vec<String> = saw["names"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no names in {saw}"))
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    ClientSaw {
        count: saw["count"].as_u64().unwrap_or(u64::MAX) as usize,
        names,
    }
}

/// Where tap `name` (any tap when `None`) last said it serves, from
/// the exporter's logfmt stderr (`msg="tap serving" tap=NAME url=URL`).
pub fn tap_url_in(stderr: &str, name: Option<&str>) -> Option<String> {
    stderr.lines().rev().find_map(|line| {
        let rest = line.split_once("msg=\"tap serving\" tap=")?.1;
        let (tap, rest) = rest.split_once(' ')?;
        if name.is_some_and(|n| n != tap) {
            return None;
        }
        let url = rest.strip_prefix("url=")?.split_whitespace().next()?;
        Some(url.to_string())
    })
}

/// `mcp-exporter tap ARGS` in front of `upstream` (an MCP endpoint URL):
/// where clients connect (`tap_url`, scheme, host and port) and its own web
/// port (`web.url`).
pub struct TapCommand {
    pub web: crate::Proc,
    pub tap_url: String,
}

impl TapCommand {
    /// Starts the tap (listening on a free port, its web port too) with
    /// `flags` besides `--listen`, `--upstream` and `--web.listen-address`.
    pub fn start(upstream: &str, flags: &[&str]) -> TapCommand {
        TapCommand::start_with_env(upstream, flags, &[])
    }

    /// [`TapCommand::start`] with extra environment variables.
    pub fn start_with_env(upstream: &str, flags: &[&str], env: &[(&str, &str)]) -> TapCommand {
        let mut args = vec![
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--web.listen-address",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(flags);
        let web = crate::Proc::start_with_env(&args, env);
        // The tap's line comes before the web port's `listening on`.
        let tap_url = tap_url_in(&web.stderr(), None)
            .unwrap_or_else(|| panic!("no `tap serving` line:\n{}", web.stderr()));
        TapCommand { web, tap_url }
    }

    /// `/api/clients`, parsed.
    pub fn api_clients(&self) -> Value {
        let body = crate::http_get_ok(&self.web.at("/api/clients"));
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("/api/clients: {e}: {body}"))
    }

    /// The client `name` of the tap's first (only) tap in `/api/clients`,
    /// once `ready` holds for it (polled; the tap publishes once a second).
    pub fn client_when(&self, name: &str, ready: impl Fn(&Value) -> bool) -> Value {
        crate::wait_for(
            std::time::Duration::from_secs(60),
            &format!("client {name} in /api/clients"),
            || {
                let answer = self.api_clients();
                let client = answer["taps"][0]["clients"]
                    .as_array()?
                    .iter()
                    .find(|c| c["client"] == name)?
                    .clone();
                ready(&client).then_some(client)
            },
        )
    }

    /// `/metrics` as text.
    pub fn metrics(&self) -> String {
        crate::http_get_ok(&self.web.at("/metrics"))
    }
}
