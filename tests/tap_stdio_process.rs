//! `mcp-exporter tap --stdio -- SERVER…` as the process a client starts:
//! a merged client sending several first pages at once gets each its own
//! merged answer and nothing else (issue 39, break 6), and a server that
//! exits ends the tap with its status while the client still holds stdin
//! open (break 7: an MCP host waits for the tap's stdout to end).

use mcp_testkit::exporter_bin;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Bound on waiting for a line or an exit (a hang, not a measurement).
const WAIT: Duration = Duration::from_secs(60);

/// The tap running `server`, with `flags`, its stdin and stdout piped.
fn tap(flags: &[&str], server: &[&str]) -> Child {
    Command::new(exporter_bin())
        .args(["tap", "--stdio"])
        .args(flags)
        .arg("--")
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the tap")
}

/// The tap's stdout, line by line, read on a thread (`None`: its end).
fn lines(child: &mut Child) -> mpsc::Receiver<Option<String>> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            match line {
                Ok(line) => {
                    let _ = tx.send(Some(line));
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    rx
}

fn next(from_tap: &mpsc::Receiver<Option<String>>) -> Option<String> {
    from_tap
        .recv_timeout(WAIT)
        .expect("a line or the end in time")
}

fn send(to_tap: &mut ChildStdin, text: &str) {
    to_tap.write_all(format!("{text}\n").as_bytes()).unwrap();
    to_tap.flush().unwrap();
}

/// The exit status, waited for at most [`WAIT`].
fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(std::time::Instant::now() < deadline, "the tap never exited");
        std::thread::sleep(Duration::from_millis(20));
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desk-app","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const KINDS: [(&str, &str); 3] = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
];

#[test]
fn a_merged_client_sending_first_pages_back_to_back_gets_each_merged() {
    let bin = exporter_bin().to_string_lossy().into_owned();
    let simulator = [
        bin.as_str(),
        "simulate",
        "--transport",
        "stdio",
        "--scenario",
        "healthy",
        "--items",
        "14",
        "--page-size",
        "8",
    ];
    for trial in 0..3 {
        let mut child = tap(&["--merge-pages", "desk-app"], &simulator);
        let from_tap = lines(&mut child);
        let mut to_tap = child.stdin.take().unwrap();
        send(&mut to_tap, INIT);
        assert!(next(&from_tap).is_some_and(|l| l.contains(r#""id":1"#)));
        send(&mut to_tap, INITIALIZED);
        let batch: Vec<String> = KINDS
            .iter()
            .zip(2..)
            .map(|((method, _), id)| {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#)
            })
            .collect();
        send(&mut to_tap, &batch.join("\n"));
        let mut answers = std::collections::BTreeMap::new();
        for _ in 0..KINDS.len() {
            let line = next(&from_tap).expect("an answer, not the end");
            let answer: Value = serde_json::from_str(&line).unwrap();
            let id = answer["id"].as_u64().filter(|id| (2..5).contains(id));
            let id = id.unwrap_or_else(|| panic!("trial {trial}: never asked for: {line}"));
            answers.insert(id, answer);
        }
        for ((_, key), id) in KINDS.iter().zip(2..) {
            let result = &answers[&id]["result"];
            assert_eq!(
                result[key].as_array().map_or(0, Vec::len),
                14,
                "trial {trial}: {key} not merged (page 1 only?): {result}"
            );
            assert!(result.get("nextCursor").is_none(), "{result}");
        }
        drop(to_tap);
        assert_eq!(next(&from_tap), None, "nothing more: {trial}");
        assert_eq!(exit_code(&mut child), Some(0));
    }
}

#[test]
fn a_server_that_exits_ends_the_tap_while_the_client_holds_stdin() {
    let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}"#;
    let script = format!("printf '%s\\n' '{line}'; exit 3");
    for flags in [&[][..], &["--merge-pages", "all"][..]] {
        let mut child = tap(flags, &["/bin/sh", "-c", &script]);
        // Held open, never written to, until the end of the test.
        let to_tap = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut all = String::new();
            let _ = stdout.read_to_string(&mut all);
            let _ = tx.send(all);
        });
        let all = rx
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("{flags:?}: no end of stdout while stdin is open"));
        assert_eq!(all, format!("{line}\n"), "{flags:?}");
        assert_eq!(
            exit_code(&mut child),
            Some(3),
            "{flags:?}: the server's status"
        );
        drop(to_tap);
    }
}
