//! Headless Chromium for tests that read pages as a person's browser renders
//! them: `dump_dom` returns the DOM after load, `screenshot` writes a PNG.
//!
//! Use from a test crate with `#[path = "common/chromium.rs"] mod chromium;`.
//! Needs Debian's `chromium` (or `$CHROMIUM`). Each call runs one browser
//! process with a fresh profile and no network services of its own.

// Each test crate uses a different subset of this helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `$CHROMIUM`, `/usr/bin/chromium`, then `chromium` or `chromium-browser`
/// on `$PATH`.
pub fn chromium_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("$CHROMIUM points at {}, not a file", p.display()))
        };
    }
    let system = Path::new("/usr/bin/chromium");
    if system.is_file() {
        return Ok(system.to_path_buf());
    }
    for name in ["chromium", "chromium-browser"] {
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                if dir.join(name).is_file() {
                    return Ok(dir.join(name));
                }
            }
        }
    }
    Err(
        "chromium not found (looked at $CHROMIUM, /usr/bin/chromium and $PATH). \
         Install it: on Debian `apt-get install chromium`, or see scripts/install-test-deps.sh"
            .into(),
    )
}

/// A bound on one browser run; a loaded 2-core machine needs room.
const RUN_LIMIT: Duration = Duration::from_secs(90);

fn run(extra: &[String], url: &str) -> Result<Vec<u8>, String> {
    let binary = chromium_binary()?;
    let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&binary);
    cmd.args([
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
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    // No desktop session: keep it from looking for one.
    .env_remove("DISPLAY");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut s) = stdout {
            let _ = std::io::Read::read_to_end(&mut s, &mut v);
        }
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut s) = stderr {
            let _ = std::io::Read::read_to_end(&mut s, &mut v);
        }
        String::from_utf8_lossy(&v).into_owned()
    });
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "chromium did not finish {url} within {RUN_LIMIT:?}"
                ));
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("chromium {url}: {status}; stderr:\n{stderr}"));
    }
    Ok(stdout)
}

/// The DOM of `url` after it loaded, serialised as HTML.
pub fn dump_dom(url: &str) -> Result<String, String> {
    let dom = run(&["--dump-dom".to_string()], url)?;
    Ok(String::from_utf8_lossy(&dom).into_owned())
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
    run(
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
