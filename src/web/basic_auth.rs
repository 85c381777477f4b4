//! `basic_auth_users` of the web config: bcrypt hashes, checked so that a
//! known and an unknown user cost the same (an unknown user is checked
//! against a dummy hash of the same cost), with a small cache of recent
//! successes so each scrape does not pay a bcrypt round. Wrong passwords are
//! remembered too, and bcrypt rounds for credentials not seen before are
//! rate-limited: a flood of wrong passwords costs a bounded share of one
//! core (`MISS_ROUNDS_PER_SECOND` rounds), never all of it, and a request
//! past the budget is refused unchecked.

use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Recent successful logins remembered (as SHA-256 of user, hash and
/// password), so a scraper does not cost a bcrypt round per request.
const CACHE_SIZE: usize = 64;

/// bcrypt rounds per second for credentials not in either cache (at the
/// default cost 10, about 60 ms each: a sixth of a core at most).
const MISS_ROUNDS_PER_SECOND: f64 = 3.0;
/// Rounds that may be spent at once after a quiet spell.
const MISS_ROUNDS_BURST: f64 = 6.0;

pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// A hash of the users' highest cost, for unknown users.
    dummy_hash: String,
    cache: Mutex<VecDeque<[u8; 32]>>,
    /// Recent failed logins, the same way: a client retrying one wrong
    /// password costs nothing after the first round.
    refused: Mutex<VecDeque<[u8; 32]>>,
    /// Rounds left for unseen credentials, and when it was last topped up.
    budget: Mutex<(f64, Instant)>,
    /// bcrypt rounds run (read by tests).
    rounds: AtomicU64,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BasicAuth({} user(s))", self.users.len())
    }
}

impl BasicAuth {
    /// None when no users are configured (no authentication).
    pub fn new(users: &BTreeMap<String, String>) -> Option<BasicAuth> {
        if users.is_empty() {
            return None;
        }
        let cost = users
            .values()
            .filter_map(|h| h.parse::<bcrypt::HashParts>().ok())
            .map(|p| p.get_cost())
            .max()
            .unwrap_or(bcrypt::DEFAULT_COST);
        // Hashing a fixed string cannot fail for a cost parsed from a valid
        // hash; should it, fall back to a constant valid hash of cost 10.
        let dummy_hash = bcrypt::hash("mcp-exporter dummy password", cost).unwrap_or_else(|_| {
            "$2b$10$abcdefghijklmnopqrstuu5YuBb2Mu6TRTHhC8u1b8j6sXC3pbHFG".to_string()
        });
        Some(BasicAuth {
            users: users.clone(),
            dummy_hash,
            cache: Mutex::new(VecDeque::new()),
            refused: Mutex::new(VecDeque::new()),
            budget: Mutex::new((MISS_ROUNDS_BURST, Instant::now())),
            rounds: AtomicU64::new(0),
        })
    }

    /// Whether an `Authorization` header value admits the request.
    pub fn admits(&self, authorization: Option<&str>) -> bool {
        let Some((user, password)) = authorization.and_then(decode_basic) else {
            return false;
        };
        let (hash, known) = match self.users.get(&user) {
            Some(h) => (h.as_str(), true),
            None => (self.dummy_hash.as_str(), false),
        };
        let key: [u8; 32] = Sha256::new()
            .chain_update(user.as_bytes())
            .chain_update([0])
            .chain_update(hash.as_bytes())
            .chain_update([0])
            .chain_update(password.as_bytes())
            .finalize()
            .into();
        if known && holds(&self.cache, &key) {
            return true;
        }
        if holds(&self.refused, &key) || !self.take_round() {
            return false;
        }
        // One bcrypt round for a miss, known user or not.
        self.rounds.fetch_add(1, Ordering::Relaxed);
        let ok = bcrypt::verify(password.as_bytes(), hash).unwrap_or(false) && known;
        remember(if ok { &self.cache } else { &self.refused }, key);
        ok
    }

    /// bcrypt rounds run so far.
    #[cfg(test)]
    fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Take one round from the budget for unseen credentials, if any left.
    fn take_round(&self) -> bool {
        let mut budget = match self.budget.lock() {
            Ok(b) => b,
            Err(p) => p.into_inner(),
        };
        let now = Instant::now();
        let (tokens, since) = *budget;
        let refilled = (tokens
            + now.saturating_duration_since(since).as_secs_f64() * MISS_ROUNDS_PER_SECOND)
            .min(MISS_ROUNDS_BURST);
        if refilled < 1.0 {
            *budget = (refilled, now);
            return false;
        }
        *budget = (refilled - 1.0, now);
        true
    }
}

fn holds(cache: &Mutex<VecDeque<[u8; 32]>>, key: &[u8; 32]) -> bool {
    let cache = match cache.lock() {
        Ok(c) => c,
        Err(p) => p.into_inner(),
    };
    cache.iter().any(|k| constant_time_eq(k, key))
}

fn remember(cache: &Mutex<VecDeque<[u8; 32]>>, key: [u8; 32]) {
    let mut cache = match cache.lock() {
        Ok(c) => c,
        Err(p) => p.into_inner(),
    };
    if cache.len() >= CACHE_SIZE {
        cache.pop_front();
    }
    cache.push_back(key);
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `Basic base64(user:password)` → (user, password).
fn decode_basic(value: &str) -> Option<(String, String)> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user: &str, password: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        )
    }

    #[test]
    fn known_users_with_the_right_password_only() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let auth = BasicAuth::new(&BTreeMap::from([("prom".to_string(), hash)])).unwrap();
        assert!(auth.admits(Some(&header("prom", "s3cret"))));
        assert!(auth.admits(Some(&header("prom", "s3cret"))), "cached");
        assert!(!auth.admits(Some(&header("prom", "wrong"))));
        assert!(!auth.admits(Some(&header("nobody", "s3cret"))));
        assert!(!auth.admits(Some("Bearer x")));
        assert!(!auth.admits(None));
        assert!(BasicAuth::new(&BTreeMap::new()).is_none());
    }

    #[test]
    fn a_flood_of_wrong_passwords_runs_a_bounded_number_of_rounds() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let auth = BasicAuth::new(&BTreeMap::from([("prom".to_string(), hash)])).unwrap();
        assert!(auth.admits(Some(&header("prom", "s3cret"))));
        let started = Instant::now();
        for i in 0..200 {
            assert!(!auth.admits(Some(&header("prom", &format!("guess-{i}")))));
            // The same wrong password again costs no round.
            assert!(!auth.admits(Some(&header("prom", "guess-0"))));
        }
        let allowed =
            MISS_ROUNDS_BURST + started.elapsed().as_secs_f64() * MISS_ROUNDS_PER_SECOND + 1.0;
        assert!(
            (auth.rounds() as f64) <= allowed,
            "{} rounds, at most {allowed} allowed",
            auth.rounds()
        );
        // The known scraper is still admitted from the cache.
        assert!(auth.admits(Some(&header("prom", "s3cret"))));
    }
}
