//! The simulator's MCP Registry (`GET /v0.1/servers`, `/v0/servers`) seen
//! from the wire: pagination by opaque cursor, the filters, the decoy
//! entries a discoverer must skip, and each listing fault, against a real
//! `mcp-exporter simulate --scenarios` process.

use mcp_testkit::simulator::SessionClient;
use mcp_testkit::Proc;
use serde_json::Value;
use std::collections::HashSet;

const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// A simulator serving the virtual servers and registry of `yaml` (a whole
/// scenarios file) over `transport`; the file lives as long as the handle.
fn registry_sim(transport: &str, yaml: &str) -> (Proc, tempfile::NamedTempFile) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), yaml).unwrap();
    let path = file.path().to_str().unwrap();
    let sim = Proc::start(&["simulate", "--transport", transport, "--scenarios", path]);
    (sim, file)
}

/// (HTTP status, body) of `GET {url}{path}` with `query`.
async fn get(url: &str, query: &[(&str, &str)]) -> (u16, Value) {
    let url = url::Url::parse_with_params(url, query).unwrap();
    let resp = reqwest::get(url).await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The `nextCursor` of a page when it is a non-empty string.
fn next_cursor(page: &Value) -> Option<String> {
    page["metadata"]["nextCursor"]
        .as_str()
        .filter(|c| !c.is_empty())
        .map(String::from)
}

fn names(page: &Value) -> Vec<String> {
    page["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("no servers array in {page}"))
        .iter()
        .map(|e| e["server"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Follows `nextCursor` from the first page (at most 50 pages): every page.
async fn walk(url: &str, query: &[(&str, &str)]) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let mut q = query.to_vec();
        if let Some(c) = &cursor {
            q.push(("cursor", c));
        }
        let (status, page) = get(url, &q).await;
        assert_eq!(status, 200, "{page}");
        cursor = next_cursor(&page);
        pages.push(page);
        if cursor.is_none() {
            return pages;
        }
    }
    panic!("still a nextCursor after 50 pages")
}

/// `servers` healthy servers `s-0001` … listed 5 to a page, with the
/// registry knobs `knobs` (YAML lines under `registry:`): the simulator,
/// its scenarios file, the list URL.
fn faulty_registry(servers: u32, knobs: &str) -> (Proc, tempfile::NamedTempFile, String) {
    let yaml = format!(
        "servers:\n  - {{name: s, count: {servers}, scenario: healthy}}\nregistry:\n  page_size: 5\n{knobs}"
    );
    let (sim, file) = registry_sim("http", &yaml);
    let url = sim.at("/v0.1/servers");
    (sim, file, url)
}

/// The cursor page 1 hands out.
async fn first_cursor(url: &str) -> String {
    let (_, page) = get(url, &[]).await;
    next_cursor(&page).expect("page 1 has a next page")
}

const FLEET: &str = "servers:
  - {name: fleet, count: 75, scenario: healthy}
  - {name: locked, scenario: auth, token_env: SIM_TOKEN}
registry:
  decoys: {not-latest: 1, deleted: 1, deprecated: 1, no-remote: 1, url-variable: 1, required-header: 1}
";

#[tokio::test]
async fn pages_by_opaque_cursor_through_every_entry() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), FLEET).unwrap();
    let sim = Proc::start_with_env(
        &[
            "simulate",
            "--transport",
            "http",
            "--scenarios",
            file.path().to_str().unwrap(),
        ],
        &[("SIM_TOKEN", "secret")],
    );
    for path in ["/v0.1/servers", "/v0/servers"] {
        let pages = walk(&sim.at(path), &[("version", "latest")]).await;
        let sizes: Vec<usize> = pages.iter().map(|p| names(p).len()).collect();
        assert_eq!(sizes, [30, 30, 22], "{path}: 76 servers + 6 decoys by 30");
        for p in &pages {
            assert_eq!(p["metadata"]["count"].as_u64(), Some(names(p).len() as u64));
        }
        assert!(pages[2]["metadata"].get("nextCursor").is_none());
        let all: Vec<String> = pages.iter().flat_map(names).collect();
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), 82, "no repeats");
        assert_eq!(all[0], "io.github.sim/fleet-0001");
        assert_eq!(all[75], "io.github.sim/locked");
        assert!(all.contains(&"io.github.sim/decoy-url-variable-1".to_string()));
    }

    // A remote points at the virtual server, which answers there.
    let (_, first) = get(&sim.at("/v0.1/servers"), &[("limit", "1")]).await;
    let entry = &first["servers"][0];
    let remote = &entry["server"]["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], sim.at("/mcp/fleet-0001"));
    assert_eq!(entry["_meta"][OFFICIAL]["status"], "active");
    assert_eq!(entry["_meta"][OFFICIAL]["isLatest"], true);
    let mut client = SessionClient::new(remote["url"].as_str().unwrap().to_string());
    client.init().await;

    // The auth server's remote says it needs a bearer token.
    let (_, locked) = get(&sim.at("/v0.1/servers"), &[("search", "LOCKED")]).await;
    let header = &locked["servers"][0]["server"]["remotes"][0]["headers"][0];
    assert_eq!(header["name"], "Authorization");
    assert_eq!(header["isRequired"], true);
}

#[tokio::test]
async fn decoys_carry_each_skip_reason() {
    let (sim, _file) = registry_sim(
        "http",
        &FLEET.replace("auth, token_env: SIM_TOKEN", "healthy"),
    );
    let (_, page) = get(
        &sim.at("/v0.1/servers"),
        &[("search", "decoy"), ("limit", "100")],
    )
    .await;
    let by_name = |short: &str| {
        page["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["server"]["name"] == format!("io.github.sim/{short}"))
            .unwrap_or_else(|| panic!("no {short} in {page}"))
            .clone()
    };
    assert_eq!(names(&page).len(), 6);
    let not_latest = by_name("decoy-not-latest-1");
    assert_eq!(not_latest["_meta"][OFFICIAL]["isLatest"], false);
    assert_eq!(not_latest["server"]["version"], "0.9.0");
    assert_eq!(
        by_name("decoy-deleted-1")["_meta"][OFFICIAL]["status"],
        "deleted"
    );
    assert_eq!(
        by_name("decoy-deprecated-1")["_meta"][OFFICIAL]["status"],
        "deprecated"
    );
    let no_remote = by_name("decoy-no-remote-1");
    assert!(no_remote["server"].get("remotes").is_none());
    assert_eq!(
        no_remote["server"]["packages"][0]["transport"]["type"],
        "stdio"
    );
    let variable = by_name("decoy-url-variable-1");
    let url = variable["server"]["remotes"][0]["url"].as_str().unwrap();
    assert!(url.ends_with("/{tenant}"), "{url}");
    let required = by_name("decoy-required-header-1");
    assert_eq!(
        required["server"]["remotes"][0]["headers"][0]["name"],
        "X-Api-Key"
    );

    // The filters: exact version, a substring, a date.
    let (_, old) = get(&sim.at("/v0.1/servers"), &[("version", "0.9.0")]).await;
    assert_eq!(names(&old), ["io.github.sim/decoy-not-latest-1"]);
    let (_, some) = get(&sim.at("/v0.1/servers"), &[("search", "fleet-007")]).await;
    assert_eq!(names(&some).len(), 6, "fleet-0070 … fleet-0075");
    // Entry n is updated n minutes after 2025-09-01T00:00:00Z.
    let since = [("updated_since", "2025-09-01T01:14:00Z")];
    let (_, late) = get(&sim.at("/v0.1/servers"), &since).await;
    assert_eq!(names(&late).len(), 82 - 75, "entries 75 … 81");
}

#[tokio::test]
async fn bad_requests_and_foreign_cursors_get_400() {
    let (sim, _file) = registry_sim(
        "http",
        "servers:\n  - {name: s, count: 10, scenario: healthy}\n",
    );
    let url = sim.at("/v0.1/servers");
    for bad in [
        vec![("limit", "0")],
        vec![("limit", "many")],
        vec![("updated_since", "yesterday")],
        vec![("cursor", "garbage")],
    ] {
        let (status, body) = get(&url, &bad).await;
        assert_eq!(status, 400, "{bad:?}: {body}");
        assert!(body["error"].is_string());
    }
    // A cursor is good only under the filters it came with.
    let (_, page) = get(&url, &[("limit", "3"), ("search", "s-")]).await;
    let cursor = next_cursor(&page).unwrap();
    let (status, _) = get(&url, &[("cursor", &cursor), ("search", "s-")]).await;
    assert_eq!(status, 200);
    let (status, _) = get(&url, &[("cursor", &cursor)]).await;
    assert_eq!(status, 400);
    // A limit past max_limit is lowered to it.
    let (_, big) = get(&url, &[("limit", "1000")]).await;
    assert_eq!(names(&big).len(), 10);
}

#[tokio::test]
async fn cursor_cycle_repeats_page_ones_cursor() {
    let (_sim, _file, url) = faulty_registry(20, "  fault: cursor-cycle\n  page: 3\n");
    let a = first_cursor(&url).await;
    let (_, p2) = get(&url, &[("cursor", &a)]).await;
    let b = next_cursor(&p2).unwrap();
    assert_ne!(a, b);
    let (_, p3) = get(&url, &[("cursor", &b)]).await;
    assert_eq!(next_cursor(&p3), Some(a.clone()), "A → B → A");
    assert_eq!(
        names(&p3),
        [
            "io.github.sim/s-0011",
            "io.github.sim/s-0012",
            "io.github.sim/s-0013",
            "io.github.sim/s-0014",
            "io.github.sim/s-0015"
        ]
    );
}

#[tokio::test]
async fn http_500_starts_after_the_healthy_walks() {
    let (_sim, _file, url) = faulty_registry(12, "  fault: http-500\n  after_walks: 1\n");
    assert_eq!(walk(&url, &[]).await.len(), 3, "the first walk is healthy");
    let a = first_cursor(&url).await;
    let (status, body) = get(&url, &[("cursor", &a)]).await;
    assert_eq!(status, 500);
    assert!(body["error"].is_string());
}

#[tokio::test]
async fn slow_page_answers_after_a_later_first_page() {
    let (_sim, _file, url) = faulty_registry(12, "  fault: slow-page\n  delay_ms: 2000\n");
    let a = first_cursor(&url).await;
    // Page 2 asked first, page 1 second: page 1 still comes back first.
    let order = std::sync::Mutex::new(Vec::new());
    let slow = async {
        get(&url, &[("cursor", a.as_str())]).await;
        order.lock().unwrap().push(2);
    };
    let fast = async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        get(&url, &[]).await;
        order.lock().unwrap().push(1);
    };
    tokio::join!(slow, fast);
    assert_eq!(*order.lock().unwrap(), [1, 2]);
}

#[tokio::test]
async fn endless_garbage_and_oversize_pages() {
    let (_sim, _file, url) = faulty_registry(7, "  fault: endless\n");
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    for _ in 0..10 {
        let q: Vec<(&str, &str)> = cursor.iter().map(|c| ("cursor", c.as_str())).collect();
        let (status, page) = get(&url, &q).await;
        assert_eq!(status, 200);
        seen.extend(names(&page));
        cursor = Some(next_cursor(&page).expect("an endless registry always has a next page"));
    }
    assert_eq!(seen.len(), 50, "the 7 entries, round and round");
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 7);

    let (_sim, _file, url) = faulty_registry(7, "  fault: garbage-cursor\n");
    let (_, p2) = get(&url, &[("cursor", &first_cursor(&url).await)]).await;
    let (status, _) = get(&url, &[("cursor", &next_cursor(&p2).unwrap())]).await;
    assert_eq!(status, 400, "the registry rejects its own garbage");

    let (_sim, _file, url) = faulty_registry(7, "  fault: oversize\n  size_mib: 1\n");
    let second = url::Url::parse_with_params(&url, [("cursor", first_cursor(&url).await)]);
    let resp = reqwest::get(second.unwrap()).await.unwrap();
    assert!(resp.bytes().await.unwrap().len() > 1024 * 1024);
}

#[tokio::test]
async fn the_end_as_null_or_empty_and_forbidden_headers() {
    let yaml = |last: &str| {
        format!("servers:\n  - {{name: s, count: 2, scenario: healthy}}\nregistry:\n  last_cursor: {last}\n  forbid_headers: [Authorization]\n")
    };
    let (sim, _file) = registry_sim("http", &yaml("json-null"));
    let (_, page) = get(&sim.at("/v0.1/servers"), &[]).await;
    assert!(page["metadata"]["nextCursor"].is_null());
    assert!(page["metadata"].get("nextCursor").is_some());
    let denied = reqwest::Client::new()
        .get(sim.at("/v0.1/servers"))
        .bearer_auth("leaked")
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status().as_u16(), 400);

    let (sim, _file) = registry_sim("http", &yaml("empty-string"));
    let (_, page) = get(&sim.at("/v0.1/servers"), &[]).await;
    assert_eq!(page["metadata"]["nextCursor"], "");
}

#[tokio::test]
async fn sse_servers_get_sse_remotes() {
    let (sim, _file) = registry_sim("sse", "servers:\n  - {name: legacy, scenario: healthy}\n");
    let (_, page) = get(&sim.at("/v0.1/servers"), &[]).await;
    let remote = &page["servers"][0]["server"]["remotes"][0];
    assert_eq!(remote["type"], "sse");
    assert_eq!(remote["url"], sim.at("/sse/legacy"));
    let stream = reqwest::get(remote["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
}
