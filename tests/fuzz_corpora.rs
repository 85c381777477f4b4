//! Every committed fuzz corpus file (fuzz/corpus/<target>/*), replayed
//! through the same harness functions the fuzz targets run, on the stable
//! toolchain: a fixed crash stays fixed, and every seed still gives what it
//! gave when it was committed (parsed or rejected, the message's class, the
//! SSE events read, the walk's outcome). A new seed needs its row below.

// The fuzz crate is its own workspace (it links libFuzzer); its harness is
// compiled here too so the replay runs exactly the fuzzed code.
#[path = "../fuzz/src/harness.rs"]
mod harness;

use harness::{ConfigText, Message, SseRead, StateFile};
use mcp_listing::{ErrorKind, Guard, Outcome};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

/// The files of one corpus by name; a corpus that went missing or empty
/// fails the test rather than passing with nothing replayed.
fn corpus(target: &str) -> BTreeMap<String, PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let files: BTreeMap<String, PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    files
}

/// Runs `entry` on each input of `target` (naming the one that panics) and
/// compares what it gave with `expected` (file name → outcome): every seed
/// has a row, every row a seed, and they agree.
fn replay<T: PartialEq + Debug>(target: &str, entry: fn(&[u8]) -> T, expected: &[(&str, T)]) {
    let files = corpus(target);
    let mut wrong = Vec::new();
    for (name, file) in &files {
        let data = std::fs::read(file).expect("a readable corpus file");
        let got = match std::panic::catch_unwind(|| entry(&data)) {
            Ok(got) => got,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{target}: {} crashed: {why}", file.display());
            }
        };
        match expected.iter().find(|(n, _)| n == name) {
            Some((_, want)) if *want == got => {}
            Some((_, want)) => wrong.push(format!("{name}: gave {got:?}, expected {want:?}")),
            None => wrong.push(format!("{name}: gave {got:?}, and has no row")),
        }
    }
    for (name, _) in expected {
        if !files.contains_key(*name) {
            wrong.push(format!("{name}: a row without a seed"));
        }
    }
    assert!(wrong.is_empty(), "{target}:\n{}", wrong.join("\n"));
}

#[test]
fn jsonrpc_corpus() {
    use Message::*;
    let mut expected = vec![
        ("msg-00", Request),
        ("msg-01", Request),
        ("msg-02", ErrorAnswer),
        ("msg-03", ErrorAnswer),
        ("msg-04", Invalid),
        ("msg-05", NotJson),
        ("msg-06", Notification),
        ("msg-07", ErrorAnswer),
        ("msg-08", ErrorAnswer),
        ("regression-id-past-64-bits", Request),
    ];
    // The simulator's pages of every scenario: results.
    let results: Vec<String> = (9..=39).map(|i| format!("msg-{i:02}")).collect();
    expected.extend(results.iter().map(|name| (name.as_str(), Result)));
    replay("jsonrpc", harness::jsonrpc_message, &expected);
}

#[test]
fn sse_body_corpus() {
    let read = |events, too_large| Some(SseRead { events, too_large });
    // A `-capped` seed's cap stops the read after its first event.
    let capped = read(1, true);
    replay(
        "sse_body",
        harness::sse_body,
        &[
            ("comments-and-fields", read(1, false)),
            ("healthy-0", read(2, false)),
            ("healthy-1", read(2, false)),
            ("healthy-1-capped", capped),
            ("healthy-2", read(2, false)),
            ("healthy-3", read(2, false)),
            ("healthy-4", read(2, false)),
            ("legacy-endpoint", read(1, false)),
            ("list-changed-storm-0", read(2, false)),
            ("list-changed-storm-1", read(3, false)),
            ("list-changed-storm-1-capped", capped),
            ("list-changed-storm-2", read(3, false)),
            ("list-changed-storm-3", read(3, false)),
            ("list-changed-storm-4", read(3, false)),
            ("malformed-0", read(2, false)),
            ("malformed-1", read(2, false)),
            ("malformed-1-capped", capped),
            ("malformed-2", read(2, false)),
            ("rpc-error-0", read(2, false)),
            ("rpc-error-1", read(2, false)),
            ("rpc-error-1-capped", capped),
            ("rpc-error-2", read(2, false)),
        ],
    );
}

/// Loaded when the environment variable it names is set, rejected when not.
fn loaded_with(variable: &str) -> ConfigText {
    match std::env::var_os(variable) {
        Some(_) => ConfigText::Loaded,
        None => ConfigText::Rejected,
    }
}

#[test]
fn config_corpus() {
    use ConfigText::*;
    replay(
        "config",
        harness::config_text,
        &[
            ("config.example.yaml", Loaded),
            ("demo.yaml", Loaded),
            ("example.yaml", Loaded),
            // Fragments of docs/configuration.md: an outline with `...`
            // and sections shown without their parent are rejected.
            ("configuration-md-00.yaml", Rejected),
            ("configuration-md-01.yaml", Rejected),
            ("configuration-md-02.yaml", Rejected),
            ("configuration-md-03.yaml", Rejected),
            ("configuration-md-04.yaml", Loaded),
            // A header `{env: …}` needs its variable.
            (
                "configuration-md-05.yaml",
                loaded_with("GITHUB_MCP_API_KEY"),
            ),
            ("configuration-md-06.yaml", Loaded),
            ("configuration-md-07.yaml", Loaded),
            ("configuration-md-08.yaml", Loaded),
            ("configuration-md-09.yaml", loaded_with("OTLP_TENANT")),
            ("configuration-md-10.yaml", Loaded),
            // The simulator's scenario files are no exporter configuration.
            ("demo-scenarios.yaml", Rejected),
            ("scenarios-scale.yaml", Rejected),
        ],
    );
}

#[test]
fn walker_corpus() {
    use Outcome::*;
    // Each seed is a scenario's recorded pages, answered in order whatever
    // cursor is asked for and from the start again when they run out: a
    // recording that ends on a cursor (endless, stale-cursor's page 1 after
    // its -32602, protocol-2026's "tail") comes around to a cursor sent
    // before.
    replay(
        "walker",
        harness::walk_pages,
        &[
            ("healthy", Some(Complete)),
            ("single-page", Some(Complete)),
            ("truncate", Some(Complete)),
            ("overlap", Some(Complete)),
            ("missing-keys", Some(Complete)),
            ("silent-restart", Some(Complete)),
            ("list-changed-storm", Some(Complete)),
            ("blank-cursor", Some(Complete)),
            ("null-cursor", Some(Complete)),
            ("repeat-cursor", Some(Aborted(Guard::CursorCycle))),
            ("cycle", Some(Aborted(Guard::CursorCycle))),
            ("endless", Some(Aborted(Guard::CursorCycle))),
            ("stale-cursor", Some(Aborted(Guard::CursorCycle))),
            // 2026-07-28, where a repeated cursor is legal while it brings
            // new items: around again, it brings none.
            ("protocol-2026", Some(Aborted(Guard::NoProgress))),
            ("number-cursor", Some(Error(ErrorKind::MalformedResult))),
            ("malformed", Some(Error(ErrorKind::MalformedResult))),
            ("wrong-shape", Some(Error(ErrorKind::MalformedResult))),
            ("rpc-error", Some(Error(ErrorKind::RpcError))),
            ("errors-and-restarts", Some(Error(ErrorKind::Timeout))),
        ],
    );
}

/// The corpora directory holds exactly the targets replayed here: a new fuzz
/// target must get its replay here too.
#[test]
fn every_corpus_is_replayed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/corpus exists")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["config", "jsonrpc", "sse_body", "state_file", "walker"]
    );
}

#[test]
fn state_file_corpus() {
    use StateFile::*;
    replay(
        "state_file",
        harness::state_file,
        &[
            ("baseline-v1", Loaded { names: 3 }),
            ("baseline-empty-kinds", Loaded { names: 0 }),
            ("unknown-version", Rejected),
            ("truncated", Rejected),
            ("not-json", Rejected),
            ("wrong-kind", Rejected),
            ("huge-version", Rejected),
        ],
    );
}
