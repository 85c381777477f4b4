//! Minimal HTML helpers for the server-rendered status pages.

use std::fmt::Write as _;

/// Escape text for HTML element content and attribute values; control
/// characters other than newline and tab (which a stderr tail keeps) are
/// shown as `\x1b`, `\r`, … (`mcp_listing::text::escape_controls`).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                out.push_str(&mcp_listing::text::escape_controls(c.encode_utf8(&mut buf)));
            }
            c => out.push(c),
        }
    }
    out
}

/// Percent-encode a path segment (target names are label-safe, but `:`
/// and `.` still deserve care in URLs).
pub fn path_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' {
            out.push(b as char);
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

pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta http-equiv=\"refresh\" content=\"15\">\
<title>{title}</title><style>{CSS}</style></head><body>\
<header><a href=\"/\">mcp-exporter</a> <span class=\"muted\">v{version}</span>\
<nav><a href=\"/metrics\">metrics</a> <a href=\"/api/targets\">api</a></nav></header>\
<main>{body}</main></body></html>",
        title = esc(title),
        version = env!("CARGO_PKG_VERSION"),
    )
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
    fn escapes_markup_and_shows_control_characters() {
        assert_eq!(
            esc("<b>\u{1b}[2J\r\u{7}</b>\nok"),
            "&lt;b&gt;\\x1b[2J\\r\\x07&lt;/b&gt;\nok"
        );
    }

    #[test]
    fn a_flat_trend_is_a_flat_line() {
        assert_eq!(sparkline([20u32, 20, 20].into_iter()), "───");
        assert_eq!(sparkline([0u32, 7].into_iter()), "▁█");
    }
}
