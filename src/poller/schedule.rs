//! One target's poll loop: cron or fixed-period ticks, a deterministic
//! jitter, capped backoff after failures, single-flight (ticks that pass
//! while a poll runs are skipped and counted) and the global concurrency cap.

use super::report::{PollReport, SessionFailure};
use super::service::Shared;
use super::target_spec::probe_target;
use crate::config::{Schedule, TargetConfig};
use crate::listing::{ErrorKind, ListingReport, Outcome};
use crate::mcp::session::Session;
use crate::mcp::session::TraceIds;
use crate::mcp::version;
use crate::probe::{poll_target_open, redact, relist, PollContext, ProbeTarget};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The next tick strictly after `after`. `every:` ticks are aligned to the
/// Unix epoch so "a tick passed while polling" has a meaning.
pub fn next_tick(schedule: &Schedule, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match schedule.period() {
        Some(period) => {
            let p = period.as_millis().max(1) as i64;
            let now = after.timestamp_millis();
            DateTime::from_timestamp_millis((now / p + 1) * p)
        }
        None => schedule.next_after(after),
    }
}

/// A stable offset in `[0, max)` from the target's name, so targets on the
/// same schedule spread out and a restart keeps each one's slot.
pub fn jitter_for(name: &str, max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    let h = stable_hash(name);
    Duration::from_millis(h % (max.as_millis().max(1) as u64))
}

/// First 8 bytes of SHA-256 of the name: stable across versions and hosts
/// (std's hasher is not), used for jitter and `--shard`.
pub fn stable_hash(name: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(name.as_bytes());
    u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// Ticks to let pass after `failures` consecutive failed polls: 0, 1, 3, 7…
/// doubling, bounded in time by `backoff_max`.
fn backoff_ticks(failures: u32) -> u32 {
    if failures == 0 {
        0
    } else {
        (1u32 << failures.min(6)) - 1
    }
}

/// The hard bound of one poll: connect, handshake and every kind's own
/// deadline, plus slack. poll_target honours its deadlines; this only
/// guarantees a wedged poll can never hold its slot forever.
fn poll_deadline(t: &TargetConfig) -> Duration {
    let kinds = t.kinds.len().max(1) as u32;
    t.limits.connect_timeout
        + t.limits.page_timeout * 2
        + t.limits.timeout * kinds
        + Duration::from_secs(10)
}

pub async fn run_target(target: Arc<TargetConfig>, shared: Arc<Shared>) {
    let jitter = jitter_for(&target.name, target.jitter);
    let mut failures = 0u32;
    let mut era_hint: Option<bool> = None;
    let mut watching: Option<Watch> = None;
    // The first poll runs at start (after the target's jitter): a new or
    // restarted exporter shows real values within seconds, not one period.
    let mut first = true;
    loop {
        let now = Utc::now();
        let scheduled = if first {
            Some(now)
        } else {
            next_tick(&target.schedule, now)
        };
        first = false;
        let Some(mut tick) = scheduled else {
            tracing::warn!(target_name = %target.name, "schedule never fires again; target idle");
            std::future::pending::<()>().await;
            return;
        };
        let mut skip = backoff_ticks(failures);
        let cap = chrono::Duration::from_std(shared.backoff_max()).unwrap_or(chrono::Duration::MAX);
        while skip > 0 {
            match next_tick(&target.schedule, tick) {
                Some(t) if t - now <= cap => tick = t,
                _ => break,
            }
            skip -= 1;
        }
        let fire_at = tick + chrono::Duration::from_std(jitter).unwrap_or_default();
        shared
            .sinks
            .status
            .next_poll(&target.name, fire_at.timestamp_millis() as f64 / 1000.0);
        let wait = (fire_at - Utc::now()).to_std().unwrap_or_default();
        let deadline = tokio::time::Instant::now() + wait;
        if let Some(mut w) = watching.take() {
            watch_until(&mut w, deadline, &target, &shared).await;
            w.session.close().await;
        }
        tokio::time::sleep_until(deadline).await;

        let (report, session) =
            poll_once(&target, &shared, era_hint, target.watch_list_changed).await;
        era_hint = report
            .protocol_version
            .as_deref()
            .filter(|_| report.session_error.is_none())
            .map(version::is_modern);
        failures = if report.all_complete() {
            0
        } else {
            failures.saturating_add(1)
        };
        watching = session.map(|(session, spec)| Watch {
            session,
            spec,
            last: report.clone(),
        });
        shared.sinks.consume(report, &target, failures);

        // Single-flight: ticks that came due while this poll ran were not
        // started; count them.
        let done = Utc::now();
        let jitter_c = chrono::Duration::from_std(jitter).unwrap_or_default();
        let mut missed = 0u64;
        let mut t = tick;
        while let Some(n) = next_tick(&target.schedule, t) {
            if n + jitter_c > done || missed > 10_000 {
                break;
            }
            missed += 1;
            t = n;
        }
        if missed > 0 {
            for _ in 0..missed {
                shared.sinks.exporter.poll_skipped(&target.name);
            }
            shared.sinks.status.skipped(&target.name, missed);
        }
    }
}

/// An open session kept between scheduled polls to hear list_changed.
struct Watch {
    session: Session,
    spec: ProbeTarget,
    last: PollReport,
}

/// Notifications that arrive within this window after the first are
/// handled together: a storm costs one re-list, not one per message.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(300);

/// Until `deadline`, re-list each kind the server says changed. A re-list
/// runs to completion before its result replaces anything, so a partial set
/// is never exposed.
async fn watch_until(
    w: &mut Watch,
    deadline: tokio::time::Instant,
    target: &TargetConfig,
    shared: &Shared,
) {
    loop {
        let first = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return,
            n = w.session.next_notification() => n,
        };
        let Some(first) = first else {
            // The server cannot push notifications (or went away): sleep.
            tokio::time::sleep_until(deadline).await;
            return;
        };
        let mut methods = vec![first];
        let debounce_end = (tokio::time::Instant::now() + WATCH_DEBOUNCE).min(deadline);
        while let Ok(Some(m)) =
            tokio::time::timeout_at(debounce_end, w.session.next_notification()).await
        {
            methods.push(m);
        }
        // Per kind, how many notifications asked for this re-list.
        let mut changed: Vec<(crate::listing::Kind, u32)> = Vec::new();
        for m in &methods {
            for &kind in &target.kinds {
                if kind.list_changed_method() == m {
                    match changed.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, n)) => *n += 1,
                        None => changed.push((kind, 1)),
                    }
                }
            }
        }
        if changed.is_empty() {
            continue;
        }
        let mut listings = Vec::new();
        for (kind, notices) in changed {
            let _permit = shared.acquire().await;
            let mut listing = relist(&mut w.session, &w.spec, kind).await;
            // The change was announced: a smaller set now is not silent,
            // and the notifications are counted with the listing.
            listing.list_changed_notifications += notices;
            listings.push(listing);
        }
        let mut report = w.last.clone();
        report.started = SystemTime::now();
        report.listings = listings;
        report.handshakes.clear();
        report.time_to_ready = None;
        report.invalid_cursor_probes.clear();
        report.stderr_tail = None;
        report.trace_id = None;
        report.poll_span_id = None;
        shared.sinks.consume(report, target, 0);
    }
}

/// One poll under the concurrency cap, with tracing ids and a hard deadline.
/// With `keep_open`, an established session is handed back for watching.
pub async fn poll_once(
    target: &TargetConfig,
    shared: &Shared,
    era_hint: Option<bool>,
    keep_open: bool,
) -> (PollReport, Option<(Session, ProbeTarget)>) {
    let _permit = shared.acquire().await;
    let _in_flight = shared.sinks.exporter.poll_in_flight();
    let trace = shared.sinks.traces.start_poll();
    let ctx = PollContext {
        era_hint,
        trace: trace
            .as_ref()
            .filter(|_| target.propagate_trace_context)
            .map(|t| TraceIds {
                trace_id: t.trace_id.clone(),
                sampled: t.sampled,
            }),
        poll_span_id: trace.as_ref().map(|t| t.poll_span_id.clone()),
    };
    let spec = match probe_target(target, shared.stderr_tail_bytes()) {
        Ok(s) => s,
        Err(detail) => {
            let r = failed_report(
                target,
                ErrorKind::Unauthorized,
                detail,
                trace.map(|t| t.trace_id),
            );
            return (r, None);
        }
    };
    let deadline = poll_deadline(target);
    let (mut report, session) =
        match tokio::time::timeout(deadline, poll_target_open(&spec, ctx)).await {
            Ok((r, s)) => (r, s),
            Err(_) => (
                failed_report(
                    target,
                    ErrorKind::Timeout,
                    format!("poll exceeded its hard deadline of {deadline:?}"),
                    None,
                ),
                None,
            ),
        };
    let session = match session {
        Some(s) if keep_open => Some((s, spec)),
        Some(s) => {
            let close = s.close().await;
            report.stderr_tail = close.stderr_tail.map(|t| redact(&t, &spec.secrets));
            None
        }
        None => None,
    };
    if let Some(t) = trace {
        report.trace_id = Some(t.trace_id);
        report.poll_span_id = Some(t.poll_span_id);
    }
    (report, session)
}

/// A report for a poll that could not even start (or never ended).
pub fn failed_report(
    target: &TargetConfig,
    error: ErrorKind,
    detail: String,
    trace_id: Option<String>,
) -> PollReport {
    PollReport {
        target: target.name.clone(),
        started: SystemTime::now(),
        transport: if target.is_stdio() {
            "stdio"
        } else {
            "streamable_http"
        }
        .to_string(),
        protocol_version: None,
        server: None,
        handshakes: Vec::new(),
        session_error: Some(SessionFailure {
            error,
            detail: detail.clone(),
            http_status: None,
        }),
        time_to_ready: None,
        listings: target
            .kinds
            .iter()
            .map(|&k| {
                let mut l = ListingReport::empty(k, Outcome::Error(error));
                l.detail = Some(detail.clone());
                l
            })
            .collect(),
        server_address: None,
        server_port: None,
        session_id: None,
        stdout_defects: 0,
        server_requests: 0,
        stderr_tail: None,
        duration: Duration::ZERO,
        trace_id,
        poll_span_id: None,
        invalid_cursor_probes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ticks_align_to_the_epoch() {
        let s = Schedule::Every(Duration::from_secs(30));
        let t = DateTime::from_timestamp(1_000_000_010, 0).unwrap();
        assert_eq!(next_tick(&s, t).unwrap().timestamp(), 1_000_000_020);
        let on = DateTime::from_timestamp(1_000_000_020, 0).unwrap();
        assert_eq!(next_tick(&s, on).unwrap().timestamp(), 1_000_000_050);
    }

    #[test]
    fn jitter_is_stable_and_bounded() {
        let max = Duration::from_secs(5);
        assert_eq!(jitter_for("a", max), jitter_for("a", max));
        assert!(jitter_for("a", max) < max);
        assert_eq!(jitter_for("a", Duration::ZERO), Duration::ZERO);
        let spread: std::collections::HashSet<_> =
            (0..50).map(|i| jitter_for(&format!("t{i}"), max)).collect();
        assert!(spread.len() > 10);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(
            (0..8).map(backoff_ticks).collect::<Vec<_>>(),
            vec![0, 1, 3, 7, 15, 31, 63, 63]
        );
    }
}
