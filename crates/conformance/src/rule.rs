//! The rule catalogue: every rule `check` runs, the spec text it comes from,
//! and the shape of one verdict. Rule ids are a bounded, documented set
//! (docs/conformance.md): they may be used as metric label values.

use mcp_listing::{Kind, ProtocolVersion};
use serde::Serialize;
use std::fmt;

mcp_listing::labelled_enum! {
    /// How strongly the spec asks for what the rule checks (its RFC 2119
    /// level; the `level` label and JSON field).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Requirement as "rule level" {
        Must => "MUST",
        Should => "SHOULD",
        /// Not a spec requirement; a pattern that breaks real clients.
        Advice => "advice",
    }
}

mcp_listing::labelled_enum! {
    /// What one rule found for one kind: not a target's health verdict.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum RuleVerdict as "rule verdict" {
        Pass => "pass",
        Fail => "fail",
        NotApplicable => "n/a",
    }
}

/// A spec section: version and path under `docs/specification/<version>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecRef {
    pub version: ProtocolVersion,
    pub section: &'static str,
}

impl SpecRef {
    const fn v2025(section: &'static str) -> Self {
        Self {
            version: ProtocolVersion::V2025_11_25,
            section,
        }
    }

    const fn v2026(section: &'static str) -> Self {
        Self {
            version: ProtocolVersion::V2026_07_28,
            section,
        }
    }
}

/// `2025-11-25 server/utilities/pagination`, as reports cite it.
impl fmt::Display for SpecRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.version, self.section)
    }
}

pub const PAGINATION_2025: SpecRef = SpecRef::v2025("server/utilities/pagination");
pub const PAGINATION_2026: SpecRef = SpecRef::v2026("server/utilities/pagination");
pub const CACHING_2026: SpecRef = SpecRef::v2026("server/utilities/caching");
pub const TOOLS_2026: SpecRef = SpecRef::v2026("server/tools");
pub const BASIC_2026: SpecRef = SpecRef::v2026("basic");
pub const SUBSCRIPTIONS_2026: SpecRef = SpecRef::v2026("basic/patterns/subscriptions");

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    /// The level when the rule applies in full; a verdict may lower it
    /// (e.g. advice under an older protocol).
    pub level: Requirement,
    pub spec: SpecRef,
    pub title: &'static str,
}

pub const LISTING_COMPLETE: Rule = Rule {
    id: "listing-complete",
    level: Requirement::Must,
    spec: PAGINATION_2025,
    title: "the listing can be walked to its end",
};
pub const CURSOR_ENDS: Rule = Rule {
    id: "cursor-ends",
    level: Requirement::Must,
    spec: PAGINATION_2025,
    title: "a page without nextCursor ends the listing",
};
pub const CURSOR_TYPE: Rule = Rule {
    id: "cursor-type",
    level: Requirement::Must,
    spec: PAGINATION_2025,
    title: "nextCursor is a string",
};
pub const CURSOR_BLANK: Rule = Rule {
    id: "cursor-blank",
    level: Requirement::Must,
    spec: PAGINATION_2026,
    title: "\"\" is not an end marker (2026-07-28) and not sent before it",
};
pub const CURSOR_CYCLE: Rule = Rule {
    id: "cursor-cycle",
    level: Requirement::Must,
    spec: PAGINATION_2025,
    title: "cursors lead forward: no cycle, no page without progress",
};
pub const ITEMS_UNIQUE: Rule = Rule {
    id: "items-unique",
    level: Requirement::Should,
    spec: TOOLS_2026,
    title: "no identity key on two pages of one listing",
};
pub const ITEMS_IDENTITY: Rule = Rule {
    id: "items-identity",
    level: Requirement::Must,
    spec: TOOLS_2026,
    title: "every item carries its identity key",
};
pub const CURSOR_INVALID: Rule = Rule {
    id: "cursor-invalid",
    level: Requirement::Should,
    spec: PAGINATION_2025,
    title: "a garbage cursor gets -32602",
};
pub const CURSOR_STABLE: Rule = Rule {
    id: "cursor-stable",
    level: Requirement::Should,
    spec: PAGINATION_2025,
    title: "the same cursor asked twice returns the same page",
};
pub const LISTING_STABLE: Rule = Rule {
    id: "listing-stable",
    level: Requirement::Should,
    spec: TOOLS_2026,
    title: "two listings in a row agree when no list_changed came",
};
pub const TOOLS_ORDER: Rule = Rule {
    id: "tools-order",
    level: Requirement::Should,
    spec: TOOLS_2026,
    title: "tools come in the same order when the set did not change",
};
pub const CACHE_TTL: Rule = Rule {
    id: "cache-ttl",
    level: Requirement::Must,
    spec: CACHING_2026,
    title: "every page carries ttlMs >= 0",
};
pub const CACHE_SCOPE: Rule = Rule {
    id: "cache-scope",
    level: Requirement::Must,
    spec: CACHING_2026,
    title: "every page carries cacheScope public or private",
};
pub const CACHE_SCOPE_CONSISTENT: Rule = Rule {
    id: "cache-scope-consistent",
    level: Requirement::Must,
    spec: CACHING_2026,
    title: "one cacheScope across the pages of a listing",
};
pub const RESULT_TYPE: Rule = Rule {
    id: "result-type",
    level: Requirement::Must,
    spec: BASIC_2026,
    title: "resultType is absent or \"complete\"",
};
pub const RESULT_TYPE_PRESENT: Rule = Rule {
    id: "result-type-present",
    level: Requirement::Must,
    spec: BASIC_2026,
    title: "resultType is present (2026-07-28)",
};
pub const LIST_CHANGED_CAPABILITY: Rule = Rule {
    id: "list-changed-capability",
    level: Requirement::Should,
    spec: TOOLS_2026,
    title: "list_changed arrives only as advertised",
};
pub const SUBSCRIPTION_ACK: Rule = Rule {
    id: "subscription-ack",
    level: Requirement::Must,
    spec: SUBSCRIPTIONS_2026,
    title: "subscriptions/listen is acknowledged first, with its subscriptionId",
};

/// Every rule, in report order. The set of `id`s is closed: metrics may
/// use them as label values.
pub const ALL: [Rule; 18] = [
    LISTING_COMPLETE,
    CURSOR_ENDS,
    CURSOR_TYPE,
    CURSOR_BLANK,
    CURSOR_CYCLE,
    ITEMS_IDENTITY,
    ITEMS_UNIQUE,
    CURSOR_INVALID,
    CURSOR_STABLE,
    LISTING_STABLE,
    TOOLS_ORDER,
    CACHE_TTL,
    CACHE_SCOPE,
    CACHE_SCOPE_CONSISTENT,
    RESULT_TYPE,
    RESULT_TYPE_PRESENT,
    LIST_CHANGED_CAPABILITY,
    SUBSCRIPTION_ACK,
];

pub fn by_id(id: &str) -> Option<Rule> {
    ALL.into_iter().find(|r| r.id == id)
}

/// Where a verdict's facts come from: never a cursor, only its hash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// Which listing (1 or 2) the page belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<u32>,
    /// The page within that listing, 1-based (the first request is page 1),
    /// as every text for people counts pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor_hash: Option<String>,
    /// Item names (identity keys), at most [`MAX_EVIDENCE_ITEMS`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
}

/// Names listed in one piece of evidence.
pub const MAX_EVIDENCE_ITEMS: usize = 10;

impl Evidence {
    /// The page at 0-based `index` of `listing`, kept as people count it.
    pub fn page(listing: u32, index: u32) -> Evidence {
        Evidence {
            listing: Some(listing),
            page: Some(mcp_listing::page_number(index)),
            ..Evidence::default()
        }
    }
    pub fn with_cursor(mut self, hash: Option<String>) -> Evidence {
        self.cursor_hash = hash;
        self
    }
    pub fn with_items<I: IntoIterator<Item = S>, S: Into<String>>(mut self, items: I) -> Evidence {
        self.items = items
            .into_iter()
            .take(MAX_EVIDENCE_ITEMS)
            .map(|item| {
                let item: String = item.into();
                if item.len() <= mcp_listing::text::MAX_NAME_BYTES {
                    item
                } else {
                    mcp_listing::text::name(&item).into_owned()
                }
            })
            .collect();
        self
    }
    pub fn is_empty(&self) -> bool {
        *self == Evidence::default()
    }
    /// One line for tables and JUnit messages.
    pub fn display(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = self.listing {
            parts.push(format!("listing {l}"));
        }
        if let Some(p) = self.page {
            parts.push(format!("page {p}"));
        }
        if let Some(c) = &self.cursor_hash {
            parts.push(format!("cursor #{c}"));
        }
        if !self.items.is_empty() {
            parts.push(format!("items {}", self.items.join(", ")));
        }
        parts.join(" · ")
    }
}

/// One rule's verdict for one kind.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    pub id: &'static str,
    pub kind: Kind,
    pub level: Requirement,
    pub verdict: RuleVerdict,
    pub spec: String,
    pub message: String,
    #[serde(skip_serializing_if = "Evidence::is_empty")]
    pub evidence: Evidence,
}

impl RuleResult {
    pub fn new(rule: Rule, kind: Kind, verdict: RuleVerdict, message: impl Into<String>) -> Self {
        RuleResult {
            id: rule.id,
            kind,
            level: rule.level,
            verdict,
            spec: rule.spec.to_string(),
            message: message.into(),
            evidence: Evidence::default(),
        }
    }
    pub fn pass(rule: Rule, kind: Kind, message: impl Into<String>) -> Self {
        Self::new(rule, kind, RuleVerdict::Pass, message)
    }
    pub fn fail(rule: Rule, kind: Kind, message: impl Into<String>) -> Self {
        Self::new(rule, kind, RuleVerdict::Fail, message)
    }
    pub fn na(rule: Rule, kind: Kind, message: impl Into<String>) -> Self {
        Self::new(rule, kind, RuleVerdict::NotApplicable, message)
    }
    pub fn level(mut self, level: Requirement) -> Self {
        self.level = level;
        self
    }
    pub fn spec(mut self, spec: SpecRef) -> Self {
        self.spec = spec.to_string();
        self
    }
    pub fn evidence(mut self, evidence: Evidence) -> Self {
        self.evidence = evidence;
        self
    }
    /// Failing at MUST: `check` exits 1.
    pub fn is_must_failure(&self) -> bool {
        self.verdict == RuleVerdict::Fail && self.level == Requirement::Must
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_label_safe() {
        let mut ids: Vec<_> = ALL.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ALL.len());
        for id in ids {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
            assert_eq!(by_id(id).map(|r| r.id), Some(id));
        }
    }

    #[test]
    fn evidence_is_bounded_and_shows_no_cursor() {
        let e = Evidence::page(1, 2)
            .with_cursor(Some("abcd1234".into()))
            .with_items((0..50).map(|i| format!("t{i}")));
        assert_eq!(e.items.len(), MAX_EVIDENCE_ITEMS);
        assert!(e
            .display()
            .starts_with("listing 1 · page 3 · cursor #abcd1234"));
    }
}
