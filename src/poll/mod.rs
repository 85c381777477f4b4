//! One poll of one target, and what it produced. Imports only `mcp`,
//! `listing` and `config`; every caller (scheduler, `/probe`, the `probe`
//! command) polls through here.
//!
//! - `target.rs`: the target polled, and the one builder (config or flags)
//! - `pager.rs`: the walker's pager over a session; the one wire → walker
//!   error mapping
//! - `run.rs`: the poll itself (and watch-mode re-lists)
//! - `scrub.rs`: every known secret out of every server-supplied string a
//!   report keeps (one place, before any sink)
//! - `protocols.rs`: `poll_configured`, and `protocols:` — one session per
//!   version, catalogues compared (`catalogues.rs`: what it found)
//! - `garbage_cursor.rs`: the invalid-cursor check
//! - `conformance.rs`: `check`'s two listings and rules over one session
//! - `poll_report.rs`: `PollReport` and its parts; `poll_report_text.rs`: the report
//!   as text for people (`probe`, `/probe?debug=true`); `ids.rs`: typed trace ids;
//!   `unix_time.rs`: the one Unix-seconds conversion

pub mod catalogues;
pub mod conformance;
pub mod garbage_cursor;
pub mod ids;
pub mod pager;
pub mod poll_report;
pub mod poll_report_text;
pub mod protocols;
pub mod run;
pub mod scrub;
pub mod target;
pub mod unix_time;

pub use catalogues::{ProtocolCatalogue, ProtocolKind};
pub use garbage_cursor::{GarbageCursorAnswer, GarbageCursorCheck};
pub use ids::{PollTrace, SpanId, TraceId};
/// The kinds a poll lists (the walker's), for callers that name one.
pub use mcp_listing::Kind;
pub use poll_report::{HandshakeRecord, PollReport, RelistReport, ServerInfo, SessionFailure};
pub use protocols::poll_configured;
pub use run::{poll, poll_open, relist, ConfiguredPoll, HardDeadline, OpenSession, PollContext};
pub use target::{PollTarget, TargetBuilder, TargetError};
pub use unix_time::{unix_now, unix_seconds};
