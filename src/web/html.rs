//! The status pages' frame and what their sections share. Markup is built
//! with maud's `html!`: text spliced in with `(value)` is escaped, so a
//! name a server chose cannot become markup; raw markup has to be asked for
//! with `PreEscaped`, used only for our own constant CSS. Control
//! characters are made visible once, over the whole page ([`page`]).

use axum::response::Html;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use std::fmt::Write as _;

/// The link to a target's page. A name that is a whole dot segment (`.`,
/// `..`) cannot go in the path: URL parsers (browsers, HTTP clients) read
/// `..` and `%2E%2E` alike and resolve them away, to the front page. Such
/// a name goes in the query, which [`super::status_page::target_named`]
/// reads back.
pub fn target_href(name: &str) -> String {
    if is_dot_segment(name) {
        format!("/targets/?name={}", percent_encoded(name))
    } else {
        format!("/targets/{}", percent_encoded(name))
    }
}

/// `.` or `..`: what a URL parser treats as a dot segment.
fn is_dot_segment(name: &str) -> bool {
    matches!(name, "." | "..")
}

/// Every byte but `[A-Za-z0-9._-]` percent-encoded: fit for a path segment
/// (a `/` in a registry name stays inside it) and a query value.
fn percent_encoded(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A unicode sparkline of recent values; values that never changed draw
/// a flat line, not a row of bars.
pub fn sparkline(values: impl Iterator<Item = u32> + Clone) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    const FLAT: char = '─';
    let max = values.clone().max().unwrap_or(0);
    let min = values.clone().min().unwrap_or(0);
    values
        .map(|v| {
            if max == min {
                FLAT
            } else {
                BARS[((u64::from(v - min) * 7) / u64::from(max - min)) as usize]
            }
        })
        .collect()
}

/// A whole page: the header, `body`, refreshed every 15 s.
pub fn page(title: &str, body: Markup) -> Html<String> {
    let document = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="refresh" content="15";
                title { (title) }
                // Our own constant: `<style>` is raw text, escaping would not apply.
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    a href="/" { "mcp-exporter" }
                    " "
                    span.muted { "v" (env!("CARGO_PKG_VERSION")) }
                    nav {
                        a href="/metrics" { "metrics" }
                        " "
                        a href="/api/targets" { "api" }
                    }
                }
                main { (body) }
            }
        }
    };
    Html(controls_shown(document.into_string()))
}

/// `document` with every control character but newline and tab (which a
/// stderr tail keeps) shown as `\x1b`, `\r`, … instead of acted on, and
/// every invisible one (a zero-width space, a right-to-left override:
/// `mcp_listing::text::is_invisible`) shown as `\u{200b}`. Our own markup
/// holds none, so whatever is found came from a server or a client; the
/// visible form holds no character HTML reads.
fn controls_shown(document: String) -> String {
    let hidden = |c: char| mcp_listing::text::is_hidden(c) && !matches!(c, '\n' | '\t');
    if !document.contains(hidden) {
        return document;
    }
    let mut out = String::with_capacity(document.len() + 16);
    for c in document.chars() {
        if hidden(c) {
            let mut buf = [0u8; 4];
            out.push_str(&mcp_listing::text::escape(c.encode_utf8(&mut buf)));
        } else {
            out.push(c);
        }
    }
    out
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}\
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:12px;align-items:baseline}\
header a{color:#fff;text-decoration:none;font-weight:600}nav{margin-left:auto}nav a{margin-left:14px;font-weight:400}\
main{padding:16px 20px}table{border-collapse:collapse;background:#fff;width:100%;margin:8px 0 18px}\
th,td{padding:6px 10px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}\
th{background:#eef0f3;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.ok{color:#0a7d32;font-weight:600}.bad{color:#b3261e;font-weight:600}.warn{color:#9a6700;font-weight:600}\
.muted{color:#6b7280}.spark{font-family:monospace;letter-spacing:-1px}pre{background:#fff;padding:10px;overflow:auto;max-height:320px}\
h2{margin-top:22px}code{background:#eef0f3;padding:1px 4px;border-radius:3px}\
.verdict{display:inline-block;padding:1px 8px;border-radius:10px;border:1px solid currentColor;font-weight:600}\
.counts span{margin-right:4px}.filter{margin:6px 0 4px}.filter select,.filter input,.filter button{font:inherit}\
td.reason{max-width:520px}.legend{margin:2px 0 10px;font-size:12px}.legend span{margin-right:12px}\
svg.chart{background:#fff;max-width:100%;height:auto}h3{margin:16px 0 4px;font-size:15px}\
tr.group th{background:#dfe3e9;font-weight:400}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_control_characters_shown() {
        let Html(doc) = page(
            "<t>",
            html! { pre { ("<b a=\"1\">&\u{1b}[2J\r\u{7}</b>\n\tok") } },
        );
        assert!(doc.contains("<title>&lt;t&gt;</title>"), "{doc}");
        assert!(
            doc.contains(
                "<pre>&lt;b a=&quot;1&quot;&gt;&amp;\\x1b[2J\\r\\x07&lt;/b&gt;\n\tok</pre>"
            ),
            "{doc}"
        );
        assert!(doc.contains("<style>body{"), "{doc}");
    }

    #[test]
    fn dot_segments_link_through_the_query() {
        assert_eq!(target_href(".."), "/targets/?name=..");
        assert_eq!(target_href("."), "/targets/?name=.");
        assert_eq!(target_href("..."), "/targets/...");
        assert_eq!(target_href("a.b"), "/targets/a.b");
        assert_eq!(
            target_href("io.github.x/y&z"),
            "/targets/io.github.x%2Fy%26z"
        );
    }

    #[test]
    fn a_flat_trend_is_a_flat_line() {
        assert_eq!(sparkline([20u32, 20, 20].into_iter()), "───");
        assert_eq!(sparkline([0u32, 7].into_iter()), "▁█");
    }
}
