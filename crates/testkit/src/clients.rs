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
        let argv = self.argv();
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .args(["--url", url, "--transport", transport.flag()]);
        if let Some(name) = name {
            command.args(["--name", name]);
        }
        let what = format!("{self:?} client against {url} ({transport:?})");
        let finished = run(command, &what);
        assert!(finished.success(), "{what}: {}", finished.describe());
        let saw: Value = serde_json::from_str(finished.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "{what}: stdout is not one JSON object ({e})\n{}",
                finished.describe()
            )
        });
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
}
