//! The verdict stage of the fan-out: turns a compared poll (report, baseline
//! diffs, reference gaps) and the target's expectations into the verdict's
//! input. Judging itself is `crate::verdict`.

use crate::baseline::{BaselineStore, PolledTarget};
use crate::poll::{unix_seconds, PollReport};
use crate::verdict::history::{KindObservation, Observation};
use crate::verdict::{
    CatalogueHistory, Change, KindInput, ProtocolGap, ReferenceGap, TargetVerdict,
    DEFAULT_EVENT_WINDOW,
};
use mcp_listing::{Kind, Outcome};
use std::collections::BTreeMap;
use std::time::Duration;

/// Size of each reference listing this poll was compared with, read from
/// the baselines: `(reference target, kind) → unique items`.
pub type ReferenceSizes = BTreeMap<(String, Kind), u64>;

/// The sizes of every reference `polled` names.
pub fn reference_sizes(store: &BaselineStore, polled: &PolledTarget) -> ReferenceSizes {
    let mut sizes = ReferenceSizes::new();
    for (kind, by_reference) in &polled.reference_missing {
        for reference in by_reference.keys() {
            if let Some(names) = store.names(reference, *kind) {
                sizes.insert((reference.clone(), *kind), names.len() as u64);
            }
        }
    }
    sizes
}

/// The verdict of one report on its own (no baselines, no history): what
/// `mcp-exporter probe` shows. `expect` is the `expect:` minimum per kind.
pub fn judge_report(report: &PollReport, expect: &BTreeMap<Kind, u64>) -> TargetVerdict {
    let polled = PolledTarget::without_baseline(report.clone());
    judge_alone(&observation(&polled, expect, None, &ReferenceSizes::new()))
}

/// The verdict of one observation with no history kept: a silent shrink
/// counts only in the poll that saw it.
pub fn judge_alone(obs: &Observation<'_>) -> TargetVerdict {
    CatalogueHistory::default()
        .observe(obs, DEFAULT_EVENT_WINDOW, false)
        .clone()
}

/// What the verdict of this poll depends on.
pub fn observation<'a>(
    polled: &'a PolledTarget,
    expect: &BTreeMap<Kind, u64>,
    page_latency: Option<Duration>,
    sizes: &ReferenceSizes,
) -> Observation<'a> {
    let report = &polled.report;
    let at = unix_seconds(report.started);
    let kinds = report
        .listings
        .iter()
        .map(|l| {
            let change = polled
                .diffs
                .get(&l.kind)
                .filter(|d| d.had_baseline)
                .and_then(|d| {
                    Change::from_diff(
                        l.kind,
                        at,
                        d.previous_items,
                        l.unique_items,
                        &d.added,
                        &d.removed,
                        l.list_changed_notifications > 0,
                        d.silent_shrink,
                    )
                });
            let reference_gaps = polled
                .reference_missing
                .get(&l.kind)
                .map(|by_reference| {
                    by_reference
                        .iter()
                        .map(|(reference, missing)| ReferenceGap {
                            reference: reference.clone(),
                            reference_items: sizes
                                .get(&(reference.clone(), l.kind))
                                .copied()
                                .unwrap_or(missing.len() as u64),
                            missing: missing.clone(),
                            missing_total: missing.len() as u64,
                        })
                        .collect()
                })
                .unwrap_or_default();
            KindObservation {
                input: KindInput {
                    listing: l,
                    expected_min: expect.get(&l.kind).copied(),
                    reference_gaps,
                    garbage_cursor: report
                        .garbage_cursor_checks
                        .iter()
                        .find(|c| c.kind == l.kind)
                        .map(|c| c.result),
                    protocol_gaps: protocol_gaps(report, l.kind),
                    empty_is_suspect: !report.unadvertised_kinds.contains(&l.kind)
                        && expect.get(&l.kind) != Some(&0),
                    page_latency,
                },
                change,
            }
        })
        .collect();
    Observation {
        at_unix_seconds: at,
        session_error: report.session_error.clone(),
        kinds,
    }
}

/// With `protocols:`, the versions at which `kind` lacks items or did not
/// complete. A version with no session is not spoken by the server: shown
/// in the catalogue list, not a reason. The primary's own failure is the
/// usual `listing_failed`/`listing_aborted`.
fn protocol_gaps(report: &PollReport, kind: Kind) -> Vec<ProtocolGap> {
    report
        .protocol_catalogues
        .iter()
        .filter(|c| c.session_error.is_none())
        .filter_map(|c| {
            let k = c.kind(kind)?;
            let incomplete = !k.outcome.is_complete() && k.outcome != Outcome::Unsupported;
            let failed = (incomplete && !c.primary).then_some(k.outcome);
            let missing_total = k.missing_total.unwrap_or(0);
            (failed.is_some() || missing_total > 0).then(|| ProtocolGap {
                protocol_version: c.protocol_version,
                unique_items: k.unique_items,
                union_items: k.unique_items + missing_total,
                missing: k.missing.clone(),
                missing_total,
                failed,
            })
        })
        .collect()
}
