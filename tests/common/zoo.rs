//! Helpers for tests/gateways.rs: real gateway and origin processes on
//! loopback, the exporter driven through its binary (`probe --json`, `serve`
//! + `/metrics` + `/api/targets`), peers gated like tests/interop.rs.
//!
//! Self-contained on purpose (no `mod common`): the gateway zoo depends only
//! on the binary's command line and its documented outputs.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Bounds on the processes under test: about hangs, not speed (a loaded
/// 2-core machine takes many seconds to import FastMCP).
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(90);
pub const RUN_DEADLINE: Duration = Duration::from_secs(150);

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

pub fn peer_path(relative: &str) -> String {
    peers_dir().join(relative).to_string_lossy().into_owned()
}

pub fn exporter_bin() -> String {
    std::env::var_os("INTEROP_EXPORTER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcp-exporter")))
        .to_string_lossy()
        .into_owned()
}

/// True when every marker file exists; otherwise says so loudly, or fails
/// when INTEROP_REQUIRE_PEERS is set (as CI does).
pub fn installed(test: &str, markers: &[&str]) -> bool {
    let missing: Vec<String> = markers
        .iter()
        .map(|m| peers_dir().join(m))
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let message = format!(
        "gateway test {test} SKIPPED: peer not installed ({} missing); run scripts/install-peers.sh",
        missing.join(", ")
    );
    if std::env::var_os("INTEROP_REQUIRE_PEERS").is_some() {
        panic!("{message}");
    }
    eprintln!("\n========\n{message}\n========\n");
    false
}

fn kill_group(pgid: u32) {
    // SAFETY: kill(2) takes no pointers; a negative pid signals the process
    // group this helper created (children start with process_group(0)).
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
}

/// A long-running process (gateway, origin, exporter) in its own process
/// group, killed with the group on drop. Its stderr is drained into memory.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`, from the process's first `listening on` line.
    pub url: String,
    log: Arc<Mutex<String>>,
    what: String,
}

impl Server {
    /// Starts `argv` and waits until a stderr line contains `listening on
    /// http://…` (our peers, the preload and the simulator print it) or
    /// `Uvicorn running on http://…` (Python `mcp` 1.x FastMCP).
    pub fn start(what: &str, argv: &[String], env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: cannot start {argv:?}: {e}"));
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (url_tx, url_rx) = mpsc::channel::<String>();
        let log_in = log.clone();
        thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    for marker in ["listening on ", "Uvicorn running on "] {
                        if let Some(i) = line.find(marker) {
                            let rest = &line[i + marker.len()..];
                            let url = rest.split_whitespace().next().unwrap_or_default();
                            let _ = url_tx.send(url.trim_end_matches('/').to_string());
                            sent = true;
                            break;
                        }
                    }
                }
                let mut kept = log_in.lock().unwrap();
                if kept.len() < 1 << 20 {
                    kept.push_str(&line);
                    kept.push('\n');
                }
            }
        });
        match url_rx.recv_timeout(STARTUP_DEADLINE) {
            Ok(url) => Server {
                child,
                url,
                log,
                what: what.to_string(),
            },
            Err(why) => {
                kill_group(child.id());
                let status = child.wait();
                let why = match why {
                    mpsc::RecvTimeoutError::Timeout => {
                        format!("not listening after {STARTUP_DEADLINE:?}")
                    }
                    mpsc::RecvTimeoutError::Disconnected => {
                        "closed stderr without saying where it listens".to_string()
                    }
                };
                panic!(
                    "{what}: {why} (exit: {status:?}); stderr:\n{}",
                    log.lock().unwrap()
                );
            }
        }
    }

    pub fn stderr(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

fn read_all(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// `mcp-exporter probe --json ARGS…`: exit code and the parsed report.
/// Bounded by RUN_DEADLINE; the probe's process group is killed afterwards.
pub fn probe(args: &[&str]) -> (Option<i32>, Value) {
    let mut command = Command::new(exporter_bin());
    command
        .args(["probe", "--json"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().expect("start mcp-exporter probe");
    let pgid = child.id();
    let stdout = read_all(child.stdout.take().expect("stdout is piped"));
    let stderr = read_all(child.stderr.take().expect("stderr is piped"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if started.elapsed() > RUN_DEADLINE {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    kill_group(pgid);
    let _ = child.wait();
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    let Some(status) = status else {
        panic!("probe {args:?} still running after {RUN_DEADLINE:?}; stderr:\n{stderr}");
    };
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("probe {args:?}: --json output is not one JSON object ({e})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    });
    (status.code(), report)
}

/// The listing of `kind` in a probe report.
pub fn listing<'a>(report: &'a Value, kind: &str) -> &'a Value {
    report["listings"]
        .as_array()
        .and_then(|ls| ls.iter().find(|l| l["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} listing in {report}"))
}

/// What the exporter said about one listing, in the words of its report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub protocol: String,
    /// `complete`, `aborted` or `error`.
    pub outcome: String,
    /// The guard or error label (`cursor_cycle`, `rpc_error`, …), if any.
    pub reason: Option<String>,
    pub unique: u64,
    /// Page requests in the final attempt.
    pub pages: u64,
    pub rpc_code: Option<i64>,
}

/// Summarises `kind` of a probe report as [`Seen`].
pub fn seen(report: &Value, kind: &str) -> Seen {
    let l = listing(report, kind);
    Seen {
        protocol: report["protocol_version"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        outcome: l["outcome"].as_str().unwrap_or_default().to_string(),
        reason: l["reason"].as_str().map(str::to_string),
        unique: l["unique_items"].as_u64().unwrap_or(u64::MAX),
        pages: l["final_pages"].as_u64().unwrap_or(u64::MAX),
        rpc_code: l["rpc_error_code"].as_i64(),
    }
}

/// The names of `kind` in a probe report.
pub fn names(report: &Value, kind: &str) -> Vec<String> {
    listing(report, kind)["names"]
        .as_array()
        .map(|ns| {
            ns.iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `mcp-exporter simulate` over stdio, as a gateway's origin command.
pub fn simulate_stdio(args: &str) -> Vec<String> {
    let mut argv = vec![exporter_bin(), "simulate".to_string()];
    argv.extend(args.split_whitespace().map(str::to_string));
    argv
}

/// An `mcp-exporter serve` run on a config file written to a temporary folder.
pub struct Exporter {
    pub server: Server,
    /// The configuration it serves, for `probe --config.file`.
    pub config_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Exporter {
    pub fn start(config: &str) -> Exporter {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, config).expect("write config");
        let argv = vec![
            exporter_bin(),
            "--config.file".to_string(),
            path.to_string_lossy().into_owned(),
            "--web.listen-address".to_string(),
            "127.0.0.1:0".to_string(),
        ];
        Exporter {
            server: Server::start("mcp-exporter serve", &argv, &[]),
            config_path: path,
            _dir: dir,
        }
    }

    pub fn metrics(&self) -> String {
        http_get(&format!("{}/metrics", self.server.url))
    }

    pub fn api_targets(&self) -> Value {
        serde_json::from_str(&http_get(&format!("{}/api/targets", self.server.url)))
            .expect("/api/targets is JSON")
    }

    /// Scrapes until `ready` accepts the text (then returns it), or panics
    /// after `limit` with the last scrape and the exporter's log.
    pub fn wait_until(&self, limit: Duration, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let text = self.metrics();
            if ready(&text) {
                return text;
            }
            if started.elapsed() > limit {
                panic!(
                    "timed out after {limit:?} waiting for {what}\n--- last /metrics ---\n{text}\n--- exporter stderr ---\n{}",
                    self.server.stderr()
                );
            }
            thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Exporter {
    /// Fetches `/api/targets` until `ready` accepts it (then returns it), or
    /// panics after `limit` with the last answer.
    pub fn wait_api(&self, limit: Duration, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let api = self.api_targets();
            if ready(&api) {
                return api;
            }
            if started.elapsed() > limit {
                panic!("timed out after {limit:?} waiting for {what}\n--- last /api/targets ---\n{api}");
            }
            thread::sleep(Duration::from_millis(250));
        }
    }
}

/// The target named `name` in an `/api/targets` answer.
pub fn api_target<'a>(api: &'a Value, name: &str) -> &'a Value {
    api.as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no target {name} in {api}"))
}

/// GET a loopback URL (blocking); panics on a transport failure or non-200.
pub fn http_get(url: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let resp = reqwest::Client::new()
            .get(url)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        assert_eq!(status, 200, "GET {url}: {body}");
        body
    })
}

/// One sample's value from OpenMetrics text: `name{labels}` with exactly the
/// label set given (in any order).
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, rest) = line.split_once(' ')?;
            let (n, label_text) = match series.find('{') {
                Some(i) => (&series[..i], &series[i + 1..series.len() - 1]),
                None => (series, ""),
            };
            if n != name {
                return None;
            }
            let got = parse_labels(label_text);
            let same = got.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| got.iter().any(|(gk, gv)| gk == k && gv == v));
            if !same {
                return None;
            }
            rest.split_whitespace().next()?.parse().ok()
        })
}

fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 2..];
        let mut value = String::new();
        let mut end = after.len();
        let mut chars = after.char_indices();
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

/// Runs the jobs on their own threads (gateways start slowly, mostly waiting
/// on imports) and returns their results in order; a panicking job fails the
/// caller after the others finished (their servers are then dropped, killed).
pub fn in_parallel<T: Send>(jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>>) -> Vec<T> {
    thread::scope(|scope| {
        let handles: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
        let results: Vec<thread::Result<T>> = handles.into_iter().map(|h| h.join()).collect();
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
