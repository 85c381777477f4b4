//! A map with a cap that forgets what was touched longest ago: sessions,
//! exchanges, pending requests and cursor origins are all keyed by values
//! a client chooses, so each is one of these.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    map: HashMap<K, (V, u64)>,
    /// Touch order: the smallest stamp was touched longest ago.
    order: BTreeMap<u64, K>,
    next: u64,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    pub(crate) fn new(cap: usize) -> Lru<K, V> {
        Lru {
            map: HashMap::new(),
            order: BTreeMap::new(),
            next: 0,
            cap: cap.max(1),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    /// The value, without counting as a touch.
    pub(crate) fn peek(&self, key: &K) -> Option<&V> {
        self.map.get(key).map(|(v, _)| v)
    }

    /// The value, without counting as a touch.
    pub(crate) fn peek_mut(&mut self, key: &K) -> Option<&mut V> {
        self.map.get_mut(key).map(|(v, _)| v)
    }

    /// Insert (or replace) `key`; when that passes the cap, the entry
    /// touched longest ago is removed and returned.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        if let Some((_, stamp)) = self.map.remove(&key) {
            self.order.remove(&stamp);
        }
        self.order.insert(self.next, key.clone());
        self.map.insert(key, (value, self.next));
        self.next += 1;
        if self.map.len() > self.cap {
            return self.pop_oldest();
        }
        None
    }

    /// The value of `key`, made the most recently touched; inserted with
    /// `make` when missing, which may first remove (and return) the entry
    /// touched longest ago to stay within the cap.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: K,
        make: impl FnOnce() -> V,
    ) -> (&mut V, Option<(K, V)>) {
        let evicted = if !self.map.contains_key(&key) && self.map.len() >= self.cap {
            self.pop_oldest()
        } else {
            None
        };
        let stamp = self.next;
        self.next += 1;
        let entry = self
            .map
            .entry(key.clone())
            .or_insert_with(|| (make(), stamp));
        if entry.1 != stamp {
            self.order.remove(&entry.1);
            entry.1 = stamp;
        }
        self.order.insert(stamp, key);
        (&mut entry.0, evicted)
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let (value, stamp) = self.map.remove(key)?;
        self.order.remove(&stamp);
        self.settle();
        Some(value)
    }

    /// A map that emptied gives its room back (a flood's sessions gone,
    /// the table they grew stays otherwise).
    fn settle(&mut self) {
        let room = self.map.capacity();
        if room > 64 && self.map.len() * 4 < room {
            self.map.shrink_to(self.map.len() * 2);
        }
    }

    /// The entry touched longest ago, if any.
    pub(crate) fn oldest(&self) -> Option<(&K, &V)> {
        let (_, key) = self.order.first_key_value()?;
        self.map.get(key).map(|(v, _)| (key, v))
    }

    pub(crate) fn pop_oldest(&mut self) -> Option<(K, V)> {
        let (_, key) = self.order.pop_first()?;
        let (value, _) = self.map.remove(&key)?;
        self.settle();
        Some((key, value))
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut().map(|(v, _)| v)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values().map(|(v, _)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_touched_longest_ago_goes_first() {
        let mut lru = Lru::new(2);
        assert!(lru.insert("a", 1).is_none());
        assert!(lru.insert("b", 2).is_none());
        assert_eq!(*lru.get_or_insert_with("a", || 0).0, 1);
        assert_eq!(lru.insert("c", 3), Some(("b", 2)));
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.oldest(), Some((&"a", &1)));
        assert_eq!(lru.peek(&"c"), Some(&3));
        assert_eq!(lru.remove(&"a"), Some(1));
        assert_eq!(lru.pop_oldest(), Some(("c", 3)));
        assert_eq!(lru.pop_oldest(), None);
    }

    #[test]
    fn get_or_insert_touches_or_inserts_within_the_cap() {
        let mut lru = Lru::new(2);
        let (v, evicted) = lru.get_or_insert_with("a", || 1);
        assert_eq!((*v, evicted), (1, None));
        lru.get_or_insert_with("b", || 2);
        let (v, evicted) = lru.get_or_insert_with("a", || 9);
        assert_eq!((*v, evicted), (1, None), "touched, not made again");
        let (v, evicted) = lru.get_or_insert_with("c", || 3);
        assert_eq!((*v, evicted), (3, Some(("b", 2))));
        assert_eq!(lru.order.len(), 2);
    }

    #[test]
    fn replacing_a_key_keeps_one_entry() {
        let mut lru = Lru::new(3);
        lru.insert(1, "x");
        lru.insert(1, "y");
        assert_eq!(lru.len(), 1);
        assert_eq!(lru.pop_oldest(), Some((1, "y")));
        assert!(lru.order.is_empty());
    }
}
