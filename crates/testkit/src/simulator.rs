//! Raw-wire harness of the simulator: `mcp-exporter simulate` children
//! driven with hand-written JSON-RPC over stdio ([`StdioSim`]) and HTTP
//! ([`SessionClient`] against a [`Proc`](crate::Proc) serving
//! `simulate --transport http`), and a minimal wire walker ([`Walk`]) that
//! checks the simulator independently of the crate's own walker. Every
//! child is killed when its guard drops.

use mcp_listing::Kind;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// `mcp-exporter simulate --scenario SCENARIO --transport http FLAGS…` on a
/// port of its choosing, once it listens.
pub fn http_scenario(scenario: &str, flags: &[&str]) -> crate::Proc {
    let mut args = vec!["simulate", "--scenario", scenario, "--transport", "http"];
    args.extend_from_slice(flags);
    crate::Proc::start(&args)
}

/// `simulate --transport TRANSPORT FLAGS…`, with `--scenario healthy`
/// unless the flags name a scenario.
pub fn simulate_args<'a>(transport: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["simulate", "--transport", transport];
    if !flags.contains(&"--scenario") {
        args.extend_from_slice(&["--scenario", "healthy"]);
    }
    args.extend_from_slice(flags);
    args
}

/// Generous: only a hung or broken simulator takes this long.
pub const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------- stdio

pub struct StdioSim {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<String>,
    pub next_id: i64,
}

impl StdioSim {
    pub fn start(args: &[&str]) -> StdioSim {
        let mut child = Command::new(crate::exporter_bin())
            .arg("simulate")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start simulator");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        StdioSim {
            child,
            stdin,
            lines: rx,
            next_id: 0,
        }
    }

    pub fn send_raw(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{v}").expect("write to the simulator");
        stdin.flush().expect("flush to the simulator");
    }

    pub fn send(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Lines until the answer to `id`: (notifications before it, answer).
    pub fn answer(&mut self, id: i64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
            if v.get("id") == Some(&json!(id)) {
                return (notes, v);
            }
            notes.push(v);
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.send(method, params);
        self.answer(id)
    }

    pub fn init(&mut self) -> Value {
        let (_, v) = self.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "wire-test", "version": "0"}}),
        );
        self.send_raw(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        v
    }
}

impl StdioSim {
    /// Its exit status once it exits by itself; killed, failing the test,
    /// if it has not after [`WAIT`].
    pub fn exit_status(&mut self) -> std::process::ExitStatus {
        let since = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait on our own child") {
                return status;
            }
            if since.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("the simulator did not exit within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------- walking

/// Method, result array field and identity key of `kind`: the crate's table.
pub fn kind_wire(kind: Kind) -> (&'static str, &'static str, &'static str) {
    (kind.method(), kind.array_field(), kind.identity_key())
}

#[derive(Debug, Default)]
pub struct Walk {
    /// Identity keys per page (items without one are left out).
    pub pages: Vec<Vec<String>>,
    /// Items without their identity key.
    pub keyless: usize,
    /// Notifications seen during the walk.
    pub notes: Vec<Value>,
    /// The `nextCursor` of each page, as sent (missing = None).
    pub cursors: Vec<Option<Value>>,
    /// The JSON-RPC error that ended the walk, if one did.
    pub error: Option<Value>,
}

impl Walk {
    pub fn all(&self) -> Vec<String> {
        self.pages.concat()
    }
    pub fn unique(&self) -> usize {
        let mut v = self.all();
        v.sort();
        v.dedup();
        v.len()
    }
    pub fn sizes(&self) -> Vec<usize> {
        self.pages.iter().map(Vec::len).collect()
    }
}

/// A minimal legacy walker: stops at a missing/null/blank/non-string
/// cursor, a repeated cursor, an error, or `max_pages`.
pub fn walk_with(
    mut call: impl FnMut(Option<&str>) -> (Vec<Value>, Value),
    list_key: &str,
    id_key: &str,
    max_pages: usize,
) -> Walk {
    let mut w = Walk::default();
    let mut cursor: Option<String> = None;
    let mut sent = std::collections::HashSet::new();
    for _ in 0..max_pages {
        let (notes, resp) = call(cursor.as_deref());
        w.notes.extend(notes);
        if let Some(err) = resp.get("error") {
            w.error = Some(err.clone());
            break;
        }
        let result = &resp["result"];
        let items = result[list_key]
            .as_array()
            .unwrap_or_else(|| panic!("{list_key} not an array: {result}"));
        let mut page = Vec::new();
        for it in items {
            match it.get(id_key).and_then(Value::as_str) {
                Some(k) => page.push(k.to_string()),
                None => w.keyless += 1,
            }
        }
        w.pages.push(page);
        let next = result.get("nextCursor").cloned();
        w.cursors.push(next.clone());
        match next {
            Some(Value::String(s)) if !s.is_empty() && sent.insert(s.clone()) => cursor = Some(s),
            _ => break,
        }
    }
    w
}

pub fn stdio_walk(sim: &mut StdioSim, kind: Kind, max_pages: usize) -> Walk {
    let (method, list_key, id_key) = kind_wire(kind);
    walk_with(
        |c| {
            let params = match c {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            sim.call(method, params)
        },
        list_key,
        id_key,
        max_pages,
    )
}

/// One raw answer's page of `kind`: the identity keys of its items (those
/// that have one), and the next cursor when it is a string.
pub fn page_of(answer: &Value, kind: Kind) -> (Vec<String>, Option<String>) {
    let result = &answer["result"];
    let names = result[kind.array_field()]
        .as_array()
        .unwrap_or_else(|| panic!("no {} array in {answer}", kind.array_field()))
        .iter()
        .filter_map(|item| item.get(kind.identity_key()).and_then(Value::as_str))
        .map(String::from)
        .collect();
    let next = result
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(String::from);
    (names, next)
}

/// Follows `nextCursor` through `fetch` (the answer to one page request
/// for a cursor, None for the first page) until a page has none: every
/// identity key of `kind`, in order. More than 50 pages fail the test.
pub async fn follow(
    kind: Kind,
    mut fetch: impl AsyncFnMut(Option<String>) -> Value,
) -> Vec<String> {
    let mut got = Vec::new();
    let mut cursor = None;
    for _ in 0..50 {
        let (names, next) = page_of(&fetch(cursor.take()).await, kind);
        got.extend(names);
        match next {
            Some(next) => cursor = Some(next),
            None => return got,
        }
    }
    panic!("still a nextCursor after 50 pages of {kind}: {got:?}")
}

/// `PREFIX001`, `PREFIX002`, …: the simulator's item names.
pub fn numbered(prefix: &str, range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| format!("{prefix}{n:03}")).collect()
}

/// A fresh stdio simulator with `args`, initialized, walked for `kind`.
pub fn run_stdio(args: &[&str], kind: Kind, max_pages: usize) -> Walk {
    let mut sim = StdioSim::start(args);
    sim.init();
    stdio_walk(&mut sim, kind, max_pages)
}

// ---------------------------------------------------------------- HTTP

/// Data of each SSE event, with the event name; events without data
/// (priming) are kept with empty data so tests can see them.
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = String::new();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push(d.trim_start().to_string());
                }
            }
            (event, data.join("\n"))
        })
        .collect()
}

pub struct SessionClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    pub token: Option<String>,
    pub next_id: i64,
}

impl SessionClient {
    pub fn new(url: String) -> SessionClient {
        SessionClient {
            http: reqwest::Client::new(),
            url,
            session: None,
            token: None,
            next_id: 0,
        }
    }

    pub async fn post(&mut self, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut req = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send().await.expect("POST to the simulator")
    }

    /// (HTTP status, notifications before the answer, answer).
    pub async fn call_with(
        &mut self,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> (u16, Vec<Value>, Value) {
        self.next_id += 1;
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let resp = self.post(&body, headers).await;
        let status = resp.status().as_u16();
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().unwrap().to_string());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .is_some_and(|c| c.to_str().unwrap().starts_with("text/event-stream"));
        let text = resp.text().await.unwrap();
        if !sse {
            let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
            return (status, Vec::new(), v);
        }
        let events = sse_events(&text);
        assert!(events[0].1.is_empty(), "priming event first: {text}");
        let mut msgs: Vec<Value> = events[1..]
            .iter()
            .map(|(_, d)| serde_json::from_str(d).unwrap())
            .collect();
        let answer = msgs.pop().expect("an answer event");
        (status, msgs, answer)
    }

    pub async fn call(&mut self, method: &str, params: Value) -> (u16, Vec<Value>, Value) {
        self.call_with(method, params, &[]).await
    }

    pub async fn init(&mut self) {
        let (status, _, v) = self
            .call(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
        assert!(self.session.is_some(), "Mcp-Session-Id assigned");
        let resp = self
            .post(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                &[],
            )
            .await;
        assert_eq!(resp.status().as_u16(), 202);
    }

    pub async fn walk(&mut self, kind: Kind, max_pages: usize) -> Walk {
        let (method, list_key, id_key) = kind_wire(kind);
        let mut w = Walk::default();
        let mut cursor: Option<String> = None;
        for _ in 0..max_pages {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let (_, notes, resp) = self.call(method, params).await;
            w.notes.extend(notes);
            if let Some(e) = resp.get("error") {
                w.error = Some(e.clone());
                break;
            }
            let page: Vec<String> = resp["result"][list_key]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|i| i.get(id_key).and_then(Value::as_str).map(String::from))
                .collect();
            w.pages.push(page);
            let next = resp["result"].get("nextCursor").cloned();
            w.cursors.push(next.clone());
            match next {
                Some(Value::String(s)) if !s.is_empty() => cursor = Some(s),
                _ => break,
            }
        }
        w
    }
}
