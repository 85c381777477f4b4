//! Churn of one complete listing against the previous one, and a gateway's
//! gaps against a reference (origin) listing.

use super::names::NameList;
use crate::config::NameMap;
use mcp_listing::fingerprint::ItemChange;
use mcp_listing::{ListingReport, Outcome};
use serde::Serialize;
use std::collections::BTreeSet;

/// Churn of one kind against the previous complete listing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindDiff {
    /// Whether a previous complete listing existed to compare with.
    pub had_baseline: bool,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Fewer unique items, no list_changed notice, no error.
    pub silent_shrink: bool,
    pub previous_items: u64,
    #[serde(flatten)]
    pub drift: ContentDrift,
}

/// Items in both listings whose content changed (item-content drift).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ContentDrift {
    /// Counted in full; `changed` names the first [`MAX_CHANGES_NAMED`].
    pub changed_items: u64,
    pub changed: Vec<ItemChange>,
}

/// Changed items named per listing; the rest are only counted.
pub const MAX_CHANGES_NAMED: usize = 50;

/// Compare a listing with the previous complete one (if any). Only complete
/// listings are compared: an aborted walk's partial set says nothing.
pub fn diff(previous: Option<&NameList>, listing: &ListingReport) -> Option<KindDiff> {
    if listing.outcome != Outcome::Complete {
        return None;
    }
    let Some(previous) = previous else {
        return Some(KindDiff {
            had_baseline: false,
            ..KindDiff::default()
        });
    };
    let old: BTreeSet<&str> = previous.iter().collect();
    let new: BTreeSet<&str> = listing.names.iter().map(String::as_str).collect();
    let added: Vec<String> = new.difference(&old).map(|s| s.to_string()).collect();
    let removed: Vec<String> = old.difference(&new).map(|s| s.to_string()).collect();
    // A shrink the server never announced: no list_changed seen and no
    // restart because of one. Errors cannot occur here (outcome complete).
    let announced = listing.list_changed_notifications > 0;
    let silent_shrink = listing.unique_items < old.len() as u64 && !announced;
    Some(KindDiff {
        had_baseline: true,
        added,
        removed,
        silent_shrink,
        previous_items: old.len() as u64,
        ..KindDiff::default()
    })
}

/// Items of a reference (origin) listing missing from a gateway's listing,
/// after the gateway's renaming (`map`) is applied to the origin's names.
/// The origin's own names are returned.
pub fn missing_from(gateway: &[String], reference: &NameList, map: &NameMap) -> Vec<String> {
    let have: BTreeSet<&str> = gateway.iter().map(String::as_str).collect();
    reference
        .iter()
        .filter(|name| !have.contains(map.apply(name).as_ref()))
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_listing::Kind;

    fn listing(names: &[&str], notifications: u32) -> ListingReport {
        let mut l = crate::poll::poll_report::complete_listing_for_test(Kind::Tools, names);
        l.list_changed_notifications = notifications;
        l
    }

    fn names(v: &[&str]) -> NameList {
        v.iter().copied().collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn first_listing_has_no_baseline() {
        let d = diff(None, &listing(&["a"], 0)).unwrap();
        assert!(!d.had_baseline);
        assert!(d.added.is_empty() && !d.silent_shrink);
    }

    #[test]
    fn silent_shrink_needs_fewer_items_and_no_notice() {
        let prev = names(&["a", "b", "c"]);
        let d = diff(Some(&prev), &listing(&["a", "d"], 0)).unwrap();
        assert_eq!(d.removed, strings(&["b", "c"]));
        assert_eq!(d.added, strings(&["d"]));
        assert!(d.silent_shrink);
        assert_eq!(d.previous_items, 3);
        let announced = diff(Some(&prev), &listing(&["a"], 1)).unwrap();
        assert!(!announced.silent_shrink);
        assert_eq!(announced.removed.len(), 2);
        // Churn at equal size is not a shrink.
        let swap = diff(Some(&prev), &listing(&["a", "b", "x"], 0)).unwrap();
        assert!(!swap.silent_shrink);
    }

    #[test]
    fn incomplete_listings_are_not_compared() {
        let mut l = listing(&[], 0);
        l.outcome = Outcome::Aborted(mcp_listing::Guard::CursorCycle);
        assert!(diff(Some(&names(&["a"])), &l).is_none());
    }

    #[test]
    fn reference_items_missing_with_prefix() {
        let gw = strings(&["a_one", "a_two", "b_x"]);
        let origin = names(&["one", "two", "three"]);
        let a = NameMap::prefix(Some("a_".into()));
        assert_eq!(missing_from(&gw, &origin, &a), strings(&["three"]));
        assert_eq!(missing_from(&gw, &origin, &NameMap::default()).len(), 3);
    }
}
