//! The known catalogue of each kind — the last complete listing through
//! the tap, or the reference the application hands in — and what a listing
//! that stopped early never received of it.
//!
//! Items are compared by a 64-bit hash of their identity key as the walker
//! keeps it (`text::name`: cut to 256 bytes with a hash of the whole), so
//! names the application hands in from its own listings match; names are
//! kept once, here, cut and escaped for showing.

use crate::fact::{CatalogueSource, MissedItems};
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
}

impl Catalogue {
    fn new(mut items: Vec<(u64, Arc<str>)>, info: CatalogueInfo) -> Catalogue {
        items.sort_by(|a, b| a.1.cmp(&b.1));
        items.dedup_by_key(|item| item.0);
        let order = items.iter().map(|item| item.0).collect();
        let names: HashMap<u64, Arc<str>> = items.into_iter().collect();
        let info = CatalogueInfo {
            items: names.len() as u64,
            ..info
        };
        Catalogue { names, order, info }
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

/// Every kind's known catalogue.
#[derive(Debug, Default)]
pub(crate) struct Catalogues {
    kinds: [Option<Catalogue>; 4],
}

impl Catalogues {
    pub(crate) fn get(&self, kind: Kind) -> Option<&Catalogue> {
        self.kinds[kind as usize].as_ref()
    }

    pub(crate) fn info(&self, kind: Kind) -> Option<&CatalogueInfo> {
        self.get(kind).map(|c| &c.info)
    }

    /// The application's reference for `kind`; too many items (past
    /// `max_items`) leave the kind unknown rather than half known.
    pub(crate) fn set_reference<I, S>(
        &mut self,
        kind: Kind,
        names: I,
        max_items: usize,
        now: Instant,
    ) where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut items = Vec::new();
        for name in names {
            if items.len() >= max_items {
                self.kinds[kind as usize] = None;
                return;
            }
            let name = name.as_ref();
            items.push((item_digest(name), shown_name(name)));
        }
        let info = CatalogueInfo {
            items: 0,
            pages: None,
            source: CatalogueSource::Reference,
            learned: now,
        };
        self.kinds[kind as usize] = Some(Catalogue::new(items, info));
    }

    /// A complete listing's items become the catalogue, when every one of
    /// them can be named: `extra` names those not in the catalogue known
    /// when they arrived.
    pub(crate) fn learn(
        &mut self,
        kind: Kind,
        received: &HashSet<u64>,
        extra: &[(u64, Arc<str>)],
        pages: Option<u32>,
        max_items: usize,
        now: Instant,
    ) {
        if received.len() > max_items {
            return;
        }
        let info = CatalogueInfo {
            items: 0,
            pages,
            source: CatalogueSource::Walk,
            learned: now,
        };
        let slot = &mut self.kinds[kind as usize];
        if let Some(known) = slot.as_mut().filter(|c| c.same_items(received)) {
            known.info = CatalogueInfo {
                items: known.info.items,
                pages: pages.or(known.info.pages),
                ..info
            };
            return;
        }
        let extra: HashMap<u64, &Arc<str>> = extra.iter().map(|(d, n)| (*d, n)).collect();
        let mut items = Vec::with_capacity(received.len());
        for digest in received {
            let known = slot.as_ref().and_then(|c| c.name(*digest));
            match known.or_else(|| extra.get(digest).copied()) {
                Some(name) => items.push((*digest, name.clone())),
                // Named by a catalogue replaced since: not learnable.
                None => return,
            }
        }
        *slot = Some(Catalogue::new(items, info));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(names: &[&str]) -> HashSet<u64> {
        names.iter().map(|n| item_digest(n)).collect()
    }

    #[test]
    fn missed_items_are_named_in_order_first_and_last() {
        let mut known = Catalogues::default();
        let now = Instant::now();
        let names: Vec<String> = (1..=14).map(|i| format!("tool-{i:03}")).collect();
        known.set_reference(Kind::Tools, &names, 100, now);
        let seen: Vec<&str> = names[..8].iter().map(String::as_str).collect();
        let catalogue = known.get(Kind::Tools).unwrap();
        let missed = catalogue.missed(Some(&digests(&seen)), 8, 3);
        assert_eq!(missed.count, 6);
        assert_eq!(missed.catalogue_items, 14);
        let shown: Vec<&str> = missed.names.iter().map(|n| &**n).collect();
        assert_eq!(shown, ["tool-009", "tool-010", "tool-011"]);
        assert_eq!(missed.last.as_deref(), Some("tool-014"));
        let by_count = catalogue.missed(None, 8, 3);
        assert_eq!((by_count.count, by_count.names.len()), (6, 0));
    }

    #[test]
    fn a_walk_is_learned_when_every_item_can_be_named() {
        let mut known = Catalogues::default();
        let now = Instant::now();
        known.set_reference(Kind::Prompts, ["a", "b"], 100, now);
        let received = digests(&["a", "b", "c"]);
        let extra = vec![(item_digest("c"), shown_name("c"))];
        known.learn(Kind::Prompts, &received, &extra, Some(2), 100, now);
        let info = known.info(Kind::Prompts).unwrap();
        assert_eq!(
            (info.items, info.pages, info.source),
            (3, Some(2), CatalogueSource::Walk)
        );
        // "z" named by nothing known: the catalogue stays.
        known.learn(Kind::Prompts, &digests(&["a", "z"]), &[], Some(1), 100, now);
        assert_eq!(known.info(Kind::Prompts).unwrap().items, 3);
        // Too large: not kept.
        known.learn(
            Kind::Prompts,
            &digests(&["a", "b", "c"]),
            &[],
            Some(1),
            2,
            now,
        );
        // The same items with pages unknown (a reused merge): pages stay.
        known.learn(
            Kind::Prompts,
            &digests(&["a", "b", "c"]),
            &[],
            None,
            100,
            now,
        );
        assert_eq!(known.info(Kind::Prompts).unwrap().pages, Some(2));
        assert_eq!(known.info(Kind::Prompts).unwrap().pages, Some(2));
    }

    #[test]
    fn names_are_kept_cut_and_shown_escaped() {
        let mut known = Catalogues::default();
        let long = format!("\x1b[31m{}", "n".repeat(100_000));
        known.set_reference(Kind::Tools, [&long], 10, Instant::now());
        let missed = known
            .get(Kind::Tools)
            .unwrap()
            .missed(Some(&HashSet::new()), 0, 4);
        let name = &missed.names[0];
        assert!(name.len() <= text::MAX_NAME_BYTES + 8, "{}", name.len());
        assert!(name.starts_with("\\x1b[31m"));
        let mut too_many = Catalogues::default();
        too_many.set_reference(Kind::Tools, ["a", "b", "c"], 2, Instant::now());
        assert!(too_many.get(Kind::Tools).is_none());
    }
}
