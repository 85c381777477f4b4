//! Merging (issue 33): for the clients an operator names, a list request
//! without a cursor is answered with every page the upstream has, walked
//! by the tap on the client's behalf with the walker's own guards. What a
//! tap keeps for it, all bounded: which client opened each session (from
//! its `initialize`), the merged answers it may reuse per session and kind
//! until a `list_changed` passes to that session, the walks in progress
//! (one per session and kind at a time) and how many walk at once.
//!
//! `ask` reads requests, `pager` walks (over `http` here, over the stdio
//! tap's pipes there), `result` makes the one page, `flow` answers.

pub(crate) mod ask;
pub(crate) mod flow;
pub(crate) mod http;
pub(crate) mod pager;
pub(crate) mod request_id;
pub(crate) mod result;

use crate::http1::head::Response;
use crate::identity::ClientInfo;
use crate::settings::MergeSettings;
use bytes::Bytes;
use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Sessions whose client is remembered, at most.
const MAX_SESSIONS: usize = 4096;
/// Merged answers kept for reuse, at most.
const MAX_REUSED: usize = 1024;

/// Which merged answers may stand for each other: the same session, the
/// same credentials, the same kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    session: Bytes,
    credentials: Option<CursorDigest>,
    kind: Kind,
}

impl Key {
    /// Only requests in a session share merges: without one, nothing says
    /// two requests are the same client's.
    pub(crate) fn new(
        session: Option<&Bytes>,
        credentials: Option<&[u8]>,
        kind: Kind,
    ) -> Option<Key> {
        Some(Key {
            session: session?.clone(),
            credentials: credentials.map(|c| CursorDigest::of(&String::from_utf8_lossy(c))),
            kind,
        })
    }
}

/// A merged answer kept for reuse.
#[derive(Clone)]
pub(crate) struct Reusable {
    /// Page 1's answer head (what the client's head is made from).
    pub(crate) head: Arc<Response>,
    pub(crate) result: Arc<Value>,
    pub(crate) items: u64,
    until: Instant,
}

pub(crate) struct Merges {
    pub(crate) settings: MergeSettings,
    pub(crate) walks: Semaphore,
    sessions: Mutex<HashMap<Bytes, ClientInfo>>,
    reusable: Mutex<HashMap<Key, Reusable>>,
    flights: Mutex<HashMap<Key, Weak<tokio::sync::Mutex<()>>>>,
}

impl Merges {
    pub(crate) fn new(settings: MergeSettings) -> Merges {
        Merges {
            walks: Semaphore::new(settings.max_concurrent),
            settings,
            sessions: Mutex::new(HashMap::new()),
            reusable: Mutex::new(HashMap::new()),
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

    /// The turn of `key`'s walk: one walk per session and kind at a time.
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

    /// Wait for the turn of `key`'s walk (none without a key).
    pub(crate) async fn turn(&self, key: Option<&Key>) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        Some(self.flight(key?).lock_owned().await)
    }

    /// A merged answer still good for `key`.
    pub(crate) fn reused(&self, key: &Key) -> Option<Reusable> {
        let mut kept = lock(&self.reusable);
        match kept.get(key) {
            Some(r) if r.until > Instant::now() => Some(r.clone()),
            Some(_) => {
                kept.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keep a merged answer for `key`, for `reuse_for` or its `ttlMs`.
    pub(crate) fn keep(
        &self,
        key: Key,
        head: Response,
        result: Value,
        items: u64,
        ttl_ms: Option<u64>,
    ) {
        let mut for_ = self.settings.reuse_for;
        if let Some(ttl) = ttl_ms {
            for_ = for_.min(Duration::from_millis(ttl));
        }
        if for_.is_zero() {
            return;
        }
        let mut kept = lock(&self.reusable);
        let now = Instant::now();
        kept.retain(|_, r| r.until > now);
        if kept.len() >= MAX_REUSED {
            evict_one(&mut kept);
        }
        let reusable = Reusable {
            head: Arc::new(head),
            result: Arc::new(result),
            items,
            until: now + for_,
        };
        kept.insert(key, reusable);
    }

    /// A `list_changed` passed to `session`: its merged answers are stale.
    pub(crate) fn changed(&self, session: &[u8]) {
        lock(&self.reusable).retain(|k, _| k.session != session);
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere mid-update of a plain
    // map; its entries are still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
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
    use crate::settings::MergeSettings;

    fn key(session: &'static str) -> Key {
        Key::new(
            Some(&Bytes::from_static(session.as_bytes())),
            Some(b"Bearer t"),
            Kind::Tools,
        )
        .unwrap()
    }

    fn head() -> Response {
        Response {
            status: 200,
            reason: Bytes::new(),
            minor: 1,
            fields: Vec::new(),
        }
    }

    #[test]
    fn merged_answers_are_reused_until_a_list_changed_passes() {
        let merges = Merges::new(MergeSettings::default());
        merges.keep(key("s1"), head(), Value::Null, 3, None);
        assert_eq!(merges.reused(&key("s1")).map(|r| r.items), Some(3));
        assert!(merges.reused(&key("s2")).is_none());
        let other_credentials =
            Key::new(Some(&Bytes::from_static(b"s1")), None, Kind::Tools).unwrap();
        assert!(merges.reused(&other_credentials).is_none());
        let mut watch = ChangeWatch::new(&merges, Some(Bytes::from_static(b"s1")));
        watch.see(b"data: {\"method\":\"notifications/tools/list_");
        assert!(merges.reused(&key("s1")).is_some());
        watch.see(b"changed\"}\n\n");
        assert!(
            merges.reused(&key("s1")).is_none(),
            "a word cut between reads"
        );
    }

    #[test]
    fn a_zero_ttl_is_not_kept_and_sessionless_requests_have_no_key() {
        let merges = Merges::new(MergeSettings::default());
        merges.keep(key("s1"), head(), Value::Null, 1, Some(0));
        assert!(merges.reused(&key("s1")).is_none());
        assert!(Key::new(None, None, Kind::Tools).is_none());
    }

    #[test]
    fn sessions_remembered_are_bounded() {
        let merges = Merges::new(MergeSettings::default());
        for n in 0..MAX_SESSIONS + 10 {
            merges.bind(Bytes::from(n.to_string()), ClientInfo::unknown());
        }
        assert_eq!(lock(&merges.sessions).len(), MAX_SESSIONS);
    }
}
