//! What the tap's data path keeps, measured (RSS from /proc, as the
//! exporter's own budgets are): a 50 MB answer passes without being held,
//! and 10,000 open GET streams whose clients never read cost at most
//! 16 KiB each. One test, alone in its process, so nothing else moves the
//! numbers; it prints them (docs/performance.md, "Tap", quotes them).

use mcp_tap::{TapEvent, TapSettings, Tee};
use mcp_testkit::counting_alloc::{live_bytes, CountingAlloc};
use mcp_testkit::tap::{RawConn, Recorder, RunningTap, Scripted};
use mcp_testkit::{wait_for, Proc};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The budget per idle open GET stream (issue 32).
const IDLE_STREAM_BUDGET: u64 = 16 * 1024;
const STREAMS: usize = 10_000;
/// What a 50 MB answer may raise the process's peak by: hyper's buffers
/// and a copy within `inspect_bytes`, not the answer.
const BIG_ANSWER_PEAK_BUDGET_KIB: u64 = 16 * 1024;

/// An observer that keeps nothing: it takes every event and counts the
/// legacy sessions (one per stream whose `endpoint` passed).
#[derive(Default)]
struct Counting {
    sessions: AtomicUsize,
}

impl Tee for Counting {
    fn offer(&self, event: TapEvent) -> bool {
        if matches!(event, TapEvent::LegacySession { .. }) {
            self.sessions.fetch_add(1, Ordering::Relaxed);
        }
        true
    }
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Raises the descriptor limit to the hard limit; the streams this
/// process can carry: two descriptors each (the client's connection to the
/// tap, the tap's to the upstream), the clients being another process.
fn streams_that_fit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a pointer to a live rlimit.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    let fit = (limit.rlim_cur.saturating_sub(200) / 2) as usize;
    assert!(
        fit >= 1_000,
        "`ulimit -n` of {} is too low for this test",
        limit.rlim_cur
    );
    STREAMS.min(fit)
}

/// Set in the child that holds the client ends of the streams:
/// `ADDRESS COUNT`.
const HOLDER: &str = "TAP_MEMORY_HOLD_STREAMS";

#[test]
fn the_tap_holds_neither_a_large_answer_nor_much_per_idle_stream() {
    if let Ok(spec) = std::env::var(HOLDER) {
        return hold_streams(&spec);
    }
    big_answer_passes_without_being_held();
    idle_streams_are_cheap();
}

fn big_answer_passes_without_being_held() {
    const SIZE: usize = 50 * 1024 * 1024;
    let prefix = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"pad":""#;
    let suffix = br#""}}"#;
    let upstream = Scripted::start(move |_, out| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {SIZE}\r\n\r\n"
        );
        let _ = out.write_all(head.as_bytes());
        let _ = out.write_all(prefix);
        let pad = vec![b'a'; 64 * 1024];
        let mut left = SIZE - prefix.len() - suffix.len();
        while left > 0 {
            let n = left.min(pad.len());
            if out.write_all(&pad[..n]).is_err() {
                return false;
            }
            left -= n;
        }
        let _ = out.write_all(suffix);
        true
    });
    let mut want = Sha256::new();
    want.update(prefix);
    let mut left = SIZE - prefix.len() - suffix.len();
    while left > 0 {
        let n = left.min(1 << 20);
        want.update(vec![b'a'; n]);
        left -= n;
    }
    want.update(suffix);
    let tap = RunningTap::start(TapSettings::new(upstream.url("/mcp").parse().unwrap()));
    let mut client = RawConn::connect(tap.addr);
    // Let the runtime and pools settle before the peak is reset.
    client.send("POST", "/warm", &[], Some(b"{}"));
    drop(client);
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmHWM:");
    let mut client = RawConn::connect(tap.addr);
    client.send("POST", "/mcp", &[], Some(b"{\"id\":1}"));
    let mut got = Sha256::new();
    let (answer, bytes) = client.answer_into(&mut HashSink(&mut got));
    let peak = status_kib("VmHWM:").saturating_sub(before);
    assert_eq!(answer.status, 200);
    assert_eq!(bytes, SIZE as u64);
    assert_eq!(
        got.finalize(),
        want.finalize(),
        "the client got the upstream's bytes"
    );
    eprintln!(
        "a {} MB answer through the tap raised peak RSS by {peak} KiB",
        SIZE >> 20
    );
    assert!(
        peak <= BIG_ANSWER_PEAK_BUDGET_KIB,
        "a 50 MB answer raised peak RSS by {peak} KiB (budget {BIG_ANSWER_PEAK_BUDGET_KIB})"
    );
}

struct HashSink<'a>(&'a mut Sha256);

impl Write for HashSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const GET_SSE: &[u8] = b"GET /sse HTTP/1.1\r\nHost: tap\r\nAccept: text/event-stream\r\n\r\n";

/// The child's part: open the streams, say so on stdout, hold them until
/// stdin closes. Streams are opened a hundred at a time, each batch's
/// first answer bytes read before the next (a burst of thousands of
/// connects would overrun the listen backlog and wait out SYN retries);
/// after that first read no stream is ever read again.
fn hold_streams(spec: &str) {
    let (addr, count) = spec.split_once(' ').expect("ADDRESS COUNT");
    let count: usize = count.parse().expect("a count");
    let mut streams = Vec::with_capacity(count);
    let mut first = [0u8; 512];
    while streams.len() < count {
        let batch = (count - streams.len()).min(100);
        let start = streams.len();
        for _ in 0..batch {
            let mut stream = TcpStream::connect(addr).expect("connect to the tap");
            stream.write_all(GET_SSE).expect("send the GET");
            streams.push(stream);
        }
        for stream in &mut streams[start..] {
            let _ = stream.read(&mut first).expect("the answer's first bytes");
        }
    }
    println!("holding {count} streams");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// A child process of this test holding `count` streams (its own
/// descriptors), until dropped.
struct Holder(std::process::Child);

impl Holder {
    fn start(tap: &RunningTap, tee: &Counting, count: usize) -> Holder {
        let before = tee.sessions.load(Ordering::Relaxed);
        let child = std::process::Command::new(std::env::current_exe().expect("this test"))
            .args([
                "--exact",
                "the_tap_holds_neither_a_large_answer_nor_much_per_idle_stream",
            ])
            .args(["--nocapture", "--test-threads=1"])
            .env(HOLDER, format!("{} {count}", tap.addr))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start the stream holder");
        let holder = Holder(child);
        wait_for(Duration::from_secs(300), "the streams open", || {
            (tee.sessions.load(Ordering::Relaxed) >= before + count).then_some(())
        });
        holder
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

fn idle_streams_are_cheap() {
    let streams = streams_that_fit();
    let simulator = Proc::start(&[
        "simulate",
        "--transport",
        "sse",
        "--scenario",
        "healthy",
        "--max-sessions",
        "30000",
    ]);
    let tee = Arc::new(Counting::default());
    let tap = RunningTap::start_with(
        TapSettings::new(simulator.at("/sse").parse().unwrap()),
        tee.clone(),
        Arc::new(Recorder::default()),
    );
    // Warm up: the runtime's workers, the pool, the allocator's arenas.
    drop(Holder::start(&tap, &tee, 500));
    wait_for(Duration::from_secs(60), "warm streams closed", || {
        (tap.stats.open_streams() == 0).then_some(())
    });
    let (rss_before, heap_before) = (status_kib("VmRSS:"), live_bytes());
    let holder = Holder::start(&tap, &tee, streams);
    assert_eq!(tap.stats.open_streams(), streams as u64);
    let rss = (status_kib("VmRSS:").saturating_sub(rss_before)) * 1024 / streams as u64;
    let heap = (live_bytes() - heap_before).max(0) as u64 / streams as u64;
    eprintln!(
        "{streams} idle open GET streams through the tap: {rss} bytes of RSS each ({heap} bytes of heap)"
    );
    assert!(
        rss <= IDLE_STREAM_BUDGET,
        "{rss} bytes of RSS per idle stream (budget {IDLE_STREAM_BUDGET})"
    );
    drop(holder);
    wait_for(Duration::from_secs(120), "every stream closed", || {
        (tap.stats.open_streams() == 0).then_some(())
    });
}
