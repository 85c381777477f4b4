//! The known catalogue of each route and kind — the last complete listing
//! of it through the tap, or the reference the application hands in — and
//! what a listing that stopped early never received of it.
//!
//! Items are compared by a 64-bit hash of their identity key as the walker
//! keeps it (`text::name`: cut to 256 bytes with a hash of the whole), so
//! names the application hands in from its own listings match; names are
//! kept once, here, cut and escaped for showing.

use crate::fact::{CatalogueSource, MissedItems};
use crate::route::RouteId;
use mcp_listing::{text, Kind};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

/// An item's identity key as compared: a hash of its kept form.
pub(crate) fn item_digest(key: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text::name(key).hash(&mut hasher);
    hasher.finish()
}

/// An item name as shown: cut as the walker keeps it, then escaped.
pub(crate) fn shown_name(key: &str) -> Arc<str> {
    Arc::from(text::escape(&text::name(key)).as_ref())
}

/// What is known of one kind's catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueInfo {
    pub items: u64,
    /// Pages its walk took (`None` for a reference).
    pub pages: Option<u32>,
    pub source: CatalogueSource,
    pub learned: Instant,
}

#[derive(Debug)]
pub(crate) struct Catalogue {
    /// Shown names by digest.
    names: HashMap<u64, Arc<str>>,
    /// Digests in shown-name order.
    order: Vec<u64>,
    info: CatalogueInfo,
    /// Bytes charged to the budget of all catalogues.
    bytes: usize,
}

impl Catalogue {
    fn new(mut items: Vec<(u64, Arc<str>)>, info: CatalogueInfo) -> Catalogue {
        items.sort_by(|a, b| a.1.cmp(&b.1));
        items.dedup_by_key(|item| item.0);
        let bytes = charge(&items);
        let order = items.iter().map(|item| item.0).collect();
        let names: HashMap<u64, Arc<str>> = items.into_iter().collect();
        let info = CatalogueInfo {
            items: names.len() as u64,
            ..info
        };
        Catalogue {
            names,
            order,
            info,
            bytes,
        }
    }

    pub(crate) fn name(&self, digest: u64) -> Option<&Arc<str>> {
        self.names.get(&digest)
    }

    pub(crate) fn contains(&self, digest: u64) -> bool {
        self.names.contains_key(&digest)
    }

    fn same_items(&self, other: &HashSet<u64>) -> bool {
        self.names.len() == other.len() && other.iter().all(|d| self.names.contains_key(d))
    }

    /// What a listing that received `received` never saw: exactly, or
    /// (`received` being `None`: its keys were not kept) by count only.
    pub(crate) fn missed(
        &self,
        received: Option<&HashSet<u64>>,
        received_count: u64,
        max_names: usize,
    ) -> MissedItems {
        let mut missed = MissedItems {
            count: 0,
            catalogue_items: self.info.items,
            catalogue_pages: self.info.pages,
            source: self.info.source,
            names: Vec::new(),
            last: None,
        };
        let Some(received) = received else {
            missed.count = self.info.items.saturating_sub(received_count);
            return missed;
        };
        for digest in self.order.iter().filter(|d| !received.contains(d)) {
            missed.count += 1;
            let name = &self.names[digest];
            if missed.names.len() < max_names {
                missed.names.push(name.clone());
            } else {
                missed.last = Some(name.clone());
            }
        }
        missed
    }
}

/// Bytes one kept item is charged besides its name (its hash twice, the
/// map's entry, the shared name's header).
const ITEM_OVERHEAD: usize = 64;

fn charge(items: &[(u64, Arc<str>)]) -> usize {
    items.iter().map(|(_, n)| n.len() + ITEM_OVERHEAD).sum()
}

/// Every route's known catalogues, one per kind, within one byte budget.
/// The route `other` stands for many paths and never has one.
#[derive(Debug)]
pub(crate) struct Catalogues {
    routes: HashMap<RouteId, [Option<Catalogue>; 4]>,
    used: usize,
    max_bytes: usize,
    max_items: usize,
}

impl Catalogues {
    pub(crate) fn new(max_items: usize, max_bytes: usize) -> Catalogues {
        Catalogues {
            routes: HashMap::new(),
            used: 0,
            max_bytes,
            max_items,
        }
    }

    pub(crate) fn get(&self, route: &RouteId, kind: Kind) -> Option<&Catalogue> {
        self.routes.get(route)?[kind as usize].as_ref()
    }

    pub(crate) fn info(&self, route: &RouteId, kind: Kind) -> Option<&CatalogueInfo> {
        self.get(route, kind).map(|c| &c.info)
    }

    /// Every known catalogue: its route, kind and what is known of it.
    pub(crate) fn all(&self) -> impl Iterator<Item = (&RouteId, Kind, &CatalogueInfo)> {
        self.routes.iter().flat_map(|(route, kinds)| {
            Kind::ALL
                .into_iter()
                .filter_map(move |k| Some((route, k, &kinds[k as usize].as_ref()?.info)))
        })
    }

    /// Bytes the catalogues are charged.
    pub(crate) fn bytes(&self) -> usize {
        self.used
    }

    /// The application's reference for `route`'s `kind`; too many items
    /// (past `max_catalogue_items`, or past what the byte budget has left)
    /// leave the kind unknown rather than half known. Whether it is known.
    pub(crate) fn set_reference<I, S>(
        &mut self,
        route: &RouteId,
        kind: Kind,
        names: I,
        pages: Option<u32>,
        now: Instant,
    ) -> bool
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut items = Vec::new();
        for name in names {
            if items.len() >= self.max_items {
                self.replace(route, kind, None);
                return false;
            }
            let name = name.as_ref();
            items.push((item_digest(name), shown_name(name)));
        }
        let info = CatalogueInfo {
            items: 0,
            pages,
            source: CatalogueSource::Reference,
            learned: now,
        };
        self.replace(route, kind, Some(Catalogue::new(items, info)))
    }

    /// A complete listing's items become the catalogue, when every one of
    /// them can be named: `extra` names those not in the catalogue known
    /// when they arrived. Whether the catalogue became known or changed.
    pub(crate) fn learn(
        &mut self,
        route: &RouteId,
        kind: Kind,
        received: &HashSet<u64>,
        extra: &[(u64, Arc<str>)],
        pages: Option<u32>,
        now: Instant,
    ) -> bool {
        if received.len() > self.max_items || route.is_other() {
            return false;
        }
        let info = CatalogueInfo {
            items: 0,
            pages,
            source: CatalogueSource::Walk,
            learned: now,
        };
        let known = self
            .routes
            .get_mut(route)
            .and_then(|k| k[kind as usize].as_mut());
        if let Some(known) = known.filter(|c| c.same_items(received)) {
            known.info = CatalogueInfo {
                items: known.info.items,
                pages: pages.or(known.info.pages),
                ..info
            };
            return false;
        }
        let extra: HashMap<u64, &Arc<str>> = extra.iter().map(|(d, n)| (*d, n)).collect();
        let mut items = Vec::with_capacity(received.len());
        for digest in received {
            let known = self.get(route, kind).and_then(|c| c.name(*digest));
            match known.or_else(|| extra.get(digest).copied()) {
                Some(name) => items.push((*digest, name.clone())),
                // Named by a catalogue replaced since: not learnable.
                None => return false,
            }
        }
        self.replace(route, kind, Some(Catalogue::new(items, info)))
    }

    /// Put `new` in `route`'s `kind` slot when it fits the budget (the
    /// slot's old catalogue given back first); whether one is kept.
    fn replace(&mut self, route: &RouteId, kind: Kind, new: Option<Catalogue>) -> bool {
        if route.is_other() {
            return false;
        }
        let slots = self.routes.entry(route.clone()).or_default();
        if let Some(old) = slots[kind as usize].take() {
            self.used = self.used.saturating_sub(old.bytes);
        }
        let fits = new.filter(|c| self.used.saturating_add(c.bytes) <= self.max_bytes);
        if let Some(c) = &fits {
            self.used += c.bytes;
        }
        let kept = fits.is_some();
        slots[kind as usize] = fits;
        if slots.iter().all(Option::is_none) {
            self.routes.remove(route);
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(names: &[&str]) -> HashSet<u64> {
        names.iter().map(|n| item_digest(n)).collect()
    }

    fn route(name: &str) -> RouteId {
        RouteId::new(name, true)
    }

    #[test]
    fn missed_items_are_named_in_order_first_and_last() {
        let mut known = Catalogues::new(100, 1 << 20);
        let now = Instant::now();
        let names: Vec<String> = (1..=14).map(|i| format!("tool-{i:03}")).collect();
        let alpha = route("/mcp/alpha");
        assert!(known.set_reference(&alpha, Kind::Tools, &names, Some(2), now));
        let seen: Vec<&str> = names[..8].iter().map(String::as_str).collect();
        let catalogue = known.get(&alpha, Kind::Tools).unwrap();
        let missed = catalogue.missed(Some(&digests(&seen)), 8, 3);
        assert_eq!(missed.count, 6);
        assert_eq!(missed.catalogue_items, 14);
        assert_eq!(missed.catalogue_pages, Some(2));
        let shown: Vec<&str> = missed.names.iter().map(|n| &**n).collect();
        assert_eq!(shown, ["tool-009", "tool-010", "tool-011"]);
        assert_eq!(missed.last.as_deref(), Some("tool-014"));
        let by_count = catalogue.missed(None, 8, 3);
        assert_eq!((by_count.count, by_count.names.len()), (6, 0));
        assert!(known.get(&route("/mcp/beta"), Kind::Tools).is_none());
    }

    #[test]
    fn a_walk_is_learned_when_every_item_can_be_named() {
        let mut known = Catalogues::new(100, 1 << 20);
        let now = Instant::now();
        let r = route("/mcp");
        known.set_reference(&r, Kind::Prompts, ["a", "b"], None, now);
        let received = digests(&["a", "b", "c"]);
        let extra = vec![(item_digest("c"), shown_name("c"))];
        assert!(known.learn(&r, Kind::Prompts, &received, &extra, Some(2), now));
        let info = known.info(&r, Kind::Prompts).unwrap();
        assert_eq!(
            (info.items, info.pages, info.source),
            (3, Some(2), CatalogueSource::Walk)
        );
        // "z" named by nothing known: the catalogue stays.
        let z = digests(&["a", "z"]);
        assert!(!known.learn(&r, Kind::Prompts, &z, &[], Some(1), now));
        assert_eq!(known.info(&r, Kind::Prompts).unwrap().items, 3);
        // The same items with pages unknown (a reused merge): pages stay.
        let same = digests(&["a", "b", "c"]);
        assert!(!known.learn(&r, Kind::Prompts, &same, &[], None, now));
        assert_eq!(known.info(&r, Kind::Prompts).unwrap().pages, Some(2));
        // `other` stands for many paths: never a catalogue.
        let other = route(crate::route::OTHER_ROUTE);
        assert!(!known.learn(&other, Kind::Prompts, &received, &extra, None, now));
        assert!(!known.set_reference(&other, Kind::Prompts, ["a"], None, now));
    }

    #[test]
    fn catalogues_stay_within_their_item_and_byte_bounds() {
        let now = Instant::now();
        let mut known = Catalogues::new(2, 1 << 20);
        assert!(!known.set_reference(&route("/a"), Kind::Tools, ["a", "b", "c"], None, now));
        assert!(known.get(&route("/a"), Kind::Tools).is_none());
        let name = |i: usize| format!("{i:0>100}");
        let mut known = Catalogues::new(100, 3 * (100 + ITEM_OVERHEAD));
        let two: Vec<String> = (0..2).map(name).collect();
        assert!(known.set_reference(&route("/a"), Kind::Tools, &two, None, now));
        assert!(!known.set_reference(&route("/b"), Kind::Tools, &two, None, now));
        assert!(known.set_reference(&route("/b"), Kind::Tools, &two[..1], None, now));
        assert_eq!(known.bytes(), 3 * (100 + ITEM_OVERHEAD));
        // Replacing gives the old one's bytes back first.
        assert!(known.set_reference(&route("/a"), Kind::Tools, &two[1..], None, now));
        assert_eq!(known.bytes(), 2 * (100 + ITEM_OVERHEAD));
        assert_eq!(known.all().count(), 2);
    }

    #[test]
    fn names_are_kept_cut_and_shown_escaped() {
        let mut known = Catalogues::new(10, 1 << 20);
        let long = format!("\x1b[31m{}", "n".repeat(100_000));
        let r = route("/mcp");
        known.set_reference(&r, Kind::Tools, [&long], None, Instant::now());
        let missed = known
            .get(&r, Kind::Tools)
            .unwrap()
            .missed(Some(&HashSet::new()), 0, 4);
        let name = &missed.names[0];
        assert!(name.len() <= text::MAX_NAME_BYTES + 8, "{}", name.len());
        assert!(name.starts_with("\\x1b[31m"));
    }
}
