//! stdio transport: newline-delimited JSON on stdin/stdout. Requests are
//! answered in arrival order of processing; slow answers do not hold up
//! later ones, and a crash exits the process.

use super::engine::{error, Body, Reply, SessionState, VirtualServer, PARSE_ERROR};
use super::wire::{self, Step};
use serde_json::Value;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Longest line read from stdin; longer ones are discarded unread.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Exit status when a crash scenario kills the process.
pub const CRASH_EXIT: u8 = 3;

pub async fn run(server: Arc<VirtualServer>) -> ExitCode {
    // Plain threads for stdin/stdout: blocking std I/O keeps the crate's
    // tokio feature set as it is, and a drip can sleep between writes.
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<Step>>(256);
    let writer = std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        while let Some(steps) = out_rx.blocking_recv() {
            for step in steps {
                match step {
                    Step::Chunk(b) => {
                        if out.write_all(&b).and_then(|()| out.flush()).is_err() {
                            return;
                        }
                    }
                    Step::Flush | Step::Hang => {}
                    Step::Sleep(d) => std::thread::sleep(d),
                    Step::Fail => {
                        let _ = out.flush();
                        eprintln!("simulate: crash scenario: exiting");
                        std::process::exit(i32::from(CRASH_EXIT));
                    }
                }
            }
        }
    });
    let (in_tx, mut in_rx) = mpsc::channel::<Vec<u8>>(64);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut stdin, &mut buf) {
                Ok(true) => {
                    if in_tx.blocking_send(std::mem::take(&mut buf)).is_err() {
                        return;
                    }
                }
                Ok(false) => return,
                Err(e) => {
                    eprintln!("simulate: reading stdin: {e}");
                    return;
                }
            }
        }
    });

    let session = Arc::new(Mutex::new(SessionState::default()));
    let mut pending = tokio::task::JoinSet::new();
    while let Some(line) = in_rx.recv().await {
        while pending.try_join_next().is_some() {}
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(text) {
            Ok(msg) => {
                // Handling is synchronous and quick; only the writing waits.
                let mut state = session.lock().unwrap_or_else(|e| e.into_inner());
                server.handle(&msg, &mut state)
            }
            Err(_) => Reply::json(error(&Value::Null, PARSE_ERROR, "Parse error")),
        };
        if reply.delay.is_zero() {
            // In order, straight to the writer.
            let steps = stdio_steps(reply);
            if !steps.is_empty() && out_tx.send(steps).await.is_err() {
                break;
            }
            continue;
        }
        // Delayed answers must not hold up later ones.
        let tx = out_tx.clone();
        pending.spawn(async move {
            tokio::time::sleep(reply.delay).await;
            let _ = tx.send(stdio_steps(reply)).await;
        });
    }
    // stdin closed: finish what was asked (hangs queue nothing), then go.
    while pending.join_next().await.is_some() {}
    drop(out_tx);
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    ExitCode::SUCCESS
}

fn stdio_steps(reply: Reply) -> Vec<Step> {
    let mut steps: Vec<Step> = reply
        .notifications
        .iter()
        .map(|n| Step::Chunk(wire::line(n)))
        .collect();
    match reply.body {
        Body::None => {}
        Body::Json(v) => steps.push(Step::Chunk(wire::line(&v))),
        Body::Raw(b) => {
            let mut v = b.to_vec();
            v.push(b'\n');
            steps.push(Step::Chunk(v.into()));
        }
        Body::Drip {
            bytes,
            chunk,
            every,
        } => {
            let mut with_newline = bytes.to_vec();
            with_newline.push(b'\n');
            for (i, part) in with_newline.chunks(chunk).enumerate() {
                if i > 0 {
                    steps.push(Step::Sleep(every));
                }
                steps.push(Step::Chunk(bytes::Bytes::copy_from_slice(part)));
            }
        }
        // Nothing is ever written; the writer is not blocked either.
        Body::Hang => {}
        Body::Crash => steps.push(Step::Fail),
    }
    steps
}

/// Read one line into `buf` (without the newline). `Ok(false)` at EOF.
/// Lines over [`MAX_LINE`] are skipped whole.
fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut too_long = false;
    loop {
        let available = r.fill_buf()?;
        if available.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if !too_long {
                    buf.extend_from_slice(&available[..i]);
                }
                (i + 1, true)
            }
            None => {
                if !too_long {
                    buf.extend_from_slice(available);
                }
                (available.len(), false)
            }
        };
        r.consume(used);
        if buf.len() > MAX_LINE {
            too_long = true;
            buf.clear();
        }
        if done {
            if too_long {
                eprintln!("simulate: skipped a stdin line over {MAX_LINE} bytes");
                buf.clear();
            }
            return Ok(true);
        }
    }
}
