//! Headless Chromium for tests that read pages as a person's browser renders
//! them: `dump_dom` returns the DOM after load, `screenshot` writes a PNG.
//! Needs Debian's `chromium` (or `$CHROMIUM`). Each call runs one browser
//! process with a fresh profile and no network services of its own.

use crate::process::run;
use crate::tools::system_binary;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `$CHROMIUM`, then `chromium` or `chromium-browser` in `/usr/bin` or on
/// `$PATH`.
pub fn chromium_binary() -> Result<PathBuf, String> {
    system_binary(
        "CHROMIUM",
        &["chromium", "chromium-browser"],
        "on Debian `apt-get install chromium`",
    )
}

/// One browser run on `url` with `extra` flags, bounded like every command
/// (see [`run`]): its stdout.
fn browse(extra: &[String], url: &str) -> Result<String, String> {
    let binary = chromium_binary()?;
    let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut command = Command::new(&binary);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        // No desktop session: keep it from looking for one.
        .env_remove("DISPLAY");
    let finished = run(command, &format!("chromium {url}"));
    if !finished.success() {
        return Err(format!("chromium {url}: {}", finished.describe()));
    }
    Ok(finished.stdout)
}

/// The DOM of `url` after it loaded, serialised as HTML.
pub fn dump_dom(url: &str) -> Result<String, String> {
    browse(&["--dump-dom".to_string()], url)
}

/// The visible text of a dumped DOM: tags dropped, entities for `&<>"'`
/// decoded, whitespace collapsed. Enough to assert what a person reads.
pub fn visible_text(dom: &str) -> String {
    let mut out = String::with_capacity(dom.len() / 2);
    let mut in_tag = false;
    let mut skip_until: Option<&str> = None;
    let lower = dom.to_ascii_lowercase();
    let mut i = 0;
    let bytes = dom.as_bytes();
    while i < bytes.len() {
        if let Some(end) = skip_until {
            match lower[i..].find(end) {
                Some(j) => {
                    i += j + end.len();
                    skip_until = None;
                    continue;
                }
                None => break,
            }
        }
        let c = bytes[i];
        if c == b'<' {
            if lower[i..].starts_with("<style") {
                skip_until = Some("</style>");
                continue;
            }
            if lower[i..].starts_with("<script") {
                skip_until = Some("</script>");
                continue;
            }
            in_tag = true;
            out.push(' ');
        } else if c == b'>' && in_tag {
            in_tag = false;
        } else if !in_tag {
            out.push_str(&dom[i..(i + utf8_len(c)).min(dom.len())]);
        }
        // Step one whole UTF-8 character, inside tags too (attribute values).
        i += utf8_len(c);
    }
    let decoded = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// A PNG of `url` rendered at `width`×`height` CSS pixels, written to `path`.
pub fn screenshot(url: &str, path: &Path, width: u32, height: u32) -> Result<(), String> {
    browse(
        &[
            format!("--screenshot={}", path.display()),
            format!("--window-size={width},{height}"),
        ],
        url,
    )?;
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => Ok(()),
        _ => Err(format!(
            "chromium wrote no screenshot to {}",
            path.display()
        )),
    }
}
