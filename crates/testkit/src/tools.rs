//! The real systems the end-to-end tests run (Prometheus, promtool,
//! Alertmanager, amtool, Chromium): where they are, and a daemon of theirs
//! on a loopback port.

use crate::http::raw_get;
use crate::ports::free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A system binary: `$ENV_VAR` (which must be a file), then
/// `/usr/bin/NAME` and `NAME` on `$PATH` for each of `names`. The error
/// says where it looked and how to install it (`install`).
pub fn system_binary(env_var: &str, names: &[&str], install: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(env_var) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("${env_var} points at {}, not a file", p.display()))
        };
    }
    for name in names {
        let system = Path::new("/usr/bin").join(name);
        if system.is_file() {
            return Ok(system);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path) {
            if dir.join(name).is_file() {
                return Ok(dir.join(name));
            }
        }
    }
    Err(format!(
        "{} not found (looked at ${env_var}, /usr/bin and $PATH). Install it: {install}, \
         or see scripts/install-test-deps.sh",
        names.join(" or ")
    ))
}

/// A daemon (Prometheus, Alertmanager) on a loopback port, run from a
/// temporary folder that holds its files and its log; killed on drop.
pub struct Daemon {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
    log_name: String,
}

/// The daemons of the Prometheus family the tests run: all take their
/// YAML config, data folder, listen address and log level as flags of the
/// same form.
#[derive(Debug, Clone, Copy)]
pub enum Flavour {
    Prometheus,
    Alertmanager,
}

impl Flavour {
    /// Its name (the log's and the config file's, `NAME.yml`), the flag
    /// naming its data folder, and flags of its own.
    fn parts(self) -> (&'static str, &'static str, &'static [&'static str]) {
        match self {
            Flavour::Prometheus => (
                "prometheus",
                "--storage.tsdb.path",
                &["--enable-feature=exemplar-storage"],
            ),
            // No gossip: a single instance needs no cluster port.
            Flavour::Alertmanager => (
                "alertmanager",
                "--storage.path",
                &["--cluster.listen-address="],
            ),
        }
    }
}

impl Daemon {
    /// Starts `binary`, a daemon of `flavour`, with `config` (YAML) in its
    /// folder, on a loopback port, logging warnings; waits until
    /// `GET /-/ready` answers 200. The port is picked free before the
    /// daemon binds it, so another process can take it first: then the
    /// daemon fails and it is tried again on a new port, three times.
    pub fn start(flavour: Flavour, binary: &Path, config: &str) -> Daemon {
        let (what, storage_flag, extra) = flavour.parts();
        let log_name = format!("{what}.log");
        let config_name = format!("{what}.yml");
        let mut last_log = String::new();
        for _attempt in 0..3 {
            let dir = tempfile::tempdir().expect("temp dir for a daemon");
            let config_path = dir.path().join(&config_name);
            std::fs::write(&config_path, config).expect("write the daemon's config");
            let port = free_port();
            let log = std::fs::File::create(dir.path().join(&log_name)).expect("create its log");
            let child = Command::new(binary)
                .arg(format!("--config.file={}", config_path.display()))
                .arg(format!(
                    "{storage_flag}={}",
                    dir.path().join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .args(extra)
                .arg("--log.level=warn")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
            let mut daemon = Daemon {
                child,
                port,
                dir,
                log_name: log_name.clone(),
            };
            if daemon.wait_ready(Duration::from_secs(60)) {
                return daemon;
            }
            last_log = daemon.log();
            // Dropping it kills it; try a new port.
        }
        panic!("{what} did not become ready; last log:\n{last_log}");
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_exited)) = self.child.try_wait() {
                return false;
            }
            if raw_get(&self.address(), "/-/ready", &[]).is_ok_and(|r| r.status == 200) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Its log so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join(&self.log_name)).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
