//! `mcp-exporter check` against the real SDK peers of tests/interop.rs
//! (installed by scripts/install-peers.sh), over stdio. Each peer runs
//! clean, or fails exactly the rules docs/interop.md ("`check` against the
//! peers") names as its real defects, under the protocol version that
//! table names. A peer that is not installed is
//! skipped loudly (`INTEROP_REQUIRE_PEERS=1` makes that a failure).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// (name, marker file, stdio command, rules documented as failing)
fn peers() -> Vec<(&'static str, PathBuf, Vec<String>, &'static [&'static str])> {
    let d = peers_dir();
    let p = |s: &str| d.join(s).to_string_lossy().into_owned();
    vec![
        (
            "server-everything",
            d.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            vec![
                "node".into(),
                p("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            ],
            EVERYTHING_FAILS,
        ),
        (
            "typescript",
            d.join("node_modules/@modelcontextprotocol/sdk/package.json"),
            vec!["node".into(), p("ts/paginating-server.mjs")],
            TYPESCRIPT_FAILS,
        ),
        (
            "python",
            d.join("python/.venv/bin/python"),
            vec![
                p("python/.venv/bin/python"),
                p("python/paginating_server.py"),
            ],
            PYTHON_FAILS,
        ),
        (
            "rmcp",
            d.join("rmcp/target/debug/paginating-rmcp"),
            vec![p("rmcp/target/debug/paginating-rmcp")],
            RMCP_FAILS,
        ),
    ]
}

// What docs/interop.md records for each peer (rule ids, any kind).
const EVERYTHING_FAILS: &[&str] = &["cursor-invalid"];
const TYPESCRIPT_FAILS: &[&str] = &[];
const PYTHON_FAILS: &[&str] = &[];
const RMCP_FAILS: &[&str] = &[];

/// The protocol each peer settles on with `check` (docs/interop.md).
fn documented_protocol(peer: &str) -> &'static str {
    match peer {
        "python" | "rmcp" => "2026-07-28",
        _ => "2025-11-25",
    }
}

#[test]
fn check_against_the_sdk_peers() {
    let mut ran = 0;
    let mut wrong = Vec::new();
    for (name, marker, command, documented) in peers() {
        if !marker.exists() {
            let msg = format!(
                "check_interop {name} SKIPPED: peer not installed ({})",
                marker.display()
            );
            if std::env::var_os("INTEROP_REQUIRE_PEERS").is_some() {
                panic!("{msg}");
            }
            eprintln!("\n========\n{msg}\n========\n");
            continue;
        }
        ran += 1;
        let dir = tempfile::tempdir().unwrap();
        let junit = dir.path().join("peer.xml");
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-exporter"))
            .args(["check", "--json", "--timeout", "30s", "--junit"])
            .arg(&junit)
            .args(["--stdio", "--"])
            .args(&command)
            .output()
            .expect("run check");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{name}: no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let failing: BTreeSet<&str> = json["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "fail")
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        let expected: BTreeSet<&str> = documented.iter().copied().collect();
        let protocol = json["protocol_version"].as_str().unwrap_or("-");
        if failing != expected
            || out.status.code() != Some(0)
            || protocol != documented_protocol(name)
        {
            wrong.push(format!(
                "{name}: exit {:?}, protocol {protocol} (documented {}), failing {failing:?}, documented {expected:?}\n{}",
                out.status.code(),
                documented_protocol(name),
                serde_json::to_string_pretty(&json["rules"]).unwrap_or_default()
            ));
        }
        let xml = std::fs::read_to_string(&junit).unwrap();
        roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{name}: JUnit: {e}"));
    }
    eprintln!("check_interop: {ran} peer(s) checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
