//! Protocol versions we speak and how they differ for a lister.

/// Oldest first.
pub const SUPPORTED: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The first stateless revision: no `initialize`, `server/discover`,
/// per-request `_meta`, `""` is a valid cursor.
pub const FIRST_MODERN: &str = "2026-07-28";

/// What we offer to a server that needs `initialize`.
pub const NEWEST_LEGACY: &str = "2025-11-25";

/// Versions are ISO dates, so string order is time order.
pub fn is_modern(version: &str) -> bool {
    version >= FIRST_MODERN
}

pub fn is_supported(version: &str) -> bool {
    SUPPORTED.contains(&version)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn eras() {
        assert!(is_modern("2026-07-28"));
        assert!(!is_modern("2025-11-25"));
        assert!(!is_modern("2024-11-05"));
        assert!(is_supported("2025-06-18"));
        assert!(!is_supported("1900-01-01"));
    }
}
