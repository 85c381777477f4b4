//! The demo (scripts/demo: config/demo.yaml against the simulated servers of
//! config/demo-scenarios.yaml) on free loopback ports, for tests that check
//! what a person sees there. Changes for speed: every target is polled every
//! second, `shrinking` loses a tool every 3 s instead of every 60 s, and the
//! demo's two clients behind its tap (as scripts/demo runs them) list every
//! second, the tap on a free port.

use crate::http::http_get;
use crate::process::{wait_for, Proc};
use crate::{exporter_bin, repo_file};
use serde_json::Value;
use std::time::Duration;

pub struct Demo {
    pub simulator: Proc,
    pub exporter: Proc,
    pub dir: tempfile::TempDir,
    /// desk-app (page 1 only) and agent-sdk (walks), as scripts/demo runs them.
    pub clients: Vec<Client>,
}

/// A `simulate-client` listing on its own; killed with its group on drop.
pub struct Client(std::process::Child);

impl Drop for Client {
    fn drop(&mut self) {
        crate::process::kill_group(self.0.id(), libc::SIGKILL);
        let _ = self.0.wait();
    }
}

/// The demo's clients through the tap at `tap_url`, every second.
fn demo_clients(tap_url: &str) -> Vec<Client> {
    use std::os::unix::process::CommandExt;
    [("desk-app", "--first-page-only"), ("agent-sdk", "--walk")]
        .into_iter()
        .map(|(name, how)| {
            let child = std::process::Command::new(exporter_bin())
                .args(["simulate-client", "--url", &format!("{tap_url}/mcp/origin")])
                .args(["--name", name, how, "--every", "1s"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .process_group(0)
                .spawn()
                .expect("start a demo client");
            Client(child)
        })
        .collect()
}

impl Demo {
    /// Starts the simulator and the exporter; `extra_args` go to the exporter.
    pub fn start(extra_args: &[&str]) -> Demo {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenarios = repo_file("config/demo-scenarios.yaml")
            .replace("after_seconds: 60", "after_seconds: 3");
        assert!(
            scenarios.contains("after_seconds: 3"),
            "demo scenarios changed shape"
        );
        let scenarios_path = dir.path().join("scenarios.yaml");
        std::fs::write(&scenarios_path, scenarios).expect("write scenarios");
        let simulator = Proc::start(&[
            "simulate",
            "--transport",
            "http",
            "--listen",
            "127.0.0.1:0",
            "--scenarios",
            scenarios_path.to_str().expect("utf-8 path"),
        ]);
        let state = dir.path().join("state");
        let config = repo_file("config/demo.yaml")
            .replace("http://127.0.0.1:9740", &simulator.url)
            .replace("every: 15s", "every: 1s")
            .replace("jitter: 2s", "jitter: 0s")
            .replace("listen: 127.0.0.1:9741", "listen: 127.0.0.1:0")
            .replace(
                "state_dir: .state/demo",
                &format!(
                    "state_dir: {}",
                    serde_json::to_string(&state.display().to_string()).expect("path")
                ),
            );
        assert!(config.contains("every: 1s"), "demo config changed shape");
        assert!(
            config.contains("listen: 127.0.0.1:0"),
            "demo tap changed shape"
        );
        let config_path = dir.path().join("demo.yaml");
        std::fs::write(&config_path, config).expect("write config");
        // local-stdio runs `mcp-exporter`: put the test binary on PATH.
        let bin_dir = exporter_bin().parent().expect("binary dir").to_path_buf();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut args = vec![
            "--config.file",
            config_path.to_str().expect("utf-8 path"),
            "--web.listen-address",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra_args);
        let exporter = Proc::start_with_env(&args, &[("PATH", &path)]);
        let tap_url = crate::clients::tap_url_in(&exporter.stderr(), Some("demo-tap"))
            .unwrap_or_else(|| panic!("the demo tap did not start:\n{}", exporter.stderr()));
        let clients = demo_clients(&tap_url);
        Demo {
            simulator,
            exporter,
            dir,
            clients,
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.exporter.at(path)
    }

    pub fn api_targets(&self) -> Vec<Value> {
        let (status, body) = http_get(&self.url("/api/targets"));
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body)
            .expect("/api/targets is JSON")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn target(&self, name: &str) -> Option<Value> {
        self.api_targets().into_iter().find(|t| t["name"] == name)
    }

    /// Waits until `check` holds for target `name` (its `/api/targets`
    /// entry); panics with the last entry and the exporter's log.
    pub fn wait_target(
        &self,
        name: &str,
        what: &str,
        mut check: impl FnMut(&Value) -> bool,
    ) -> Value {
        let mut last = Value::Null;
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_for(Duration::from_secs(120), what, || {
                let t = self.target(name)?;
                last = t.clone();
                check(&t).then_some(t)
            })
        }));
        match found {
            Ok(t) => t,
            Err(_) => panic!(
                "{name}: {what} did not happen; last entry:\n{}\nexporter log:\n{}",
                serde_json::to_string_pretty(&last).unwrap_or_default(),
                self.exporter.stderr()
            ),
        }
    }
}

/// The reason with `code` (and `kind`, when given) of a verdict object.
pub fn reason<'a>(verdict: &'a Value, code: &str, kind: Option<&str>) -> Option<&'a Value> {
    verdict["reasons"]
        .as_array()?
        .iter()
        .find(|r| r["code"] == code && kind.is_none_or(|k| r["kind"] == k))
}
