//! `basic_auth_users` of the web config: bcrypt hashes, checked so that a
//! known and an unknown user cost the same (an unknown user is checked
//! against a dummy hash of the same cost), with a small cache of recent
//! successes so each scrape does not pay a bcrypt round.

use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// Recent successful logins remembered (as SHA-256 of user, hash and
/// password), so a scraper does not cost a bcrypt round per request.
const CACHE_SIZE: usize = 64;

pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// A hash of the users' highest cost, for unknown users.
    dummy_hash: String,
    cache: Mutex<VecDeque<[u8; 32]>>,
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
        if known && self.cached(&key) {
            return true;
        }
        // Always one bcrypt round for a miss, known user or not.
        let ok = bcrypt::verify(password.as_bytes(), hash).unwrap_or(false) && known;
        if ok {
            let mut cache = match self.cache.lock() {
                Ok(c) => c,
                Err(p) => p.into_inner(),
            };
            if cache.len() >= CACHE_SIZE {
                cache.pop_front();
            }
            cache.push_back(key);
        }
        ok
    }

    fn cached(&self, key: &[u8; 32]) -> bool {
        let cache = match self.cache.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        cache.iter().any(|k| constant_time_eq(k, key))
    }
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
}
