//! `mcp-exporter check` against the real SDK peers of tests/interop.rs
//! (installed by scripts/install-peers.sh), over stdio. Each peer runs
//! clean, or fails exactly the rules docs/interop.md ("`check` against the
//! peers") names as its real defects, under the protocol version that
//! table names. A peer that is not installed is
//! skipped loudly (`INTEROP_REQUIRE_PEERS=1` makes that a failure).

use mcp_testkit::peers::Peer;
use mcp_testkit::process::run_exporter;
use std::collections::BTreeSet;

/// (name, peer, rules documented as failing)
fn peers() -> Vec<(&'static str, Peer, &'static [&'static str])> {
    vec![
        ("server-everything", Peer::Everything, EVERYTHING_FAILS),
        ("typescript", Peer::TypeScript, TYPESCRIPT_FAILS),
        ("python", Peer::Python, PYTHON_FAILS),
        ("rmcp", Peer::Rmcp, RMCP_FAILS),
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
    for (name, peer, documented) in peers() {
        if !peer.installed(&format!("check_interop {name}")) {
            continue;
        }
        ran += 1;
        let dir = tempfile::tempdir().unwrap();
        let junit = dir.path().join("peer.xml");
        let command = peer.command();
        let mut args = vec!["check", "--json", "--timeout", "30s", "--junit"];
        args.extend([junit.to_str().unwrap(), "--stdio", "--"]);
        args.extend(command.iter().map(String::as_str));
        let out = run_exporter(&args);
        let json: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: no JSON ({e}): {}", out.describe()));
        let failing: BTreeSet<&str> = json["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "fail")
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        let expected: BTreeSet<&str> = documented.iter().copied().collect();
        let protocol = json["protocol_version"].as_str().unwrap_or("-");
        if failing != expected || out.code() != Some(0) || protocol != documented_protocol(name) {
            wrong.push(format!(
                "{name}: exit {:?}, protocol {protocol} (documented {}), failing {failing:?}, documented {expected:?}\n{}",
                out.code(),
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
