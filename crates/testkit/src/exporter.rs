//! `mcp-exporter` serving a configuration on loopback, and the one-process
//! HTTP simulator most serve tests poll.

use crate::http::{http_get, http_get_accepting, http_get_ok, http_post};
use crate::process::{wait_for, Proc};
use crate::prometheus::PROMETHEUS_ACCEPT;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `mcp-exporter --config.file DIR/config.yaml --web.listen-address
/// 127.0.0.1:0`, on a configuration it wrote to a temporary folder of its
/// own (also there for state directories: [`Exporter::dir`]).
pub struct Exporter {
    proc: Proc,
    config_path: PathBuf,
    dir: tempfile::TempDir,
}

impl Exporter {
    /// Serves `config` (YAML).
    pub fn start(config: &str) -> Exporter {
        Exporter::start_with(config, &[], &[])
    }

    /// Serves `config` with extra flags and environment variables.
    pub fn start_with(config: &str, flags: &[&str], env: &[(&str, &str)]) -> Exporter {
        Exporter::start_with_dir(|_| config.to_string(), flags, env)
    }

    /// Serves the configuration `config` makes given the exporter's folder
    /// (for a `state_dir:` inside it).
    pub fn start_with_dir(
        config: impl FnOnce(&Path) -> String,
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> Exporter {
        let dir = tempfile::tempdir().expect("temp dir");
        let config_path = dir.path().join("config.yaml");
        std::fs::write(&config_path, config(dir.path())).expect("write config");
        let path = config_path.to_str().expect("a UTF-8 temp path");
        let mut args = vec!["--config.file", path, "--web.listen-address", "127.0.0.1:0"];
        args.extend_from_slice(flags);
        Exporter {
            proc: Proc::start_with_env(&args, env),
            config_path,
            dir,
        }
    }

    /// Serves the configuration `config` makes (given the exporter's
    /// folder) on `address`, a port chosen before (a Prometheus told of it
    /// first); Err with its stderr when it cannot listen there (taken
    /// meanwhile: the text says `in use`) or exits.
    pub fn try_start_at(
        config: impl FnOnce(&Path) -> String,
        address: &str,
    ) -> Result<Exporter, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let config_path = dir.path().join("config.yaml");
        std::fs::write(&config_path, config(dir.path())).expect("write config");
        let mut command = std::process::Command::new(crate::exporter_bin());
        command
            .arg("--config.file")
            .arg(&config_path)
            .args(["--web.listen-address", address]);
        let proc = Proc::try_spawn(
            &format!("mcp-exporter on {address}"),
            command,
            crate::process::listening_url,
        )?;
        Ok(Exporter {
            proc,
            config_path,
            dir,
        })
    }

    /// Where it listens, e.g. `http://127.0.0.1:43817`.
    pub fn url(&self) -> &str {
        &self.proc.url
    }

    /// `url` followed by `path` (which starts with `/`).
    pub fn at(&self, path: &str) -> String {
        self.proc.at(path)
    }

    /// The folder holding its configuration.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The configuration file it serves (for `probe --config.file`).
    pub fn config_path(&self) -> &Path {
        &self.config_path
    }

    pub fn stderr(&self) -> String {
        self.proc.stderr()
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// GET `path`: status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(&self.at(path))
    }

    /// Writes a new configuration and asks for a reload (`POST /-/reload`,
    /// which needs `--web.enable-lifecycle`): status and body.
    pub fn reload(&self, config: &str) -> (u16, String) {
        std::fs::write(&self.config_path, config).expect("rewrite config");
        http_post(&self.at("/-/reload"))
    }

    /// `/metrics` as Prometheus gets it (OpenMetrics, asked for in
    /// `Accept`), which must answer 200.
    pub fn metrics(&self) -> String {
        let url = self.at("/metrics");
        let (status, body) = http_get_accepting(&url, PROMETHEUS_ACCEPT);
        assert_eq!(status, 200, "GET {url}: {body}");
        body
    }

    /// `/api/targets`: every target.
    pub fn api_targets(&self) -> Vec<Value> {
        let body = http_get_ok(&self.at("/api/targets"));
        let all: Value = serde_json::from_str(&body).expect("/api/targets is JSON");
        all.as_array().cloned().unwrap_or_default()
    }

    /// `/api/sources`: every discovery source.
    pub fn api_sources(&self) -> Vec<Value> {
        let body = http_get_ok(&self.at("/api/sources"));
        let all: Value = serde_json::from_str(&body).expect("/api/sources is JSON");
        all.as_array().cloned().unwrap_or_default()
    }

    /// `/api/targets/NAME`.
    pub fn api_target(&self, name: &str) -> Value {
        let body = http_get_ok(&self.at(&format!("/api/targets/{name}")));
        serde_json::from_str(&body).expect("/api/targets/NAME is JSON")
    }

    /// How many polls target `name` has had (0 before its first).
    pub fn polls(&self, name: &str) -> u64 {
        let (_, body) = self.get(&format!("/api/targets/{name}"));
        serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["polls"].as_u64())
            .unwrap_or(0)
    }

    /// Scrapes until `ready` accepts the text (then returns it); panics
    /// after `limit` with the last scrape and the exporter's log.
    pub fn wait_metrics(
        &self,
        limit: Duration,
        what: &str,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        self.wait(limit, what, || {
            let text = self.metrics();
            ready(&text).then_some(text)
        })
    }

    /// Fetches `/api/targets` until `ready` accepts it (then returns it);
    /// panics after `limit` with the exporter's log.
    pub fn wait_api(
        &self,
        limit: Duration,
        what: &str,
        ready: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        self.wait(limit, what, || {
            let all = self.api_targets();
            ready(&all).then_some(all)
        })
    }

    /// [`wait_for`] that shows the exporter's log when it gives up.
    pub fn wait<T>(&self, limit: Duration, what: &str, f: impl FnMut() -> Option<T>) -> T {
        let found =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait_for(limit, what, f)));
        found.unwrap_or_else(|_| {
            panic!(
                "gave up waiting for {what}; exporter log:\n{}",
                self.stderr()
            )
        })
    }
}

/// The target named `name` among `/api/targets`.
pub fn api_target<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name} in {all:?}"))
}

/// One HTTP simulator serving a virtual server per scenario (`servers`:
/// the YAML list under `servers:`); the scenario file lives as long as the
/// returned handle.
pub fn scenarios_simulator(servers: &str) -> (Proc, tempfile::NamedTempFile) {
    scenarios_simulator_with_env(servers, &[])
}

/// [`scenarios_simulator`] with environment variables (tokens).
pub fn scenarios_simulator_with_env(
    servers: &str,
    env: &[(&str, &str)],
) -> (Proc, tempfile::NamedTempFile) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), format!("servers:\n{servers}")).expect("write scenarios");
    let path = file.path().to_str().expect("a UTF-8 temp path");
    let sim = Proc::start_with_env(
        &["simulate", "--transport", "http", "--scenarios", path],
        env,
    );
    (sim, file)
}

/// Healthy virtual servers `t-0001`, `t-0002`, … on one simulator, and an
/// exporter polling their tools every 10 s (jitter 10 s, 32 at a time, no
/// garbage-cursor probe): a fleet for load tests.
pub struct Fleet {
    pub exporter: Exporter,
    pub targets: usize,
    _sim: Proc,
    _scenarios: tempfile::NamedTempFile,
}

impl Fleet {
    pub fn start(targets: usize) -> Fleet {
        let (sim, scenarios) = scenarios_simulator(&format!(
            "  - {{name: t, count: {targets}, scenario: healthy}}\n"
        ));
        let mut config = "global:\n  schedule: {every: 10s}\n  jitter: 10s\n  concurrency: 32\n  kinds: [tools]\n  invalid_cursor_probe: false\ntargets:\n".to_string();
        for i in 1..=targets {
            config.push_str(&format!(
                "  - name: t-{i:04}\n    http:\n      url: {}/mcp/t-{i:04}\n",
                sim.url
            ));
        }
        Fleet {
            exporter: Exporter::start(&config),
            targets,
            _sim: sim,
            _scenarios: scenarios,
        }
    }

    /// Tools listings so far of each target, in order, from scraped text.
    pub fn listings(&self, text: &str) -> Vec<f64> {
        (1..=self.targets)
            .map(|i| {
                crate::metrics::listing_attempts(
                    text,
                    &[("target", &format!("t-{i:04}")), ("kind", "tools")],
                )
                .unwrap_or(0.0)
            })
            .collect()
    }
}
