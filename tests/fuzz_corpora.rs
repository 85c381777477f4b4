//! Every committed fuzz corpus file (fuzz/corpus/<target>/*), replayed
//! through the same harness functions the fuzz targets run, on the stable
//! toolchain: a fixed crash stays fixed, and the seeds keep parsing.

#[path = "../fuzz/src/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};

/// The files of one corpus, sorted; a corpus that went missing or empty
/// fails the test rather than passing with nothing replayed.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    files
}

/// Run `entry` on each input of `target`, naming the input that panics.
fn replay(target: &str, entry: fn(&[u8])) -> usize {
    let files = corpus(target);
    for file in &files {
        let data = std::fs::read(file).expect("a readable corpus file");
        if let Err(panic) = std::panic::catch_unwind(|| entry(&data)) {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{target}: {} crashed: {why}", file.display());
        }
    }
    files.len()
}

#[test]
fn jsonrpc_corpus() {
    assert!(replay("jsonrpc", harness::jsonrpc_message) > 0);
}

#[test]
fn sse_body_corpus() {
    assert!(replay("sse_body", harness::sse_body) > 0);
}

#[test]
fn config_corpus() {
    assert!(replay("config", harness::config_text) > 0);
}

#[test]
fn walker_corpus() {
    assert!(replay("walker", harness::walk_pages) > 0);
}

/// The corpora directory holds exactly the four targets above: a new fuzz
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
    assert_eq!(names, ["config", "jsonrpc", "sse_body", "walker"]);
}
