//! A real Prometheus on loopback for integration tests: it runs from a
//! temporary folder (config, TSDB, log) and is killed when the handle drops.
//! Its HTTP API is spoken over HTTP/1.0 so answers are never chunked.

use crate::http::raw_get;
use crate::tools::{system_binary, Daemon, Flavour};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `Accept` header Prometheus 2.x scrapes with (OpenMetrics first).
pub const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

const INSTALL: &str = "on Debian `apt-get install prometheus` (ships prometheus and promtool)";

/// `$PROMETHEUS`, `/usr/bin/prometheus`, then `prometheus` on `$PATH`.
pub fn prometheus_binary() -> Result<PathBuf, String> {
    system_binary("PROMETHEUS", &["prometheus"], INSTALL)
}

/// `$PROMTOOL`, `/usr/bin/promtool`, then `promtool` on `$PATH`.
pub fn promtool_binary() -> Result<PathBuf, String> {
    system_binary("PROMTOOL", &["promtool"], INSTALL)
}

/// `promtool check metrics` of `text` (the lint exporter pipelines run):
/// what it finished with. promtool reads the text on its stdin.
pub fn promtool_check_metrics(text: &str) -> Result<crate::Finished, String> {
    let promtool = promtool_binary()?;
    let mut file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| e.to_string())?;
    // `run` gives the command an empty stdin: a shell redirects the file.
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("exec \"$0\" check metrics < \"$1\"")
        .arg(&promtool)
        .arg(file.path());
    Ok(crate::run(command, "promtool check metrics"))
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
    daemon: Daemon,
}

impl Prometheus {
    /// Starts Prometheus and waits (up to 60 s) until `/-/ready` answers 200.
    /// Panics with the server's log when it cannot start.
    pub fn start(setup: &PrometheusSetup) -> Prometheus {
        let binary = prometheus_binary().unwrap_or_else(|e| panic!("{e}"));
        let daemon = Daemon::start(Flavour::Prometheus, &binary, &setup.config_yaml());
        Prometheus { daemon }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.daemon.address())
    }

    pub fn dir(&self) -> &Path {
        self.daemon.dir()
    }

    /// The server's log so far (stderr), for failure messages.
    pub fn log(&self) -> String {
        self.daemon.log()
    }

    /// GET an API path (with its query string already encoded) and parse JSON.
    pub fn get_json(&self, path_and_query: &str) -> Result<(u16, Value), String> {
        let r = raw_get(&self.daemon.address(), path_and_query, &[])?;
        let v: Value = serde_json::from_slice(&r.body).map_err(|e| {
            format!(
                "GET {path_and_query}: status {}, body is not JSON ({e}): {}",
                r.status,
                r.text()
            )
        })?;
        Ok((r.status, v))
    }

    /// The `data` of an API answer whose `status` is `success`; otherwise
    /// `Err` with Prometheus's error (parse or execution).
    fn api_data(&self, path_and_query: &str) -> Result<Value, String> {
        let (status, mut v) = self.get_json(path_and_query)?;
        if v["status"] != "success" {
            return Err(format!(
                "HTTP {status}, {}: {}",
                v["errorType"].as_str().unwrap_or("?"),
                v["error"].as_str().unwrap_or("?")
            ));
        }
        Ok(v["data"].take())
    }

    /// Instant query. `Ok(result array)` when Prometheus accepted the query;
    /// `Err(message)` with Prometheus's error (parse or execution) otherwise.
    pub fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let data = self.api_data(&format!("/api/v1/query?query={}", encode(expr)))?;
        match &data["result"] {
            Value::Array(a) => Ok(a.clone()),
            // Scalar and string results are one value, not a vector.
            Value::Null => Ok(Vec::new()),
            other => Ok(vec![other.clone()]),
        }
    }

    /// Series matching one selector (`/api/v1/series`).
    pub fn series(&self, selector: &str) -> Result<Vec<Value>, String> {
        let data = self.api_data(&format!("/api/v1/series?match[]={}", encode(selector)))?;
        Ok(data.as_array().cloned().unwrap_or_default())
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

/// Percent-encodes a query-string value.
pub fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
