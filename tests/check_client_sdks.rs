//! `check-client` on real SDK clients (tests/peers/clients/check*, a few
//! lines each, reading MCP_SERVER_URL or MCP_SERVER_COMMAND as the docs
//! show), over Streamable HTTP and over stdio: the page-1 readers (Python
//! `mcp`, the TypeScript SDK 1.x, fastmcp 2.14) fail the walk with the
//! tools they missed named; the TypeScript SDK 2.x passes it and shows its
//! 64-page cap; fastmcp 3 and newer walks but stops quietly at a repeated
//! cursor; an app that loops on nextCursor is stopped and failed.
//! Scenarios are picked per client to keep the run short; the clients run
//! side by side.

use mcp_testkit::check_client::{check_client, Graded};
use mcp_testkit::gateways::in_parallel;
use mcp_testkit::peers::{installed, peer_path};

/// One SDK client: its interpreter and script under tests/peers.
#[derive(Debug, Clone, Copy)]
struct Sdk {
    what: &'static str,
    interpreter: &'static str,
    script: &'static str,
    /// Arguments after the script (`{url}` is filled in by check-client).
    args: &'static [&'static str],
    marker: &'static str,
}

const PYTHON_2: Sdk = Sdk {
    what: "Python mcp 2.x",
    interpreter: "python/.venv/bin/python",
    script: "clients/check_python_sdk.py",
    args: &[],
    marker: "python/.venv/bin/python",
};
const PYTHON_1: Sdk = Sdk {
    what: "Python mcp 1.x",
    interpreter: "python-mcp1/.venv/bin/python",
    script: "clients/check_python_sdk.py",
    args: &[],
    marker: "python-mcp1/.venv/bin/python",
};
const FASTMCP_2: Sdk = Sdk {
    what: "fastmcp 2.14",
    interpreter: "fastmcp2/.venv/bin/python",
    script: "clients/check_fastmcp.py",
    args: &[],
    marker: "fastmcp2/.venv/bin/python",
};
const FASTMCP_4: Sdk = Sdk {
    what: "fastmcp 4",
    interpreter: "fastmcp/.venv/bin/python",
    script: "clients/check_fastmcp.py",
    args: &[],
    marker: "fastmcp/.venv/bin/python",
};
const TS_1: Sdk = Sdk {
    what: "TypeScript SDK 1.x",
    interpreter: "node",
    script: "clients/check-ts1.mjs",
    args: &[],
    marker: "node_modules/@modelcontextprotocol/sdk/package.json",
};
const TS_1_LOOP: Sdk = Sdk {
    what: "TypeScript SDK 1.x, walking without a guard",
    interpreter: "node",
    script: "clients/check-ts1-loop.mjs",
    args: &[],
    marker: "node_modules/@modelcontextprotocol/sdk/package.json",
};
const TS_2: Sdk = Sdk {
    what: "TypeScript SDK 2.x",
    interpreter: "node",
    script: "clients/check-ts2.mjs",
    args: &[],
    marker: "node_modules/@modelcontextprotocol/client/package.json",
};

/// The TypeScript SDK 2.x over the legacy HTTP+SSE transport (the peer
/// that takes `--transport sse --url URL`).
const TS_2_LEGACY_SSE: Sdk = Sdk {
    what: "TypeScript SDK 2.x over HTTP+SSE",
    interpreter: "node",
    script: "clients/ts2-list-tools.mjs",
    args: &["--transport", "sse", "--url", "{url}"],
    marker: "node_modules/@modelcontextprotocol/client/package.json",
};

impl Sdk {
    fn argv(self) -> Vec<String> {
        let interpreter = if self.interpreter == "node" {
            "node".to_string()
        } else {
            peer_path(self.interpreter)
        };
        let mut argv = vec![interpreter, peer_path(self.script)];
        argv.extend(self.args.iter().map(|a| a.to_string()));
        argv
    }
}

/// A check-client run: the client, its transport and scenarios, extra flags.
type Case = (Sdk, &'static str, &'static str, &'static [&'static str]);

/// Every case whose client is installed, side by side; `None` for a
/// client that is not (the test says so and goes on).
fn grade_each(test: &str, cases: &[Case]) -> Vec<Option<Graded>> {
    type Job<'a> = Box<dyn FnOnce() -> Option<Graded> + Send + 'a>;
    let jobs = cases
        .iter()
        .map(|&(sdk, transport, scenarios, extra)| {
            let present = installed(test, &[sdk.marker]);
            Box::new(move || {
                if !present {
                    return None;
                }
                let mut flags = vec!["--transport", transport, "--scenario", scenarios];
                flags.extend_from_slice(extra);
                Some(check_client(&flags, &sdk.argv()))
            }) as Job
        })
        .collect();
    in_parallel(jobs)
}

const MISSED: &str = "read page 1 of 3: saw 10 of 23 tools, missing tool-011 … tool-023; exited 0: a prefix returned as the whole (printed 10)";

#[test]
fn page_one_readers_fail_the_walk_naming_what_they_missed() {
    let cases: [Case; 6] = [
        (PYTHON_2, "http", "walk", &[]),
        (PYTHON_1, "stdio", "walk", &[]),
        (TS_1, "http", "walk", &[]),
        (TS_1, "stdio", "walk", &[]),
        (FASTMCP_2, "http", "walk", &[]),
        (FASTMCP_2, "stdio", "walk", &[]),
    ];
    for (case, run) in cases.iter().zip(grade_each("check_client_sdks", &cases)) {
        let Some(run) = run else { continue };
        assert_eq!(
            run.code,
            Some(1),
            "{} over {}: {}",
            case.0.what,
            case.1,
            run.describe()
        );
        run.expect("walk", "fail", MISSED);
    }
}

#[test]
fn the_typescript_sdk_2_walks_and_shows_its_64_page_cap() {
    let cases: [Case; 3] = [
        (TS_2, "http", "walk,endless,repeat-cursor", &[]),
        (TS_2, "stdio", "walk,endless", &[]),
        (TS_2_LEGACY_SSE, "sse", "walk,endless", &[]),
    ];
    for (case, run) in cases.iter().zip(grade_each("check_client_sdks", &cases)) {
        let Some(run) = run else { continue };
        run.expect("walk", "pass", "read all 3 pages: 23 of 23 tools, exited 0");
        run.expect(
            "endless",
            "pass",
            "stopped at its page cap after 64 pages and exited 1: page cap 64",
        );
        assert_eq!(
            run.report["page_cap"], 64,
            "{} over {}",
            case.0.what, case.1
        );
        if case.1 == "http" {
            // A repeated cursor ends its walk quietly: a prefix as the whole.
            run.expect(
                "repeat-cursor",
                "fail",
                "stopped at a repeated cursor after 3 pages and exited 0",
            );
        }
    }
}

#[test]
fn fastmcp_from_3_walks_but_stops_quietly_at_a_cycle() {
    let cases: [Case; 2] = [
        (FASTMCP_4, "http", "walk,cycle", &[]),
        (FASTMCP_4, "stdio", "walk", &[]),
    ];
    for run in grade_each("check_client_sdks", &cases)
        .into_iter()
        .flatten()
    {
        run.expect("walk", "pass", "read all 3 pages: 23 of 23 tools, exited 0");
        if run.report["scenarios"].as_array().map_or(0, Vec::len) > 1 {
            run.expect(
                "cycle",
                "fail",
                "stopped at a repeated cursor after 3 pages and exited 0: a prefix returned as the whole (saw 30 of 40 tools, missing tool-031 … tool-040)",
            );
        }
    }
}

#[test]
fn a_client_that_loops_is_stopped_and_failed() {
    let cases: [Case; 2] = [
        (TS_1_LOOP, "http", "endless", &["--max-requests", "300"]),
        (TS_1_LOOP, "stdio", "cycle", &["--max-requests", "300"]),
    ];
    for (case, run) in cases.iter().zip(grade_each("check_client_sdks", &cases)) {
        let Some(run) = run else { continue };
        let grade = run.grade(case.2);
        assert!(
            grade.status == "fail" && grade.message.starts_with("never stopped: 3"),
            "{} over {}: {grade:?}\n{}",
            case.0.what,
            case.1,
            run.describe()
        );
        assert_eq!(run.code, Some(1));
    }
}
