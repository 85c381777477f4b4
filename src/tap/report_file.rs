//! `--report FILE`: one JSON object per client listing a tap observed,
//! appended to a file of ours (a regular file, not followed through a link,
//! created private to our user), never past its byte bound: once full,
//! further listings are left out, each counted and the first logged
//! (`ReportLineDropped`). The observer task makes each line; a thread of
//! the file's own writes it, through a bounded queue (a listing that finds
//! it full is left out and counted, `queue_full`).

use super::client_verdicts::{missed_view, Clock};
use crate::telemetry::events::DroppedLine;
use crate::verdict::client::Missed;
use mcp_observer::ClientListing;
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why the report file cannot be used. Names the file (our own flag's
/// value), never what it holds.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("--report {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--report {path}: not a regular file")]
    NotRegular { path: PathBuf },
}

/// Lines waiting for the writer thread; past it a listing is left out
/// (`queue_full`): a disk slower than the clients does not hold the
/// observer up, nor grow memory.
pub const REPORT_QUEUE_LINES: usize = 1024;

/// An open report file: lines are made on the observer task and written by
/// a thread of its own (a slow disk never blocks a runtime worker).
#[derive(Debug)]
pub struct ReportFile {
    lines: SyncSender<ToWriter>,
    /// What the writer left out since the last [`ReportFile::take_dropped`].
    dropped: Arc<Mutex<Vec<DroppedLine>>>,
    max_bytes: u64,
}

/// What the writer thread is handed.
#[derive(Debug)]
enum ToWriter {
    Line(String),
    /// Say when every line before this one was written.
    Flush(std::sync::mpsc::Sender<()>),
}

/// The file, on the writer thread.
#[derive(Debug)]
struct Writer {
    file: File,
    written: u64,
    max_bytes: u64,
    full: bool,
    /// The last write failed.
    failing: bool,
}

impl ReportFile {
    /// Open (or create, 0600) `path` for appending; what it already holds
    /// counts against `max_bytes`. Starts its writer thread.
    pub fn open(path: &Path, max_bytes: u64) -> Result<ReportFile, ReportError> {
        let opened = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // No link followed, and a FIFO never blocks the open.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path);
        let open_error = |source| ReportError::Open {
            path: path.to_path_buf(),
            source,
        };
        let file = opened.map_err(open_error)?;
        let meta = file.metadata().map_err(open_error)?;
        if !meta.is_file() {
            return Err(ReportError::NotRegular {
                path: path.to_path_buf(),
            });
        }
        let writer = Writer {
            file,
            written: meta.len(),
            max_bytes,
            full: false,
            failing: false,
        };
        let (lines, rx) = sync_channel(REPORT_QUEUE_LINES);
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let notices = dropped.clone();
        std::thread::Builder::new()
            .name("tap-report".to_string())
            .spawn(move || writer.run(rx, &notices))
            .map_err(open_error)?;
        Ok(ReportFile {
            lines,
            dropped,
            max_bytes,
        })
    }

    /// Hand `listing` to the writer as one line; it is left out when the
    /// writer is that far behind (the bound and write failures are the
    /// writer's: [`ReportFile::take_dropped`]).
    pub fn listing(
        &self,
        tap: &str,
        listing: &ClientListing,
        clock: &Clock,
    ) -> Result<(), DroppedLine> {
        let mut line =
            mcp_listing::shown_json::to_string(&Line::of(tap, listing, clock)).map_err(|e| {
                DroppedLine::WriteFailed {
                    error: e.into(),
                    first: true,
                }
            })?;
        line.push('\n');
        self.lines
            .try_send(ToWriter::Line(line))
            .map_err(|_| DroppedLine::QueueFull)
    }

    /// What the writer left out since the last call.
    pub fn take_dropped(&self) -> Vec<DroppedLine> {
        let mut dropped = self.dropped.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *dropped)
    }

    /// Wait (blocking: not on a runtime worker) up to `wait` for every line
    /// handed over so far to be written.
    pub fn flush(&self, wait: Duration) {
        let (done, written) = std::sync::mpsc::channel();
        if self.lines.send(ToWriter::Flush(done)).is_ok() {
            let _ = written.recv_timeout(wait);
        }
    }

    /// The file's bound in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }
}

impl Writer {
    /// Write what comes until every [`ReportFile`] handle is gone.
    fn run(mut self, lines: Receiver<ToWriter>, dropped: &Mutex<Vec<DroppedLine>>) {
        for message in lines {
            match message {
                ToWriter::Line(line) => {
                    if let Err(d) = self.append(&line) {
                        dropped.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                    }
                }
                ToWriter::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }

    /// Append one whole line within the bound.
    fn append(&mut self, line: &str) -> Result<(), DroppedLine> {
        if self.written.saturating_add(line.len() as u64) > self.max_bytes {
            let first = !self.full;
            self.full = true;
            return Err(DroppedLine::Full { first });
        }
        if let Err(error) = self.file.write_all(line.as_bytes()) {
            let first = !self.failing;
            self.failing = true;
            return Err(DroppedLine::WriteFailed { error, first });
        }
        self.failing = false;
        self.written += line.len() as u64;
        Ok(())
    }
}

/// One client listing as the report writes it (docs/clients.md, "Report
/// file").
#[derive(Debug, Serialize)]
struct Line<'a> {
    tap: &'a str,
    client: &'a str,
    route: &'a str,
    version: Option<&'a str>,
    identity_source: &'static str,
    kind: &'static str,
    outcome: &'static str,
    abandon_cause: Option<&'static str>,
    pages: u32,
    items: u64,
    missed: Option<Missed>,
    merged: Option<&'static str>,
    error_code: Option<i64>,
    session: &'a str,
    started_unix_seconds: f64,
    ended_unix_seconds: f64,
}

impl<'a> Line<'a> {
    fn of(tap: &'a str, l: &'a ClientListing, clock: &Clock) -> Line<'a> {
        Line {
            tap,
            client: l.client.label(),
            route: l.route.name(),
            version: l.version.as_deref(),
            identity_source: l.source.label(),
            kind: l.kind.label(),
            outcome: l.outcome.label(),
            abandon_cause: l.abandoned.map(|c| c.label()),
            pages: l.pages,
            items: l.items,
            missed: l.missed.as_ref().map(missed_view),
            merged: l.merged.map(|m| m.label()),
            error_code: l.error_code(),
            session: l.session.as_str(),
            started_unix_seconds: clock.unix(l.started),
            ended_unix_seconds: clock.unix(l.ended),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::metrics::ReportDrop;

    fn first(r: Result<(), DroppedLine>) -> (ReportDrop, bool) {
        match r {
            Err(d @ DroppedLine::Full { first })
            | Err(d @ DroppedLine::WriteFailed { first, .. }) => (d.reason(), first),
            Err(DroppedLine::QueueFull) => (ReportDrop::QueueFull, false),
            Ok(()) => panic!("written"),
        }
    }

    fn writer(path: &Path, max_bytes: u64) -> Writer {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .expect("open");
        Writer {
            file,
            written: 0,
            max_bytes,
            full: false,
            failing: false,
        }
    }

    #[test]
    fn a_full_file_is_said_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut report = writer(&dir.path().join("r.jsonl"), 10);
        assert!(report.append("0123456\n").is_ok());
        assert_eq!(first(report.append("0123\n")), (ReportDrop::Full, true));
        assert_eq!(first(report.append("0123\n")), (ReportDrop::Full, false));
    }

    #[test]
    fn failed_writes_are_said_once_per_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        let mut report = writer(&path, 1 << 20);
        let writable = std::mem::replace(&mut report.file, File::open(&path).expect("read-only"));
        assert_eq!(first(report.append("a\n")), (ReportDrop::WriteFailed, true));
        assert_eq!(
            first(report.append("a\n")),
            (ReportDrop::WriteFailed, false)
        );
        report.file = writable;
        assert!(report.append("a\n").is_ok());
        report.file = File::open(&path).expect("read-only");
        assert_eq!(first(report.append("a\n")), (ReportDrop::WriteFailed, true));
    }

    #[test]
    fn the_writer_thread_writes_in_order_and_says_what_it_left_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        let report = ReportFile::open(&path, 12).expect("open");
        for line in ["one\n", "two\n", "three\n", "four\n"] {
            report
                .lines
                .try_send(ToWriter::Line(line.to_string()))
                .expect("room");
        }
        report.flush(Duration::from_secs(30));
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "one\ntwo\n");
        let dropped: Vec<_> = report
            .take_dropped()
            .iter()
            .map(DroppedLine::reason)
            .collect();
        assert_eq!(dropped, [ReportDrop::Full, ReportDrop::Full]);
        assert!(report.take_dropped().is_empty(), "taken once");
    }
}
