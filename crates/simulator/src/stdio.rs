//! stdio transport: newline-delimited JSON on stdin/stdout. Requests are
//! answered in arrival order of processing; slow answers do not hold up
//! later ones, and a crash exits the process.

use super::behaviour::scenarios;
use super::config::ChangeEvery;
use super::engine::{SessionState, VirtualServer};
use super::reply::{error, list_changed, Body, Reply, PARSE_ERROR};
use super::subscriptions;
use super::wire::{self, Step};
use mcp_listing::Kind;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// Longest line read from stdin; longer ones are discarded unread.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Exit status when a crash scenario kills the process.
pub const CRASH_EXIT: u8 = 3;

pub async fn run(server: Arc<VirtualServer>) -> ExitCode {
    // Plain threads for stdin/stdout: blocking std I/O keeps the crate's
    // tokio feature set as it is, and a drip can sleep between writes.
    let (out_tx, out_rx) = mpsc::channel::<Vec<Step>>(256);
    let writer = spawn_writer(out_rx);
    let mut lines = spawn_reader();

    let session = Arc::new(Mutex::new(SessionState::default()));
    let push = spawn_change_announcer(server.clone(), session.clone(), out_tx.clone());
    let mut pending = JoinSet::new();
    let mut listens = Listens::new();
    while let Some(line) = lines.recv().await {
        while pending.try_join_next().is_some() {}
        listens.retain(|_, (task, _)| !task.is_finished());
        let Some(reply) = answer(&server, &line, &session, &mut listens, &out_tx) else {
            continue;
        };
        if write(reply, &out_tx, &mut pending).await.is_err() {
            break;
        }
    }
    // stdin closed: finish what was asked (hangs queue nothing), then go.
    if let Some(push) = push {
        push.abort();
    }
    for (task, _) in listens.into_values() {
        task.abort();
    }
    while pending.join_next().await.is_some() {}
    drop(out_tx);
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    ExitCode::SUCCESS
}

/// The thread that writes to stdout, step by step; a crash step exits.
fn spawn_writer(mut steps: mpsc::Receiver<Vec<Step>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        while let Some(steps) = steps.blocking_recv() {
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
    })
}

/// The thread that reads stdin: its lines, until EOF or a read error.
fn spawn_reader() -> mpsc::Receiver<Vec<u8>> {
    let (lines, rx) = mpsc::channel::<Vec<u8>>(64);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut stdin, &mut buf) {
                Ok(true) => {
                    if lines.blocking_send(std::mem::take(&mut buf)).is_err() {
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
    rx
}

/// The reply to one stdin line; `None` when there is nothing to write now
/// (a blank line, or a subscription whose messages its own task writes).
fn answer(
    server: &Arc<VirtualServer>,
    line: &[u8],
    session: &Mutex<SessionState>,
    listens: &mut Listens,
    out: &mpsc::Sender<Vec<Step>>,
) -> Option<Reply> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(msg) if server.cfg.modern && is_listen_message(&msg) => {
            listen(server, &msg, listens, out)
        }
        Ok(msg) => {
            // Handling is synchronous and quick; only the writing waits.
            let mut state = session.lock().unwrap_or_else(|e| e.into_inner());
            Some(server.handle(&msg, &mut state))
        }
        Err(_) => Some(Reply::json(error(&Value::Null, PARSE_ERROR, "Parse error"))),
    }
}

/// Queue a reply's writes: in order when it is due now, from a task when it
/// is late, so a slow answer does not hold up later ones. `Err` when the
/// writer is gone.
async fn write(
    reply: Reply,
    out: &mpsc::Sender<Vec<Step>>,
    pending: &mut JoinSet<()>,
) -> Result<(), mpsc::error::SendError<Vec<Step>>> {
    if reply.delay.is_zero() {
        let steps = stdio_steps(reply);
        if !steps.is_empty() {
            out.send(steps).await?;
        }
        return Ok(());
    }
    let out = out.clone();
    pending.spawn(async move {
        tokio::time::sleep(reply.delay).await;
        let _ = out.send(stdio_steps(reply)).await;
    });
    Ok(())
}

/// Open subscriptions/listen streams kept per stdio process.
const MAX_LISTENS: usize = 64;

/// The open subscriptions by request id: the task writing each one's
/// messages, and its completion result (written when it is cancelled).
type Listens = HashMap<String, (tokio::task::JoinHandle<()>, Value)>;

fn is_listen_message(msg: &Value) -> bool {
    msg.get("method").and_then(Value::as_str) == Some(subscriptions::METHOD)
        || subscriptions::cancelled_request(msg).is_some()
}

/// Open a subscription (its messages go to the writer from a task) or
/// cancel one (its completion result is written). `Some` is an answer to
/// write now; `None` means nothing to write.
fn listen(
    server: &Arc<VirtualServer>,
    msg: &Value,
    listens: &mut Listens,
    out: &mpsc::Sender<Vec<Step>>,
) -> Option<Reply> {
    if let Some(request) = subscriptions::cancelled_request(msg) {
        let (task, completion) = listens.remove(&request.to_string())?;
        task.abort();
        return Some(Reply::json(completion));
    }
    let id = msg.get("id")?.clone();
    let params = msg.get("params");
    if let Err(reply) = VirtualServer::check_modern_meta(&id, params) {
        return Some(reply);
    }
    if listens.len() >= MAX_LISTENS {
        return Some(Reply::json(error(
            &id,
            -32603,
            "too many open subscriptions",
        )));
    }
    let mut sub = subscriptions::Subscription::open(server.clone(), id.clone(), params);
    let completion = sub.completion();
    let out = out.clone();
    let task = tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let steps = match m {
                subscriptions::Message::Json(v) => vec![Step::Chunk(wire::line(&v))],
                // A dying stream on stdio is a dying process.
                subscriptions::Message::Die => vec![Step::Fail],
            };
            if out.send(steps).await.is_err() {
                return;
            }
        }
    });
    listens.insert(id.to_string(), (task, completion));
    None
}

/// With `--notify` and time-driven changes (`--after-seconds`), tell the
/// client unprompted when the catalogue changes, as a server that pushes
/// list_changed would: clients that keep the session open (watch mode)
/// hear about it between their own requests.
fn spawn_change_announcer(
    server: Arc<VirtualServer>,
    session: Arc<Mutex<SessionState>>,
    out: mpsc::Sender<Vec<Step>>,
) -> Option<tokio::task::JoinHandle<()>> {
    let cfg = &server.cfg;
    let changes = scenarios::of(cfg.scenario).changes();
    let ChangeEvery::Duration(period) = cfg.change.every else {
        return None;
    };
    if !changes || !cfg.change.notify || cfg.modern {
        return None;
    }
    Some(tokio::spawn(async move {
        loop {
            let elapsed = server.started.elapsed().as_millis();
            let p = period.as_millis().max(1);
            let next = Duration::from_millis((p - elapsed % p) as u64 + 5);
            tokio::time::sleep(next).await;
            let mut lines = Vec::new();
            {
                let mut state = session.lock().unwrap_or_else(|e| e.into_inner());
                for kind in Kind::ALL {
                    if !server.cfg.faulty(kind) {
                        continue;
                    }
                    let epoch = server.epoch(kind);
                    if state.notified[kind] < epoch {
                        state.notified[kind] = epoch;
                        let mut line = list_changed(kind).to_string().into_bytes();
                        line.push(b'\n');
                        lines.push(Step::Chunk(line.into()));
                    }
                }
            }
            if !lines.is_empty() && out.send(lines).await.is_err() {
                return;
            }
        }
    }))
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
