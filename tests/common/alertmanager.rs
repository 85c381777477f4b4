//! A real Alertmanager on loopback routing every alert to a webhook receiver
//! the test runs, for end-to-end alert tests.
//!
//! Use from a test crate with
//! `#[path = "common/alertmanager.rs"] mod alertmanager;`.
//! Needs `prometheus-alertmanager` (Debian package of the same name, or
//! `$ALERTMANAGER`). Both processes stop when their handles drop.

// Each test crate uses a different subset of this helper.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `$ALERTMANAGER`, `/usr/bin/prometheus-alertmanager`, then
/// `prometheus-alertmanager` or `alertmanager` on `$PATH`.
pub fn alertmanager_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ALERTMANAGER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "$ALERTMANAGER points at {}, not a file",
                p.display()
            ))
        };
    }
    let system = Path::new("/usr/bin/prometheus-alertmanager");
    if system.is_file() {
        return Ok(system.to_path_buf());
    }
    for name in ["prometheus-alertmanager", "alertmanager"] {
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                if dir.join(name).is_file() {
                    return Ok(dir.join(name));
                }
            }
        }
    }
    Err(
        "Alertmanager not found (looked at $ALERTMANAGER, /usr/bin/prometheus-alertmanager \
         and $PATH). Install it: on Debian `apt-get install prometheus-alertmanager`, or see \
         scripts/install-test-deps.sh"
            .into(),
    )
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// An HTTP endpoint that keeps every JSON body POSTed to it: Alertmanager's
/// webhook receiver. Answers 200 to everything.
pub struct Webhook {
    port: u16,
    received: Arc<Mutex<Vec<Value>>>,
}

impl Webhook {
    pub fn start() -> Webhook {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind webhook listener");
        let port = listener.local_addr().expect("local addr").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let sink = sink.clone();
                std::thread::spawn(move || {
                    if let Some(v) = read_post(stream) {
                        sink.lock().unwrap().push(v);
                    }
                });
            }
        });
        Webhook { port, received }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/alerts", self.port)
    }

    /// Every notification so far (Alertmanager webhook payloads, version 4).
    pub fn notifications(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }

    /// Every alert of every notification so far, with the notification's
    /// `status` kept on each alert.
    pub fn alerts(&self) -> Vec<Value> {
        self.notifications()
            .iter()
            .flat_map(|n| n["alerts"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// Waits up to `limit` for a firing alert of that name whose labels
    /// include every `(name, value)` in `labels`.
    pub fn wait_firing(
        &self,
        limit: Duration,
        alertname: &str,
        labels: &[(&str, &str)],
    ) -> Option<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let found = self.alerts().into_iter().find(|a| {
                a["status"] == "firing"
                    && a["labels"]["alertname"] == alertname
                    && labels.iter().all(|(k, v)| a["labels"][*k] == *v)
            });
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Reads one HTTP/1.1 request with a Content-Length body, answers 200 and
/// returns the body parsed as JSON.
fn read_post(stream: TcpStream) -> Option<Value> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    reader.read_exact(&mut body).ok()?;
    let mut out = stream;
    let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    serde_json::from_slice(&body).ok()
}

/// Alertmanager config: one route, no grouping delay, every alert to the
/// webhook. Short intervals so a test sees a notification within seconds.
pub fn webhook_config(webhook_url: &str) -> String {
    let url = serde_json::to_string(webhook_url).expect("strings serialise");
    format!(
        "route:\n  receiver: test-webhook\n  group_by: [alertname, target, kind]\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n  - name: test-webhook\n    webhook_configs:\n      - url: {url}\n        send_resolved: true\n"
    )
}

/// A running Alertmanager; killed on drop.
pub struct Alertmanager {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Alertmanager {
    /// Starts Alertmanager with `config` (YAML) and waits (up to 60 s) until
    /// `/-/ready` answers 200. Panics with its log when it cannot start.
    pub fn start(config: &str) -> Alertmanager {
        let binary = alertmanager_binary().unwrap_or_else(|e| panic!("{e}"));
        let mut last_log = String::new();
        // A port picked by `free_port` can be taken before it binds.
        for _attempt in 0..3 {
            let dir = tempfile::tempdir().expect("temp dir for alertmanager");
            let config_path = dir.path().join("alertmanager.yml");
            std::fs::write(&config_path, config).expect("write alertmanager.yml");
            let port = free_port();
            let log = std::fs::File::create(dir.path().join("alertmanager.log"))
                .expect("create alertmanager.log");
            let child = Command::new(&binary)
                .arg(format!("--config.file={}", config_path.display()))
                .arg(format!(
                    "--storage.path={}",
                    dir.path().join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                // No gossip: a single instance needs no cluster port.
                .arg("--cluster.listen-address=")
                .arg("--log.level=warn")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
            let mut am = Alertmanager { child, port, dir };
            if am.wait_ready(Duration::from_secs(60)) {
                return am;
            }
            last_log = am.log();
        }
        panic!("Alertmanager did not become ready; last log:\n{last_log}");
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if matches!(get_status(self.port, "/-/ready"), Ok(200)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    /// `127.0.0.1:PORT`, for Prometheus' `alertmanagers` static config.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("alertmanager.log")).unwrap_or_default()
    }

    /// Alerts Alertmanager holds (`/api/v2/alerts`), for failure messages.
    pub fn alerts(&self) -> String {
        get_body(self.port, "/api/v2/alerts").unwrap_or_else(|e| e)
    }
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn get_status(port: u16, path: &str) -> Result<u16, String> {
    let raw = get_raw(port, path)?;
    raw.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| "no status line".to_string())
}

fn get_body(port: u16, path: &str) -> Result<String, String> {
    let raw = get_raw(port, path)?;
    Ok(raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default())
}

fn get_raw(port: u16, path: &str) -> Result<String, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).map_err(|e| e.to_string())?;
    Ok(raw)
}
