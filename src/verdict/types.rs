//! The verdict's data: levels, reasons, inputs and the change entry.

use super::code::Code;
use crate::poll::GarbageCursorAnswer;
use mcp_listing::report::SessionFailure;
use mcp_listing::{Kind, ListingReport, Outcome, ProtocolVersion};
use serde::Serialize;
use std::time::Duration;

/// How long an event (a silent shrink) keeps its kind `degraded` unless the
/// caller configures otherwise.
pub const DEFAULT_EVENT_WINDOW: Duration = Duration::from_secs(3600);

mcp_listing::labelled_enum! {
    /// A target's or kind's health, ordered from best to worst so `max` is
    /// the worst.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Health as "health" {
        Healthy => "healthy",
        Degraded => "degraded",
        Down => "down",
    }
}

impl Health {
    /// The `mcp_verdict` gauge value.
    pub fn gauge_value(self) -> i64 {
        match self {
            Health::Healthy => 0,
            Health::Degraded => 1,
            Health::Down => 2,
        }
    }
}

/// One thing that is wrong, in words a person reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reason {
    /// Stable code (docs/verdict.md); alerts and scripts may match on it.
    pub code: Code,
    /// The kind it concerns; `None` for the whole target (session failure).
    #[serde(serialize_with = "ser_kind")]
    pub kind: Option<Kind>,
    /// The level this reason alone implies.
    pub level: Health,
    /// A sentence with the numbers and (bounded) names.
    pub message: String,
}

/// The level and every reason, worst first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub level: Health,
    pub reasons: Vec<Reason>,
}

impl Verdict {
    pub fn healthy() -> Verdict {
        Verdict {
            level: Health::Healthy,
            reasons: Vec::new(),
        }
    }

    pub(super) fn from_reasons(mut reasons: Vec<Reason>) -> Verdict {
        // Worst first; then the documented code order; then kind order.
        reasons.sort_by(|a, b| {
            b.level
                .cmp(&a.level)
                .then(a.code.cmp(&b.code))
                .then(a.kind.cmp(&b.kind))
        });
        Verdict {
            level: reasons
                .iter()
                .map(|r| r.level)
                .max()
                .unwrap_or(Health::Healthy),
            reasons,
        }
    }

    /// The reason a person should read first.
    pub fn first_reason(&self) -> Option<&Reason> {
        self.reasons.first()
    }
}

/// The verdict of one target: its own (the worst kind's, with every reason)
/// and one per kind that was polled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetVerdict {
    #[serde(flatten)]
    pub overall: Verdict,
    #[serde(skip)]
    pub kinds: Vec<(Kind, Verdict)>,
}

impl TargetVerdict {
    pub fn kind(&self, kind: Kind) -> Option<&Verdict> {
        self.kinds.iter().find(|(k, _)| *k == kind).map(|(_, v)| v)
    }
}

/// A change of one kind's catalogue between two complete listings: the
/// verdict's event input and the status page's change-log entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub kind: Kind,
    /// When the listing that showed the change started.
    pub at_unix_seconds: f64,
    /// Unique items before and after.
    pub from: u64,
    pub to: u64,
    #[serde(flatten)]
    pub names: NameChanges,
    /// The server sent `list_changed` for this kind during the listing.
    pub announced: bool,
    /// Fewer items, no notice, no error.
    pub silent_shrink: bool,
}

/// Names added and removed by a [`Change`], each list capped
/// ([`super::history::capped_names`]), with their full counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NameChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Full counts, also when the lists above are capped.
    pub added_total: u64,
    pub removed_total: u64,
}

/// Reference items a target lacks: `missing` of `reference`'s listing
/// (`reference_items` long), after the configured name prefix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceGap {
    pub reference: String,
    pub reference_items: u64,
    /// Missing names, possibly capped (see `missing_total`).
    pub missing: Vec<String>,
    /// How many are missing, also when `missing` is capped.
    pub missing_total: u64,
}

/// With `protocols:`, one other-than-usual view of a kind: what the
/// listing at `protocol_version` lacked (`missing`, of the union of every
/// version's complete listing) or that it did not complete (`failed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolGap {
    pub protocol_version: ProtocolVersion,
    /// Unique items listed at this version.
    pub unique_items: u64,
    /// Distinct items listed under any version.
    pub union_items: u64,
    /// Missing names, possibly capped (see `missing_total`).
    pub missing: Vec<String>,
    pub missing_total: u64,
    /// How the listing ended when it did not complete at this version
    /// (aborted by a guard, or an error).
    pub failed: Option<Outcome>,
}

/// Everything the verdict of one kind depends on, filled by the sinks.
#[derive(Debug, Clone)]
pub struct KindInput<'a> {
    pub listing: &'a ListingReport,
    /// `expect:` minimum of unique items, if configured.
    pub expected_min: Option<u64>,
    /// One entry per reference configured for this kind whose listing is known.
    pub reference_gaps: Vec<ReferenceGap>,
    /// The garbage-cursor check's answer, if it ran.
    pub garbage_cursor: Option<GarbageCursorAnswer>,
    /// With `protocols:`: the versions whose catalogue lacks items or whose
    /// listing failed.
    pub protocol_gaps: Vec<ProtocolGap>,
    /// The server advertises this kind (it was not only `forced_kinds`)
    /// and no `expect:` of 0 says an empty catalogue is fine.
    pub empty_is_suspect: bool,
    /// `expect: {page_latency:}`: no answered page should take longer.
    pub page_latency: Option<Duration>,
}

/// Everything the verdict of one target depends on.
#[derive(Debug, Clone)]
pub struct TargetInput<'a> {
    /// Connect or handshake failure, if any.
    pub session_error: Option<SessionFailure>,
    pub kinds: Vec<KindInput<'a>>,
    /// Recent catalogue changes of this target (this poll's included), any
    /// order; only silent shrinks inside the window count.
    pub changes: &'a [Change],
    pub now_unix_seconds: f64,
    /// How long a silent shrink keeps its kind degraded.
    pub event_window: Duration,
    /// The latest serve-mode conformance run, if the target has one.
    pub conformance: Option<&'a super::conformance::ConformanceResult>,
}

fn ser_kind<S: serde::Serializer>(k: &Option<Kind>, s: S) -> Result<S::Ok, S::Error> {
    match k {
        Some(k) => s.serialize_str(k.label()),
        None => s.serialize_none(),
    }
}
