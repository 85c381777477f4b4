//! One target's poll loop: cron or fixed-period ticks, a deterministic
//! jitter, capped backoff after failures, single-flight (ticks that pass
//! while a poll runs are skipped and counted) and the global concurrency cap.

use super::shard::stable_hash;
use super::shared::Shared;
use super::watch::{watch_until, Watch};
use crate::config::{Schedule, TargetConfig};
use crate::poll::{
    poll_configured, ConfiguredPoll, HardDeadline, OpenSession, PollContext, PollReport,
};
use crate::telemetry::events::{ConformanceRunMissed, PollsSkipped, ScheduleEnded, SkipCause};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OwnedSemaphorePermit;

/// A target's ticks: its schedule, with `every:` ticks counted from the
/// target's first poll (its anchor) — so the first poll at start is the
/// first of them and the next comes one period later, as
/// docs/configuration.md says, wherever the start falls.
#[derive(Debug, Clone, Copy)]
pub struct Ticks<'a> {
    pub schedule: &'a Schedule,
    pub anchor: DateTime<Utc>,
}

impl<'a> Ticks<'a> {
    /// The ticks of a target whose first poll fires at `first_fire`: that
    /// poll is its first tick's (fired `jitter` after it).
    pub fn from_first_poll(
        schedule: &'a Schedule,
        first_fire: DateTime<Utc>,
        jitter: Duration,
    ) -> Ticks<'a> {
        Ticks {
            schedule,
            anchor: first_fire - to_chrono(jitter),
        }
    }

    /// The next tick strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.schedule.period() {
            Some(period) => {
                let p = i64::try_from(period.as_millis()).unwrap_or(i64::MAX).max(1);
                let since = (after - self.anchor).num_milliseconds();
                let k = since.div_euclid(p).checked_add(1)?;
                let offset = chrono::Duration::try_milliseconds(k.checked_mul(p)?)?;
                self.anchor.checked_add_signed(offset)
            }
            None => self.schedule.next_after(after),
        }
    }

    /// The tick whose poll comes next: the first one after `now - jitter`,
    /// since a tick's poll fires `jitter` after it. Taking the first tick
    /// after `now` silently lost a period whenever a poll ended past the
    /// next tick (jitter plus the poll's duration reaching the period),
    /// without counting it as skipped.
    pub fn next_due(&self, now: DateTime<Utc>, jitter: Duration) -> Option<DateTime<Utc>> {
        self.next_after(now - chrono::Duration::from_std(jitter).unwrap_or_default())
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

/// How long after its start a target's first poll comes. A discovered
/// target is placed by its jitter inside its whole period (a stable offset
/// from its name): a source that brings two thousand targets at once
/// spreads their first polls over the period instead of bursting them. A
/// static target is placed inside `spread` (see [`first_poll_spread`]),
/// never past its period: a small fleet shows values within seconds, a
/// large one (at start or after a reload) does not queue every first poll
/// behind the concurrency cap at once. A cron schedule: over its jitter.
pub fn first_poll_delay(target: &TargetConfig, spread: Duration) -> Duration {
    match (&target.source, target.settings.schedule.period()) {
        (Some(_), Some(period)) => jitter_for(&target.name, period.max(target.settings.jitter)),
        (None, Some(period)) => {
            jitter_for(&target.name, spread.min(period).max(target.settings.jitter))
        }
        _ => jitter_for(&target.name, target.settings.jitter),
    }
}

/// The window static targets' first polls spread over: a second per
/// `concurrency` targets (a healthy poll holds its slot well under a
/// second, so that is about how long the first polls take back to back).
/// [`first_poll_delay`] caps it at each target's period.
pub fn first_poll_spread(targets: usize, concurrency: usize) -> Duration {
    let rounds = targets.div_ceil(concurrency.max(1));
    Duration::from_secs(u64::try_from(rounds).unwrap_or(u64::MAX))
}

/// How long a due poll waits for a free slot under the concurrency cap:
/// until its next tick (one period; at least a second). A poll that finds
/// no slot by then is skipped and counted — the exporter is overloaded —
/// rather than queueing without bound.
pub fn slot_wait(ticks: Ticks<'_>, tick: DateTime<Utc>) -> Duration {
    ticks
        .next_after(tick)
        .and_then(|next| (next - tick).to_std().ok())
        .unwrap_or_default()
        .max(Duration::from_secs(1))
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

/// `tick` moved on by the ticks to let pass after `failures` consecutive
/// failed polls, but never to a tick more than `cap` after `now`.
fn backed_off(
    ticks: Ticks<'_>,
    mut tick: DateTime<Utc>,
    now: DateTime<Utc>,
    failures: u32,
    cap: Duration,
) -> DateTime<Utc> {
    let cap = chrono::Duration::from_std(cap).unwrap_or(chrono::Duration::MAX);
    for _ in 0..backoff_ticks(failures) {
        match ticks.next_after(tick) {
            Some(t) if t - now <= cap => tick = t,
            _ => break,
        }
    }
    tick
}

/// Ticks after `tick` whose poll (a jitter after the tick) came due before
/// `done`, bounded: with single-flight they were not started.
fn missed_ticks(
    ticks: Ticks<'_>,
    tick: DateTime<Utc>,
    jitter: Duration,
    done: DateTime<Utc>,
) -> u64 {
    let jitter = chrono::Duration::from_std(jitter).unwrap_or_default();
    let mut missed = 0u64;
    let mut t = tick;
    while let Some(n) = ticks.next_after(t) {
        if n + jitter > done || missed > 10_000 {
            break;
        }
        missed += 1;
        t = n;
    }
    missed
}

/// The next poll's time after a server asked to wait (`Retry-After` with
/// HTTP 429): not before `done + retry_after`, the wait capped at `cap`
/// (`backoff_max`), so a server cannot park a target for a day.
pub fn honour_retry_after(
    fire_at: DateTime<Utc>,
    done: DateTime<Utc>,
    retry_after: Option<Duration>,
    cap: Duration,
) -> DateTime<Utc> {
    let Some(wait) = retry_after else {
        return fire_at;
    };
    let wait = chrono::Duration::from_std(wait.min(cap)).unwrap_or_default();
    fire_at.max(done + wait)
}

/// The hard bound of one poll: connect, handshake and every kind's own
/// deadline, plus slack. The poll honours its deadlines; this only
/// guarantees a wedged poll can never hold its slot forever.
pub fn poll_deadline(t: &TargetConfig) -> Duration {
    let kinds = t.settings.kinds.len().max(1) as u32;
    // Saturating: configured durations are bounded at load, but a bound
    // must never be what panics.
    t.settings
        .limits
        .connect_timeout
        .saturating_add(t.settings.limits.page_timeout.saturating_mul(2))
        .saturating_add(t.settings.limits.timeout.saturating_mul(kinds))
        .saturating_add(Duration::from_secs(10))
}

/// Page requests in one poll after which freed heap is handed back to the
/// system: a poll of a large catalogue frees tens of MB that glibc would
/// otherwise keep (docs/performance.md: 11.6 MiB before a poll of 4 ×
/// 10,000 items, 37 MiB after). Small polls reuse the freed memory anyway.
const TRIM_AFTER_PAGES: usize = 200;

/// One target's loop; `first_spread` places its first poll (see
/// [`first_poll_delay`]).
pub async fn run_target(target: Arc<TargetConfig>, shared: Arc<Shared>, first_spread: Duration) {
    let jitter = jitter_for(&target.name, target.settings.jitter);
    let mut failures = 0u32;
    let mut era_hint: Option<bool> = None;
    let mut watching: Option<Box<Watch>> = None;
    // A new or changed target starts without conformance results: old ones
    // may not hold for its new configuration.
    shared.sinks.forget_conformance(&target.name);
    let mut conformance_ran: Option<tokio::time::Instant> = None;
    // When the last poll ended and the wait its HTTP 429 asked for.
    let mut asked_to_wait: Option<(DateTime<Utc>, Duration)> = None;
    // The first poll runs at start (after the target's jitter): a new or
    // restarted exporter shows real values within seconds, not one period.
    // It is the first tick's poll; `every:` ticks count from it.
    let first_fire = Utc::now() + to_chrono(first_poll_delay(&target, first_spread));
    let ticks = Ticks::from_first_poll(&target.settings.schedule, first_fire, jitter);
    let mut first = Some((ticks.anchor, first_fire));
    loop {
        let planned = first
            .take()
            .or_else(|| plan_next(ticks, &shared, jitter, failures, asked_to_wait.take()));
        let Some((tick, fire_at)) = planned else {
            shared.sinks.status.next_poll(&target.name, None);
            ScheduleEnded {
                target: &target.name,
            }
            .emit();
            std::future::pending::<()>().await;
            return;
        };
        shared.sinks.status.next_poll(&target.name, Some(fire_at));
        Box::pin(wait_watching(fire_at, watching.take(), &target, &shared)).await;

        // Boxed, as every await below but the sleep: the task holds only
        // what it needs while it sleeps (docs/performance.md).
        let Some(slot) = Box::pin(shared.acquire_within(slot_wait(ticks, tick))).await else {
            // No free slot within a period: this tick's poll is skipped
            // (and the ticks that passed meanwhile, below).
            count_skipped(ticks, &target, &shared, tick, jitter, 1);
            continue;
        };
        // Boxed: a task's future is one allocation sized for its largest
        // state, and a poll's state (transport, walker, pages) is ~10x the
        // sleeping loop's. Boxed, it exists only while the poll runs.
        let (report, session) = Box::pin(poll_once(
            &target,
            &shared,
            slot,
            era_hint,
            target.settings.watch_list_changed,
        ))
        .await;
        era_hint = report.era_hint();
        asked_to_wait = report.retry_after().map(|wait| (Utc::now(), wait));
        failures = if report.all_complete() {
            0
        } else {
            failures.saturating_add(1)
        };
        // Boxed: only watch mode has one, and the sleeping task stays small.
        watching = session.map(|session| Box::new(Watch::new(session, &report)));
        Box::pin(deliver(report, &target, &shared, failures)).await;

        Box::pin(conformance_if_due(
            &target,
            &shared,
            asked_to_wait.is_some(),
            &mut conformance_ran,
        ))
        .await;

        // Single-flight: ticks that came due while this poll ran were not
        // started; count them.
        count_skipped(ticks, &target, &shared, tick, jitter, 0);
    }
}

/// The next poll's tick and firing time (after the first): on the
/// schedule after the jitter; backed off after failures, and not before
/// the wait a 429 asked for. `None`: the schedule never fires again.
fn plan_next(
    ticks: Ticks<'_>,
    shared: &Shared,
    jitter: Duration,
    failures: u32,
    asked_to_wait: Option<(DateTime<Utc>, Duration)>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let now = Utc::now();
    let tick = backed_off(
        ticks,
        ticks.next_due(now, jitter)?,
        now,
        failures,
        shared.backoff_max(),
    );
    let mut fire_at = tick + to_chrono(jitter);
    if let Some((done, wait)) = asked_to_wait {
        fire_at = honour_retry_after(fire_at, done, Some(wait), shared.backoff_max());
    }
    Some((tick, fire_at))
}

/// A duration as chrono's (configured durations are bounded at load far
/// below where this could fail).
fn to_chrono(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or_default()
}

/// Hand a poll's report to the sinks; after a large one, give the freed
/// heap back (off the runtime: trimming walks every arena).
async fn deliver(report: PollReport, target: &TargetConfig, shared: &Shared, failures: u32) {
    let pages: usize = report.listings.iter().map(|l| l.pages.len()).sum();
    shared.sinks.fanout().poll(report, target, failures);
    if pages >= TRIM_AFTER_PAGES {
        let _ = tokio::task::spawn_blocking(crate::heap::release_freed).await;
    }
}

/// Polls that were due and not made, on `/metrics` and the status page:
/// `not_started` of `tick`'s own, and the later ticks that came due by now.
fn count_skipped(
    ticks: Ticks<'_>,
    target: &TargetConfig,
    shared: &Shared,
    tick: DateTime<Utc>,
    jitter: Duration,
    not_started: u64,
) {
    let missed = not_started + missed_ticks(ticks, tick, jitter, Utc::now());
    if missed > 0 {
        let cause = if not_started > 0 {
            SkipCause::ConcurrencyCap
        } else {
            SkipCause::StillRunning
        };
        PollsSkipped {
            target: &target.name,
            count: missed,
            cause,
        }
        .emit(&shared.sinks.exporter);
        shared.sinks.status.skipped(&target.name, missed);
    }
}

/// Sleep until `fire_at`; meanwhile watch the last poll's session, if one
/// was kept open, and close it before the next poll.
async fn wait_watching(
    fire_at: DateTime<Utc>,
    watching: Option<Box<Watch>>,
    target: &TargetConfig,
    shared: &Shared,
) {
    let wait = (fire_at - Utc::now()).to_std().unwrap_or_default();
    let deadline = tokio::time::Instant::now() + wait;
    if let Some(mut w) = watching {
        // Boxed for the same reason as the poll: re-lists are big states.
        Box::pin(async {
            watch_until(&mut w, deadline, target, shared).await;
            w.session.close().await;
        })
        .await;
    }
    tokio::time::sleep_until(deadline).await;
}

/// After a poll (the first poll of a new target is not delayed), a
/// conformance run when one is due; its result is judged at once. Not
/// while the server asked us to wait (HTTP 429): the run comes after a
/// later poll.
async fn conformance_if_due(
    target: &TargetConfig,
    shared: &Shared,
    server_asked_to_wait: bool,
    ran: &mut Option<tokio::time::Instant>,
) {
    if target.settings.conformance.enabled
        && !server_asked_to_wait
        && ran.is_none_or(|t| t.elapsed() >= target.settings.conformance.every)
    {
        *ran = Some(tokio::time::Instant::now());
        Box::pin(conformance_once(target, shared)).await;
    }
}

/// One conformance run under the concurrency cap and its hard bound. A run
/// without a session (or past its bound) leaves the last result in place.
async fn conformance_once(target: &TargetConfig, shared: &Shared) {
    let _permit = shared.acquire().await;
    let started = crate::poll::unix_now();
    let limit = crate::poll::conformance::run_deadline(target);
    match crate::poll::conformance::check_configured(target, shared.stderr_tail_bytes(), limit)
        .await
    {
        Some(report) => shared.sinks.conformance(&target.name, &report, started),
        None => ConformanceRunMissed {
            target: &target.name,
        }
        .emit(),
    }
}

/// One poll in its `slot` under the concurrency cap, with tracing ids and
/// a hard deadline. With `keep_open`, an established session is handed
/// back for watching.
pub async fn poll_once(
    target: &TargetConfig,
    shared: &Shared,
    slot: OwnedSemaphorePermit,
    era_hint: Option<bool>,
    keep_open: bool,
) -> (PollReport, Option<OpenSession>) {
    let _slot = slot;
    let _in_flight = shared.sinks.exporter.poll_in_flight();
    let ctx = PollContext {
        era_hint,
        trace: shared.sinks.traces.start_poll(),
        propagate_trace_context: target.settings.propagate_trace_context,
    };
    let limit = poll_deadline(target);
    let deadline = HardDeadline {
        limit,
        exceeded: format!("poll exceeded its hard deadline of {limit:?}"),
    };
    poll_configured(ConfiguredPoll {
        config: target,
        stderr_tail_bytes: shared.stderr_tail_bytes(),
        ctx,
        deadline,
        keep_open,
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every(secs: u64) -> Schedule {
        Schedule::Every(Duration::from_secs(secs))
    }

    fn ticks(schedule: &Schedule, anchor_ms: i64) -> Ticks<'_> {
        Ticks {
            schedule,
            anchor: DateTime::from_timestamp_millis(anchor_ms).unwrap(),
        }
    }

    #[test]
    fn every_ticks_count_from_the_anchor() {
        let s = every(30);
        let ticks = ticks(&s, 1_000_000_005_000);
        let at = |secs: i64| DateTime::from_timestamp(secs, 0).unwrap();
        assert_eq!(
            ticks.next_after(at(1_000_000_010)).unwrap(),
            at(1_000_000_035)
        );
        assert_eq!(
            ticks.next_after(at(1_000_000_035)).unwrap(),
            at(1_000_000_065)
        );
        // Before the anchor: the anchor itself, or a tick before it.
        assert_eq!(
            ticks.next_after(at(1_000_000_000)).unwrap(),
            at(1_000_000_005)
        );
        assert_eq!(ticks.next_after(at(999_999_970)).unwrap(), at(999_999_975));
    }

    #[test]
    fn the_first_poll_comes_once_then_every_period() {
        // every 15s, jitter 2s: polled at +0.43 s and again at +2.68 s
        // before settling (ticks aligned to the epoch). Now, whatever the
        // start's phase, the second poll comes one period after the first.
        let period = Duration::from_secs(15);
        let s = Schedule::Every(period);
        let jitter = Duration::from_millis(1_750);
        for start_ms in (0..15_000).step_by(125) {
            let first_fire = DateTime::from_timestamp_millis(1_000_000_000_000 + start_ms).unwrap();
            let ticks = Ticks {
                schedule: &s,
                anchor: first_fire - to_chrono(jitter),
            };
            let done = first_fire + chrono::Duration::milliseconds(70);
            let next = ticks.next_due(done, jitter).unwrap() + to_chrono(jitter);
            assert_eq!(next - first_fire, to_chrono(period), "start +{start_ms} ms");
            assert_eq!(missed_ticks(ticks, ticks.anchor, jitter, done), 0);
        }
    }

    #[test]
    fn a_poll_ending_past_the_next_tick_keeps_that_ticks_poll() {
        let s = every(30);
        let ticks = ticks(&s, 1_000_000_020_000);
        // The tick at ...020 fired at ...049 (jitter 29 s); the poll ended
        // at ...050.5, past the tick at ...050, whose poll is due at ...079.
        let done = DateTime::from_timestamp_millis(1_000_000_050_500).unwrap();
        let jitter = Duration::from_secs(29);
        assert_eq!(
            ticks.next_due(done, jitter).unwrap().timestamp(),
            1_000_000_050
        );
        assert_eq!(
            ticks.next_due(done, Duration::ZERO).unwrap().timestamp(),
            1_000_000_080
        );
    }

    #[test]
    fn a_first_poll_running_past_the_next_due_time_skipped_it() {
        let s = every(10);
        let ticks = ticks(&s, 1_000_000_000_000);
        let jitter = Duration::from_secs(1);
        let done = DateTime::from_timestamp(1_000_000_012, 0).unwrap();
        assert_eq!(missed_ticks(ticks, ticks.anchor, jitter, done), 1);
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
    fn first_polls_spread_over_the_period_for_a_fleet_within_seconds_for_a_few() {
        let loaded = crate::config::load_str(
            "global:\n  schedule: {every: 60s}\n  jitter: 2s\ntargets:\n  - {name: s, http: {url: \"https://s.invalid/\"}}\n",
            "t.yaml",
        )
        .unwrap();
        let mut t = loaded.config.targets[0].clone();
        let delays = |t: &mut TargetConfig, spread: Duration| -> Vec<Duration> {
            (0..200)
                .map(|i| {
                    t.name = format!("t{i}");
                    first_poll_delay(t, spread)
                })
                .collect()
        };
        let late = |d: &[Duration]| d.iter().filter(|d| **d >= Duration::from_secs(30)).count();
        // Ten static targets, 8 slots: within the 2 s jitter.
        let few = delays(&mut t, first_poll_spread(10, 8));
        assert!(few.iter().all(|d| *d < Duration::from_secs(2)));
        // 2,000 static targets: spread over the whole period, not past it.
        let fleet = delays(&mut t, first_poll_spread(2000, 8));
        assert!(fleet.iter().all(|d| *d < Duration::from_secs(60)));
        assert!(late(&fleet) > 50, "{fleet:?}");
        // A discovered target: over its period whatever the fleet.
        t.source = Some("fleet".into());
        let discovered = delays(&mut t, Duration::ZERO);
        assert!(discovered.iter().all(|d| *d < Duration::from_secs(60)));
        assert!(late(&discovered) > 50);
    }

    #[test]
    fn a_poll_waits_for_a_slot_until_its_next_tick() {
        let s = every(30);
        let ticks = ticks(&s, 1_000_000_020_000);
        let tick = ticks.anchor;
        assert_eq!(slot_wait(ticks, tick), Duration::from_secs(30));
        let fast = Schedule::Every(Duration::from_millis(200));
        let ticks = Ticks {
            schedule: &fast,
            anchor: tick,
        };
        assert_eq!(slot_wait(ticks, tick), Duration::from_secs(1));
    }

    #[test]
    fn retry_after_moves_the_next_poll_within_the_cap() {
        let at = |s: i64| DateTime::from_timestamp(s, 0).unwrap();
        let cap = Duration::from_secs(300);
        // No 429: the tick stands.
        assert_eq!(honour_retry_after(at(1030), at(1000), None, cap), at(1030));
        // Asked for 120 s after a poll that ended at 1000: not before 1120.
        let two_min = Some(Duration::from_secs(120));
        assert_eq!(
            honour_retry_after(at(1030), at(1000), two_min, cap),
            at(1120)
        );
        // A later tick already waits long enough.
        assert_eq!(
            honour_retry_after(at(1200), at(1000), two_min, cap),
            at(1200)
        );
        // A day is capped at backoff_max.
        let day = Some(Duration::from_secs(86_400));
        assert_eq!(honour_retry_after(at(1030), at(1000), day, cap), at(1300));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(
            (0..8).map(backoff_ticks).collect::<Vec<_>>(),
            vec![0, 1, 3, 7, 15, 31, 63, 63]
        );
    }
}
