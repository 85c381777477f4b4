//! A real Prometheus on loopback for integration tests.
//!
//! Use from a test crate with
//! `#[path = "common/prometheus.rs"] mod prometheus;`.
//! The server runs from a temporary directory (config, TSDB, log) and is
//! killed when the handle drops. Only std and the crate's own dependencies
//! are used: the HTTP API is spoken over HTTP/1.0 so responses are never
//! chunked.

// Each test crate uses a different subset of this helper.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the Prometheus binary is looked for, in order: `$PROMETHEUS`,
/// `/usr/bin/prometheus`, then `prometheus` on `$PATH`.
pub fn prometheus_binary() -> Result<PathBuf, String> {
    find_binary("PROMETHEUS", "prometheus")
}

/// Same lookup for promtool (`$PROMTOOL`, `/usr/bin/promtool`, `$PATH`).
pub fn promtool_binary() -> Result<PathBuf, String> {
    find_binary("PROMTOOL", "promtool")
}

fn find_binary(env_var: &str, name: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(env_var) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "${env_var} points at {}, which is not a file",
                p.display()
            ))
        };
    }
    let system = Path::new("/usr/bin").join(name);
    if system.is_file() {
        return Ok(system);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "{name} not found (looked at ${env_var}, /usr/bin/{name} and $PATH). \
         Install it: on Debian `apt-get install prometheus` (ships prometheus and \
         promtool), or see scripts/install-test-deps.sh"
    ))
}

/// A free TCP port on 127.0.0.1. The listener is dropped before returning,
/// so another process can in principle take the port first; callers retry.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// What the temporary Prometheus scrapes and evaluates.
#[derive(Debug, Clone)]
pub struct PrometheusSetup {
    /// `(job_name, "127.0.0.1:PORT")` pairs, each scraped at `/metrics`.
    pub scrape_targets: Vec<(String, String)>,
    /// Rule files loaded by `rule_files:` (absolute paths).
    pub rule_files: Vec<PathBuf>,
    pub scrape_interval: Duration,
    pub evaluation_interval: Duration,
    /// `127.0.0.1:PORT` of Alertmanagers to send alerts to.
    pub alertmanagers: Vec<String>,
}

impl PrometheusSetup {
    pub fn new() -> Self {
        PrometheusSetup {
            scrape_targets: Vec::new(),
            rule_files: Vec::new(),
            scrape_interval: Duration::from_secs(1),
            evaluation_interval: Duration::from_secs(1),
            alertmanagers: Vec::new(),
        }
    }

    pub fn scrape(mut self, job: &str, address: &str) -> Self {
        self.scrape_targets
            .push((job.to_string(), address.to_string()));
        self
    }

    pub fn rules(mut self, path: impl Into<PathBuf>) -> Self {
        self.rule_files.push(path.into());
        self
    }

    pub fn alertmanager(mut self, address: &str) -> Self {
        self.alertmanagers.push(address.to_string());
        self
    }

    fn config_yaml(&self) -> String {
        let mut y = format!(
            "global:\n  scrape_interval: {}ms\n  evaluation_interval: {}ms\n  scrape_timeout: {}ms\n",
            self.scrape_interval.as_millis(),
            self.evaluation_interval.as_millis(),
            self.scrape_interval.as_millis(),
        );
        y.push_str("rule_files:\n");
        for f in &self.rule_files {
            y.push_str(&format!("  - {}\n", yaml_quote(&f.display().to_string())));
        }
        if !self.alertmanagers.is_empty() {
            y.push_str("alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [");
            let quoted: Vec<String> = self.alertmanagers.iter().map(|a| yaml_quote(a)).collect();
            y.push_str(&quoted.join(", "));
            y.push_str("]\n");
        }
        y.push_str("scrape_configs:\n");
        for (job, addr) in &self.scrape_targets {
            y.push_str(&format!(
                "  - job_name: {}\n    static_configs:\n      - targets: [{}]\n",
                yaml_quote(job),
                yaml_quote(addr)
            ));
        }
        y
    }
}

impl Default for PrometheusSetup {
    fn default() -> Self {
        Self::new()
    }
}

fn yaml_quote(s: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar.
    serde_json::to_string(s).expect("strings always serialise")
}

/// A running Prometheus; killed on drop.
pub struct Prometheus {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus and waits (up to 60 s) until `/-/ready` answers 200.
    /// Panics with the server's log when it cannot start.
    pub fn start(setup: &PrometheusSetup) -> Prometheus {
        let binary = prometheus_binary().unwrap_or_else(|e| panic!("{e}"));
        let mut last_log = String::new();
        // A port picked by `free_port` can be taken before Prometheus binds it.
        for _attempt in 0..3 {
            let dir = tempfile::tempdir().expect("temp dir for prometheus");
            let config = dir.path().join("prometheus.yml");
            std::fs::write(&config, setup.config_yaml()).expect("write prometheus.yml");
            let port = free_port();
            let log_path = dir.path().join("prometheus.log");
            let log = std::fs::File::create(&log_path).expect("create prometheus.log");
            let child = Command::new(&binary)
                .arg(format!("--config.file={}", config.display()))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.path().join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--enable-feature=exemplar-storage")
                .arg("--log.level=warn")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
            let mut prom = Prometheus { child, port, dir };
            if prom.wait_ready(Duration::from_secs(60)) {
                return prom;
            }
            last_log = prom.log();
            // Drop kills it; try a new port.
        }
        panic!("Prometheus did not become ready; last log:\n{last_log}");
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_status)) = self.child.try_wait() {
                return false;
            }
            if matches!(http_get(self.port, "/-/ready"), Ok((200, _))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's log so far (stderr), for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// GET an API path (with its query string already encoded) and parse JSON.
    pub fn get_json(&self, path_and_query: &str) -> Result<(u16, Value), String> {
        let (status, body) = http_get(self.port, path_and_query)?;
        let v: Value = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "GET {path_and_query}: status {status}, body is not JSON ({e}): {}",
                String::from_utf8_lossy(&body)
            )
        })?;
        Ok((status, v))
    }

    /// Instant query. `Ok(result array)` when Prometheus accepted the query;
    /// `Err(message)` with Prometheus's error (parse or execution) otherwise.
    pub fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/query?query={}", encode(expr));
        let (status, v) = self.get_json(&path)?;
        if v["status"] != "success" {
            return Err(format!(
                "HTTP {status}, {}: {}",
                v["errorType"].as_str().unwrap_or("?"),
                v["error"].as_str().unwrap_or("?")
            ));
        }
        match &v["data"]["result"] {
            Value::Array(a) => Ok(a.clone()),
            // Scalar and string results are one value, not a vector.
            Value::Null => Ok(Vec::new()),
            other => Ok(vec![other.clone()]),
        }
    }

    /// Series matching one selector (`/api/v1/series`).
    pub fn series(&self, selector: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/series?match[]={}", encode(selector));
        let (status, v) = self.get_json(&path)?;
        if v["status"] != "success" {
            return Err(format!(
                "HTTP {status}: {}",
                v["error"].as_str().unwrap_or("?")
            ));
        }
        Ok(v["data"].as_array().cloned().unwrap_or_default())
    }

    /// Active alerts (`/api/v1/alerts`): pending and firing.
    pub fn alerts(&self) -> Result<Vec<Value>, String> {
        let (_, v) = self.get_json("/api/v1/alerts")?;
        Ok(v["data"]["alerts"].as_array().cloned().unwrap_or_default())
    }

    /// Rule groups as loaded (`/api/v1/rules`), with health and last error.
    pub fn rules(&self) -> Result<Vec<Value>, String> {
        let (_, v) = self.get_json("/api/v1/rules")?;
        Ok(v["data"]["groups"].as_array().cloned().unwrap_or_default())
    }

    /// Scrape targets (`/api/v1/targets`): health and last error.
    pub fn targets(&self) -> Result<Vec<Value>, String> {
        let (_, v) = self.get_json("/api/v1/targets")?;
        Ok(v["data"]["activeTargets"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    /// Polls `check` every 500 ms until it returns `Some` or `limit` passes.
    pub fn wait_for<T>(
        &self,
        limit: Duration,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(v) = check(self) {
                return Some(v);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encodes a query-string value.
pub fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// One HTTP/1.0 GET to 127.0.0.1:port; returns status and body.
pub fn http_get(port: u16, path_and_query: &str) -> Result<(u16, Vec<u8>), String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect :{port}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let request = format!("GET {path_and_query} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send to :{port}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("read from :{port}: {e}"))?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no HTTP header end in reply from :{port}"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("bad status line from :{port}: {head}"))?;
    Ok((status, raw[split + 4..].to_vec()))
}
