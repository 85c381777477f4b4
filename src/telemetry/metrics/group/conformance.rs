//! Serve-mode conformance (opt-in per target, `conformance:` in the config):
//! failing rules only. `mcp_conformance_failures{target,kind,rule,level}` is 1
//! while a rule fails and is removed when it passes, so a clean server costs
//! one series: `mcp_conformance_rules_failing{target}`, created by its first
//! run (a 0 before any run would claim a clean server). Rule ids are the
//! closed set of docs/conformance.md. Registered on its own, apart from the
//! per-poll families, because it has its own schedule.

use super::super::families::GaugeFamily;
use super::super::labels::{EnumLabel, KindLabel, TargetLabels};
use crate::verdict::ConformanceResult;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct RuleLabels {
    pub target: String,
    pub kind: KindLabel,
    pub rule: &'static str,
    /// `MUST`, `SHOULD` or `advice`: one per rule at a time, so it adds no
    /// series; alerts can page on MUST only.
    pub level: &'static str,
}

#[derive(Debug)]
pub struct ConformanceMetrics {
    failures: GaugeFamily<RuleLabels>,
    rules_failing: GaugeFamily<TargetLabels>,
    /// The failing series of each target, to remove those that pass again.
    /// Updates of one target run under this lock so a run and a reload's
    /// `forget_target` cannot interleave.
    failing: Mutex<HashMap<String, BTreeSet<RuleLabels>>>,
}

impl ConformanceMetrics {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry) -> Self {
        let m = ConformanceMetrics {
            failures: Family::default(),
            rules_failing: Family::default(),
            failing: Mutex::new(HashMap::new()),
        };
        r.register(
            "mcp_conformance_failures",
            "1 while the pagination conformance rule fails for the kind at the target's latest conformance run; absent when it passes (docs/conformance.md)",
            m.failures.clone(),
        );
        r.register(
            "mcp_conformance_rules_failing",
            "Rules (all kinds together) failing at the target's latest conformance run; absent until its first run",
            m.rules_failing.clone(),
        );
        m
    }

    /// Replace the target's series with those of `result`.
    pub fn record(&self, target: &str, result: &ConformanceResult) {
        let now: BTreeSet<RuleLabels> = result
            .failures
            .iter()
            .map(|f| RuleLabels {
                target: target.to_string(),
                kind: EnumLabel(f.kind),
                rule: f.rule,
                level: f.level.label(),
            })
            .collect();
        let mut failing = self.lock();
        let before = failing.remove(target).unwrap_or_default();
        for gone in before.difference(&now) {
            self.failures.remove(gone);
        }
        for labels in &now {
            self.failures.get_or_create(labels).set(1);
        }
        self.rules_failing
            .get_or_create(&TargetLabels::new(target))
            .set(i64::try_from(now.len()).unwrap_or(i64::MAX));
        failing.insert(target.to_string(), now);
    }

    /// Drop every series of a target (removed, or its conformance turned
    /// off by a reload).
    pub fn forget_target(&self, target: &str) {
        let mut failing = self.lock();
        for labels in failing.remove(target).unwrap_or_default() {
            self.failures.remove(&labels);
        }
        self.rules_failing.remove(&TargetLabels::new(target));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, BTreeSet<RuleLabels>>> {
        // Each update leaves the map whole, so a poisoned lock is usable.
        self.failing.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::RuleFailure;
    use mcp_conformance::Requirement;
    use mcp_listing::Kind;

    fn result(rules: &[(&'static str, Kind)]) -> ConformanceResult {
        ConformanceResult {
            at_unix_seconds: 0.0,
            protocol_version: None,
            passed: 0,
            failed: rules.len() as u32,
            not_applicable: 0,
            failures: rules
                .iter()
                .map(|(rule, kind)| RuleFailure {
                    kind: *kind,
                    rule,
                    level: Requirement::Must,
                    message: String::new(),
                    evidence: String::new(),
                })
                .collect(),
        }
    }

    fn encoded(r: &Registry) -> String {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, r).unwrap();
        s
    }

    #[test]
    fn failing_rules_only_and_removed_when_they_pass() {
        let mut r = Registry::default();
        let m = ConformanceMetrics::register(&mut r);
        assert!(!encoded(&r).contains("mcp_conformance_rules_failing{"));
        m.record(
            "a",
            &result(&[("cache-ttl", Kind::Tools), ("cursor-cycle", Kind::Prompts)]),
        );
        let text = encoded(&r);
        assert!(
            text.contains(
                r#"mcp_conformance_failures{target="a",kind="tools",rule="cache-ttl",level="MUST"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"mcp_conformance_rules_failing{target="a"} 2"#),
            "{text}"
        );
        m.record("a", &result(&[("cursor-cycle", Kind::Prompts)]));
        let text = encoded(&r);
        assert!(!text.contains("cache-ttl"), "{text}");
        assert!(
            text.contains(r#"rule="cursor-cycle",level="MUST"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"mcp_conformance_rules_failing{target="a"} 1"#),
            "{text}"
        );
        m.forget_target("a");
        let text = encoded(&r);
        assert!(!text.contains(r#"target="a""#), "{text}");
    }
}
