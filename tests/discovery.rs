//! Targets from discovery sources, end to end: a `file_sd` folder changed
//! while the exporter runs, an `http_sd` endpoint (a stub server here), a
//! registry walked behind the walker's guards; targets come and go, their
//! series with them, bad input is explained and loses nothing, shards
//! split discovered targets, credentials stay where they belong.

use mcp_testkit::stub::{Stub, StubBody, StubRequest, StubResponse};
use mcp_testkit::{sample, scenarios_simulator, Exporter};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

/// Names of the targets an exporter polls now.
fn names(exp: &Exporter) -> BTreeSet<String> {
    exp.api_targets()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// `/api/sources`' object for `name`.
fn source(exp: &Exporter, name: &str) -> Value {
    exp.api_sources()
        .into_iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no source {name}"))
}

/// Waits until source `name` has refreshed more than `after` times, and
/// returns its object.
fn refreshed_after(exp: &Exporter, name: &str, after: u64) -> Value {
    exp.wait(LIMIT, &format!("refresh {} of {name}", after + 1), || {
        let s = source(exp, name);
        (s["refreshes"].as_u64().unwrap_or(0) > after).then_some(s)
    })
}

/// Waits until the next refresh of `name` and returns its object.
fn next_refresh(exp: &Exporter, name: &str) -> Value {
    let now = source(exp, name)["refreshes"].as_u64().unwrap_or(0);
    refreshed_after(exp, name, now)
}

/// A `file_sd` file of single-target groups named by `name` labels.
fn write_groups(path: &Path, sim: &str, targets: &[&str]) {
    let groups: Vec<Value> = targets
        .iter()
        .map(|t| json!({"targets": [format!("{sim}/mcp/{t}")], "labels": {"name": t, "team": "blue"}}))
        .collect();
    // Written aside and renamed in, as config management does.
    let aside = path.with_extension("tmp");
    std::fs::write(&aside, serde_json::to_vec(&groups).unwrap()).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

/// `global:` polling every second and a module allowing the simulator.
fn head(sim: &str, state: &Path) -> String {
    format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  state_dir: {}\nmodules:\n  sim:\n    allow: [\"{sim}/mcp/\"]\n    kinds: [tools]\n",
        state.display()
    )
}

fn polls(text: &str, target: &str) -> f64 {
    sample(text, "mcp_polls_total", &[("target", target)]).unwrap_or(0.0)
}

/// Every series of `target` in scraped text.
fn series_of(text: &str, target: &str) -> Vec<String> {
    let needle = format!("target=\"{target}\"");
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(&needle))
        .map(str::to_string)
        .collect()
}

#[test]
fn file_sd_targets_come_and_go_and_a_flap_keeps_the_baseline() {
    let (sim, _scenarios) = scenarios_simulator(
        "  - {name: a, scenario: healthy}\n  - {name: b, scenario: shrink}\n  - {name: c, scenario: healthy}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets");
    std::fs::create_dir(&targets).unwrap();
    let file = targets.join("fleet.json");
    write_groups(&file, &sim.url, &["a", "b"]);
    let exp = Exporter::start_with_dir(
        |d| {
            format!(
                "{}discovery:\n  - name: fleet\n    module: sim\n    file_sd: {{files: [\"{}/*.json\"]}}\n    labels: {{env: test}}\n",
                head(&sim.url, &d.join("state")),
                targets.display()
            )
        },
        &[],
        &[],
    );
    // Both appear and are polled; b (shrinking) twice, so it has a baseline.
    let text = exp.wait_metrics(LIMIT, "a polled, b polled twice", |t| {
        polls(t, "a") >= 1.0 && polls(t, "b") >= 2.0
    });
    assert_eq!(
        sample(
            &text,
            "mcp_target_info",
            &[
                ("target", "b"),
                ("source", "fleet"),
                ("env", "test"),
                ("team", "blue"),
                ("name", "b")
            ]
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "mcp_discovery_targets", &[("source", "fleet")]),
        Some(2.0)
    );
    let api = exp.api_targets();
    let b = mcp_testkit::exporter::api_target(&api, "b");
    assert_eq!(b["source"], "fleet");
    // The status page shows the source and groups its targets.
    let (status, page) = exp.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("Discovery sources"), "{page}");
    assert!(page.contains("discovered by <b>fleet</b>"), "{page}");

    // b leaves, c arrives: b's series are gone from a real scrape at once.
    write_groups(&file, &sim.url, &["a", "c"]);
    let text = exp.wait_metrics(LIMIT, "c polled", |t| polls(t, "c") >= 1.0);
    let text = if series_of(&text, "b").is_empty() {
        text
    } else {
        exp.wait_metrics(LIMIT, "b's series gone", |t| series_of(t, "b").is_empty())
    };
    assert!(series_of(&text, "b").is_empty());
    assert!(!series_of(&text, "a").is_empty());
    assert!(!names(&exp).contains("b"));

    // b flaps back: its first poll compares with the baseline it left with
    // (kept for baseline_retention), so the shrink since shows as removed
    // items instead of a catalogue seen for the first time.
    write_groups(&file, &sim.url, &["a", "b", "c"]);
    let text = exp.wait_metrics(LIMIT, "b polled again", |t| polls(t, "b") >= 1.0);
    let removed = sample(
        &text,
        "mcp_listing_items_removed_total",
        &[("target", "b"), ("kind", "tools")],
    );
    assert!(removed.is_some_and(|n| n >= 1.0), "{:?}\n{text}", removed);
}

#[test]
fn bad_file_sd_input_is_explained_and_loses_nothing() {
    let (sim, _scenarios) = scenarios_simulator(
        "  - {name: a, scenario: healthy}\n  - {name: other, scenario: healthy}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    let others = dir.path().join("others");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::create_dir(&others).unwrap();
    write_groups(&fleet.join("a.json"), &sim.url, &["a"]);
    write_groups(&others.join("o.json"), &sim.url, &["other"]);
    let config = |d: &Path| {
        format!(
            "{}discovery:\n  - name: fleet\n    module: sim\n    file_sd: {{files: [\"{}/*.json\", \"{}/*.yaml\"], max_file_bytes: 1MiB}}\n    max_targets: 50\n  - name: others\n    module: sim\n    file_sd: {{files: [\"{}/*.json\"]}}\n",
            head(&sim.url, &d.join("state")),
            fleet.display(),
            fleet.display(),
            others.display()
        )
    };
    let exp = Exporter::start_with_dir(config, &["--web.enable-lifecycle"], &[]);
    exp.wait_metrics(LIMIT, "a and other polled", |t| {
        polls(t, "a") >= 1.0 && polls(t, "other") >= 1.0
    });
    let bad: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not-json.json", b"{not json".to_vec(), "malformed_result"),
        ("shape.json", br#"{"targets": []}"#.to_vec(), "malformed_result"),
        ("shape.yaml", b"- targets: https://x.invalid/\n".to_vec(), "malformed_result"),
        (
            "many.json",
            serde_json::to_vec(&json!([{"targets": (0..1000).map(|i| format!("{}/mcp/t{i}", sim.url)).collect::<Vec<_>>()}]))
                .unwrap(),
            "too_many_targets",
        ),
    ];
    for (name, bytes, reason) in bad {
        let path = fleet.join(name);
        std::fs::write(&path, bytes).unwrap();
        let s = exp.wait(LIMIT, &format!("{name} refused"), || {
            let s = next_refresh(&exp, "fleet");
            (s["last_refresh"]["reason"] == reason).then_some(s)
        });
        assert_eq!(s["last_refresh"]["outcome"], "error", "{s}");
        assert!(s["keeps_last_good_list"].as_bool().unwrap(), "{s}");
        assert!(
            s["last_refresh"]["detail"].as_str().unwrap().contains(name),
            "{s}"
        );
        std::fs::remove_file(&path).unwrap();
    }
    // 100 MB (sparse) and a FIFO: refused without reading them whole or
    // waiting on them.
    let huge = fleet.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let s = exp.wait(LIMIT, "a 100 MB file refused", || {
        let s = next_refresh(&exp, "fleet");
        (s["last_refresh"]["reason"] == "response_too_large").then_some(s)
    });
    assert!(s["keeps_last_good_list"].as_bool().unwrap());
    std::fs::remove_file(&huge).unwrap();
    let fifo = fleet.join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let s = exp.wait(LIMIT, "a FIFO refused", || {
        let s = next_refresh(&exp, "fleet");
        (s["last_refresh"]["reason"] == "unreadable").then_some(s)
    });
    assert!(s["last_refresh"]["detail"]
        .as_str()
        .unwrap()
        .contains("not a regular file"));
    std::fs::remove_file(&fifo).unwrap();

    // Entries with problems of their own are left out, each explained; the
    // rest of the list is applied.
    let entries = json!([
        {"targets": [format!("{}/mcp/a", sim.url)], "labels": {"name": "a"}},
        {"targets": ["http://user:s3cret-pass@127.0.0.1:1/mcp/x"], "labels": {"name": "userinfo"}},
        {"targets": ["ftp://127.0.0.1/x"], "labels": {"name": "ftp"}},
        {"targets": [format!("{}/mcp/a", sim.url)], "labels": {"name": "labelled", "bad-label": "x"}},
        {"targets": ["https://elsewhere.invalid/mcp"], "labels": {"name": "outside"}},
        {"targets": [format!("{}/mcp/other", sim.url)], "labels": {"name": "a"}},
    ]);
    std::fs::write(fleet.join("a.json"), serde_json::to_vec(&entries).unwrap()).unwrap();
    let s = exp.wait(LIMIT, "the entries' skips", || {
        let s = next_refresh(&exp, "fleet");
        (s["last_refresh"]["outcome"] == "complete"
            && s["skipped"]["counts"].get("url_userinfo").is_some())
        .then_some(s)
    });
    let counts = &s["skipped"]["counts"];
    for reason in [
        "url_userinfo",
        "not_http",
        "invalid_label",
        "not_allowed",
        "duplicate_name",
    ] {
        assert_eq!(counts[reason], 1, "{reason}: {s}");
    }
    assert!(!s.to_string().contains("s3cret-pass"), "{s}");
    assert_eq!(s["targets"], 1);
    let text = exp.metrics();
    assert_eq!(
        sample(
            &text,
            "mcp_discovery_skipped_entries",
            &[("source", "fleet"), ("reason", "not_http")]
        ),
        Some(1.0)
    );
    assert!(!text.contains("s3cret-pass"));
    assert!(!exp.stderr().contains("s3cret-pass"));
    // The other source was never touched; a reload still works.
    let others = source(&exp, "others");
    assert_eq!(others["consecutive_failures"], 0, "{others}");
    assert_eq!(others["targets"], 1);
    let before = polls(&exp.metrics(), "other");
    let (status, body) =
        exp.reload(&config(exp.dir()).replace("max_targets: 50", "max_targets: 60"));
    assert_eq!(status, 200, "{body}");
    exp.wait_metrics(LIMIT, "other polled after the reload", |t| {
        polls(t, "other") > before
    });
    assert!(names(&exp).contains("a"));
}

/// How a stub answers every request from now on.
type StubAnswer = Box<dyn Fn() -> StubResponse + Send + Sync>;

/// An `http_sd` answer listing `targets` (single-target groups).
fn sd_list(sim: &str, targets: &[&str]) -> String {
    let groups: Vec<Value> = targets
        .iter()
        .map(|t| json!({"targets": [format!("{sim}/mcp/{t}")], "labels": {"name": t}}))
        .collect();
    serde_json::to_string(&groups).unwrap()
}

#[test]
fn http_sd_lists_are_fetched_whole_and_bad_answers_keep_the_last_good_list() {
    let (sim, _scenarios) = scenarios_simulator("  - {name: h, scenario: healthy}\n");
    let list = sd_list(&sim.url, &["h"]);
    let stub = Stub::start(move |_| StubResponse::json(&list));
    let token = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token.path(), "sd-token-7f3a\n").unwrap();
    let exp = Exporter::start_with_dir(
        |d| {
            format!(
                "{}discovery:\n  - name: inventory\n    module: sim\n    http_sd: {{http: {{url: \"{}/sd\", bearer_token_file: {}}}, refresh_interval: 1s, limits: {{max_response_bytes: 32MiB}}}}\n    max_targets: 100\n",
                head(&sim.url, &d.join("state")),
                stub.url(),
                token.path().display()
            )
        },
        &[],
        &[],
    );
    exp.wait_metrics(LIMIT, "h polled", |t| polls(t, "h") >= 1.0);
    let first = &stub.requests()[0];
    assert_eq!(first.method, "GET");
    assert_eq!(
        first.header("x-prometheus-refresh-interval-seconds"),
        Some("1")
    );
    assert_eq!(first.header("authorization"), Some("Bearer sd-token-7f3a"));
    assert_eq!(first.header("accept"), Some("application/json"));

    let huge = 100u64 << 20;
    let million: String = {
        let urls: Vec<String> = (0..1_000_000)
            .map(|i| format!("\"http://h/{i}\""))
            .collect();
        format!("[{{\"targets\": [{}]}}]", urls.join(","))
    };
    let cases: Vec<(&str, StubAnswer)> = vec![
        (
            "malformed_result",
            Box::new(|| StubResponse::json("<html>no</html>")),
        ),
        (
            "malformed_result",
            Box::new(|| StubResponse::json("{\"targets\": []}")),
        ),
        (
            "malformed_result",
            Box::new(|| StubResponse::with(200, "text/plain", "[]")),
        ),
        (
            "transport_error",
            Box::new(|| StubResponse::with(500, "text/plain", "down")),
        ),
        (
            "response_too_large",
            Box::new(move || StubResponse {
                status: 200,
                content_type: "application/json".into(),
                body: StubBody::Filler(huge),
            }),
        ),
        (
            "too_many_targets",
            Box::new(move || StubResponse::json(&million)),
        ),
    ];
    for (reason, answer) in cases {
        stub.set(move |_: &StubRequest| answer());
        let s = exp.wait(LIMIT, reason, || {
            let s = next_refresh(&exp, "inventory");
            (s["last_refresh"]["reason"] == reason).then_some(s)
        });
        assert!(s["keeps_last_good_list"].as_bool().unwrap(), "{s}");
        assert_eq!(s["targets"], 1, "{s}");
        let before = polls(&exp.metrics(), "h");
        exp.wait_metrics(LIMIT, "h still polled", |t| polls(t, "h") > before);
    }
    let text = exp.metrics();
    for reason in [
        "malformed_result",
        "transport_error",
        "response_too_large",
        "too_many_targets",
    ] {
        assert!(
            sample(
                &text,
                "mcp_discovery_refresh_failures_total",
                &[("source", "inventory"), ("reason", reason)]
            )
            .is_some_and(|n| n >= 1.0),
            "{reason}: {text}"
        );
    }
    assert!(sample(
        &text,
        "mcp_discovery_consecutive_failures",
        &[("source", "inventory")]
    )
    .is_some_and(|n| n >= 1.0));
    // An empty list is a list: the target goes.
    stub.set(|_: &StubRequest| StubResponse::json("[]"));
    exp.wait_metrics(LIMIT, "h gone", |t| series_of(t, "h").is_empty());
    assert!(!exp.stderr().contains("sd-token-7f3a"));
}

#[test]
fn shards_poll_every_discovered_target_exactly_once_between_them() {
    let (sim, _scenarios) = scenarios_simulator("  - {name: t, count: 12, scenario: healthy}\n");
    let dir = tempfile::tempdir().unwrap();
    let names_all: Vec<String> = (1..=12).map(|i| format!("t-{i:04}")).collect();
    let refs: Vec<&str> = names_all.iter().map(String::as_str).collect();
    write_groups(&dir.path().join("fleet.json"), &sim.url, &refs);
    let shards: Vec<Exporter> = (0..3)
        .map(|i| {
            Exporter::start_with_dir(
                |d| {
                    format!(
                        "{}discovery:\n  - name: fleet\n    module: sim\n    file_sd: {{files: [\"{}/*.json\"]}}\n",
                        head(&sim.url, &d.join("state")),
                        dir.path().display()
                    )
                },
                &["--shard", &format!("{i}/3")],
                &[],
            )
        })
        .collect();
    let mut seen: Vec<String> = Vec::new();
    for exp in &shards {
        refreshed_after(exp, "fleet", 0);
        let mine = names(exp);
        // Each one it lists, it polls.
        exp.wait_api(LIMIT, "every target of this shard polled", |all| {
            all.iter().all(|t| t["polls"].as_u64().unwrap_or(0) >= 1)
        });
        seen.extend(mine);
    }
    seen.sort();
    assert_eq!(seen, names_all, "each target in exactly one shard");
}

#[test]
fn no_static_or_global_credential_reaches_a_discovered_host() {
    // The discovered host records what it is sent (it is no MCP server).
    let host = Stub::start(|_| StubResponse::with(404, "text/plain", "no"));
    let (sim, _scenarios) = scenarios_simulator("  - {name: s, scenario: healthy}\n");
    let list = format!(
        "[{{\"targets\": [\"{}/mcp\"], \"labels\": {{\"name\": \"found\"}}}}]",
        host.url()
    );
    let inventory = Stub::start(move |_| StubResponse::json(&list));
    let registry =
        Stub::start(|_| StubResponse::json(r#"{"servers": [], "metadata": {"count": 0}}"#));
    let exp = Exporter::start_with(
        &format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: static\n    http:\n      url: {sim}/mcp/s\n      bearer_token_env: STATIC_TOKEN\n      headers: {{X-Static-Key: static-header-value}}\nmodules:\n  found:\n    allow: [\"{host}/\"]\n    http:\n      headers: {{X-Module-Key: {{env: MODULE_KEY}}}}\n    kinds: [tools]\n  other:\n    allow: [\"{sim}/\"]\n    http:\n      bearer_token_env: OTHER_TOKEN\ndiscovery:\n  - name: inventory\n    module: found\n    http_sd: {{http: {{url: \"{inv}/sd\", headers: {{X-Inventory-Key: inventory-key-value}}}}, refresh_interval: 1s}}\n  - name: public\n    module: other\n    registry: {{http: {{url: \"{reg}\"}}, refresh_interval: 1s}}\n",
            sim = sim.url,
            host = host.url(),
            inv = inventory.url(),
            reg = registry.url(),
        ),
        &[],
        &[
            ("STATIC_TOKEN", "static-token-value"),
            ("MODULE_KEY", "module-key-value"),
            ("OTHER_TOKEN", "other-module-token"),
        ],
    );
    exp.wait(LIMIT, "the discovered host asked twice", || {
        (host.requests().len() >= 2).then_some(())
    });
    let secrets = [
        "static-token-value",
        "static-header-value",
        "other-module-token",
        "inventory-key-value",
    ];
    for r in host.requests() {
        assert_eq!(r.header("x-module-key"), Some("module-key-value"), "{r:?}");
        assert_eq!(r.header("authorization"), None, "{r:?}");
        let all = format!("{:?}", r.headers);
        for secret in secrets {
            assert!(
                !all.contains(secret),
                "{secret} sent to a discovered host: {r:?}"
            );
        }
    }
    // A registry that requires nothing gets no Authorization header, and
    // neither source is sent a module's or a target's credential.
    exp.wait(LIMIT, "the registry asked", || {
        (!registry.requests().is_empty()).then_some(())
    });
    for r in registry
        .requests()
        .iter()
        .chain(inventory.requests().iter())
    {
        assert_eq!(r.header("authorization"), None, "{r:?}");
        let all = format!("{:?}", r.headers);
        for secret in [
            "static-token-value",
            "static-header-value",
            "module-key-value",
            "other-module-token",
        ] {
            assert!(!all.contains(secret), "{secret} sent to a source: {r:?}");
        }
    }
}

/// One registry entry: a server with a `streamable-http` remote at `url`.
fn server(name: &str, url: &str) -> Value {
    json!({
        "server": {"name": name, "version": "1.0.0", "remotes": [{"type": "streamable-http", "url": url}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}
    })
}

/// What the registry stub does wrong, switched while the exporter runs.
#[derive(Clone, Copy, PartialEq)]
enum RegistryFault {
    None,
    /// The third page hands back the second page's cursor.
    CursorCycle,
    /// Every cursor it handed out is refused (HTTP 400).
    RefusesItsCursors,
}

/// A registry serving `entries` `limit` at a time on `/v0/servers` only
/// (the walk falls back to it); cursors are the next index.
fn registry_stub(entries: Vec<Value>, fault: Arc<Mutex<RegistryFault>>) -> Stub {
    Stub::start(move |r| {
        if r.path != "/v0/servers" {
            return StubResponse::with(404, "text/plain", "not found");
        }
        let at: usize = r
            .param("cursor")
            .map_or(0, |c| c.parse().unwrap_or(usize::MAX));
        let fault = *fault.lock().unwrap();
        if r.param("cursor").is_some() && fault == RegistryFault::RefusesItsCursors {
            return StubResponse::with(400, "application/json", "{\"error\": \"bad cursor\"}");
        }
        let limit: usize = r.param("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
        if at > entries.len() {
            return StubResponse::with(400, "application/json", "{\"error\": \"bad cursor\"}");
        }
        let page: Vec<Value> = entries.iter().skip(at).take(limit).cloned().collect();
        let mut next = (at + limit < entries.len()).then(|| (at + limit).to_string());
        if fault == RegistryFault::CursorCycle && at == 2 * limit {
            next = Some(limit.to_string());
        }
        StubResponse::json(
            &json!({"servers": page, "metadata": {"nextCursor": next, "count": page.len()}})
                .to_string(),
        )
    })
}

#[test]
fn a_registry_is_walked_with_the_walkers_guards_and_its_rules() {
    let (sim, _scenarios) = scenarios_simulator("  - {name: r, count: 2, scenario: healthy}\n");
    let mcp = |n: &str| format!("{}/mcp/{n}", sim.url);
    let official = "io.modelcontextprotocol.registry/official";
    let mut deprecated = server("io.example/deprecated", &mcp("r-0001"));
    deprecated["_meta"][official]["status"] = json!("deprecated");
    let mut old = server("io.example/old", &mcp("r-0001"));
    old["_meta"][official]["isLatest"] = json!(false);
    let mut sse_only = server("io.example/sse-only", &mcp("r-0002"));
    sse_only["server"]["remotes"] = json!([{"type": "sse", "url": mcp("r-0002")}]);
    let mut keyed = server("io.example/keyed", &mcp("r-0001"));
    keyed["server"]["remotes"][0]["headers"] =
        json!([{"name": "X-Api-Key", "isRequired": true, "isSecret": true}]);
    let entries = vec![
        server("io.example/one", &mcp("r-0001")),
        server("io.example/two", &mcp("r-0002")),
        deprecated,
        old,
        json!({"server": {"name": "io.example/package-only", "version": "1", "packages": [{"registryType": "npm"}]}}),
        server(
            "io.example/templated",
            "https://{tenant}.example.invalid/mcp",
        ),
        keyed,
        server("io.example/elsewhere", "https://elsewhere.invalid/mcp"),
        sse_only,
    ];
    let fault = Arc::new(Mutex::new(RegistryFault::None));
    let registry = registry_stub(entries, fault.clone());
    let exp = Exporter::start_with_dir(
        |d| {
            format!(
                "{}discovery:\n  - name: public\n    module: sim\n    registry: {{http: {{url: \"{}\"}}, refresh_interval: 1s, limit: 2, search: example}}\n",
                head(&sim.url, &d.join("state")),
                registry.url()
            )
        },
        &[],
        &[],
    );
    let text = exp.wait_metrics(LIMIT, "registry targets polled", |t| {
        polls(t, "io.example/one") >= 1.0 && polls(t, "io.example/two") >= 1.0
    });
    assert_eq!(
        sample(
            &text,
            "mcp_discovery_registry_pages",
            &[("source", "public")]
        ),
        Some(5.0)
    );
    assert_eq!(
        sample(
            &text,
            "mcp_discovery_registry_items",
            &[("source", "public")]
        ),
        Some(9.0)
    );
    let s = source(&exp, "public");
    assert_eq!(s["last_refresh"]["walk"]["fell_back_to_v0"], true, "{s}");
    assert_eq!(s["targets"], 3, "{s}");
    let counts = &s["skipped"]["counts"];
    for reason in [
        "not_active",
        "not_latest",
        "no_remote",
        "url_variable",
        "required_header",
        "not_allowed",
    ] {
        assert_eq!(counts[reason], 1, "{reason}: {s}");
    }
    let walked = registry.requests();
    let page = walked.iter().find(|r| r.path == "/v0/servers").unwrap();
    assert_eq!(page.param("version"), Some("latest"));
    assert_eq!(page.param("limit"), Some("2"));
    assert_eq!(page.param("search"), Some("example"));
    assert!(walked.iter().all(|r| r.header("authorization").is_none()));
    let api = exp.api_targets();
    let sse = mcp_testkit::exporter::api_target(&api, "io.example/sse-only");
    assert_eq!(sse["source"], "public");
    assert!(
        sse["endpoint"].as_str().unwrap().ends_with("(sse)"),
        "{sse}"
    );

    // Cursors that cycle: aborted by the walker's guard, the list kept.
    *fault.lock().unwrap() = RegistryFault::CursorCycle;
    let s = exp.wait(LIMIT, "the cursor cycle", || {
        let s = next_refresh(&exp, "public");
        (s["last_refresh"]["reason"] == "cursor_cycle").then_some(s)
    });
    assert_eq!(s["last_refresh"]["outcome"], "aborted");
    assert!(s["keeps_last_good_list"].as_bool().unwrap(), "{s}");
    assert_eq!(s["targets"], 3, "{s}");
    let text = exp.metrics();
    let at_least_one = |name: &str, labels: &[(&str, &str)]| {
        assert!(
            sample(&text, name, labels).is_some_and(|n| n >= 1.0),
            "{name}{labels:?}: {text}"
        )
    };
    at_least_one(
        "mcp_discovery_refreshes_total",
        &[("source", "public"), ("outcome", "aborted")],
    );
    at_least_one(
        "mcp_discovery_refresh_failures_total",
        &[("source", "public"), ("reason", "cursor_cycle")],
    );
    let before = polls(&text, "io.example/one");
    exp.wait_metrics(LIMIT, "the kept targets still polled", |t| {
        polls(t, "io.example/one") > before
    });

    // A registry that refuses the cursors it hands out: invalid_cursor
    // after one restart from the first page; the list kept.
    *fault.lock().unwrap() = RegistryFault::RefusesItsCursors;
    let s = exp.wait(LIMIT, "refused cursors", || {
        let s = next_refresh(&exp, "public");
        (s["last_refresh"]["reason"] == "invalid_cursor").then_some(s)
    });
    assert_eq!(s["last_refresh"]["walk"]["restarts"], 1, "{s}");
    assert_eq!(s["targets"], 3, "{s}");
}

#[test]
fn the_simulators_registry_yields_its_fleet_and_a_cursor_cycle_keeps_the_last_good_list() {
    // Healthy for the first complete walk, then page 2 hands back page 1's
    // cursor; a request with an Authorization header would get 400.
    let scenarios = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        scenarios.path(),
        "servers:\n  - {name: fleet, count: 3, scenario: healthy}\nregistry:\n  page_size: 2\n  fault: cursor-cycle\n  page: 2\n  after_walks: 1\n  decoys: {not-latest: 1, deleted: 1, deprecated: 1, no-remote: 1, url-variable: 1, required-header: 1}\n  forbid_headers: [Authorization]\n",
    )
    .unwrap();
    let sim = mcp_testkit::Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenarios",
        scenarios.path().to_str().unwrap(),
    ]);
    let exp = Exporter::start_with_dir(
        |d| {
            format!(
                "{}discovery:\n  - name: sim-registry\n    module: sim\n    registry: {{http: {{url: \"{}\"}}, refresh_interval: 1s, limit: 2}}\n",
                head(&sim.url, &d.join("state")),
                sim.url
            )
        },
        &[],
        &[],
    );
    let fleet: Vec<String> = (1..=3)
        .map(|i| format!("io.github.sim/fleet-{i:04}"))
        .collect();
    exp.wait_metrics(LIMIT, "the registry's fleet polled", |t| {
        fleet.iter().all(|n| polls(t, n) >= 1.0)
    });
    let s = exp.wait(LIMIT, "the cursor cycle after the first walk", || {
        let s = next_refresh(&exp, "sim-registry");
        (s["last_refresh"]["reason"] == "cursor_cycle").then_some(s)
    });
    assert_eq!(s["last_refresh"]["outcome"], "aborted", "{s}");
    assert!(s["keeps_last_good_list"].as_bool().unwrap(), "{s}");
    assert_eq!(s["targets"], 3, "{s}");
    let counts = &s["skipped"]["counts"];
    for (reason, n) in [
        ("not_latest", 1),
        ("not_active", 2),
        ("no_remote", 1),
        ("url_variable", 1),
        ("required_header", 1),
    ] {
        assert_eq!(counts[reason], n, "{reason}: {s}");
    }
    assert_eq!(names(&exp), fleet.iter().cloned().collect::<BTreeSet<_>>());
    // A registry name holds a `/`: one path segment, percent-encoded.
    let (status, page) = exp.get("/targets/io.github.sim%2Ffleet-0001");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("discovered by <b>sim-registry</b>"), "{page}");
    let (status, body) = exp.get("/api/targets/io.github.sim%2Ffleet-0001");
    assert_eq!(status, 200, "{body}");
    let before = polls(&exp.metrics(), &fleet[0]);
    let text = exp.wait_metrics(LIMIT, "the last good list still polled", |t| {
        polls(t, &fleet[0]) > before
    });
    assert!(
        sample(
            &text,
            "mcp_discovery_refresh_failures_total",
            &[("source", "sim-registry"), ("reason", "cursor_cycle")]
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
}

#[test]
fn discover_prints_what_every_source_would_yield_without_polling() {
    let host = Stub::start(|_| StubResponse::with(404, "text/plain", "no"));
    let dir = tempfile::tempdir().unwrap();
    let list = json!([
        {"targets": [format!("{}/mcp", host.url())], "labels": {"name": "found"}},
        {"targets": ["ftp://127.0.0.1/x"], "labels": {"name": "ftp"}},
    ]);
    std::fs::write(dir.path().join("a.json"), list.to_string()).unwrap();
    let registry = Stub::start(|_| StubResponse::with(500, "text/plain", "down"));
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "modules:\n  m:\n    allow: [\"{}/\"]\ndiscovery:\n  - name: fleet\n    module: m\n    file_sd: {{files: [\"*.json\"]}}\n  - name: public\n    module: m\n    registry: {{http: {{url: \"{}\"}}}}\n",
            host.url(),
            registry.url()
        ),
    )
    .unwrap();
    let discover = |json: bool| {
        let mut c = std::process::Command::new(mcp_testkit::exporter_bin());
        c.args(["discover", "--config.file", config.to_str().unwrap()]);
        if json {
            c.arg("--json");
        }
        mcp_testkit::run(c, "discover")
    };
    let text = discover(false);
    // The registry fails: exit 1, and both sources are shown.
    assert_eq!(text.code(), Some(1), "{}", text.stderr);
    assert!(
        text.stdout.contains("fleet (file_sd, module m): complete"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("    found  "), "{}", text.stdout);
    assert!(text.stdout.contains("ftp  not_http:"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("public (registry, module m): error (transport_error)"),
        "{}",
        text.stdout
    );
    let json = discover(true);
    let all: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(all[0]["target_list"][0][0], "found");
    assert_eq!(all[0]["skipped"]["counts"]["not_http"], 1);
    assert_eq!(all[1]["last_refresh"]["reason"], "transport_error");
    // Nothing was polled.
    assert!(host.requests().is_empty(), "{:?}", host.requests());
}
