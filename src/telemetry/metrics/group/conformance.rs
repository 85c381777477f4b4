//! Serve-mode conformance (opt-in per target, `conformance:` in the config):
//! failing rules only. `mcp_conformance_failures{target,kind,rule,level}` is 1
//! while a rule fails and is removed when it passes, so a clean server costs
//! one series: `mcp_conformance_rules_failing{target}`, created by its first
//! run (a 0 before any run would claim a clean server). Rule ids are the
//! closed set of docs/conformance.md. Registered on its own, apart from the
//! per-poll families, because it has its own schedule.

use super::super::families::{saturating_i64, GaugeFamily, Source};
use super::super::labels::{target_name, EnumLabel, KindLabel, TargetLabels, TargetName};
use super::super::series::{lock, KeptLabels, Registrar};
use crate::verdict::ConformanceResult;
use mcp_conformance::Requirement;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::registry::Registry;
use std::sync::Mutex;

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct RuleLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    /// A rule id of the closed set in docs/conformance.md.
    pub rule: &'static str,
    /// `MUST`, `SHOULD` or `advice`: one per rule at a time, so it adds no
    /// series; alerts can page on MUST only.
    pub level: EnumLabel<Requirement>,
}

#[derive(Debug)]
pub struct ConformanceMetrics {
    failures: GaugeFamily<RuleLabels>,
    rules_failing: GaugeFamily<TargetLabels>,
    /// The failing series of each target, to remove those that pass again.
    /// Updates of one target run under this lock so a run and a reload's
    /// `forget_target` cannot interleave.
    failing: Mutex<KeptLabels<TargetName, RuleLabels>>,
}

impl ConformanceMetrics {
    /// The families, registered in `r`.
    pub fn register(registry: &mut Registry) -> Self {
        let mut r = Registrar::new(registry, Source::Scheduled);
        ConformanceMetrics {
            failures: r.family(
                "mcp_conformance_failures",
                "1 while the pagination conformance rule fails for the kind at the target's latest conformance run; absent when it passes (docs/conformance.md)",
            )
            .new_plain(),
            rules_failing: r.family(
                "mcp_conformance_rules_failing",
                "Rules (all kinds together) failing at the target's latest conformance run; absent until its first run",
            )
            .new_plain(),
            failing: Mutex::default(),
        }
    }

    /// Replace the target's series with those of `result`.
    pub fn record(&self, target: &str, result: &ConformanceResult) {
        let name = target_name(target);
        let mut now: Vec<RuleLabels> = result
            .failures
            .iter()
            .map(|f| RuleLabels {
                target: name.clone(),
                kind: EnumLabel(f.kind),
                rule: f.rule,
                level: EnumLabel(f.level),
            })
            .collect();
        // At most one failure per rule and kind; said once if twice.
        now.sort();
        now.dedup();
        let mut failing = lock(&self.failing);
        for labels in &now {
            self.failures.get_or_create(labels).set(1);
        }
        self.rules_failing
            .get_or_create(&TargetLabels::new(target))
            .set(saturating_i64(now.len() as u64));
        failing.replace(name, now, &self.failures);
    }

    /// Drop every series of a target (removed, or its conformance turned
    /// off by a reload).
    pub fn forget_target(&self, target: &str) {
        let mut failing = lock(&self.failing);
        failing.forget(&target.to_string(), &self.failures);
        self.rules_failing.remove(&TargetLabels::new(target));
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
