//! What the integration tests of mcp-exporter share: real processes on
//! loopback with a deadline on everything they wait for.
//!
//! - [`process`]: servers killed with their process group on drop
//!   ([`Proc`]), commands run to completion within a deadline ([`run`]);
//! - [`exporter`]: `mcp-exporter` serving a configuration ([`Exporter`]),
//!   `probe --json` ([`probe`]), samples of scraped text ([`metrics`]);
//! - [`simulator`]: `mcp-exporter simulate` driven over the raw wire;
//! - [`peers`], [`gateways`], [`clients`]: the MCP SDK peers, gateways and clients of
//!   `scripts/install-peers.sh`;
//! - [`prometheus`], [`alertmanager`], [`chromium`], [`otlp`]: the real
//!   systems the end-to-end tests talk to;
//! - [`logfmt`]: a strict reader of the exporter's `--log.format logfmt` lines;
//! - [`ports`]: a port that refuses connections for as long as it is held;
//! - [`tap`]: the tap's data path in-process, with a recording observer, a
//!   raw HTTP/1.1 client and a scripted upstream.
//!
//! A dev-dependency of the application only: it runs the `mcp-exporter`
//! binary and never links the application.

pub mod alertmanager;
pub mod check_client;
pub mod chromium;
pub mod clients;
pub mod counting_alloc;
pub mod demo;
pub mod exporter;
pub mod gateways;
pub mod http;
pub mod logfmt;
pub mod metrics;
pub mod otlp;
pub mod peers;
pub mod ports;
pub mod probe;
pub mod process;
pub mod prometheus;
pub mod simulator;
pub mod stub;
pub mod tap;
pub mod tools;

pub use exporter::{scenarios_simulator, Exporter};
pub use http::{http_get, http_get_ok, http_post};
pub use metrics::{listing_attempts, sample};
pub use ports::ClosedPort;
pub use probe::{listing, names, page_items, probe_json};
pub use process::{alive, run, run_measured, wait_for, Finished, Proc};

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
