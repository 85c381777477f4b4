//! Shared helpers for integration tests: real processes on loopback.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-exporter"))
}

/// A child process killed (and reaped) on drop, whose stderr is drained
/// into memory and whose `listening on URL` line is captured.
pub struct Proc {
    pub child: Child,
    pub url: String,
    pub stderr: Arc<Mutex<String>>,
}

impl Proc {
    /// Start `mcp-exporter ARGS...` and wait for its `listening on` line.
    pub fn start(args: &[&str]) -> Proc {
        Proc::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn mcp-exporter");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(String::new()));
        let log_in = log.clone();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent {
                    if let Some(i) = line.find("listening on ") {
                        let url = line[i + "listening on ".len()..].trim().to_string();
                        let _ = tx.send(url);
                        sent = true;
                    }
                }
                let mut l = log_in.lock().unwrap();
                if l.len() < 1 << 20 {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(u) => u,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "mcp-exporter {args:?} never said `listening on`; stderr:\n{}",
                    log.lock().unwrap()
                );
            }
        };
        Proc {
            child,
            url,
            stderr: log,
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
/// One HTTP simulator serving a virtual server per scenario; the scenario
/// file lives as long as the returned handle.
pub fn scenarios_simulator(servers: &str) -> (Proc, tempfile::NamedTempFile) {
    use std::io::Write;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    write!(f, "servers:\n{servers}").unwrap();
    let p = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenarios",
        f.path().to_str().unwrap(),
    ]);
    (p, f)
}

/// Run `mcp-exporter probe ARGS... --json`; returns the exit code and the
/// parsed report.
pub fn probe_json(args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(bin())
        .args(["probe", "--json"])
        .args(args)
        .output()
        .expect("run probe");
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "probe {args:?} printed no JSON ({e}); stdout:\n{text}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), value)
}

/// The listing of `kind` in a probe report.
pub fn listing<'a>(report: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    report["listings"]
        .as_array()
        .expect("listings")
        .iter()
        .find(|l| l["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} listing in {report}"))
}

/// Items per page of a listing, in request order.
pub fn page_items(listing: &serde_json::Value) -> Vec<u64> {
    listing["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| p["items"].as_u64().unwrap_or(0))
        .collect()
}

pub fn names(listing: &serde_json::Value) -> Vec<String> {
    listing["names"]
        .as_array()
        .expect("names")
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect()
}

/// GET a URL on loopback with a blocking client.
pub fn http_get(url: &str) -> (u16, String) {
    http(reqwest::Method::GET, url)
}

pub fn http_post(url: &str) -> (u16, String) {
    http(reqwest::Method::POST, url)
}

fn http(method: reqwest::Method, url: &str) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let resp = reqwest::Client::new()
            .request(method, url)
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .expect("HTTP request");
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_default())
    })
}

/// One sample's value from OpenMetrics text: `name{labels}` must match
/// exactly the label set given (in any order).
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let (series, rest) = match line.find(' ') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => continue,
        };
        let (n, label_text) = match series.find('{') {
            Some(i) => (&series[..i], &series[i + 1..series.len() - 1]),
            None => (series, ""),
        };
        if n != name {
            continue;
        }
        let got = parse_labels(label_text);
        if got.len() != labels.len()
            || !labels
                .iter()
                .all(|(k, v)| got.iter().any(|(gk, gv)| gk == k && gv == v))
        {
            continue;
        }
        let value = rest.split_whitespace().next()?;
        return value.parse().ok();
    }
    None
}

fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 2..];
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(n);
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.push((key, value));
        rest = &after[end..];
    }
    out
}

/// Poll `f` until it returns Some or `limit` passes (then panic with `what`).
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > limit {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether a process exists.
pub fn alive(pid: u32) -> bool {
    // Zombies count as dead: a reaped child has no /proc entry, an
    // unreaped one shows state Z.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
