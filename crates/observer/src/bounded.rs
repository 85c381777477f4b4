//! A map with a cap that forgets what was touched longest ago: sessions,
//! exchanges, pending requests and cursor origins are all keyed by values
//! a client chooses, so each is one of these.
//!
//! Every operation is O(1): entries live in a slab linked in touch order
//! (oldest first), the map holds each key's slot. A gateway's tap keeps
//! 10,000 sessions and, past that, makes one and forgets one for each
//! request of a session it no longer holds: the forgetting must cost no
//! more than the making (docs/performance.md, "Gateway load").

use std::collections::HashMap;
use std::hash::Hash;

/// No slot: the end of the touch order.
const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Slot<K, V> {
    /// `None` while the slot is free.
    entry: Option<(K, V)>,
    /// The slot touched just before this one (towards the oldest).
    older: usize,
    /// The slot touched just after this one (towards the newest).
    newer: usize,
}

#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    map: HashMap<K, usize>,
    slots: Vec<Slot<K, V>>,
    /// Slots free for reuse.
    free: Vec<usize>,
    /// Touched longest ago.
    oldest: usize,
    /// Touched last.
    newest: usize,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    pub(crate) fn new(cap: usize) -> Lru<K, V> {
        Lru {
            map: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            oldest: NIL,
            newest: NIL,
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
        let slot = *self.map.get(key)?;
        self.slots[slot].entry.as_ref().map(|(_, v)| v)
    }

    /// The value, without counting as a touch.
    pub(crate) fn peek_mut(&mut self, key: &K) -> Option<&mut V> {
        let slot = *self.map.get(key)?;
        self.slots[slot].entry.as_mut().map(|(_, v)| v)
    }

    /// Insert (or replace) `key`; when that passes the cap, the entry
    /// touched longest ago is removed and returned.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        if let Some(&slot) = self.map.get(&key) {
            self.unlink(slot);
            self.link_newest(slot);
            if let Some((_, v)) = self.slots[slot].entry.as_mut() {
                *v = value;
            }
            return None;
        }
        let evicted = if self.map.len() >= self.cap {
            self.pop_oldest()
        } else {
            None
        };
        self.push_new(key, value);
        evicted
    }

    /// The value of `key`, made the most recently touched; inserted with
    /// `make` when missing, which may first remove (and return) the entry
    /// touched longest ago to stay within the cap.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: K,
        make: impl FnOnce() -> V,
    ) -> (&mut V, Option<(K, V)>) {
        let (slot, evicted) = match self.map.get(&key) {
            Some(&slot) => {
                self.unlink(slot);
                self.link_newest(slot);
                (slot, None)
            }
            None => {
                let evicted = if self.map.len() >= self.cap {
                    self.pop_oldest()
                } else {
                    None
                };
                (self.push_new(key, make()), evicted)
            }
        };
        let value = match self.slots[slot].entry.as_mut() {
            Some((_, v)) => v,
            // A slot the map names always holds its entry.
            None => unreachable!("a mapped slot is never free"),
        };
        (value, evicted)
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.map.remove(key)?;
        let (_, value) = self.release(slot)?;
        self.settle();
        Some(value)
    }

    /// The entry touched longest ago, if any.
    pub(crate) fn oldest(&self) -> Option<(&K, &V)> {
        let slot = self.slots.get(self.oldest)?;
        slot.entry.as_ref().map(|(k, v)| (k, v))
    }

    pub(crate) fn pop_oldest(&mut self) -> Option<(K, V)> {
        let slot = self.oldest;
        let (key, value) = self.release(slot)?;
        self.map.remove(&key);
        self.settle();
        Some((key, value))
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.slots
            .iter_mut()
            .filter_map(|s| s.entry.as_mut().map(|(_, v)| v))
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.slots
            .iter()
            .filter_map(|s| s.entry.as_ref().map(|(_, v)| v))
    }

    /// Put `key` in a free slot (or a new one) as the newest; its slot.
    fn push_new(&mut self, key: K, value: V) -> usize {
        let entry = Some((key.clone(), value));
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot].entry = entry;
                slot
            }
            None => {
                self.slots.push(Slot {
                    entry,
                    older: NIL,
                    newer: NIL,
                });
                self.slots.len() - 1
            }
        };
        self.link_newest(slot);
        self.map.insert(key, slot);
        slot
    }

    /// Take `slot`'s entry out of the order and free the slot (the map is
    /// the caller's).
    fn release(&mut self, slot: usize) -> Option<(K, V)> {
        let entry = self.slots.get_mut(slot)?.entry.take()?;
        self.unlink(slot);
        self.free.push(slot);
        Some(entry)
    }

    fn unlink(&mut self, slot: usize) {
        let (older, newer) = (self.slots[slot].older, self.slots[slot].newer);
        match older {
            NIL => self.oldest = newer,
            o => self.slots[o].newer = newer,
        }
        match newer {
            NIL => self.newest = older,
            n => self.slots[n].older = older,
        }
        self.slots[slot].older = NIL;
        self.slots[slot].newer = NIL;
    }

    fn link_newest(&mut self, slot: usize) {
        self.slots[slot].older = self.newest;
        self.slots[slot].newer = NIL;
        match self.newest {
            NIL => self.oldest = slot,
            n => self.slots[n].newer = slot,
        }
        self.newest = slot;
    }

    /// A map that emptied gives its room back (a flood's sessions gone,
    /// the slab and table they grew stay otherwise): the entries move to
    /// a slab of their own size, in touch order. Amortised O(1): it runs
    /// only after three quarters of the slots were freed.
    fn settle(&mut self) {
        let room = self.slots.len();
        if room <= 64 || self.map.len() * 4 >= room {
            return;
        }
        let mut slots = Vec::with_capacity(self.map.len() * 2);
        let mut at = self.oldest;
        while at != NIL {
            let next = self.slots[at].newer;
            if let Some(entry) = self.slots[at].entry.take() {
                slots.push(Slot {
                    entry: Some(entry),
                    older: slots.len().wrapping_sub(1),
                    newer: slots.len() + 1,
                });
            }
            at = next;
        }
        if let Some(last) = slots.last_mut() {
            last.newer = NIL;
        }
        self.map.clear();
        self.map.shrink_to(slots.len() * 2);
        for (i, slot) in slots.iter().enumerate() {
            if let Some((key, _)) = &slot.entry {
                self.map.insert(key.clone(), i);
            }
        }
        self.oldest = if slots.is_empty() { NIL } else { 0 };
        self.newest = slots.len().checked_sub(1).unwrap_or(NIL);
        self.slots = slots;
        self.free = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys from the oldest to the newest, walking the links both ways.
    fn order<V>(lru: &Lru<&'static str, V>) -> Vec<&'static str> {
        let mut keys = Vec::new();
        let mut at = lru.oldest;
        while at != NIL {
            keys.push(lru.slots[at].entry.as_ref().expect("linked").0);
            at = lru.slots[at].newer;
        }
        let mut back = Vec::new();
        let mut at = lru.newest;
        while at != NIL {
            back.push(lru.slots[at].entry.as_ref().expect("linked").0);
            at = lru.slots[at].older;
        }
        back.reverse();
        assert_eq!(keys, back, "links agree both ways");
        assert_eq!(keys.len(), lru.len());
        keys
    }

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
        assert!(order(&lru).is_empty());
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
        assert_eq!(order(&lru), ["a", "c"]);
        assert_eq!(lru.slots.len(), 2, "the freed slot was reused");
    }

    #[test]
    fn replacing_a_key_keeps_one_entry_and_touches_it() {
        let mut lru = Lru::new(3);
        lru.insert("x", 1);
        lru.insert("y", 1);
        lru.insert("x", 2);
        assert_eq!(lru.len(), 2);
        assert_eq!(order(&lru), ["y", "x"]);
        assert_eq!(lru.pop_oldest(), Some(("y", 1)));
        assert_eq!(lru.pop_oldest(), Some(("x", 2)));
    }

    #[test]
    fn removing_from_the_middle_keeps_the_order() {
        let mut lru = Lru::new(8);
        for k in ["a", "b", "c", "d"] {
            lru.insert(k, ());
        }
        lru.remove(&"b");
        lru.get_or_insert_with("a", || ());
        assert_eq!(order(&lru), ["c", "d", "a"]);
        lru.remove(&"a");
        assert_eq!(order(&lru), ["c", "d"]);
        lru.insert("e", ());
        assert_eq!(order(&lru), ["c", "d", "e"]);
    }

    #[test]
    fn a_flood_gone_gives_its_room_back_in_order() {
        let mut lru = Lru::new(10_000);
        for i in 0..1_000u32 {
            lru.insert(i, i);
        }
        for i in 0..990 {
            lru.remove(&i);
        }
        assert!(lru.slots.len() < 100, "{} slots kept", lru.slots.len());
        lru.get_or_insert_with(995, || 0);
        let mut popped = Vec::new();
        while let Some((k, v)) = lru.pop_oldest() {
            assert_eq!(k, v);
            popped.push(k);
        }
        let mut expected: Vec<u32> = (990..1_000).filter(|k| *k != 995).collect();
        expected.push(995);
        assert_eq!(popped, expected);
    }

    #[test]
    fn churn_past_the_cap_holds_cap_slots() {
        let mut lru = Lru::new(100);
        for i in 0..10_000u32 {
            lru.get_or_insert_with(i, || i);
        }
        assert_eq!(lru.len(), 100);
        assert_eq!(lru.slots.len(), 100);
        assert_eq!(lru.oldest(), Some((&9_900, &9_900)));
    }
}
