//! Ids of the page requests a merged walk makes itself (every page after
//! the first, which is the client's own request with the client's id).
//!
//! The stdio tap routes the server's answers by id, over one pipe shared by
//! the client and every walk in progress, so an id must be neither one
//! another walk uses at the same time nor one a client could also send:
//! a fixed prefix, a 64-bit nonce drawn at random once per process (a
//! client never sees it, so cannot guess it), and a counter shared by every
//! walk of the process. Over HTTP each page is an exchange of its own; the
//! same ids keep an upstream's logs unambiguous there too.

use mcp_listing::trace::SpanId;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// What every id of ours starts with.
const PREFIX: &str = "mcp-tap-";

/// The next id: `mcp-tap-<16 hex digits>-<n>`, unique in the process.
pub(crate) fn next() -> String {
    static NONCE: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let nonce = NONCE.get_or_init(|| format!("{:016x}", SpanId::random().to_u64()));
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{PREFIX}{nonce}-{n}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_across_threads_and_share_one_nonce() {
        let threads: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..1000).map(|_| next()).collect::<Vec<_>>()))
            .collect();
        let ids: Vec<String> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 4000);
        let nonces: HashSet<&str> = ids
            .iter()
            .map(|id| id.strip_prefix(PREFIX).unwrap().split('-').next().unwrap())
            .collect();
        assert_eq!(nonces.len(), 1, "{nonces:?}");
        let nonce = nonces.into_iter().next().unwrap();
        assert_eq!(nonce.len(), 16);
        assert!(nonce.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
