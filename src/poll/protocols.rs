//! `protocols:` — one target listed under several protocol versions, one
//! session per version (forced like `protocol_version:`), and the
//! catalogues compared. Gateways can serve each era a different catalogue
//! (FastMCP `mount` reaches a legacy-only origin only for 2025-era
//! clients), so one negotiated poll shows only one side.
//!
//! Cost: one session per configured version (at most the five versions the
//! exporter speaks), polled one after another, each under the target's own
//! hard deadline. The newest version whose session opened is the *primary*:
//! its report is the poll's report (every usual series, `mcp_up`, the
//! baselines); the others only feed the comparison carried in
//! `PollReport::protocol_catalogues`.

use super::catalogues::{ProtocolCatalogue, ProtocolKind, MAX_MISSING_NAMES};
use super::poll_report::PollReport;
use super::run::{poll_configured_single, ConfiguredPoll, OpenSession, PollContext};
use mcp_listing::{Kind, Outcome, ProtocolVersion};
use std::collections::BTreeSet;

/// Poll a configured target under a hard deadline (see
/// `run::poll_configured_single`); a target with `protocols:` is polled once
/// per version and the deadline bounds each version's poll.
pub async fn poll_configured(poll: ConfiguredPoll<'_>) -> (PollReport, Option<OpenSession>) {
    if poll.config.protocols.is_empty() {
        poll_configured_single(poll).await
    } else {
        poll_each(poll).await
    }
}

/// Poll the target once per version of its `protocols` (newest first) and
/// return the primary report with every version's catalogue attached.
/// Only the primary's session is kept open (watch mode); the trace context
/// goes with the first (newest) version's poll only.
pub async fn poll_each(poll: ConfiguredPoll<'_>) -> (PollReport, Option<OpenSession>) {
    let config = poll.config;
    let mut polls: Vec<(ProtocolVersion, PollReport, Option<OpenSession>)> = Vec::new();
    for (i, version) in config.protocols.iter().enumerate() {
        let mut one = config.clone();
        one.protocol_version = Some(*version);
        one.protocols = Vec::new();
        let ctx = if i == 0 {
            poll.ctx
        } else {
            PollContext {
                trace: None,
                ..poll.ctx
            }
        };
        let (report, session) = poll_configured_single(ConfiguredPoll {
            config: &one,
            ctx,
            ..poll.clone()
        })
        .await;
        polls.push((*version, report, session));
    }
    let primary = polls
        .iter()
        .position(|(_, r, _)| r.session_error.is_none())
        .unwrap_or(0);
    let catalogues = compare(
        &polls
            .iter()
            .enumerate()
            .map(|(i, (v, r, _))| (*v, r, i == primary))
            .collect::<Vec<_>>(),
    );
    let mut kept = None;
    let mut primary_report = None;
    for (i, (_, report, session)) in polls.into_iter().enumerate() {
        if i == primary {
            kept = session;
            primary_report = Some(report);
        } else if let Some(s) = session {
            s.close().await;
        }
    }
    // `primary` indexes `polls`, which holds one entry per configured
    // version (at least two, checked at load), so the report is there.
    let mut report = match primary_report {
        Some(r) => r,
        None => PollReport::new(
            &config.name,
            super::target::nominal_transport(config.is_stdio()),
            std::time::SystemTime::now(),
        ),
    };
    report.protocol_catalogues = catalogues;
    (report, kept)
}

/// Every version's catalogue, each kind compared with the union of the
/// versions that listed it completely.
pub fn compare(polls: &[(ProtocolVersion, &PollReport, bool)]) -> Vec<ProtocolCatalogue> {
    let kinds: BTreeSet<Kind> = polls
        .iter()
        .flat_map(|(_, r, _)| r.listings.iter().map(|l| l.kind))
        .collect();
    polls
        .iter()
        .map(|&(version, report, primary)| ProtocolCatalogue {
            protocol_version: version,
            primary,
            negotiated: report
                .protocol_version
                .clone()
                .filter(|_| report.session_error.is_none()),
            session_error: report.session_error.as_ref().map(ToString::to_string),
            kinds: kinds
                .iter()
                .filter_map(|&kind| {
                    let l = report.listing(kind)?;
                    let (missing_total, missing) = missing_at(polls, report, kind);
                    Some(ProtocolKind {
                        kind,
                        outcome: l.outcome,
                        reason: l.reason,
                        unique_items: l.unique_items,
                        missing_total,
                        missing,
                    })
                })
                .collect(),
        })
        .collect()
}

/// `kind`'s names listed completely under the other versions but missing
/// from `report`'s complete listing.
fn missing_at(
    polls: &[(ProtocolVersion, &PollReport, bool)],
    report: &PollReport,
    kind: Kind,
) -> (Option<u64>, Vec<String>) {
    let complete: Vec<&mcp_listing::ListingReport> = polls
        .iter()
        .filter_map(|(_, r, _)| r.listing(kind))
        .filter(|l| l.outcome == Outcome::Complete)
        .collect();
    let Some(mine) = report
        .listing(kind)
        .filter(|l| l.outcome == Outcome::Complete)
    else {
        return (None, Vec::new());
    };
    if complete.len() < 2 {
        return (None, Vec::new());
    }
    let have: BTreeSet<&str> = mine.names.iter().map(String::as_str).collect();
    let union: BTreeSet<&str> = complete
        .iter()
        .flat_map(|l| l.names.iter().map(String::as_str))
        .collect();
    let missing: Vec<&str> = union.difference(&have).copied().collect();
    (
        Some(missing.len() as u64),
        missing
            .iter()
            .take(MAX_MISSING_NAMES)
            .map(|s| s.to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::poll_report::SessionFailure;
    use mcp_listing::{ErrorKind, TransportKind};
    use std::time::SystemTime;

    fn report(version: &str, tools: &[&str]) -> PollReport {
        let mut r = PollReport::tools_for_test("gw", tools);
        r.protocol_version = Some(version.into());
        r
    }

    #[test]
    fn each_version_is_compared_with_the_union() {
        let modern = report("2026-07-28", &["a", "b"]);
        let legacy = report("2025-11-25", &["a", "b", "c", "d"]);
        let c = compare(&[
            (ProtocolVersion::V2026_07_28, &modern, true),
            (ProtocolVersion::V2025_11_25, &legacy, false),
        ]);
        let m = c[0].kind(Kind::Tools).unwrap();
        assert!(c[0].primary);
        assert_eq!(m.missing_total, Some(2));
        assert_eq!(m.missing, vec!["c", "d"]);
        let l = c[1].kind(Kind::Tools).unwrap();
        assert_eq!((l.missing_total, l.unique_items), (Some(0), 4));
    }

    #[test]
    fn a_version_without_a_session_is_not_compared() {
        let legacy = report("2025-11-25", &["a"]);
        let refused = PollReport::failed(
            "gw",
            TransportKind::StreamableHttp,
            SystemTime::now(),
            &[Kind::Tools],
            SessionFailure {
                error: ErrorKind::TransportError,
                detail: "HTTP 400".into(),
                http_status: Some(400),
            },
            "no session",
        );
        let c = compare(&[
            (ProtocolVersion::V2026_07_28, &refused, false),
            (ProtocolVersion::V2025_11_25, &legacy, true),
        ]);
        assert_eq!(
            c[0].session_error.as_deref(),
            Some("transport_error: HTTP 400")
        );
        assert_eq!(c[0].negotiated, None);
        assert_eq!(c[0].kind(Kind::Tools).unwrap().missing_total, None);
        // One complete listing: nothing to compare with.
        assert_eq!(c[1].kind(Kind::Tools).unwrap().missing_total, None);
    }
}
