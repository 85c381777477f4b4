//! Merging (issue 33): for the clients an operator names, a list request
//! without a cursor is answered with every page the upstream has, walked
//! by the tap on the client's behalf with the walker's own guards. What a
//! tap keeps for it, all bounded: which client opened each session (from
//! its `initialize`), the merged answers it may reuse (`reuse`, keyed by
//! everything that can change an answer) until a `list_changed` passes to
//! that session, the walks in progress (one per key at a time) and how
//! many walk at once; and what merging may spend (`budget`): its bytes —
//! walks in flight, answers kept and being written — and its own page
//! requests to the upstream.
//!
//! `ask` reads requests, `pager` walks (over `http` here, over the stdio
//! tap's pipes there), `scan` reads what comes back as text, `result`
//! makes the one page, `flow` is the one merge both taps run (the HTTP
//! tap's side of it in `http_merge`, the stdio tap's in its `pages`).

pub(crate) mod ask;
pub(crate) mod budget;
pub(crate) mod eligible;
pub(crate) mod flow;
pub(crate) mod http;
pub(crate) mod http_merge;
pub(crate) mod pager;
pub(crate) mod request_id;
pub(crate) mod result;
pub(crate) mod reuse;
pub(crate) mod scan;

use crate::apps::Apps;
use crate::event::MergeFallback;
use crate::identity::ClientInfo;
use crate::locked::lock;
use crate::settings::MergeSettings;
use budget::{ByteBudget, Charge, PageRate};
use bytes::Bytes;
use eligible::Eligible;
use reuse::{Key, Reusable, ReuseCache};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Sessions whose client is remembered, at most.
const MAX_SESSIONS: usize = 4096;

/// What reading one page may take, in multiples of its bytes: the body as
/// read (its buffer grows by doubling), an event's data copied out of it,
/// and the page's new items copied into the merge.
pub(crate) const PAGE_READ_FACTOR: usize = 4;

/// A walk about to start: its slot among the tap's walks at once, and its
/// charge (room to read page 1).
pub(crate) struct Start<'a> {
    pub(crate) slot: SemaphorePermit<'a>,
    pub(crate) charge: Charge,
}

pub(crate) struct Merges {
    pub(crate) settings: MergeSettings,
    /// Whose requests merging reads, and who it merges for.
    pub(crate) eligible: Eligible,
    walks: Semaphore,
    pub(crate) bytes: Arc<ByteBudget>,
    pub(crate) pages: PageRate,
    sessions: Mutex<HashMap<Bytes, ClientInfo>>,
    reusable: Mutex<ReuseCache>,
    flights: Mutex<HashMap<Key, Weak<tokio::sync::Mutex<()>>>>,
}

impl Merges {
    /// Merging by `settings`, whose names may be the operator's `apps`.
    pub(crate) fn new(settings: MergeSettings, apps: &Apps) -> Merges {
        Merges {
            eligible: Eligible::new(settings.clients.clone(), |n| apps.names(n)),
            walks: Semaphore::new(settings.max_concurrent),
            bytes: ByteBudget::new(settings.max_bytes),
            pages: PageRate::new(settings.page_burst, settings.pages_per_second),
            reusable: Mutex::new(ReuseCache::new(
                settings.reuse_max_entries,
                settings.reuse_max_bytes,
            )),
            settings,
            sessions: Mutex::new(HashMap::new()),
            flights: Mutex::new(HashMap::new()),
        }
    }

    /// `session` was opened by `client` (its `initialize`).
    pub(crate) fn bind(&self, session: Bytes, client: ClientInfo) {
        let mut sessions = lock(&self.sessions);
        if sessions.len() >= MAX_SESSIONS && !sessions.contains_key(&session) {
            evict_one(&mut sessions);
        }
        sessions.insert(session, client);
    }

    pub(crate) fn client_of(&self, session: &Bytes) -> Option<ClientInfo> {
        lock(&self.sessions).get(session).cloned()
    }

    /// The turn of `key`'s walk: one walk per key at a time.
    fn flight(&self, key: &Key) -> Arc<tokio::sync::Mutex<()>> {
        let mut flights = lock(&self.flights);
        if let Some(flight) = flights.get(key).and_then(Weak::upgrade) {
            return flight;
        }
        flights.retain(|_, f| f.strong_count() > 0);
        let flight = Arc::new(tokio::sync::Mutex::new(()));
        flights.insert(key.clone(), Arc::downgrade(&flight));
        flight
    }

    /// Wait for the turn of `key`'s walk, at most as long as a walk may
    /// last (a turn is held only while walking); `None` past that.
    pub(crate) async fn turn(&self, key: &Key) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        let wait = self.settings.walk.listing_timeout;
        let turn = self.flight(key).lock_owned();
        tokio::time::timeout(wait, turn).await.ok()
    }

    /// Room to walk: a slot, the first page's bytes, and page requests
    /// left; or why page 1 passes instead.
    pub(crate) fn start(&self) -> Result<Start<'_>, MergeFallback> {
        if !self.pages.any_left() {
            return Err(MergeFallback::Throttled);
        }
        let slot = self.walks.try_acquire().map_err(|_| MergeFallback::Busy)?;
        let charge = self
            .bytes
            .charge(self.page_read_bytes())
            .ok_or(MergeFallback::Busy)?;
        Ok(Start { slot, charge })
    }

    /// Bytes reading one page may take.
    pub(crate) fn page_read_bytes(&self) -> usize {
        self.settings
            .max_page_bytes
            .saturating_mul(PAGE_READ_FACTOR)
    }

    /// A merged answer still good for `key`.
    pub(crate) fn reused(&self, key: &Key) -> Option<Arc<Reusable>> {
        lock(&self.reusable).get(key, Instant::now())
    }

    /// Keep a merged answer for `key`, for `reuse_for` or its `ttlMs`.
    pub(crate) fn keep(&self, key: Key, answer: Arc<Reusable>) {
        let mut for_ = self.settings.reuse_for;
        if let Some(ttl) = answer.result.ttl_ms {
            for_ = for_.min(Duration::from_millis(ttl));
        }
        if for_.is_zero() {
            return;
        }
        let bytes = answer.charge.bytes();
        let until = Instant::now() + for_;
        lock(&self.reusable).put(key, answer, bytes, until);
    }

    /// A `list_changed` passed to `session`: its merged answers are stale.
    pub(crate) fn changed(&self, session: &[u8]) {
        lock(&self.reusable).forget_session(session);
    }
}

fn evict_one<K: Clone + Eq + std::hash::Hash, V>(map: &mut HashMap<K, V>) {
    if let Some(key) = map.keys().next().cloned() {
        map.remove(&key);
    }
}

/// Watches what passes to a session for `list_changed` notifications (an
/// event stream's bytes, read by read), so a merged answer is never reused
/// across one.
pub(crate) struct ChangeWatch<'a> {
    merges: &'a Merges,
    session: Option<Bytes>,
    /// The end of the last read (a word cut between two reads).
    tail: Vec<u8>,
}

const WORD: &[u8] = b"list_changed";

impl<'a> ChangeWatch<'a> {
    pub(crate) fn new(merges: &'a Merges, session: Option<Bytes>) -> ChangeWatch<'a> {
        ChangeWatch {
            merges,
            session,
            tail: Vec::new(),
        }
    }

    /// The session learnt late (a legacy stream's `endpoint`).
    pub(crate) fn session(&mut self, session: Bytes) {
        self.session.get_or_insert(session);
    }

    pub(crate) fn see(&mut self, data: &[u8]) {
        let Some(session) = &self.session else {
            return;
        };
        let head = &data[..data.len().min(WORD.len())];
        self.tail.extend_from_slice(head);
        let hit = contains(&self.tail, WORD) || contains(data, WORD);
        if hit {
            self.merges.changed(session);
        }
        self.tail.clear();
        self.tail
            .extend_from_slice(&data[data.len().saturating_sub(WORD.len() - 1)..]);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::reuse::Asked;
    use crate::settings::MergeSettings;

    fn key(session: &'static str) -> Key {
        let asked = Asked {
            path: b"/mcp",
            fields: &[],
            credential_headers: &[],
            params: None,
        };
        Key::new(
            Some(&Bytes::from_static(session.as_bytes())),
            mcp_listing::Kind::Tools,
            &asked,
        )
        .unwrap()
    }

    fn answer(merges: &Merges, items: u64, ttl_ms: Option<u64>) -> Arc<Reusable> {
        let charge = merges.bytes.charge(2).unwrap();
        Reusable::for_tests(Bytes::from_static(b"{}"), items, ttl_ms, charge)
    }

    #[test]
    fn merged_answers_are_reused_until_a_list_changed_passes() {
        let merges = Merges::new(MergeSettings::default(), &Apps::default());
        merges.keep(key("s1"), answer(&merges, 3, None));
        assert_eq!(merges.reused(&key("s1")).map(|r| r.result.items), Some(3));
        assert!(merges.reused(&key("s2")).is_none());
        let mut watch = ChangeWatch::new(&merges, Some(Bytes::from_static(b"s1")));
        watch.see(b"data: {\"method\":\"notifications/tools/list_");
        assert!(merges.reused(&key("s1")).is_some());
        watch.see(b"changed\"}\n\n");
        assert!(
            merges.reused(&key("s1")).is_none(),
            "a word cut between reads"
        );
        assert_eq!(merges.bytes.used(), 0, "a forgotten answer is given back");
    }

    #[test]
    fn a_zero_ttl_is_not_kept() {
        let merges = Merges::new(MergeSettings::default(), &Apps::default());
        merges.keep(key("s1"), answer(&merges, 1, Some(0)));
        assert!(merges.reused(&key("s1")).is_none());
    }

    #[test]
    fn a_walk_starts_only_with_room() {
        let settings = MergeSettings {
            max_concurrent: 1,
            ..MergeSettings::default()
        };
        let merges = Merges::new(settings, &Apps::default());
        let start = merges.start().ok().unwrap();
        assert!(
            matches!(merges.start(), Err(MergeFallback::Busy)),
            "no slot"
        );
        drop(start);
        let hog = merges.bytes.charge(merges.settings.max_bytes - 1).unwrap();
        assert!(
            matches!(merges.start(), Err(MergeFallback::Busy)),
            "no bytes"
        );
        drop(hog);
        while merges.pages.take() {}
        assert!(matches!(merges.start(), Err(MergeFallback::Throttled)));
    }

    #[test]
    fn sessions_remembered_are_bounded() {
        let merges = Merges::new(MergeSettings::default(), &Apps::default());
        for n in 0..MAX_SESSIONS + 10 {
            merges.bind(Bytes::from(n.to_string()), ClientInfo::unknown());
        }
        assert_eq!(lock(&merges.sessions).len(), MAX_SESSIONS);
    }
}
