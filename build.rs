//! The git revision the binary is built from, for `mcp_exporter_build_info`'s
//! `revision` label: `MCP_EXPORTER_REVISION` when set (release pipelines,
//! builds from a tarball), else `git rev-parse HEAD`, else "unknown" (the
//! application's fallback).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=MCP_EXPORTER_REVISION");
    // Set and not empty (an unset `ARG` of a Dockerfile may arrive empty).
    if std::env::var_os("MCP_EXPORTER_REVISION").is_some_and(|r| !r.is_empty()) {
        return;
    }
    let Some(revision) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=MCP_EXPORTER_REVISION={revision}");
    // A new commit or checkout moves HEAD or the branch it points to (in a
    // worktree these live in different folders: git says where).
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
        watched.push(git(&["rev-parse", "--git-path", "packed-refs"]));
    }
    for path in watched.into_iter().flatten() {
        // Only files that exist: a missing one would rerun this every build.
        if Path::new(&path).is_file() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// `git ARGS` run in the package's folder: its first line of output, or
/// None without git, outside a repository, or on failure.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (!line.is_empty()).then_some(line)
}
