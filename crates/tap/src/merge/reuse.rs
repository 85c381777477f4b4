//! Merged answers kept for reuse: keyed by everything that can change an
//! answer — the session, the request's path, kind and params, its
//! protocol version and every credential-bearing header — and bounded in
//! bytes and entries per tap, the oldest going first.

use crate::http1::head::{Field, Response};
use crate::merge::budget::Charge;
use crate::merge::result::Merged;
use bytes::Bytes;
use mcp_listing::Kind;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// Request headers that carry credentials, whatever the operator adds:
/// an answer given for one value is never reused for another.
pub(crate) const CREDENTIAL_HEADERS: [&str; 6] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
];

/// Which merged answers may stand for each other.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    session: Bytes,
    kind: Kind,
    /// SHA-256 of the rest of what was asked: path, params, protocol
    /// version, credentials (a digest: never the secrets themselves).
    asked: [u8; 32],
}

/// What a request asked besides its session and kind, as the key digests
/// it.
pub(crate) struct Asked<'a> {
    pub(crate) path: &'a [u8],
    /// The request's header fields (credentials and protocol version are
    /// read from them).
    pub(crate) fields: &'a [Field],
    /// Credential headers the operator named, besides [`CREDENTIAL_HEADERS`].
    pub(crate) credential_headers: &'a [http::HeaderName],
    /// The request's `params` (its `_meta` included).
    pub(crate) params: Option<&'a Value>,
}

impl Key {
    /// Only requests in a session share merges: without one, nothing says
    /// two requests are the same client's.
    pub(crate) fn new(session: Option<&Bytes>, kind: Kind, asked: &Asked<'_>) -> Option<Key> {
        Some(Key {
            session: session?.clone(),
            kind,
            asked: asked.digest(),
        })
    }

    pub(crate) fn session(&self) -> &[u8] {
        &self.session
    }
}

impl Asked<'_> {
    fn digest(&self) -> [u8; 32] {
        let mut hash = Sha256::new();
        let mut part = |bytes: &[u8]| {
            // Length-prefixed: no two sequences of parts hash alike.
            hash.update((bytes.len() as u64).to_be_bytes());
            hash.update(bytes);
        };
        part(self.path);
        part(&serde_json::to_vec(&self.params).unwrap_or_default());
        for field in self.fields {
            let named = |n: &str| field.is(n);
            if field.is("mcp-protocol-version")
                || CREDENTIAL_HEADERS.iter().any(|n| named(n))
                || self.credential_headers.iter().any(|n| named(n.as_str()))
            {
                part(&field.name.to_ascii_lowercase());
                part(&field.value);
            }
        }
        hash.finalize().into()
    }
}

/// A merged answer kept for reuse (and being written): its bytes stay
/// charged to the tap's budget until the last holder lets go.
pub(crate) struct Reusable {
    /// Page 1's answer head (what the client's head is made from).
    pub(crate) head: Response,
    pub(crate) result: Merged,
    pub(crate) charge: Charge,
}

#[cfg(test)]
impl Reusable {
    /// A merged answer of one part under a plain 200 head, for the tests
    /// of reuse and of the merges that keep it.
    pub(crate) fn for_tests(
        body: Bytes,
        items: u64,
        ttl_ms: Option<u64>,
        charge: Charge,
    ) -> Arc<Self> {
        Arc::new(Reusable {
            head: Response {
                status: 200,
                ..no_head()
            },
            result: Merged {
                parts: vec![body],
                items,
                ttl_ms,
            },
            charge,
        })
    }
}

/// The head of an answer that has none (a stdio line).
pub(crate) fn no_head() -> Response {
    Response {
        status: 0,
        reason: Bytes::new(),
        minor: 1,
        fields: Vec::new(),
    }
}

/// What a kept answer costs: its result's bytes and its head's.
pub(crate) fn cost(head: &Response, result: &Merged) -> usize {
    let fields: usize = head
        .fields
        .iter()
        .map(|f| f.name.len() + f.value.len() + 16)
        .sum();
    result.len() + fields + head.reason.len() + 64
}

struct Entry {
    answer: Arc<Reusable>,
    until: Instant,
    /// When it was kept, in order: the oldest goes first.
    order: u64,
    bytes: usize,
}

/// The kept answers: at most `max_entries` and `max_bytes` together.
pub(crate) struct ReuseCache {
    max_entries: usize,
    max_bytes: usize,
    entries: HashMap<Key, Entry>,
    by_age: BTreeMap<u64, Key>,
    next: u64,
    bytes: usize,
}

impl ReuseCache {
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> ReuseCache {
        ReuseCache {
            max_entries,
            max_bytes,
            entries: HashMap::new(),
            by_age: BTreeMap::new(),
            next: 0,
            bytes: 0,
        }
    }

    /// The answer kept for `key`, while it is good.
    pub(crate) fn get(&mut self, key: &Key, now: Instant) -> Option<Arc<Reusable>> {
        let entry = self.entries.get(key)?;
        if entry.until > now {
            return Some(entry.answer.clone());
        }
        self.remove(key);
        None
    }

    /// Keep `answer` for `key` until `until`; false when it is larger than
    /// the whole cache may hold (not kept).
    pub(crate) fn put(
        &mut self,
        key: Key,
        answer: Arc<Reusable>,
        bytes: usize,
        until: Instant,
    ) -> bool {
        if bytes > self.max_bytes || self.max_entries == 0 {
            return false;
        }
        self.remove(&key);
        while self.entries.len() >= self.max_entries || self.bytes + bytes > self.max_bytes {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.remove(&oldest);
        }
        let order = self.next;
        self.next += 1;
        self.by_age.insert(order, key.clone());
        self.bytes += bytes;
        let entry = Entry {
            answer,
            until,
            order,
            bytes,
        };
        self.entries.insert(key, entry);
        true
    }

    /// Forget every answer kept for `session`.
    pub(crate) fn forget_session(&mut self, session: &[u8]) {
        let stale: Vec<Key> = self
            .entries
            .keys()
            .filter(|k| k.session() == session)
            .cloned()
            .collect();
        for key in stale {
            self.remove(&key);
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.entries.remove(key) {
            self.by_age.remove(&entry.order);
            self.bytes -= entry.bytes;
        }
    }

    /// Entries and bytes kept now.
    #[cfg(test)]
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.entries.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::budget::ByteBudget;
    use serde_json::json;
    use std::time::Duration;

    fn field(name: &'static str, value: &'static str) -> Field {
        Field {
            name: Bytes::from_static(name.as_bytes()),
            value: Bytes::from_static(value.as_bytes()),
        }
    }

    fn key_with(fields: &[Field], extra: &[http::HeaderName]) -> Key {
        let params = json!({});
        let asked = Asked {
            path: b"/mcp",
            fields,
            credential_headers: extra,
            params: Some(&params),
        };
        Key::new(Some(&Bytes::from_static(b"s1")), Kind::Tools, &asked).unwrap()
    }

    #[test]
    fn every_credential_and_what_was_asked_makes_another_key() {
        let base = key_with(&[field("Authorization", "Bearer a")], &[]);
        let same = key_with(
            &[
                field("authorization", "Bearer a"),
                field("User-Agent", "other"),
            ],
            &[],
        );
        assert_eq!(base, same, "headers that carry no credentials do not count");
        for other in [
            field("X-Api-Key", "k"),
            field("Cookie", "sid=1"),
            field("Proxy-Authorization", "p"),
            field("Mcp-Protocol-Version", "2026-07-28"),
        ] {
            let key = key_with(&[field("Authorization", "Bearer a"), other], &[]);
            assert_ne!(base, key);
        }
        assert_ne!(base, key_with(&[field("Authorization", "Bearer b")], &[]));
        let tenant = [field("Authorization", "Bearer a"), field("X-Tenant", "t1")];
        assert_eq!(base, key_with(&tenant, &[]));
        let x_tenant = http::HeaderName::from_static("x-tenant");
        assert_ne!(base, key_with(&tenant, &[x_tenant]));
        let params = json!({"_meta": {"x": 1}});
        let asked = Asked {
            path: b"/mcp",
            fields: &[field("Authorization", "Bearer a")],
            credential_headers: &[],
            params: Some(&params),
        };
        let session = Bytes::from_static(b"s1");
        assert_ne!(base, Key::new(Some(&session), Kind::Tools, &asked).unwrap());
        let empty = json!({});
        let other_path = Asked {
            path: b"/other",
            params: Some(&empty),
            ..asked
        };
        assert_ne!(
            base,
            Key::new(Some(&session), Kind::Tools, &other_path).unwrap()
        );
        assert!(Key::new(None, Kind::Tools, &other_path).is_none());
    }

    fn answer(budget: &Arc<ByteBudget>, bytes: usize) -> Arc<Reusable> {
        let body = Bytes::from(vec![b' '; bytes]);
        Reusable::for_tests(body, 1, None, budget.charge(bytes).unwrap())
    }

    fn session_key(n: usize) -> Key {
        let asked = Asked {
            path: b"/mcp",
            fields: &[],
            credential_headers: &[],
            params: None,
        };
        Key::new(Some(&Bytes::from(n.to_string())), Kind::Tools, &asked).unwrap()
    }

    #[test]
    fn kept_answers_are_bounded_in_bytes_and_entries_oldest_first() {
        let budget = ByteBudget::new(1 << 20);
        let mut cache = ReuseCache::new(3, 1000);
        let until = Instant::now() + Duration::from_secs(60);
        for n in 0..3 {
            assert!(cache.put(session_key(n), answer(&budget, 300), 300, until));
        }
        assert_eq!(cache.size(), (3, 900));
        // 300 more: the oldest goes, for bytes before entries.
        assert!(cache.put(session_key(3), answer(&budget, 300), 300, until));
        assert_eq!(cache.size(), (3, 900));
        assert!(cache.get(&session_key(0), Instant::now()).is_none());
        assert!(cache.get(&session_key(1), Instant::now()).is_some());
        // One larger than the whole cache is not kept, and evicts nothing.
        assert!(!cache.put(session_key(9), answer(&budget, 1001), 1001, until));
        assert_eq!(cache.size(), (3, 900));
        // 700 bytes: two of the three go.
        assert!(cache.put(session_key(4), answer(&budget, 700), 700, until));
        assert_eq!(cache.size(), (2, 1000));
        cache.forget_session(b"4");
        assert_eq!(cache.size(), (1, 300));
        let stale = Instant::now() + Duration::from_secs(120);
        assert!(cache.get(&session_key(3), stale).is_none());
        assert_eq!(cache.size(), (0, 0));
        drop(cache);
        assert_eq!(budget.used(), 0, "every charge given back");
    }
}
