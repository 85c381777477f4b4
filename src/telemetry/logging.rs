//! Log output on stderr: `--log.format` (logfmt, JSON or tracing's text),
//! level from `--log.level`.

use super::logfmt::{Logfmt, LogfmtFields};
use tracing_subscriber::{fmt, EnvFilter};

/// `--log.format`: Prometheus exporters' `logfmt` (the default, as theirs)
/// and `json`, and `text`, tracing's format for people, kept for those who
/// chose it before logfmt existed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Logfmt,
    Json,
    Text,
}

/// `--log.level`: Prometheus exporters' four, and `trace` below them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    fn directive(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// The format [`init`] installed, for [`announce_listening`].
static FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// Say where `serve` listens, whatever `--log.level`: tests and scripts
/// read it to find a port the OS chose. `listening on URL` in `text` and
/// `json`; in `logfmt` a logfmt line (`msg="listening on" url=URL`), so
/// every line a log pipeline reads parses.
pub fn announce_listening(url: &str) {
    let line = match FORMAT.get() {
        Some(LogFormat::Logfmt) => super::logfmt::listening_line(url),
        _ => format!("listening on {url}\n"),
    };
    to_stderr(&line);
}

/// Say where a tap serves clients, whatever `--log.level` (tests and
/// scripts read the port): `tap NAME serving at URL`, or in `logfmt`
/// `msg="tap serving" tap=NAME url=URL`. Announced before the exporter's own
/// `listening on` line, so whoever waits for that line finds the taps'.
pub fn announce_tap(tap: &str, url: &str) {
    let line = match FORMAT.get() {
        Some(LogFormat::Logfmt) => super::logfmt::tap_line(tap, url),
        _ => format!("tap {tap} serving at {url}\n"),
    };
    to_stderr(&line);
}

/// A line on stderr; a closed stderr is not a failure (`eprint!` would
/// panic).
fn to_stderr(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Install the global subscriber. `RUST_LOG` overrides `level` when set.
pub fn init(level: LogLevel, format: LogFormat) {
    let _ = FORMAT.set(format);
    let level = level.directive();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            "{level},hyper=warn,reqwest=warn,h2=warn,opentelemetry=warn,tonic=warn"
        ))
    });
    // Colour only for a person at a terminal reading `text`, never into
    // files or journald, never inside logfmt or JSON values.
    let ansi = format == LogFormat::Text && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Logfmt => builder
            .event_format(Logfmt)
            .fmt_fields(LogfmtFields)
            .try_init(),
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
