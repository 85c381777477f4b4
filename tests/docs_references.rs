//! Every document of the repository refers only to files the repository
//! holds: relative Markdown links, repository paths written in the text
//! (`src/…`, `docs/…`, `scripts/…`) and any `NAME.md` named.

use mcp_testkit::repo_path;
use regex::Regex;
use std::path::{Path, PathBuf};

const TOP_DIRS: &[&str] = &[
    "src/",
    "crates/",
    "docs/",
    "scripts/",
    "config/",
    "tests/",
    "deploy/",
    "dashboards/",
    "alerts/",
    "benches/",
    "fuzz/",
];

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() || name.starts_with('.') || name == "target" || name == "peers" {
            continue;
        }
        if kind.is_dir() {
            markdown_files(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// Where a document sends its reader, as written: a path from the
/// repository's root or from the document's folder.
fn references(text: &str) -> Vec<String> {
    let link = Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").expect("regex");
    let tops = TOP_DIRS
        .iter()
        .map(|t| regex::escape(t))
        .collect::<Vec<_>>()
        .join("|");
    let path = Regex::new(&format!(r"(?:^|[^\w/.<-])((?:{tops})[\w./-]*)")).expect("regex");
    let md = Regex::new(r"(?:^|[^\w/.-])([\w-]+\.md)\b").expect("regex");
    let mut found = Vec::new();
    for c in link.captures_iter(text) {
        let target = &c[1];
        if !target.contains("://") && !target.starts_with("mailto:") {
            found.push(target.to_string());
        }
    }
    for c in path.captures_iter(text).chain(md.captures_iter(text)) {
        let end = c.get(1).expect("group").end();
        // `docs/specification/<version>/…` is the MCP specification's own tree.
        if text[end..].starts_with('<') || text[end..].starts_with('*') {
            continue;
        }
        found.push(c[1].trim_end_matches(['.', ',', ':', ';']).to_string());
    }
    found
}

#[test]
fn no_document_refers_to_a_file_the_repository_lacks() {
    let root = repo_path("");
    let mut docs = Vec::new();
    markdown_files(&root, &mut docs);
    assert!(docs.len() > 10, "found only {docs:?}");
    let mut missing = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("read doc");
        let folder = doc.parent().expect("doc folder");
        for reference in references(&text) {
            let there = [folder.join(&reference), root.join(&reference)];
            if !there.iter().any(|p| p.exists()) {
                let doc = doc.strip_prefix(&root).unwrap_or(doc);
                missing.push(format!("{}: {reference}", doc.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "references to missing files:\n{}",
        missing.join("\n")
    );
}
