//! Subcommands: argument types and the code behind each.

pub mod check;
pub mod check_config;
pub mod discover;
pub mod logging;
pub mod probe;
pub mod serve;

/// Parse `30s`, `1m30s`, `500ms`, at most `config::MAX_DURATION` (a
/// flag past it is a usage error, exit 2).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::config::parse_duration(s)
}

/// Write `text` to stdout. A reader that went away (`... | head -2`) is the
/// reader's choice, not a failure: the rest is dropped, never a panic
/// (`println!` panics on a closed pipe).
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// [`print_stdout`] for stderr (`eprintln!` panics on a closed pipe too).
pub fn print_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
