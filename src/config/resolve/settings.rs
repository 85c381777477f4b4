//! The keys `global:` and a target share (`TargetSettings`): each written
//! one merged over what it overrides (the built-in defaults for `global:`,
//! `global:`'s for a target), in one place for both.

use super::limits::LISTING;
use super::{child, Resolver, Result};
use crate::config::locate::{At, Seg};
use crate::config::raw::{RawConformance, RawDuration, RawSchedule, RawSettings};
use crate::config::schedule::Schedule;
use crate::config::types::{default, ConformanceConfig, TargetSettings};
use mcp_listing::Kind;
use std::time::Duration;

impl Resolver<'_> {
    /// `raw` over `base`, for the section at `owner` (named `who` in errors).
    pub(super) fn settings(
        &mut self,
        owner: &[Seg],
        who: &str,
        base: &TargetSettings,
        raw: RawSettings,
    ) -> Result<TargetSettings> {
        let kinds = self.kinds_over(&child(owner, "kinds"), raw.kinds, &base.kinds)?;
        let limits = self.limits(owner, who, base.limits, raw.limits, &LISTING)?;
        let conformance = self.conformance(
            &child(owner, "conformance"),
            who,
            base.conformance,
            raw.conformance,
        )?;
        let (schedule, jitter) = self.timing(
            owner,
            who,
            (raw.schedule, raw.jitter),
            (&base.schedule, base.jitter),
        );
        Ok(TargetSettings {
            schedule,
            limits,
            jitter,
            kinds,
            invalid_cursor_probe: raw
                .invalid_cursor_probe
                .unwrap_or(base.invalid_cursor_probe),
            watch_list_changed: raw.watch_list_changed.unwrap_or(base.watch_list_changed),
            propagate_trace_context: raw
                .propagate_trace_context
                .unwrap_or(base.propagate_trace_context),
            metrics_detail: raw
                .metrics
                .and_then(|m| m.detail)
                .unwrap_or(base.metrics_detail),
            conformance,
        })
    }

    /// `kinds:` as written, else `base`'s.
    pub(super) fn kinds_over(
        &self,
        at: &[Seg],
        raw: Option<Vec<Kind>>,
        base: &[Kind],
    ) -> Result<Vec<Kind>> {
        match raw {
            Some(kinds) => self.kinds(at, kinds),
            None => Ok(base.to_vec()),
        }
    }

    /// `schedule:` and `jitter:` over `base`'s; checked when either is
    /// written (`base` was checked where it was written, or is built in).
    pub(super) fn timing(
        &mut self,
        owner: &[Seg],
        who: &str,
        (schedule, jitter): (Option<RawSchedule>, Option<RawDuration>),
        (base_schedule, base_jitter): (&Schedule, Duration),
    ) -> (Schedule, Duration) {
        let overridden = schedule.is_some() || jitter.is_some();
        let schedule = schedule.map_or_else(|| base_schedule.clone(), |s| s.0);
        let jitter = jitter.map_or(base_jitter, |d| d.0);
        if overridden {
            self.check_schedule(owner, who, &schedule, jitter);
        }
        (schedule, jitter)
    }

    /// Merge a `conformance:` mapping over `base`; `every` must be at least
    /// a second.
    fn conformance(
        &mut self,
        at: &[Seg],
        who: &str,
        base: ConformanceConfig,
        raw: Option<RawConformance>,
    ) -> Result<ConformanceConfig> {
        let Some(raw) = raw else {
            return Ok(base);
        };
        let every = raw.every.map_or(base.every, |d| d.0);
        if every < default::CONFORMANCE_MIN_EVERY {
            return Err(self.error(
                &child(at, "every"),
                At::Value,
                format!("{who}: `conformance.every` must be at least 1s"),
            ));
        }
        Ok(ConformanceConfig {
            enabled: raw.enabled.unwrap_or(base.enabled),
            every,
        })
    }
}
