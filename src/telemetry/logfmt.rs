//! `--log.format logfmt`: one line per event, as Prometheus exporters
//! write them —
//! `time=2026-12-03T21:50:00.123Z level=warn source=src/sinks/level_watch.rs:42 msg="verdict changed: healthy → down" target_name=flaky …`.
//!
//! A value is quoted when it is empty or holds a space (any Unicode
//! whitespace), `=`, `"`, a control character or an invisible one
//! (`mcp_listing::text::is_invisible`: a zero-width space, a right-to-left
//! override), and escaped inside the quotes the way logfmt readers decode
//! (`\"`, `\\`, `\n`, `\r`, `\t`, and `\u001b`, `\u200b` for the other
//! hidden characters, a surrogate pair past U+FFFF: readers take JSON's
//! escapes, not the `\x1b` of `mcp_listing::text::escape`). Whatever a
//! server put in a field thus stays inside its value: it cannot start a
//! line of its own, end the value early, act on a terminal or pass for
//! another value.

use mcp_listing::shown_json::unicode_escape;
use mcp_listing::text::is_hidden;
use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The event format: `time`, `level`, `source`, `msg`, the event's fields,
/// then the fields of the spans it is in, outermost first.
pub struct Logfmt;

/// The field format (events and spans): `key=value` pairs.
pub struct LogfmtFields;

impl<S, N> FormatEvent<S, N> for Logfmt
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // Records of the `log` crate arrive through one callsite; their own
        // file and line are in `log.*` fields, which are not shown again.
        let normalized = event.normalized_metadata();
        let from_log = normalized.is_some();
        let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());
        let mut fields = Pairs {
            message: Some(String::new()),
            skip_log_fields: from_log,
            ..Pairs::default()
        };
        event.record(&mut fields);

        let mut line = String::with_capacity(128 + fields.pairs.len());
        let _ = write!(line, "time={} level={}", now(), level_name(*meta.level()));
        // A typed event names where it was emitted; other lines, the call.
        let source = match (fields.emitted_at.take(), meta.file(), meta.line()) {
            (Some(at), _, _) => Some(at),
            (None, Some(file), Some(number)) => Some(format!("{}:{number}", short_source(file))),
            _ => None,
        };
        if let Some(source) = source {
            line.push_str(" source=");
            push_value(&mut line, &source);
        }
        line.push_str(" msg=");
        push_value(&mut line, fields.message.as_deref().unwrap_or_default());
        line.push_str(&fields.pairs);
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                if let Some(span_fields) = extensions.get::<FormattedFields<N>>() {
                    if !span_fields.is_empty() {
                        line.push(' ');
                        line.push_str(span_fields);
                    }
                }
            }
        }
        line.push('\n');
        writer.write_str(&line)
    }
}

impl<'writer> FormatFields<'writer> for LogfmtFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut pairs = Pairs::default();
        fields.record(&mut pairs);
        writer.write_str(pairs.pairs.strip_prefix(' ').unwrap_or_default())
    }
}

/// The line announcing where `serve` listens, written whatever the level
/// (see `logging::announce_listening`).
pub fn listening_line(url: &str) -> String {
    let mut line = format!("time={} level=info msg=\"listening on\" url=", now());
    push_value(&mut line, url);
    line.push('\n');
    line
}

/// The line announcing where a tap serves (see `logging::announce_tap`).
pub fn tap_line(tap: &str, url: &str) -> String {
    let mut line = format!("time={} level=info msg=\"tap serving\" tap=", now());
    push_value(&mut line, tap);
    line.push_str(" url=");
    push_value(&mut line, url);
    line.push('\n');
    line
}

/// Now as Prometheus exporters write it, in UTC to the millisecond.
fn now() -> impl fmt::Display {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ")
}

/// Prometheus exporters' level names (lower case), and `trace` below them.
fn level_name(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

/// A source file as short as still says where: a dependency's absolute
/// path in cargo's cache becomes `crate-1.2.3/src/…`; our own paths are
/// already relative (`src/scheduler/mod.rs`).
fn short_source(file: &str) -> &str {
    if !file.starts_with('/') {
        return file;
    }
    let Some(src) = file.rfind("/src/") else {
        return file;
    };
    match file[..src].rfind('/') {
        Some(crate_dir) => &file[crate_dir + 1..],
        None => file,
    }
}

/// Fields as ` key=value` pairs; the event's `message` kept apart for `msg`.
#[derive(Default)]
struct Pairs {
    pairs: String,
    /// `Some` when the message is to be kept apart (events, not spans).
    message: Option<String>,
    skip_log_fields: bool,
    /// A typed event's place ([`mcp_listing::emitted::FIELD`]), shown as
    /// `source`.
    emitted_at: Option<String>,
}

impl Pairs {
    fn add(&mut self, field: &Field, value: &str) {
        let name = field.name();
        if self.skip_log_fields && name.starts_with("log.") {
            return;
        }
        if name == "message" {
            if let Some(message) = &mut self.message {
                message.push_str(value);
                return;
            }
        }
        if name == mcp_listing::emitted::FIELD && self.message.is_some() {
            self.emitted_at = Some(value.to_string());
            return;
        }
        self.pairs.push(' ');
        push_key(&mut self.pairs, name);
        self.pairs.push('=');
        push_value(&mut self.pairs, value);
    }
}

impl Visit for Pairs {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.add(field, value);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.add(field, &value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.add(field, &format!("{value:?}"));
    }
}

/// A key as logfmt allows it: what would end it or the line becomes `_`.
fn push_key(out: &mut String, key: &str) {
    if key.is_empty() {
        out.push('_');
        return;
    }
    out.extend(key.chars().map(|c| if needs_quotes(c) { '_' } else { c }));
}

fn needs_quotes(c: char) -> bool {
    c == '"' || c == '=' || c.is_whitespace() || is_hidden(c)
}

/// `value` bare when it can be, quoted and escaped otherwise (see the
/// module's documentation).
fn push_value(out: &mut String, value: &str) {
    if !value.is_empty() && !value.chars().any(needs_quotes) {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden(c) => out.push_str(&unicode_escape(c)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_listing::text::is_control;
    use mcp_testkit::logfmt::{get, parse_line};
    use std::sync::{Arc, Mutex};

    fn quoted(value: &str) -> String {
        let mut out = String::new();
        push_value(&mut out, value);
        out
    }

    #[test]
    fn plain_values_stay_bare_and_the_rest_is_quoted() {
        assert_eq!(quoted("demo-slow"), "demo-slow");
        assert_eq!(
            quoted("http://127.0.0.1:9740/mcp?a"),
            "http://127.0.0.1:9740/mcp?a"
        );
        assert_eq!(quoted(r"C:\dir"), r"C:\dir");
        assert_eq!(quoted(""), r#""""#);
        assert_eq!(quoted("target recovered"), r#""target recovered""#);
        assert_eq!(quoted("a=b"), r#""a=b""#);
        assert_eq!(quoted(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(quoted("non\u{a0}breaking"), r#""non\u00a0breaking""#);
        assert_eq!(quoted("m\u{200b}cp"), r#""m\u200bcp""#);
        assert_eq!(quoted("\u{202e}x\u{e0041}"), r#""\u202ex\udb40\udc41""#);
        assert_eq!(quoted(r#"\"x"#), r#""\\\"x""#);
    }

    #[test]
    fn control_characters_never_reach_the_line_raw() {
        let hostile = "a\nlevel=error msg=forged\r\t\u{1b}[2J\u{7f}\u{9b}31m\u{0}";
        let shown = quoted(hostile);
        assert_eq!(
            shown,
            r#""a\nlevel=error msg=forged\r\t\u001b[2J\u007f\u009b31m\u0000""#
        );
        assert!(!shown.chars().any(is_control), "{shown:?}");
        let pairs = parse_line(&format!("k={shown}")).unwrap();
        assert_eq!(get(&pairs, "k"), Some(hostile));
        let lookalike = "m\u{200b}cp\u{202e}\u{e0041}";
        let pairs = parse_line(&format!("k={}", quoted(lookalike))).unwrap();
        assert_eq!(get(&pairs, "k"), Some(lookalike));
    }

    #[test]
    fn keys_cannot_break_the_pair() {
        let mut out = String::new();
        push_key(&mut out, "a b=c\"d\ne");
        assert_eq!(out, "a_b_c_d_e");
    }

    #[test]
    fn dependency_sources_are_shortened_and_ours_kept() {
        for (given, want) in [
            ("src/scheduler/mod.rs", "src/scheduler/mod.rs"),
            (
                "/home/u/.cargo/registry/src/index-1234/hyper-1.8.1/src/proto/h1/conn.rs",
                "hyper-1.8.1/src/proto/h1/conn.rs",
            ),
            ("/build/main.rs", "/build/main.rs"),
        ] {
            assert_eq!(short_source(given), want);
        }
    }

    /// What a subscriber with our formats writes for the events `emit` logs.
    fn logged(emit: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .event_format(Logfmt)
            .fmt_fields(LogfmtFields)
            .with_max_level(Level::TRACE)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, emit);
        let bytes = buffer.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn an_event_is_one_line_of_time_level_source_msg_and_fields() {
        let reason = "page 2 took 812 ms\n\u{1b}]0;owned\u{7}";
        let out = logged(|| {
            // A plain call, not an event: the format is what is tested.
            tracing::warn!(
                target_name = "demo-slow",
                code = "slow_pages",
                reason,
                pages = 4u64,
                ok = false,
                "verdict changed: healthy → degraded"
            );
        });
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(!out.trim_end().chars().any(is_control), "{out:?}");
        let pairs = parse_line(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "time",
                "level",
                "source",
                "msg",
                "target_name",
                "code",
                "reason",
                "pages",
                "ok"
            ]
        );
        let time = get(&pairs, "time").unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(time).is_ok()
                && time.ends_with('Z')
                && time.len() == "2026-12-03T21:50:00.123Z".len(),
            "{time}"
        );
        assert_eq!(get(&pairs, "level"), Some("warn"));
        assert!(get(&pairs, "source")
            .unwrap()
            .starts_with("src/telemetry/logfmt.rs:"));
        assert_eq!(
            get(&pairs, "msg"),
            Some("verdict changed: healthy → degraded")
        );
        assert_eq!(get(&pairs, "target_name"), Some("demo-slow"));
        assert_eq!(get(&pairs, "reason"), Some(reason));
        assert_eq!(get(&pairs, "pages"), Some("4"));
        assert_eq!(get(&pairs, "ok"), Some("false"));
    }

    #[test]
    fn a_typed_events_source_is_where_it_was_emitted() {
        let line = line!() + 2;
        let out = logged(|| {
            crate::telemetry::events::ReloadWithoutFile.emit();
        });
        let pairs = parse_line(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        assert_eq!(
            get(&pairs, "source"),
            Some(format!("src/telemetry/logfmt.rs:{line}").as_str()),
            "{out}"
        );
        assert_eq!(get(&pairs, "emitted_at"), None, "shown once, as source");
        assert_eq!(
            get(&pairs, "msg"),
            Some("SIGHUP: no configuration file to reload")
        );
    }

    #[test]
    fn span_fields_follow_the_events_and_levels_are_lower_case() {
        let out = logged(|| {
            let span = tracing::info_span!("poll", target_name = "a b", attempt = 2);
            let _entered = span.enter();
            // A plain call, not an event: the format is what is tested.
            tracing::error!(error = %std::io::Error::other("refused"), "no session");
            tracing::debug!("");
            tracing::trace!(x = 1);
        });
        let lines: Vec<_> = out
            .lines()
            .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
            .collect();
        assert_eq!(lines.len(), 3, "{out}");
        let first = &lines[0];
        assert_eq!(get(first, "level"), Some("error"));
        assert_eq!(get(first, "msg"), Some("no session"));
        assert_eq!(get(first, "error"), Some("refused"));
        assert_eq!(get(first, "target_name"), Some("a b"));
        assert_eq!(get(first, "attempt"), Some("2"));
        let last_keys: Vec<&str> = first
            .iter()
            .rev()
            .take(2)
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(last_keys, ["attempt", "target_name"], "{out}");
        assert_eq!(get(&lines[1], "level"), Some("debug"));
        assert_eq!(get(&lines[1], "msg"), Some(""));
        assert_eq!(get(&lines[2], "level"), Some("trace"));
        assert_eq!(get(&lines[2], "x"), Some("1"));
    }
}
