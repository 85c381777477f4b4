//! `--report FILE`: one JSON object per client listing a tap observed,
//! appended to a file of ours (a regular file, not followed through a link,
//! created private to our user), never past its byte bound: once full,
//! further listings are left out, each counted and the first logged
//! (`ReportLineDropped`).

use super::judge::{missed_view, Clock};
use crate::telemetry::events::DroppedLine;
use crate::verdict::client::Missed;
use mcp_observer::ClientListing;
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The report file's default bound.
pub const DEFAULT_MAX_REPORT_BYTES: u64 = 16 << 20;

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

/// An open report file.
#[derive(Debug)]
pub struct ReportFile {
    inner: Mutex<Inner>,
    max_bytes: u64,
}

#[derive(Debug)]
struct Inner {
    file: File,
    written: u64,
    full: bool,
    /// The last write failed.
    failing: bool,
}

impl ReportFile {
    /// Open (or create, 0600) `path` for appending; what it already holds
    /// counts against `max_bytes`.
    pub fn open(path: &Path, max_bytes: u64) -> Result<ReportFile, ReportError> {
        let opened = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // No link followed, and a FIFO never blocks the open.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path);
        let file = opened.map_err(|source| ReportError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let meta = file.metadata().map_err(|source| ReportError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() {
            return Err(ReportError::NotRegular {
                path: path.to_path_buf(),
            });
        }
        Ok(ReportFile {
            inner: Mutex::new(Inner {
                file,
                written: meta.len(),
                full: false,
                failing: false,
            }),
            max_bytes,
        })
    }

    /// Append `listing` as one line, unless that would pass the bound.
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
        self.append(&line)
    }

    /// Append one whole line within the bound.
    fn append(&self, line: &str) -> Result<(), DroppedLine> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.written.saturating_add(line.len() as u64) > self.max_bytes {
            let first = !inner.full;
            inner.full = true;
            return Err(DroppedLine::Full { first });
        }
        if let Err(error) = inner.file.write_all(line.as_bytes()) {
            let first = !inner.failing;
            inner.failing = true;
            return Err(DroppedLine::WriteFailed { error, first });
        }
        inner.failing = false;
        inner.written += line.len() as u64;
        Ok(())
    }

    /// The file's bound in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
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
            Ok(()) => panic!("written"),
        }
    }

    #[test]
    fn a_full_file_is_said_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let report = ReportFile::open(&dir.path().join("r.jsonl"), 10).expect("open");
        assert!(report.append("0123456\n").is_ok());
        assert_eq!(first(report.append("0123\n")), (ReportDrop::Full, true));
        assert_eq!(first(report.append("0123\n")), (ReportDrop::Full, false));
    }

    #[test]
    fn failed_writes_are_said_once_per_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        let report = ReportFile::open(&path, 1 << 20).expect("open");
        let writable = std::mem::replace(
            &mut report.inner.lock().expect("lock").file,
            File::open(&path).expect("read-only"),
        );
        assert_eq!(first(report.append("a\n")), (ReportDrop::WriteFailed, true));
        assert_eq!(
            first(report.append("a\n")),
            (ReportDrop::WriteFailed, false)
        );
        report.inner.lock().expect("lock").file = writable;
        assert!(report.append("a\n").is_ok());
        let read_only = File::open(&path).expect("read-only");
        report.inner.lock().expect("lock").file = read_only;
        assert_eq!(first(report.append("a\n")), (ReportDrop::WriteFailed, true));
    }
}
