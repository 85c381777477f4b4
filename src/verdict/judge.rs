//! Judging: each kind from its listing, expectations, references and the
//! events in the window; the target from its kinds.

use super::code::Code;
use super::reasons;
use super::types::{Change, KindInput, Reason, TargetInput, TargetVerdict, Verdict};
use crate::poll::GarbageCursorAnswer;
use mcp_listing::report::RestartReason;
use mcp_listing::{Kind, Outcome};

/// The verdict: per kind from its reasons, the target's from every kind.
pub fn judge(input: &TargetInput<'_>) -> TargetVerdict {
    let kinds = input
        .kinds
        .iter()
        .map(|k| {
            (
                k.listing.kind,
                Verdict::from_reasons(kind_reasons(input, k)),
            )
        })
        .collect();
    let mut v = combine(kinds);
    if v.overall.reasons.is_empty() {
        if let Some(e) = &input.session_error {
            v.overall = Verdict::from_reasons(vec![reasons::session_failed(None, e)]);
        }
    }
    v
}

/// The target's verdict from its kinds' verdicts: the worst level, every
/// reason, the session failure (shared by every kind) said once.
pub fn combine(kinds: Vec<(Kind, Verdict)>) -> TargetVerdict {
    let mut all = Vec::new();
    let mut session_reason_seen = false;
    for (_, v) in &kinds {
        for r in &v.reasons {
            if r.code == Code::SessionFailed {
                if !session_reason_seen {
                    session_reason_seen = true;
                    all.push(Reason {
                        kind: None,
                        ..r.clone()
                    });
                }
            } else {
                all.push(r.clone());
            }
        }
    }
    TargetVerdict {
        overall: Verdict::from_reasons(all),
        kinds,
    }
}

impl TargetVerdict {
    /// This verdict with `newer`'s kinds replacing its own of the same kind
    /// (a watch re-list judges only the kinds it re-listed).
    pub fn updated_with(&self, newer: TargetVerdict) -> TargetVerdict {
        let mut kinds = self.kinds.clone();
        for (kind, v) in newer.kinds {
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some(slot) => slot.1 = v,
                None => kinds.push((kind, v)),
            }
        }
        kinds.sort_by_key(|(k, _)| *k);
        combine(kinds)
    }

    /// This verdict with its `conformance_failed` reasons replaced by those
    /// of `result` (a conformance run finished, or was forgotten, between
    /// polls): every other reason stays as the last poll judged it.
    pub fn with_conformance(
        &self,
        result: Option<&super::conformance::ConformanceResult>,
        now_unix_seconds: f64,
    ) -> TargetVerdict {
        let kinds =
            self.kinds
                .iter()
                .map(|(kind, v)| {
                    let mut reasons: Vec<Reason> = v
                        .reasons
                        .iter()
                        .filter(|r| r.code != Code::ConformanceFailed)
                        .cloned()
                        .collect();
                    reasons.extend(result.and_then(|c| {
                        super::conformance_reason::reason(c, *kind, now_unix_seconds)
                    }));
                    (*kind, Verdict::from_reasons(reasons))
                })
                .collect();
        combine(kinds)
    }
}

fn kind_reasons(input: &TargetInput<'_>, k: &KindInput<'_>) -> Vec<Reason> {
    let l = k.listing;
    let kind = l.kind;
    let mut out = Vec::new();
    match l.outcome {
        Outcome::Unsupported => return out,
        Outcome::Complete => {}
        Outcome::Aborted(guard) => out.push(reasons::aborted(kind, guard, l)),
        Outcome::Error(error) => match &input.session_error {
            Some(e) => out.push(reasons::session_failed(Some(kind), e)),
            None => out.push(reasons::failed(kind, error, l)),
        },
    }
    // States: they hold for the listing just made. Counts of an incomplete
    // walk say nothing about the catalogue, so only complete ones are judged.
    if l.outcome == Outcome::Complete {
        complete_listing_reasons(k, &mut out);
    }
    // The other protocol versions: judged whatever the primary listing did.
    for gap in &k.protocol_gaps {
        if let Some(outcome) = gap.failed {
            out.push(reasons::protocol_listing_failed(kind, gap, outcome));
        } else if gap.missing_total > 0 {
            out.push(reasons::protocol_catalogue_differs(kind, gap));
        }
    }
    if l.invalid_items > 0 {
        out.push(reasons::invalid_items(kind, l.invalid_items));
    }
    let restarts = l.restarts_for(RestartReason::InvalidCursor);
    if restarts > 0 && l.outcome == Outcome::Complete {
        out.push(reasons::invalid_cursor_restarts(kind, restarts, l));
    }
    // The latest conformance run holds until the next one replaces it.
    if let Some(r) = input
        .conformance
        .and_then(|c| super::conformance_reason::reason(c, kind, input.now_unix_seconds))
    {
        out.push(r);
    }
    out.extend(silent_shrinks(input, kind));
    out
}

/// What a complete listing's catalogue says: fewer items than expected,
/// items a reference has, empty though advertised, duplicates, a garbage
/// cursor not refused.
fn complete_listing_reasons(k: &KindInput<'_>, out: &mut Vec<Reason>) {
    let l = k.listing;
    let kind = l.kind;
    if let Some(min) = k.expected_min {
        if l.unique_items < min {
            out.push(reasons::below_expected(kind, l.unique_items, min));
        }
    }
    for gap in &k.reference_gaps {
        if gap.missing_total > 0 {
            out.push(reasons::reference_missing(kind, gap));
        }
    }
    if l.unique_items == 0 && k.empty_is_suspect {
        out.push(reasons::empty_but_advertised(kind));
    }
    if l.duplicate_items > 0 {
        out.push(reasons::duplicates(kind, l));
    }
    if let Some(answer @ (GarbageCursorAnswer::SilentRestart | GarbageCursorAnswer::Accepted)) =
        k.garbage_cursor
    {
        out.push(reasons::garbage_cursor(kind, answer));
    }
    if let Some(limit) = k.page_latency {
        out.extend(reasons::slow_pages(l, limit));
    }
}

/// Events: a silent shrink keeps the kind degraded for the window.
fn silent_shrinks(input: &TargetInput<'_>, kind: Kind) -> Option<Reason> {
    let window = input.event_window.as_secs_f64();
    let mut shrinks: Vec<&Change> = input
        .changes
        .iter()
        .filter(|c| {
            c.kind == kind
                && c.silent_shrink
                && input.now_unix_seconds - c.at_unix_seconds <= window
                && c.at_unix_seconds <= input.now_unix_seconds + 1.0
        })
        .collect();
    if shrinks.is_empty() {
        return None;
    }
    shrinks.sort_by(|a, b| a.at_unix_seconds.total_cmp(&b.at_unix_seconds));
    Some(reasons::silent_shrinks(
        kind,
        &shrinks,
        input.now_unix_seconds,
        input.event_window,
    ))
}
