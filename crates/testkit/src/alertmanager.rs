//! A real Alertmanager on loopback routing every alert to a webhook receiver
//! the test runs, for end-to-end alert tests. Needs
//! `prometheus-alertmanager` (Debian package of the same name, or
//! `$ALERTMANAGER`). Both stop when their handles drop.

use crate::http::raw_get;
use crate::tools::{system_binary, Daemon, Flavour};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INSTALL: &str = "on Debian `apt-get install prometheus-alertmanager`";

/// `$ALERTMANAGER`, then `prometheus-alertmanager` or `alertmanager` in
/// `/usr/bin` or on `$PATH`.
pub fn alertmanager_binary() -> Result<PathBuf, String> {
    system_binary(
        "ALERTMANAGER",
        &["prometheus-alertmanager", "alertmanager"],
        INSTALL,
    )
}

/// `$AMTOOL`, then `amtool` in `/usr/bin` or on `$PATH` (same package).
pub fn amtool_binary() -> Result<PathBuf, String> {
    system_binary("AMTOOL", &["amtool"], INSTALL)
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
    daemon: Daemon,
}

impl Alertmanager {
    /// Starts Alertmanager with `config` (YAML) and waits (up to 60 s) until
    /// `/-/ready` answers 200. Panics with its log when it cannot start.
    pub fn start(config: &str) -> Alertmanager {
        let binary = alertmanager_binary().unwrap_or_else(|e| panic!("{e}"));
        let daemon = Daemon::start(Flavour::Alertmanager, &binary, config);
        Alertmanager { daemon }
    }

    /// `127.0.0.1:PORT`, for Prometheus' `alertmanagers` static config.
    pub fn address(&self) -> String {
        self.daemon.address()
    }

    pub fn log(&self) -> String {
        self.daemon.log()
    }

    /// Alerts Alertmanager holds (`/api/v2/alerts`), for failure messages.
    pub fn alerts(&self) -> String {
        match raw_get(&self.address(), "/api/v2/alerts", &[]) {
            Ok(r) => r.text(),
            Err(e) => e,
        }
    }
}
