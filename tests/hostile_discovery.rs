//! Small inputs that were meant to take gigabytes: registry pages of empty
//! entries, a target group of many URLs and one long label, YAML aliases
//! that replay one anchor thousands of times and brackets nested past any
//! use, a registry entry whose identity is longer than a name, and a host
//! label built to make a glob backtrack. Each run of `discover` or
//! `check-config` here ends with its outcome, and its peak RSS (from the
//! kernel, as tests/hostile_bytes.rs measures it) within the budget of
//! docs/reliability.md, "Byte budgets". No assertion counts time.
//!
//! The kernel counts into a child's peak the test's own peak at the time
//! it starts the child (the memory the child is spawned from), so large
//! inputs are written to files as a stream and served from there, never
//! held by the test before a run.

use mcp_testkit::stub::{Stub, StubBody, StubResponse};
use mcp_testkit::{exporter_bin, run_measured, Exporter, Finished};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// Peak RSS of one `discover` or `check-config` run against any input
/// here, in KiB (docs/reliability.md): the process, debug build included,
/// with the largest answer a source may send (16 MiB) held while it is
/// read; what a refresh keeps is bounded apart (16 MiB a source).
const PEAK_RSS_BUDGET_KIB: u64 = 64 * 1024;

/// A `module` allowing `https://h.invalid/` and `sources` after it.
fn write_config(dir: &Path, sources: &str) -> String {
    let path = dir.join("config.yaml");
    let text =
        format!("modules:\n  m:\n    allow: [\"https://h.invalid/\"]\ndiscovery:\n{sources}");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// `mcp-exporter discover --json` on `config`: every source's object, and
/// the run's peak RSS in KiB.
fn discover(config: &str) -> (Finished, Vec<Value>, u64) {
    let mut command = Command::new(exporter_bin());
    command.args(["discover", "--json", "--config.file", config]);
    let (run, peak) = run_measured(command, "discover");
    let sources: Vec<Value> = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("discover --json: {e}\n{}", run.describe()));
    (run, sources, peak)
}

fn check_config(config: &str) -> (Finished, u64) {
    let mut command = Command::new(exporter_bin());
    command.args(["check-config", "--config.file", config]);
    run_measured(command, "check-config")
}

fn assert_within_budget(peak_kib: u64, what: &str) {
    assert!(
        peak_kib <= PEAK_RSS_BUDGET_KIB,
        "{what}: peak RSS {peak_kib} KiB, budget {PEAK_RSS_BUDGET_KIB} KiB"
    );
}

fn json_body(body: StubBody) -> StubResponse {
    StubResponse {
        status: 200,
        content_type: "application/json".into(),
        body,
    }
}

/// A file holding a registry page of `entries` empty entries and `next`
/// as its cursor, written as a stream.
fn empty_entries(path: PathBuf, entries: usize, next: Option<String>) -> PathBuf {
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    out.write_all(b"{\"servers\":[{}").unwrap();
    for _ in 1..entries {
        out.write_all(b",{}").unwrap();
    }
    let metadata = json!({"nextCursor": next});
    write!(out, "],\"metadata\":{metadata}}}").unwrap();
    out.flush().unwrap();
    path
}

/// A stub answering every request with the file `path`.
fn serving(path: PathBuf) -> Stub {
    Stub::start(move |_| json_body(StubBody::File(path.clone())))
}

#[test]
fn registry_pages_of_empty_entries_keep_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // One page just inside the default cap (16 MiB), then ten of 2 MB.
    let one = empty_entries(dir.path().join("one.json"), 5_500_000, None);
    assert!(std::fs::metadata(&one).unwrap().len() < 16 << 20);
    let big = serving(one);
    let pages: Arc<Vec<PathBuf>> = Arc::new(
        (0..10)
            .map(|i| {
                let next = (i < 9).then(|| (i + 1).to_string());
                empty_entries(dir.path().join(format!("p{i}.json")), 700_000, next)
            })
            .collect(),
    );
    let many = Stub::start(move |r| {
        let at: usize = r.param("cursor").map_or(0, |c| c.parse().unwrap_or(0));
        json_body(StubBody::File(pages[at.min(9)].clone()))
    });
    let config = write_config(
        dir.path(),
        &format!(
            "  - name: big\n    module: m\n    registry: {{http: {{url: \"{}\"}}}}\n  - name: many\n    module: m\n    registry: {{http: {{url: \"{}\"}}}}\n",
            big.url(),
            many.url()
        ),
    );
    let (run, sources, peak) = discover(&config);
    assert_eq!(run.code(), Some(0), "{}", run.describe());
    for (source, entries, pages) in [(&sources[0], 5_500_000, 1), (&sources[1], 7_000_000, 10)] {
        assert_eq!(source["last_refresh"]["outcome"], "complete", "{source}");
        assert_eq!(source["last_refresh"]["walk"]["pages"], pages, "{source}");
        assert_eq!(source["skipped"]["counts"]["invalid_entry"], entries);
        assert_eq!(source["targets"], 0);
    }
    assert_within_budget(peak, "discover, registry pages of empty entries");
}

#[test]
fn a_group_of_many_urls_and_a_megabyte_label_copies_nothing() {
    let label = "v".repeat(1 << 20);
    let group = |urls: usize| -> Vec<u8> {
        let targets: Vec<String> = (0..urls)
            .map(|i| format!("https://h.invalid/mcp/{i}"))
            .collect();
        serde_json::to_vec(&json!([{"targets": targets, "labels": {"team": label}}])).unwrap()
    };
    let answer = Arc::new(group(5000));
    assert!(answer.len() < 1_200_000);
    let inventory = Stub::start(move |_| json_body(StubBody::Bytes(answer.to_vec())));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fleet.json"), group(800)).unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "  - name: inventory\n    module: m\n    http_sd: {{http: {{url: \"{}/sd\"}}}}\n  - name: fleet\n    module: m\n    file_sd: {{files: [\"{}/*.json\"]}}\n",
            inventory.url(),
            dir.path().display()
        ),
    );
    let (run, sources, peak) = discover(&config);
    assert_eq!(run.code(), Some(0), "{}", run.describe());
    for (source, urls) in [(&sources[0], 5000), (&sources[1], 800)] {
        assert_eq!(source["last_refresh"]["outcome"], "complete", "{source}");
        assert_eq!(source["skipped"]["counts"]["invalid_label"], urls);
        assert_eq!(source["targets"], 0);
    }
    assert_within_budget(peak, "discover, a group of many URLs and a 1 MB label");
}

#[test]
fn an_alias_bomb_is_refused_as_file_sd_and_as_config() {
    let dir = tempfile::tempdir().unwrap();
    // file_sd: one anchored list of 1,300 URLs, named by 2,600 groups: 80 KB
    // that would expand to 3.4 million URLs.
    let urls: Vec<String> = (0..1300)
        .map(|i| format!("\"https://h.invalid/{i}\""))
        .collect();
    let mut yaml = format!("- targets: &t [{}]\n", urls.join(", "));
    for _ in 0..2600 {
        yaml.push_str("- {targets: *t}\n");
    }
    assert!(yaml.len() < 90_000, "{} bytes", yaml.len());
    let lists = dir.path().join("lists");
    std::fs::create_dir(&lists).unwrap();
    std::fs::write(lists.join("fleet.yaml"), &yaml).unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "  - name: fleet\n    module: m\n    file_sd: {{files: [\"{}/*.yaml\"]}}\n",
            lists.display()
        ),
    );
    let (run, sources, peak) = discover(&config);
    assert_eq!(run.code(), Some(1), "{}", run.describe());
    let refresh = &sources[0]["last_refresh"];
    assert_eq!(refresh["reason"], "malformed_result", "{refresh}");
    assert!(
        refresh["detail"].as_str().unwrap().contains("alias"),
        "{refresh}"
    );
    assert_within_budget(peak, "discover, a YAML alias bomb");

    // The configuration: a 10 KB anchor named a thousand times in 20 KB.
    let anchor = vec!["vvvvvvvv"; 1100].join(", ");
    let refs = vec!["*a"; 2500].join(", ");
    let bomb = dir.path().join("bomb.yaml");
    std::fs::write(
        &bomb,
        format!("global: {{}}\nx: &a [{anchor}]\ny: [{refs}]\n"),
    )
    .unwrap();
    let bomb = bomb.to_string_lossy().into_owned();
    let (checked, peak) = check_config(&bomb);
    assert_eq!(checked.code(), Some(1), "{}", checked.describe());
    assert!(
        checked.stderr.contains(&format!("{bomb}:3:")) && checked.stderr.contains("replay"),
        "{}",
        checked.describe()
    );
    assert_within_budget(peak, "check-config, a YAML alias bomb");

    // Brackets nested 100,000 deep: refused at the depth cap, on line 1.
    let deep = dir.path().join("deep.yaml");
    let n = 100_000;
    std::fs::write(
        &deep,
        format!("global: {}{}\n", "[".repeat(n), "]".repeat(n)),
    )
    .unwrap();
    let deep = deep.to_string_lossy().into_owned();
    let (checked, peak) = check_config(&deep);
    assert_eq!(checked.code(), Some(1), "{}", checked.describe());
    assert!(
        checked.stderr.contains(&format!("{deep}:1:")) && checked.stderr.contains("deeper than 64"),
        "{}",
        checked.describe()
    );
    assert_within_budget(peak, "check-config, deep brackets");
}

/// A registry entry named `name` at version `version`, with a remote.
fn server(name: &str, version: &str, url: &str) -> Value {
    json!({
        "server": {"name": name, "version": version, "remotes": [{"type": "streamable-http", "url": url}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}
    })
}

#[test]
fn a_registry_entry_with_a_300_byte_version_is_still_counted() {
    let long_name = format!("io.example/{}", "n".repeat(300));
    let page = json!({
        "servers": [
            server("io.example/long-version", &"9".repeat(300), "https://h.invalid/mcp/a"),
            server(&long_name, "1.0.0", "https://h.invalid/mcp/b"),
            server("io.example/plain", "1.0.0", "https://h.invalid/mcp/c"),
        ],
        "metadata": {"nextCursor": null}
    });
    let registry = Stub::start(move |_| json_body(StubBody::Bytes(page.to_string().into_bytes())));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "  - name: public\n    module: m\n    registry: {{http: {{url: \"{}\"}}}}\n",
            registry.url()
        ),
    );
    let (run, sources, peak) = discover(&config);
    assert_eq!(run.code(), Some(0), "{}", run.describe());
    let source = &sources[0];
    let names: Vec<&str> = source["target_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t[0].as_str())
        .collect();
    assert_eq!(
        names,
        ["io.example/long-version", "io.example/plain"],
        "{source}"
    );
    // The long name is cut and skipped with its reason, never dropped.
    assert_eq!(source["skipped"]["counts"]["invalid_name"], 1, "{source}");
    assert_eq!(source["last_refresh"]["walk"]["items"], 3, "{source}");
    assert_within_budget(peak, "discover, long identities");
}

/// `*a` 24 times, then `b*`: a backtracking glob tries every split of a
/// label of `a`s against it, and none matches.
fn many_stars() -> String {
    format!("{}b*", "*a".repeat(24))
}

#[test]
fn a_hostile_host_label_is_matched_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let label = "a".repeat(2000);
    let list = json!([
        {"targets": [format!("https://{label}.example.invalid/mcp/x")], "labels": {"name": "hostile"}},
        {"targets": ["https://ok.example.invalid/mcp/y"]},
    ]);
    std::fs::write(dir.path().join("fleet.json"), list.to_string()).unwrap();
    let config = dir.path().join("config.yaml");
    let stars = many_stars();
    std::fs::write(
        &config,
        format!(
            "modules:\n  m:\n    allow: [\"https://{stars}.example.invalid/mcp/\", \"https://ok.example.invalid/mcp/\"]\ndiscovery:\n  - name: fleet\n    module: m\n    file_sd: {{files: [\"{}/*.json\"]}}\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let (run, sources, peak) = discover(&config.to_string_lossy());
    assert_eq!(run.code(), Some(0), "{}", run.describe());
    assert_eq!(
        sources[0]["skipped"]["counts"]["not_allowed"], 1,
        "{}",
        sources[0]
    );
    assert_eq!(sources[0]["targets"], 1);
    assert_within_budget(peak, "discover, a hostile host label");

    // The same pattern against a 60,000-byte label sent to /probe.
    let exp = Exporter::start(&format!(
        "modules:\n  m:\n    allow: [\"https://{stars}.example.invalid/mcp/\"]\n"
    ));
    let target = format!("https://{}.example.invalid/mcp/x", "a".repeat(60_000));
    let (status, body) = exp.get(&format!("/probe?module=m&target={target}"));
    assert_eq!(status, 403, "{body}");
}
