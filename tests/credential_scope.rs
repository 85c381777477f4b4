//! A legacy HTTP+SSE server whose `endpoint` event names a path outside
//! where the target's credentials may go (issue 34, break 1). Reached as a
//! discovered target, through an unauthenticated `/probe?module=` with
//! `transport: auto`, and as a configured target: every poll ends
//! `url_not_allowed`, and nothing — no request, no token — reaches the
//! named path.

use mcp_testkit::stub::{Stub, StubRequest, StubResponse};
use mcp_testkit::{sample, Exporter};
use serde_json::json;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
const MODULE_TOKEN: &str = "module-token-9a7e";
const STATIC_TOKEN: &str = "static-token-51c3";

/// Refuses every POST to its stream URLs (so `auto` falls back to SSE) and
/// answers a GET with an event stream whose `endpoint` names `/internal`.
fn hostile_sse_server() -> Stub {
    Stub::start(|r: &StubRequest| {
        if r.path.starts_with("/internal") {
            return StubResponse::with(202, "text/plain", "");
        }
        if r.method == "GET" {
            let events = "event: endpoint\ndata: /internal/admin/delete-everything?sessionId=1\n\n";
            return StubResponse::with(200, "text/event-stream", events);
        }
        StubResponse::with(405, "text/plain", "")
    })
}

/// No request reached `/internal`, and every request that carried a token
/// went under `allowed`.
fn assert_nothing_left(stub: &Stub, allowed: &str) {
    let requests = stub.requests();
    assert!(!requests.is_empty(), "the server was never asked");
    for r in &requests {
        assert!(!r.path.starts_with("/internal"), "{r:?}");
        if r.header("authorization").is_some() {
            assert!(r.path.starts_with(allowed), "a token went to {r:?}");
        }
    }
}

fn errors(text: &str, target: &str) -> Option<f64> {
    sample(
        text,
        "mcp_listing_errors_total",
        &[
            ("target", target),
            ("kind", "tools"),
            ("error", "url_not_allowed"),
        ],
    )
}

#[test]
fn an_sse_endpoint_outside_the_module_allow_list_gets_nothing() {
    let stub = hostile_sse_server();
    let sd = tempfile::tempdir().unwrap();
    let groups =
        json!([{"targets": [format!("{}/mcp/sse", stub.url())], "labels": {"name": "found"}}]);
    std::fs::write(sd.path().join("fleet.json"), groups.to_string()).unwrap();
    let config = format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\nmodules:\n  m:\n    allow: [\"{url}/mcp/\"]\n    http:\n      bearer_token_env: MODULE_TOK\n      transport: auto\ndiscovery:\n  - name: fleet\n    module: m\n    file_sd: {{files: [\"{dir}/*.json\"]}}\n",
        url = stub.url(),
        dir = sd.path().display()
    );
    let exp = Exporter::start_with(&config, &[], &[("MODULE_TOK", MODULE_TOKEN)]);

    // Discovered: scheduled polls fail with the label, send nothing on.
    exp.wait_metrics(LIMIT, "two polls of the discovered target", |t| {
        errors(t, "found").is_some_and(|n| n >= 2.0)
    });
    assert_nothing_left(&stub, "/mcp/");
    let polled = stub.requests().len();

    // `/probe?module=`, unauthenticated: the same.
    let (status, body) = exp.get(&format!("/probe?module=m&target={}/mcp/sse", stub.url()));
    assert_eq!(status, 200, "{body}");
    assert_eq!(errors(&body, "m"), Some(1.0), "{body}");
    assert!(
        stub.requests().len() > polled,
        "the probe reached the server"
    );
    assert_nothing_left(&stub, "/mcp/");
    assert!(!exp.stderr().contains(MODULE_TOKEN));
}

#[test]
fn an_sse_endpoint_outside_a_configured_target_directory_gets_nothing() {
    let stub = hostile_sse_server();
    let config = format!(
        "global:\n  schedule: {{every: 1h}}\n  kinds: [tools]\ntargets:\n  - name: legacy\n    http:\n      url: {}/mcp/sse\n      transport: sse\n      bearer_token_env: STATIC_TOK\n",
        stub.url()
    );
    let exp = Exporter::start_with(&config, &[], &[("STATIC_TOK", STATIC_TOKEN)]);
    let (status, body) = exp.get("/probe?target=legacy");
    assert_eq!(status, 200, "{body}");
    assert_eq!(errors(&body, "legacy"), Some(1.0), "{body}");
    assert_nothing_left(&stub, "/mcp/");
}
