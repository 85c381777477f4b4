//! Cursors are opaque and may carry secrets or tenant ids: only a short
//! hash ever leaves the walker.

use sha2::{Digest, Sha256};

/// First 8 hex digits of SHA-256: enough to tell cursors apart in a table
/// or span, too short to be worth reversing.
pub fn short_hash(cursor: &str) -> String {
    let digest = Sha256::digest(cursor.as_bytes());
    hex::encode(&digest[..4])
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hash_is_short_stable_and_hides_the_cursor() {
        let h = short_hash("secret-tenant-cursor");
        assert_eq!(h.len(), 8);
        assert_eq!(h, short_hash("secret-tenant-cursor"));
        assert_ne!(h, short_hash("other"));
        assert!(!h.contains("secret"));
    }
}
