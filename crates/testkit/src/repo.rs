//! Where the repository and the binary under test are.

use std::path::{Path, PathBuf};

/// The `mcp-exporter` binary cargo built for the test that is running.
///
/// Cargo names it in `CARGO_BIN_EXE_mcp-exporter`: at run time since
/// cargo 1.94, before that only while compiling the test crate (this crate
/// is not one). Without it the binary is where cargo puts it: beside the
/// `deps/` folder that holds the test executable.
pub fn exporter_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_BIN_EXE_mcp-exporter") {
        return PathBuf::from(path);
    }
    let test = std::env::current_exe().expect("the test executable's path");
    let profile = test
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lives in <target>/<profile>/deps");
    let bin = profile.join("mcp-exporter");
    assert!(
        bin.is_file(),
        "{} is not built; run the tests with `cargo test`",
        bin.display()
    );
    bin
}

/// A path in the repository (where the application's Cargo.toml is).
pub fn repo_path(relative: &str) -> PathBuf {
    let testkit = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = testkit
        .parent()
        .and_then(Path::parent)
        .expect("crates/testkit sits two levels below the repository");
    root.join(relative)
}

/// A file of the repository as text; panics naming it when it cannot be read.
pub fn repo_file(relative: &str) -> String {
    let path = repo_path(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
