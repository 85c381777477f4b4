//! The attack list of docs/security.md, each against a real exporter
//! process and real sockets or children. Counts, never timings.

use mcp_testkit::process::{finish, run_exporter};
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{
    alive, listing, probe_json, sample, scenarios_simulator, ClosedPort, Exporter, Proc,
};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// `/api/targets/NAME` once the target has a failed poll with a stderr tail.
fn target_with_tail(exp: &Exporter, name: &str) -> String {
    exp.wait(LIMIT, &format!("{name} with a stderr tail"), || {
        let (status, body) = exp.get(&format!("/api/targets/{name}"));
        (status == 200 && body.contains("stderr_tail\":\"")).then_some(body)
    })
}

/// Item 1: a stdio child that prints its environment sees no other target's
/// token (minimal environment), and what it prints is scrubbed of every
/// secret the configuration knows.
#[test]
fn stdio_child_gets_minimal_env_and_tails_are_scrubbed() {
    let closed = ClosedPort::new();
    let config = r#"global:
  schedule: {every: 1s}
  jitter: 0s
  stderr_tail_bytes: 64KiB
targets:
  - name: http_target
    http:
      url: CLOSED
      bearer_token_env: HARDEN_TOK
    schedule: {every: 1h}
  - name: printer
    stdio:
      command: sh
      args: ['-c', 'env >&2; echo "echo: $HARDEN_TOK" >&2; exit 1']
      env: {OWN_KEY: own-secret-value-77}
  - name: inheriting
    stdio:
      command: sh
      args: ['-c', 'echo "seen: $HARDEN_TOK" >&2; exit 1']
      inherit_env: true
"#
    .replace("CLOSED", &closed.url("/mcp"));
    let exp = Exporter::start_with(
        &config,
        &[],
        &[
            ("HARDEN_TOK", "tok-of-the-http-target-5150"),
            ("HARDEN_OTHER", "unrelated-exporter-variable"),
        ],
    );
    let body = target_with_tail(&exp, "printer");
    assert!(body.contains("PATH="), "the child's env is shown: {body}");
    assert!(
        !body.contains("HARDEN_TOK=") && !body.contains("HARDEN_OTHER"),
        "the child inherited the exporter's environment: {body}"
    );
    assert!(!body.contains("tok-of-the-http-target-5150"), "{body}");
    assert!(!body.contains("own-secret-value-77"), "{body}");
    assert!(body.contains("OWN_KEY=<redacted>"), "{body}");

    // Opted in: the child has the token, the tail still does not.
    let body = target_with_tail(&exp, "inheriting");
    assert!(body.contains("seen: <redacted>"), "{body}");
    assert!(!body.contains("tok-of-the-http-target-5150"), "{body}");
    assert!(!exp.stderr().contains("tok-of-the-http-target-5150"));
}

/// Item 12: a secret straddling the start of the kept stderr tail leaves no
/// part of itself behind.
#[test]
fn secret_straddling_the_tail_start_is_scrubbed() {
    // The tail keeps 70 bytes: the last 10 of the 30-byte secret and 60 zeros.
    let exp = Exporter::start(
        r#"global:
  schedule: {every: 1s}
  jitter: 0s
  stderr_tail_bytes: 70
targets:
  - name: straddle
    stdio:
      command: sh
      args: ['-c', 'printf "%s%060d" "$API_KEY" 0 >&2; exit 1']
      env: {API_KEY: straddling-secret-Q0123456789}
"#,
    );
    let body = target_with_tail(&exp, "straddle");
    // The tails only: elsewhere (timestamps, durations) digits are noise.
    let tails = stderr_tails(&serde_json::from_str(&body).expect("JSON"));
    assert!(!tails.is_empty(), "{body}");
    for tail in tails {
        assert!(tail.contains("000000"), "{tail}");
        assert!(
            !tail.contains("6789"),
            "part of the secret survived: {tail}"
        );
    }
}

/// Every `stderr_tail` string anywhere in `v`.
fn stderr_tails(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::Object(map) => map
            .iter()
            .flat_map(|(k, child)| match (k.as_str(), child.as_str()) {
                ("stderr_tail", Some(tail)) => vec![tail.to_string()],
                _ => stderr_tails(child),
            })
            .collect(),
        serde_json::Value::Array(items) => items.iter().flat_map(stderr_tails).collect(),
        _ => Vec::new(),
    }
}

/// Item 4: hostile scrape-timeout headers answer a probe, never panic.
#[test]
fn hostile_scrape_timeout_headers_do_not_panic() {
    let closed = ClosedPort::new();
    let exp = Exporter::start(&format!(
        "targets:\n- name: down\n  http:\n    url: {}\n  schedule: {{every: 1h}}\n  limits:\n    connect_timeout: 1s\n",
        closed.url("/mcp")
    ));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    for value in ["inf", "1e30", "NaN", "-3", "garbage", "1e308"] {
        let status = rt.block_on(async {
            client
                .get(exp.at("/probe?target=down"))
                .header("X-Prometheus-Scrape-Timeout-Seconds", value)
                .timeout(LIMIT)
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
        assert_eq!(status.ok(), Some(200), "header {value:?}");
    }
    assert!(!exp.stderr().contains("panicked"), "{}", exp.stderr());
}

/// `check-config` of `text` (which it never polls): exit code and stderr.
fn check_config(text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(&cfg, text).unwrap();
    let out = run_exporter(&["check-config", "--config.file", cfg.to_str().unwrap()]);
    (out.code(), out.stderr)
}

/// Item 5: a config error names the key and the expected type, never the
/// value, and a huge garbage file gives a short message.
#[test]
fn config_errors_never_quote_values_and_are_short() {
    let (code, err) = check_config(
        "targets:\n  - name: a\n    http:\n      url: http://127.0.0.1:9/mcp\n      headers: \"X-Api-Key: key-leak-31337\"\n",
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("headers"), "{err}");
    assert!(err.contains("invalid type: a string, expected"), "{err}");
    assert!(!err.contains("key-leak-31337"), "{err}");

    let garbage = "garbage-without-structure ".repeat(4 << 20 >> 5);
    assert!(garbage.len() > 3 << 20);
    let (code, err) = check_config(&garbage);
    assert_eq!(code, Some(1));
    assert!(err.len() < 8192, "{} bytes of error", err.len());
    assert!(!err.contains("garbage-without-structure garbage"), "{err}");
}

/// Item 14: `check-config | head -2` ends quietly when the reader goes away.
#[test]
fn closed_stdout_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    // Far more output than a pipe holds, so writing must meet the closed end.
    let mut text = String::from("targets:\n");
    for i in 0..3000 {
        text.push_str(&format!(
            "  - {{name: target_{i:05}, http: {{url: \"http://127.0.0.1:9/mcp/{i}\"}}}}\n"
        ));
    }
    std::fs::write(&cfg, text).unwrap();
    let mut child = std::process::Command::new(mcp_testkit::exporter_bin())
        .args(["check-config", "--config.file", cfg.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = finish(child, "check-config with its stdout closed");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_ne!(out.code(), Some(101), "{}", out.stderr);
}

/// One request as a recording server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    /// Lower-case `name: value` lines.
    headers: Vec<String>,
}

/// A plain HTTP/1.1 server on loopback that records every request and
/// answers each with `answer(method, path)` (a full response head and body),
/// closing the connection after it.
struct Recorder {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl Recorder {
    fn start(answer: fn(&str, &str) -> String) -> Recorder {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen_in = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(200) {
                let Ok(mut stream) = stream else { break };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let path = parts.next().unwrap_or_default().to_string();
                let mut headers = Vec::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let line = line.trim_end().to_ascii_lowercase();
                    if let Some(v) = line.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    headers.push(line);
                }
                let mut body = vec![0u8; length.min(1 << 20)];
                let _ = reader.read_exact(&mut body);
                let response = answer(&method, &path);
                seen_in.lock().unwrap().push(Seen {
                    method,
                    path,
                    headers,
                });
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Recorder { port, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn redirect(status: &str, location: &str) -> String {
    format!("HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

fn not_found() -> String {
    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
}

/// Item 9: a module probe does not follow a same-origin redirect out of its
/// allow-list with the module's token, nor a configured target one out of
/// its URL's directory; a 302 turned into GET carries no body headers.
#[test]
fn redirects_never_leave_the_allow_list() {
    let server = Recorder::start(|_, path| {
        if path.starts_with("/m/") || path.starts_with("/c/") {
            redirect("307 Temporary Redirect", "/internal/admin/x")
        } else if path == "/a/mcp" {
            redirect("302 Found", "/a/b/mcp")
        } else {
            not_found()
        }
    });
    let port = server.port;
    let exp = Exporter::start_with(
        &format!(
            r#"targets:
  - name: redirected
    http:
      url: http://127.0.0.1:{port}/a/mcp
      transport: streamable-http
    schedule: {{every: 1h}}
  - name: escaping
    http:
      url: http://127.0.0.1:{port}/c/mcp
      transport: streamable-http
    schedule: {{every: 1h}}
modules:
  m:
    allow: ["http://127.0.0.1:{port}/m/"]
    http:
      bearer_token_env: MODULE_TOK
      transport: streamable-http
"#
        ),
        &[],
        &[("MODULE_TOK", "module-token-4242")],
    );
    let (status, _) = exp.get(&format!(
        "/probe?module=m&target=http://127.0.0.1:{port}/m/mcp"
    ));
    assert_eq!(status, 200);
    let seen = server.seen();
    assert!(seen.iter().any(|s| s.path.starts_with("/m/")), "{seen:?}");
    assert!(
        !seen.iter().any(|s| s.path.starts_with("/internal")),
        "followed the redirect out of the allow-list: {seen:?}"
    );

    let (status, _) = exp.get("/probe?target=redirected");
    assert_eq!(status, 200);
    let seen = server.seen();
    let followed: Vec<&Seen> = seen.iter().filter(|s| s.path == "/a/b/mcp").collect();
    assert!(!followed.is_empty(), "{seen:?}");
    for s in followed {
        assert_eq!(s.method, "GET", "{s:?}");
        assert!(
            !s.headers.iter().any(|h| h.starts_with("content-type:")),
            "a GET after 302 carries body headers: {s:?}"
        );
    }

    let (status, body) = exp.get("/probe?target=escaping");
    assert_eq!(status, 200);
    assert!(body.contains("error=\"url_not_allowed\""), "{body}");
    let seen = server.seen();
    assert!(seen.iter().any(|s| s.path.starts_with("/c/")), "{seen:?}");
    assert!(
        !seen.iter().any(|s| s.path.starts_with("/internal")),
        "{seen:?}"
    );
}

/// Item 10: `http://127.0.0.*/m/` lets no other port and no look-alike host
/// through.
#[test]
fn wildcard_allow_patterns_match_parts() {
    let server = Recorder::start(|_, _| not_found());
    let exp = Exporter::start(
        "modules:\n  m:\n    allow: [\"http://127.0.0.*/m/\"]\n    http:\n      transport: streamable-http\n",
    );
    let probe = |target: &str| exp.get(&format!("/probe?module=m&target={target}")).0;
    assert_eq!(
        probe(&format!("http://127.0.0.1:{}/m/mcp", server.port)),
        403
    );
    assert_eq!(probe("http://127.0.0.1.evil.example/m/mcp"), 403);
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

/// Item 7: one huge SSE `data:` line, sent in 16 KiB writes with no newline
/// before the cap, ends as `response_too_large` at the cap. (A parser that
/// re-scanned the buffer per chunk took 845 s of CPU here for 24 MiB.)
#[test]
fn huge_sse_line_hits_the_byte_cap() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sse_drip_server.py");
    let server = Proc::start_argv(
        "sse_drip_server.py",
        &["python3".into(), script.into(), "25165824".into()],
        &[],
    );
    let (_, report) = probe_json(&["--url", &server.at("/mcp"), "--kind", "tools"]);
    let tools = listing(&report, "tools");
    assert_eq!(tools["reason"], "response_too_large", "{tools}");
}

/// A stdio MCP server (Python) that answers `initialize` and, during
/// `tools/list`, first sends `flood` notifications with a long method name.
const FLOOD_SERVER: &str = r#"
import json, sys
flood = int(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "flood", "version": "1"}}
    elif msg["method"] == "tools/list":
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/flood/" + "x" * 400}) + "\n"
        out = sys.stdout
        for _ in range(flood):
            out.write(note)
        result = {"tools": [{"name": "t1", "inputSchema": {"type": "object"}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Item 8: half a million notifications during one page keep no memory:
/// the exporter's peak RSS stays far below what keeping them would take
/// (500,000 × ~420 bytes ≈ 200 MiB).
#[test]
fn notification_flood_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("flood.py");
    std::fs::write(&script, FLOOD_SERVER).unwrap();
    let exp = Exporter::start(
        &format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  limits:\n    page_timeout: 5m\n    timeout: 5m\ntargets:\n  - name: flood\n    stdio:\n      command: python3\n      args: [{:?}, \"500000\"]\n    kinds: [tools]\n",
            script.display().to_string()
        ),
    );
    let body = exp.wait(Duration::from_secs(300), "a complete flood listing", || {
        let (_, body) = exp.get("/api/targets/flood");
        body.contains("\"outcome\":\"complete\"").then_some(body)
    });
    assert!(body.contains("\"unique_items\":1"), "{body}");
    let peak_mib = peak_rss_kib(exp.pid()) / 1024;
    assert!(peak_mib < 100, "peak RSS {peak_mib} MiB");
}

/// Live processes whose command line holds `marker`.
fn pids_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// An exporter polling one stdio "server" that is the shell script
/// `script` (in single quotes: it must not contain one), every second,
/// with short timeouts.
fn shell_server(name: &str, script: &str) -> Exporter {
    Exporter::start(&format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  backoff_max: 1s\n  limits:\n    page_timeout: 1s\n    connect_timeout: 1s\n    timeout: 2s\ntargets:\n  - name: {name}\n    stdio:\n      command: sh\n      args: ['-c', '{script}']\n    kinds: [tools]\n"
    ))
}

/// SIGKILL to every process whose command line holds `marker`.
fn kill_marked(marker: &str) {
    for pid in pids_with(marker) {
        // SAFETY: kill(2) takes no pointers; the pids carry this test's marker.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
}

/// Item 6: a server whose grandchild escapes with `setsid` and keeps our
/// pipes open leaks neither processes nor fds over repeated polls.
#[test]
fn setsid_grandchildren_are_killed_and_pipes_closed() {
    let marker = format!("31{}", std::process::id());
    let exp = shell_server("escaper", &format!("setsid sleep {marker} & exit 1"));
    exp.wait(LIMIT, "3 polls", || {
        (exp.polls("escaper") >= 3).then_some(())
    });
    let fds_early = open_fds(exp.pid());
    let early = exp.polls("escaper");
    exp.wait(LIMIT, "10 more polls", || {
        (exp.polls("escaper") >= early + 10).then_some(())
    });
    let fds_late = open_fds(exp.pid());
    // At most the grandchild of a poll running right now.
    let alive = pids_with(&marker).len();
    assert!(alive <= 1, "{alive} escaped grandchildren alive");
    assert!(
        fds_late <= fds_early + 4,
        "fds grew from {fds_early} to {fds_late} over 10 polls"
    );
}

/// Item 6 under a spawn storm: a server that starts several `setsid`
/// grandchildren and exits at once is closed while they are still being
/// forked and exec'd, so a scan can meet them half-started. (The 1-hour
/// soak saw 2 escapes in about 900 closes with a single scan; that rate is
/// too low to reproduce here on demand, so this test guards the storm and
/// the rescans, not the exact interleaving.)
#[test]
fn setsid_grandchildren_mid_exec_are_killed_too() {
    const PER_POLL: usize = 8;
    let marker = format!("32{}", std::process::id());
    let exp = shell_server(
        "storm",
        &format!("for i in 1 2 3 4 5 6 7 8; do setsid sh -c \"sleep {marker}; :\" & done; exit 1"),
    );
    exp.wait(LIMIT, "20 polls", || {
        (exp.polls("storm") >= 20).then_some(())
    });
    // At most the grandchildren of a poll running right now (each is a
    // shell and its sleep).
    let alive = pids_with(&marker).len();
    drop(exp);
    kill_marked(&format!("sleep {marker}"));
    assert!(
        alive <= 2 * PER_POLL,
        "{alive} escaped processes alive after 20 polls of {PER_POLL} grandchildren each"
    );
}

/// `mcp_exporter_probes_refused_total{reason}` from `/metrics`.
fn probes_refused(exp: &Exporter, reason: &str) -> f64 {
    sample(
        &exp.metrics(),
        "mcp_exporter_probes_refused_total",
        &[("reason", reason)],
    )
    .unwrap_or(0.0)
}

/// Item 2: 40 concurrent `/probe` requests against a hanging server, with
/// `concurrency: 2`, take only `/probe`'s own slots: the excess is refused
/// with 503 (nothing queues past `--probe.queue`, and a queued probe gives
/// up at its own deadline), and a healthy scheduled target keeps being
/// polled while the flood goes on. (With probes on the scheduler's two
/// slots the healthy target got no poll at all.)
#[test]
fn probe_flood_never_starves_scheduled_polls() {
    const FLOOD: usize = 40;
    const PROBE_SLOTS: usize = 2;
    const PROBE_QUEUE: usize = 4;
    let (sim, _scenarios) = scenarios_simulator(
        "  - name: ok\n    scenario: healthy\n  - name: stuck\n    scenario: hang\n    page: 1\n    kinds: tools\n",
    );
    let base = &sim.url;
    let exp = Exporter::start_with(
        &format!(
            "global:\n  concurrency: 2\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - name: ok\n    http:\n      url: {base}/mcp/ok\n      transport: streamable-http\nmodules:\n  m:\n    allow: [\"{base}/mcp/\"]\n    http:\n      transport: streamable-http\n"
        ),
        &[
            "--probe.concurrency",
            &PROBE_SLOTS.to_string(),
            "--probe.queue",
            &PROBE_QUEUE.to_string(),
        ],
        &[],
    );
    exp.wait(LIMIT, "a first poll of ok", || {
        (exp.polls("ok") >= 1).then_some(())
    });

    let url = exp.at(&format!(
        "/probe?module=m&target={base}/mcp/stuck&kind=tools"
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let probe = |client: reqwest::Client, url: String| async move {
        client
            .get(url)
            .header("X-Prometheus-Scrape-Timeout-Seconds", "5")
            .timeout(LIMIT)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    };

    // One wave, all at once: the slots and the queue take six, the rest is
    // refused; queued probes end at their own deadline.
    let statuses: Vec<u16> = rt.block_on(async {
        let wave: Vec<_> = (0..FLOOD)
            .map(|_| tokio::spawn(probe(client.clone(), url.clone())))
            .collect();
        let mut out = Vec::new();
        for h in wave {
            out.push(h.await.unwrap_or(0));
        }
        out
    });
    let ok = statuses.iter().filter(|&&s| s == 200).count();
    let busy = statuses.iter().filter(|&&s| s == 503).count();
    assert_eq!(ok + busy, FLOOD, "{statuses:?}");
    assert!(
        (1..=PROBE_SLOTS + PROBE_QUEUE).contains(&ok),
        "{statuses:?}"
    );
    assert!(busy >= FLOOD - PROBE_SLOTS - PROBE_QUEUE, "{statuses:?}");
    let refused = probes_refused(&exp, "queue_full") + probes_refused(&exp, "deadline");
    assert_eq!(refused as usize, busy);

    // Keep 40 clients flooding while the healthy target is polled on.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood: Vec<_> = (0..FLOOD)
        .map(|_| {
            let (client, url, stop) = (client.clone(), url.clone(), stop.clone());
            rt.spawn(async move {
                let mut sent = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if probe(client.clone(), url.clone()).await == 503 {
                        // Refused at once: don't spin the CPU the polls need.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    sent += 1;
                }
                sent
            })
        })
        .collect();
    let before = exp.polls("ok");
    exp.wait(LIMIT, "5 polls of ok during the flood", || {
        (exp.polls("ok") >= before + 5).then_some(())
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent: u64 = rt.block_on(async {
        let mut n = 0;
        for h in flood {
            n += h.await.unwrap_or(0);
        }
        n
    });
    assert!(sent >= FLOOD as u64, "the flood sent {sent} probes");
    let (_, body) = exp.get("/api/targets/ok");
    assert!(body.contains("\"outcome\":\"complete\""), "{body}");
    assert!(!exp.stderr().contains("panicked"), "{}", exp.stderr());
}

/// Every file under `dir`, read as text (lossy), with its path.
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                out.push((p, text));
            }
        }
    }
    out
}

/// Item 11: a server that echoes our `Authorization` header into tool
/// names, descriptions, server info and error messages gets the token
/// nowhere: not on the status pages, `/api/targets`, `/metrics`, `/probe`,
/// the baseline files, nor `probe --json`. (Before, the names carried
/// `Bearer <token>` to all of them.)
#[test]
fn server_echoed_secrets_are_scrubbed_everywhere() {
    const CANARY: &str = "canary-token-7c1f9e";
    let sim = http_scenario(
        "healthy",
        &[
            "--items",
            "3",
            "--page-size",
            "2",
            "--echo-header",
            "Authorization",
        ],
    );
    let url = sim.at("/mcp");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{CANARY}\n")).unwrap();
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  state_dir: {}\ntargets:\n  - name: echo\n    http:\n      url: {url}\n      transport: streamable-http\n      bearer_token_file: {}\n",
        state.display(),
        token_file.display()
    ));
    let api = exp.wait(LIMIT, "a complete poll of echo", || {
        let (_, body) = exp.get("/api/targets/echo");
        body.contains("\"outcome\":\"complete\"").then_some(body)
    });
    // The server did echo: what it echoed is there, scrubbed.
    assert!(api.contains("[echo: Bearer <redacted>]"), "{api}");

    let mut seen = vec![("/api/targets/echo".to_string(), api)];
    for path in [
        "/api/targets",
        "/targets/echo",
        "/",
        "/metrics",
        "/probe?target=echo",
        "/probe?target=echo&debug=true",
    ] {
        let (status, body) = exp.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        seen.push((path.to_string(), body));
    }
    let (_, metrics) = &seen.iter().find(|(p, _)| p == "/metrics").unwrap();
    assert!(
        metrics.contains("<redacted>"),
        "server info label: {metrics}"
    );

    let files = files_under(&state);
    assert!(
        files.iter().any(|(_, text)| text.contains("<redacted>")),
        "no baseline holds the scrubbed names: {files:?}"
    );
    for (path, text) in files {
        seen.push((path.display().to_string(), text));
    }

    let out = run_exporter(&[
        "probe",
        "--json",
        "--url",
        &url,
        "--transport",
        "streamable-http",
        "--bearer-token-file",
        token_file.to_str().unwrap(),
    ]);
    let json = out.stdout;
    assert!(json.contains("Bearer <redacted>"), "{json}");
    seen.push(("probe --json".to_string(), json));
    seen.push(("exporter stderr".to_string(), exp.stderr()));

    for (place, text) in &seen {
        assert!(!text.contains(CANARY), "{place} shows the token:\n{text}");
    }
}
