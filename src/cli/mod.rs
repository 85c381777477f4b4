//! Subcommands other than `serve` and `simulate`: argument types and the
//! code that renders their output.

pub mod probe;

/// Parse `30s`, `1m30s`, `500ms`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("invalid duration {s:?}: {e}"))
}
