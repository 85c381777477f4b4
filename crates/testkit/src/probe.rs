//! `mcp-exporter probe --json` and reading its report.

use crate::process::{run, Finished};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `mcp-exporter probe --json ARGS...`: the exit code and the report.
pub fn probe_json(args: &[&str]) -> (i32, Value) {
    let (code, report, _) = probe_json_of(&crate::exporter_bin(), args);
    (code.unwrap_or(-1), report)
}

/// `BIN probe --json ARGS...` (bounded, see [`run`]): the exit code, the
/// report, and the whole run for failure messages.
pub fn probe_json_of(bin: &Path, args: &[&str]) -> (Option<i32>, Value, Finished) {
    let mut command = Command::new(bin);
    command.args(["probe", "--json"]).args(args);
    let finished = run(command, &format!("probe --json {args:?}"));
    let report = serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "probe {args:?}: --json printed no JSON object ({e})\n{}",
            finished.describe()
        )
    });
    (finished.code(), report, finished)
}

/// The listing of `kind` in a probe report.
pub fn listing<'a>(report: &'a Value, kind: &str) -> &'a Value {
    report["listings"]
        .as_array()
        .and_then(|ls| ls.iter().find(|l| l["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} listing in {report}"))
}

/// Items per page of a listing, in request order (restarts included).
pub fn page_items(listing: &Value) -> Vec<u64> {
    listing["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| p["items"].as_u64().unwrap_or(0))
        .collect()
}

/// The names (identity keys) of a listing.
pub fn names(listing: &Value) -> Vec<String> {
    listing["names"]
        .as_array()
        .expect("names")
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect()
}
