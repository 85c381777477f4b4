//! Cursors are opaque, may carry secrets or tenant ids, and their size is
//! the server's choice: the walker keeps a fixed-size digest of each (it
//! needs equality, never the text), and only a short hash ever leaves it.

use sha2::{Digest, Sha256};
use std::fmt;

/// A cursor as kept: the first 128 bits of its SHA-256, 16 bytes whatever
/// the cursor's length. Two different cursors sharing a digest would be
/// taken for a repeat; at 128 bits that takes about 2^64 cursors.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CursorDigest([u8; 16]);

impl CursorDigest {
    pub fn of(cursor: &str) -> CursorDigest {
        let digest = Sha256::digest(cursor.as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        CursorDigest(bytes)
    }

    /// The short hash tables and spans show ([`short_hash`] of the cursor).
    pub fn short(&self) -> String {
        hex::encode(&self.0[..4])
    }

    /// Whether the cursor was `""`.
    pub fn is_blank(&self) -> bool {
        *self == CursorDigest::of("")
    }
}

impl fmt::Debug for CursorDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cursor#{}", self.short())
    }
}

/// First 8 hex digits of SHA-256: enough to tell cursors apart in a table
/// or span, too short to be worth reversing.
pub fn short_hash(cursor: &str) -> String {
    CursorDigest::of(cursor).short()
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

    #[test]
    fn a_digest_is_fixed_size_whatever_the_cursor() {
        let huge = "c".repeat(1 << 20);
        let d = CursorDigest::of(&huge);
        assert_eq!(std::mem::size_of_val(&d), 16);
        assert_eq!(d, CursorDigest::of(&huge));
        assert_ne!(d, CursorDigest::of(&huge[1..]));
        assert_eq!(d.short(), short_hash(&huge));
        assert!(CursorDigest::of("").is_blank());
        assert!(!d.is_blank());
        assert!(!format!("{d:?}").contains("ccc"));
    }
}
