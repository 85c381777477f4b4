//! What a grade says, and what it is made from: the status of one scenario,
//! its message in the house's words, and how the client's run ended.

use std::time::Duration;

mcp_listing::labelled_enum! {
    /// One scenario's grade; worst last.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Status as "status" {
        /// The scenario does not apply (a protocol the client does not speak).
        NotApplicable => "n/a",
        Pass => "pass",
        /// Acceptable, not what the spec asks (an error where a restart was
        /// asked for, duplicates kept, a cap that cuts a real catalogue).
        Warn => "warn",
        /// A prefix returned as the whole, a loop, a listing never read.
        Fail => "fail",
    }
}

/// One grade: a status and what the client did, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    pub message: String,
    /// The pages after which the client gave up on a listing that never
    /// ends (its page cap), when this scenario shows it.
    pub page_cap: Option<u32>,
}

impl Verdict {
    pub fn new(status: Status, message: impl Into<String>) -> Verdict {
        Verdict {
            status,
            message: message.into(),
            page_cap: None,
        }
    }

    pub fn pass(message: impl Into<String>) -> Verdict {
        Verdict::new(Status::Pass, message)
    }

    pub fn warn(message: impl Into<String>) -> Verdict {
        Verdict::new(Status::Warn, message)
    }

    pub fn fail(message: impl Into<String>) -> Verdict {
        Verdict::new(Status::Fail, message)
    }
}

/// Why the harness stopped a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The scenario's deadline passed.
    Deadline,
    /// More list requests than `--max-requests`.
    TooManyRequests,
    /// More sessions (or server launches) than the harness allows.
    TooManySessions,
}

/// How the client's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed by the harness, with its whole process tree.
    Killed(Stopped),
    /// Not known: an app that launched the harness (serving mode).
    Unknown,
}

impl Exit {
    /// Did the client end in a way its user sees as an error?
    pub fn says_error(self) -> bool {
        matches!(self, Exit::Code(c) if c != 0) || matches!(self, Exit::Signal(_))
    }

    /// `exited 0`, `exited 1`, `died of signal 11`, `was stopped at the deadline`.
    pub fn words(self) -> String {
        match self {
            Exit::Code(c) => format!("exited {c}"),
            Exit::Signal(s) => format!("died of signal {s}"),
            Exit::Killed(Stopped::Deadline) => "was stopped at the deadline".into(),
            Exit::Killed(Stopped::TooManyRequests) => "was stopped for too many requests".into(),
            Exit::Killed(Stopped::TooManySessions) => "was stopped for too many sessions".into(),
            Exit::Unknown => "went on".into(),
        }
    }
}

/// What the harness knows of the client's run besides the wire.
#[derive(Debug, Clone, Copy)]
pub struct ClientEnd {
    pub exit: Exit,
    /// The item count it printed (last line of stdout), if it printed one.
    pub printed: Option<u64>,
    /// From its start to its end (or to the kill).
    pub elapsed: Duration,
    /// When it ended (or was killed).
    pub ended: std::time::Instant,
}
