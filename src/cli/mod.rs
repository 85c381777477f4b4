//! Subcommands: argument types and the code behind each.

pub mod check;
pub mod check_config;
pub mod logging;
pub mod probe;
pub mod serve;

/// Parse `30s`, `1m30s`, `500ms`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("invalid duration {s:?}: {e}"))
}
