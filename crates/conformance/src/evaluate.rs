//! The rules as pure functions over what one kind's listings recorded.
//! Each returns one verdict; docs/conformance.md quotes the spec sentence
//! behind each and says what a failure means for clients.

use super::record::{Field, NextCursor, PageObservation};
use super::rule::{
    self, Evidence, Requirement, Rule, RuleResult, CACHING_2026, SUBSCRIPTIONS_2026,
};
use super::run::{GarbageAnswer, KindObservations, Listed, RepeatAnswer, SubscriptionObservation};
use mcp_listing::{EndReason, Guard, Kind, Outcome};
use std::collections::BTreeSet;

/// A rule's check: its verdict for one kind.
type Check = fn(&KindObservations, Rule) -> RuleResult;

/// Every rule with its check, in catalogue order.
const CHECKS: [(Rule, Check); 18] = [
    (rule::LISTING_COMPLETE, listing_complete),
    (rule::CURSOR_ENDS, cursor_ends),
    (rule::CURSOR_TYPE, cursor_type),
    (rule::CURSOR_BLANK, cursor_blank),
    (rule::CURSOR_CYCLE, cursor_cycle),
    (rule::ITEMS_IDENTITY, items_identity),
    (rule::ITEMS_UNIQUE, items_unique),
    (rule::CURSOR_INVALID, cursor_invalid),
    (rule::CURSOR_STABLE, cursor_stable),
    (rule::LISTING_STABLE, listing_stable),
    (rule::TOOLS_ORDER, tools_order),
    (rule::CACHE_TTL, cache_ttl),
    (rule::CACHE_SCOPE, cache_scope),
    (rule::CACHE_SCOPE_CONSISTENT, cache_scope_consistent),
    (rule::RESULT_TYPE, result_type),
    (rule::RESULT_TYPE_PRESENT, result_type_present),
    (rule::LIST_CHANGED_CAPABILITY, list_changed_capability),
    (rule::SUBSCRIPTION_ACK, subscription_ack),
];

/// Every rule for one kind, in catalogue order.
pub fn evaluate(o: &KindObservations) -> Vec<RuleResult> {
    let k = o.kind;
    if o.first.report.outcome == Outcome::Unsupported {
        return vec![RuleResult::na(
            rule::LISTING_COMPLETE,
            k,
            format!("the server does not advertise {}", k.capability()),
        )];
    }
    CHECKS.iter().map(|(rl, check)| check(o, *rl)).collect()
}

/// Both listings, numbered 1 and 2.
fn listings(o: &KindObservations) -> Vec<(u32, &Listed)> {
    let mut v = vec![(1, &o.first)];
    if let Some(s) = &o.second {
        v.push((2, s));
    }
    v
}

fn cursor_hash(p: &PageObservation) -> Option<String> {
    p.sent_cursor.as_ref().map(|c| c.hash())
}

/// Every successful page of both listings with its listing number.
fn ok_pages(o: &KindObservations) -> Vec<(u32, &PageObservation, &super::record::PageContent)> {
    listings(o)
        .into_iter()
        .flat_map(|(n, l)| {
            l.pages
                .iter()
                .filter_map(move |p| p.outcome.as_ref().ok().map(|c| (n, p, c)))
        })
        .collect()
}

fn listing_complete(o: &KindObservations, rl: Rule) -> RuleResult {
    let r = &o.first.report;
    let k = o.kind;
    if r.outcome.is_complete() {
        return RuleResult::pass(
            rl,
            k,
            format!(
                "{} items in {} page{}",
                r.unique_items,
                r.final_pages,
                if r.final_pages == 1 { "" } else { "s" }
            ),
        );
    }
    let why = r.reason.map_or(r.outcome.label(), EndReason::label);
    let detail = r
        .detail
        .as_deref()
        .map(|d| format!(": {d}"))
        .unwrap_or_default();
    let last = r.pages.last();
    RuleResult::fail(rl, k, format!("{} {why}{detail}", r.outcome.label())).evidence(
        last.map(|p| Evidence::page(1, p.index).with_cursor(p.sent_cursor.clone()))
            .unwrap_or_default(),
    )
}

fn cursor_ends(o: &KindObservations, rl: Rule) -> RuleResult {
    let r = &o.first.report;
    let k = o.kind;
    match r.outcome {
        Outcome::Aborted(Guard::PageCap | Guard::ItemCap) => {
            let last = o.first.pages.last();
            RuleResult::fail(
                rl,
                k,
                format!(
                    "still handing out new cursors after {} pages ({}): a client never reaches the end",
                    r.final_pages,
                    r.reason.map_or("cap", EndReason::label)
                ),
            )
            .evidence(
                last.map(|p| Evidence::page(1, p.index).with_cursor(cursor_hash(p)))
                    .unwrap_or_default(),
            )
        }
        Outcome::Complete if r.blank_cursor_end => {
            RuleResult::na(rl, k, "ended on nextCursor \"\" (see cursor-blank)")
        }
        Outcome::Complete => {
            RuleResult::pass(rl, k, format!("page {} had no nextCursor", r.final_pages))
        }
        _ => RuleResult::na(rl, k, "the listing did not reach its end"),
    }
}

fn cursor_type(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let pages = ok_pages(o);
    for (n, p, c) in &pages {
        let bad = match &c.next {
            Some(NextCursor::Other(t)) => Some(format!("nextCursor is a {t}, not a string")),
            Some(NextCursor::Null) => Some(
                "nextCursor is null: not a string (most clients read it as the end; strict ones reject the result)"
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(msg) = bad {
            return RuleResult::fail(rl, k, msg)
                .evidence(Evidence::page(*n, p.index).with_cursor(cursor_hash(p)));
        }
    }
    if pages.is_empty() {
        return RuleResult::na(rl, k, "no page was answered");
    }
    RuleResult::pass(rl, k, "every nextCursor was a string or absent")
}

fn cursor_blank(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    for (n, l) in listings(o) {
        let pages = &l.pages;
        let Some(i) = pages.iter().position(|p| {
            p.outcome
                .as_ref()
                .is_ok_and(|c| matches!(&c.next, Some(NextCursor::Str(s)) if s.is_blank()))
        }) else {
            continue;
        };
        let at = &pages[i];
        if !o.era.is_modern() {
            return RuleResult::fail(
                rl,
                k,
                "nextCursor \"\" under a pre-2026-07-28 protocol: clients of that era disagree (some stop, some loop), and 2026-07-28 clients must follow it",
            )
            .level(Requirement::Advice)
            .evidence(Evidence::page(n, at.index).with_cursor(cursor_hash(at)));
        }
        // Modern: "" is a cursor. Used as an end marker, asking with it
        // brings nothing new (typically page 1 again).
        let seen: BTreeSet<&str> = pages[..=i]
            .iter()
            .filter_map(|p| p.outcome.as_ref().ok())
            .flat_map(|c| c.keys.iter().map(String::as_str))
            .collect();
        let Some(follow) = pages.get(i + 1) else {
            return RuleResult::na(rl, k, "nextCursor \"\" was not followed");
        };
        const HOW_TO_END: &str =
            "a listing ends by leaving nextCursor out (or null), never with \"\"";
        let c = match &follow.outcome {
            Ok(c) => c,
            Err((code, error)) => {
                let answer = match code {
                    Some(code) => format!("JSON-RPC error {code} ({error})"),
                    None => error.to_string(),
                };
                return RuleResult::fail(
                    rl,
                    k,
                    format!("nextCursor \"\" was refused when sent back: {answer}; 2026-07-28 clients must send it, so {HOW_TO_END}"),
                )
                .evidence(Evidence::page(n, follow.index).with_cursor(cursor_hash(follow)));
            }
        };
        {
            let new = c
                .keys
                .iter()
                .filter(|key| !seen.contains(key.as_str()))
                .count();
            if new == 0 {
                return RuleResult::fail(
                    rl,
                    k,
                    format!("nextCursor \"\" used as an end marker: asking with \"\" brought no new items, so every 2026-07-28 client loops; {HOW_TO_END}"),
                )
                .evidence(
                    Evidence::page(n, follow.index)
                        .with_cursor(cursor_hash(follow))
                        .with_items(c.keys.iter().cloned()),
                );
            }
        }
        return RuleResult::pass(rl, k, "\"\" was a working cursor");
    }
    RuleResult::pass(rl, k, "no page answered nextCursor \"\"")
}

fn cursor_cycle(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    for (n, l) in listings(o) {
        if let Outcome::Aborted(g @ (Guard::CursorCycle | Guard::NoProgress)) = l.report.outcome {
            let last = l.pages.last();
            let msg = match g {
                Guard::CursorCycle => "a page returned a cursor already sent in this listing: a client without a guard loops forever",
                _ => "a repeated cursor brought no new items: a client without a guard loops forever",
            };
            return RuleResult::fail(rl, k, msg).evidence(
                last.map(|p| Evidence::page(n, p.index).with_cursor(cursor_hash(p)))
                    .unwrap_or_default(),
            );
        }
    }
    if o.first.report.outcome.is_complete() {
        RuleResult::pass(rl, k, "every cursor led forward")
    } else {
        RuleResult::na(rl, k, "the listing did not reach its end")
    }
}

fn items_identity(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let mut missing = 0u64;
    let mut first_page = None;
    for (n, p, c) in ok_pages(o) {
        if c.missing_keys > 0 {
            missing += u64::from(c.missing_keys);
            first_page.get_or_insert((n, p.index));
        }
    }
    match first_page {
        Some((n, page)) => RuleResult::fail(
            rl,
            k,
            format!(
                "{missing} item(s) without `{}`: clients cannot call or address them",
                k.identity_key()
            ),
        )
        .evidence(Evidence::page(n, page)),
        None if ok_pages(o).is_empty() => RuleResult::na(rl, k, "no page was answered"),
        None => RuleResult::pass(rl, k, format!("every item had `{}`", k.identity_key())),
    }
}

fn items_unique(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let r = &o.first.report;
    // Only tool names have a SHOULD; for the others the caching section
    // says duplicates can happen, so a duplicate is advice.
    let level = should_if(k == Kind::Tools);
    let spec = if k == Kind::Tools {
        rl.spec
    } else {
        CACHING_2026
    };
    if !r.outcome.is_complete() {
        return RuleResult::na(rl, k, "the listing did not reach its end")
            .level(level)
            .spec(spec);
    }
    if r.duplicate_items > 0 {
        return RuleResult::fail(
            rl,
            k,
            format!(
                "{} duplicate(s) across pages: clients show or register the same item twice",
                r.duplicate_items
            ),
        )
        .level(level)
        .spec(spec)
        .evidence(
            Evidence {
                listing: Some(1),
                ..Evidence::default()
            }
            .with_items(r.duplicate_names.iter().cloned()),
        );
    }
    RuleResult::pass(rl, k, format!("{} unique identity keys", r.unique_items))
        .level(level)
        .spec(spec)
}

fn cursor_invalid(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let ev = Evidence::default().with_cursor(Some(mcp_listing::cursor::short_hash(
        super::run::GARBAGE_CURSOR,
    )));
    match &o.garbage {
        None => RuleResult::na(rl, k, "the listing did not complete; no garbage cursor sent"),
        Some(GarbageAnswer::InvalidParams) => {
            RuleResult::pass(rl, k, "a garbage cursor got -32602")
        }
        Some(GarbageAnswer::Restarted { items }) => RuleResult::fail(
            rl,
            k,
            "a garbage cursor got page 1 again: a client holding a stale cursor silently starts over and collects duplicates",
        )
        .evidence(ev.with_items(items.iter().cloned())),
        Some(GarbageAnswer::Accepted { items }) => RuleResult::fail(
            rl,
            k,
            format!("a garbage cursor was accepted ({items} items): a client cannot tell a lost position from the end"),
        )
        .evidence(ev),
        Some(GarbageAnswer::OtherError { code, error }) => RuleResult::fail(
            rl,
            k,
            match code {
                Some(c) => format!("a garbage cursor got error {c}, not -32602: clients cannot tell it from a server fault"),
                None => format!("a garbage cursor got {error}, not -32602"),
            },
        )
        .evidence(ev),
    }
}

fn cursor_stable(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let Some(rep) = &o.repeat else {
        return RuleResult::na(rl, k, "no continuation cursor to ask twice");
    };
    let ev = Evidence::page(2, rep.page).with_cursor(Some(rep.cursor_hash.clone()));
    match &rep.answer {
        RepeatAnswer::Same => RuleResult::pass(rl, k, "asked twice, the same page came back"),
        RepeatAnswer::Different { first, again } => {
            let differ: Vec<String> = again
                .iter()
                .filter(|x| !first.contains(x))
                .chain(first.iter().filter(|x| !again.contains(x)))
                .cloned()
                .collect();
            RuleResult::fail(
                rl,
                k,
                format!(
                    "asked twice, the cursor gave a different page ({} then {} items): a retried request skips or repeats items",
                    first.len(),
                    again.len()
                ),
            )
            .evidence(ev.with_items(differ))
        }
        RepeatAnswer::Failed { code, error } => RuleResult::fail(
            rl,
            k,
            match code {
                Some(c) => format!("asked a second time, the cursor got error {c}"),
                None => format!("asked a second time, the cursor got {error}"),
            },
        )
        .evidence(ev),
    }
}

/// SHOULD where the rule applies in full, advice otherwise.
fn should_if(in_full: bool) -> Requirement {
    if in_full {
        Requirement::Should
    } else {
        Requirement::Advice
    }
}

/// Both listings, when set and order comparison is fair: both completed
/// and no list_changed arrived. Otherwise rule `rl`'s not-applicable
/// verdict at `level`, saying why.
fn comparable(
    o: &KindObservations,
    rl: Rule,
    level: Requirement,
) -> Result<(&Listed, &Listed), Box<RuleResult>> {
    let na = |why: &str| Err(Box::new(RuleResult::na(rl, o.kind, why).level(level)));
    let Some(second) = &o.second else {
        return na("no second listing");
    };
    if !o.first.report.outcome.is_complete() || !second.report.outcome.is_complete() {
        return na("a listing did not complete");
    }
    if o.first.list_changed() + second.list_changed() > 0 {
        return na("a list_changed notification arrived");
    }
    Ok((&o.first, second))
}

fn listing_stable(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let level = should_if(o.advertised_list_changed == Some(true));
    let (a, b) = match comparable(o, rl, level) {
        Ok(x) => x,
        Err(na) => return *na,
    };
    let sa: BTreeSet<&String> = a.report.names.iter().collect();
    let sb: BTreeSet<&String> = b.report.names.iter().collect();
    if sa == sb {
        return RuleResult::pass(
            rl,
            k,
            format!("both listings had the same {} items", sa.len()),
        )
        .level(level);
    }
    let gone: Vec<String> = sa.difference(&sb).map(|s| format!("-{s}")).collect();
    let came: Vec<String> = sb.difference(&sa).map(|s| format!("+{s}")).collect();
    RuleResult::fail(
        rl,
        k,
        format!(
            "the second listing differs ({} removed, {} added) and no list_changed came: clients keep a stale catalogue",
            gone.len(),
            came.len()
        ),
    )
    .level(level)
    .evidence(Evidence {
        listing: Some(2),
        ..Evidence::default()
    }
    .with_items(gone.into_iter().chain(came)))
}

fn tools_order(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    if k != Kind::Tools {
        return RuleResult::na(rl, k, "only tools have an ordering rule");
    }
    let level = should_if(o.era.is_modern());
    let (a, b) = match comparable(o, rl, level) {
        Ok(x) => x,
        Err(na) => return *na,
    };
    if a.report.names != b.report.names {
        return RuleResult::na(rl, k, "the set changed (see listing-stable)").level(level);
    }
    let (oa, ob) = (a.ordered_keys(), b.ordered_keys());
    match oa.iter().zip(&ob).position(|(x, y)| x != y) {
        None => RuleResult::pass(rl, k, "the same order both times").level(level),
        Some(i) => RuleResult::fail(
            rl,
            k,
            format!("the order changed at position {i}: client caches and LLM prompt caches miss"),
        )
        .level(level)
        .evidence(
            Evidence {
                listing: Some(2),
                ..Evidence::default()
            }
            .with_items([oa[i].to_string(), ob[i].to_string()]),
        ),
    }
}

fn modern_only(o: &KindObservations, rl: Rule) -> Option<RuleResult> {
    (!o.era.is_modern()).then(|| RuleResult::na(rl, o.kind, "2026-07-28 only"))
}

fn cache_ttl(o: &KindObservations, rl: Rule) -> RuleResult {
    every_page_carries(
        o,
        rl,
        |c| match &c.ttl_ms {
            Some(Field::Valid(_)) => None,
            Some(Field::Invalid(v)) => Some(format!("ttlMs is {v}, not an integer >= 0")),
            _ => Some("ttlMs missing".to_string()),
        },
        "clients fall back to treating the page as stale",
        "every page carried ttlMs",
    )
}

fn cache_scope(o: &KindObservations, rl: Rule) -> RuleResult {
    every_page_carries(
        o,
        rl,
        |c| match &c.cache_scope {
            Some(Field::Valid(s)) if s == "public" || s == "private" => None,
            Some(Field::Valid(s)) => {
                Some(format!("cacheScope {s:?} is neither public nor private"))
            }
            Some(Field::Invalid(v)) => Some(format!("cacheScope is {v}")),
            _ => Some("cacheScope missing".to_string()),
        },
        "shared caches cannot tell whether they may keep the page",
        "every page carried cacheScope",
    )
}

/// A modern-only rule that every answered page must meet: `bad` names what
/// a page lacks, the first such page fails the rule with `consequence`.
fn every_page_carries(
    o: &KindObservations,
    rl: Rule,
    bad: impl Fn(&super::record::PageContent) -> Option<String>,
    consequence: &str,
    pass: &str,
) -> RuleResult {
    if let Some(na) = modern_only(o, rl) {
        return na;
    }
    for (n, p, c) in ok_pages(o) {
        if let Some(msg) = bad(c) {
            return RuleResult::fail(rl, o.kind, format!("{msg}: {consequence}"))
                .evidence(Evidence::page(n, p.index).with_cursor(cursor_hash(p)));
        }
    }
    RuleResult::pass(rl, o.kind, pass)
}

fn cache_scope_consistent(o: &KindObservations, rl: Rule) -> RuleResult {
    if let Some(na) = modern_only(o, rl) {
        return na;
    }
    for (n, l) in listings(o) {
        let mut first: Option<&str> = None;
        for p in l.final_attempt() {
            let Ok(c) = &p.outcome else { continue };
            let Some(Field::Valid(s)) = &c.cache_scope else {
                continue;
            };
            match first {
                None => first = Some(s),
                Some(f) if f != s => {
                    return RuleResult::fail(
                        rl,
                        o.kind,
                        format!("cacheScope {f:?} on page 0 but {s:?} later: a shared cache may serve private pages to other users"),
                    )
                    .evidence(Evidence::page(n, p.index).with_cursor(cursor_hash(p)));
                }
                _ => {}
            }
        }
    }
    RuleResult::pass(rl, o.kind, "one cacheScope per listing")
}

fn result_type(o: &KindObservations, rl: Rule) -> RuleResult {
    for (n, p, c) in ok_pages(o) {
        let bad = match &c.result_type {
            Some(Field::Valid(s)) if s != "complete" => Some(format!("resultType {s:?}")),
            Some(Field::Invalid(v)) => Some(format!("resultType is {v}")),
            _ => None,
        };
        if let Some(msg) = bad {
            return RuleResult::fail(
                rl,
                o.kind,
                format!("{msg} on a list result: clients must treat it as invalid"),
            )
            .evidence(Evidence::page(n, p.index).with_cursor(cursor_hash(p)));
        }
    }
    RuleResult::pass(rl, o.kind, "resultType absent or \"complete\"")
}

fn result_type_present(o: &KindObservations, rl: Rule) -> RuleResult {
    if let Some(na) = modern_only(o, rl) {
        return na;
    }
    for (n, p, c) in ok_pages(o) {
        if matches!(c.result_type, Some(Field::Absent) | None) {
            return RuleResult::fail(
                rl,
                o.kind,
                "resultType missing (clients read it as \"complete\")",
            )
            .evidence(Evidence::page(n, p.index).with_cursor(cursor_hash(p)));
        }
    }
    RuleResult::pass(rl, o.kind, "every page carried resultType")
}

fn list_changed_capability(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    let heard: u32 = listings(o).iter().map(|(_, l)| l.list_changed()).sum();
    let first_page = listings(o).into_iter().find_map(|(n, l)| {
        l.pages
            .iter()
            .find(|p| p.list_changed > 0)
            .map(|p| Evidence::page(n, p.index))
    });
    if o.era.is_modern() && heard > 0 {
        return RuleResult::fail(
            rl,
            k,
            format!(
                "{heard} {} outside a subscriptions/listen stream that asked for it",
                k.list_changed_method()
            ),
        )
        .level(Requirement::Must)
        .spec(SUBSCRIPTIONS_2026)
        .evidence(first_page.unwrap_or_default());
    }
    match (o.advertised_list_changed, heard) {
        (Some(true), n) => RuleResult::pass(rl, k, format!("listChanged advertised; {n} notification(s) heard")),
        (_, 0) => RuleResult::pass(rl, k, "listChanged not advertised and none heard"),
        (_, n) => RuleResult::fail(
            rl,
            k,
            format!("{n} {} without listChanged advertised: clients that trust the capability never listen", k.list_changed_method()),
        )
        .evidence(first_page.unwrap_or_default()),
    }
}

fn subscription_ack(o: &KindObservations, rl: Rule) -> RuleResult {
    let k = o.kind;
    match &o.subscription {
        None => RuleResult::na(rl, k, "no subscriptions/listen stream opened (2026-07-28 with listChanged only)"),
        Some(SubscriptionObservation::Acknowledged { honoured: true }) => {
            RuleResult::pass(rl, k, "acknowledged first, with our subscriptionId")
        }
        Some(SubscriptionObservation::Acknowledged { honoured: false }) => RuleResult::fail(
            rl,
            k,
            "the acknowledgement leaves out this kind although listChanged is advertised: list changes are never delivered",
        )
        .level(Requirement::Should),
        Some(SubscriptionObservation::NotAcknowledged { detail }) => RuleResult::fail(
            rl,
            k,
            format!("{detail}: a client cannot tell a live subscription from a dead one"),
        ),
    }
}
