//! What one refresh of one source produced: plain data, like a walker's
//! `ListingReport`. A refresh that did not complete carries no list; the
//! source's last good list stays in force (`status.rs`).

use super::entry::{shown_text, Entry, SkipList};
use mcp_listing::{ErrorKind, Guard};
use std::fmt;
use std::time::{Duration, SystemTime};

/// Longest detail kept of a failed refresh.
const MAX_DETAIL_CHARS: usize = 500;

/// Why a refresh failed, in the walker's words where the walker's words
/// fit (a registry walk's guards and errors, an HTTP answer's errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefreshFailure {
    /// The registry walk was stopped by a guard (outcome `aborted`).
    Guard(Guard),
    /// A request or an answer failed (outcome `error`): timeout,
    /// transport_error, unauthorized, rate_limited, response_too_large,
    /// malformed_result, invalid_cursor, ...
    Error(ErrorKind),
    /// A file could not be read as a regular file (missing, a FIFO, a
    /// symbolic link, no permission).
    Unreadable,
    /// The list held more targets than the source's `max_targets`.
    TooManyTargets,
    /// What the list would keep passed the source's byte budget
    /// (`budget.rs`).
    OverBudget,
}

impl RefreshFailure {
    /// The `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            RefreshFailure::Guard(g) => g.label(),
            RefreshFailure::Error(e) => e.label(),
            RefreshFailure::Unreadable => "unreadable",
            RefreshFailure::TooManyTargets => "too_many_targets",
            RefreshFailure::OverBudget => "over_budget",
        }
    }
}

impl fmt::Display for RefreshFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How a refresh ended: `complete`, `aborted` or `error`, as a walk ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshOutcome {
    Complete,
    Failed(RefreshFailure),
}

impl RefreshOutcome {
    /// `complete`, `aborted` (a guard stopped a registry walk) or `error`.
    pub fn label(self) -> &'static str {
        match self {
            RefreshOutcome::Complete => "complete",
            RefreshOutcome::Failed(RefreshFailure::Guard(_)) => "aborted",
            RefreshOutcome::Failed(_) => "error",
        }
    }

    /// Every outcome label, for pre-created series.
    pub const LABELS: [&'static str; 3] = ["complete", "aborted", "error"];

    pub fn failure(self) -> Option<RefreshFailure> {
        match self {
            RefreshOutcome::Complete => None,
            RefreshOutcome::Failed(f) => Some(f),
        }
    }
}

/// A registry walk's numbers (the walker's report, summarised).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkStats {
    /// Pages of the final attempt.
    pub pages: u32,
    /// Page requests sent, restarts included.
    pub requests: u32,
    /// Unique entries the walk listed.
    pub items: u64,
    /// Entries listed more than once across pages.
    pub duplicate_items: u64,
    /// Restarts after the registry rejected a cursor.
    pub restarts: u32,
    /// `/v0/servers` answered because `/v0.1/servers` does not exist.
    pub fell_back_to_v0: bool,
}

/// What a refresh listed: the whole list, and the entries it left out.
#[derive(Debug, Clone, Default)]
pub struct SourceList {
    pub entries: Vec<Entry>,
    /// The first few explained, every one counted.
    pub skipped: SkipList,
}

/// One refresh of one source.
#[derive(Debug, Clone)]
pub struct Refresh {
    pub outcome: RefreshOutcome,
    /// Why it failed, for people: bounded, without cursors or secrets.
    pub detail: Option<String>,
    /// Empty unless the refresh completed.
    pub list: SourceList,
    pub started: SystemTime,
    pub duration: Duration,
    /// Registry sources only.
    pub walk: Option<WalkStats>,
}

impl Refresh {
    /// A refresh that failed with `failure` (no list); `detail` is kept
    /// bounded, control characters escaped.
    pub fn failed(failure: RefreshFailure, detail: String, started: SystemTime) -> Refresh {
        Refresh {
            outcome: RefreshOutcome::Failed(failure),
            detail: Some(shown_text(&detail, MAX_DETAIL_CHARS)),
            list: SourceList::default(),
            started,
            duration: started.elapsed().unwrap_or_default(),
            walk: None,
        }
    }

    /// A complete refresh: `entries` is the whole list.
    pub fn complete(entries: Vec<Entry>, skipped: SkipList, started: SystemTime) -> Refresh {
        Refresh {
            outcome: RefreshOutcome::Complete,
            detail: None,
            list: SourceList { entries, skipped },
            started,
            duration: started.elapsed().unwrap_or_default(),
            walk: None,
        }
    }
}
