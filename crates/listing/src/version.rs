//! The MCP protocol revisions we speak. Which era a revision belongs to
//! changes what a lister may do (stateless `server/discover`, `""` as a
//! valid cursor, per-request `_meta`).

crate::labelled_enum! {
    /// A protocol revision, oldest first: the order is time order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum ProtocolVersion as "protocol version" {
        V2024_11_05 => "2024-11-05",
        V2025_03_26 => "2025-03-26",
        V2025_06_18 => "2025-06-18",
        V2025_11_25 => "2025-11-25",
        V2026_07_28 => "2026-07-28",
    }
}

impl ProtocolVersion {
    /// The first stateless revision: no `initialize`, `server/discover`,
    /// per-request `_meta`, `""` is a valid cursor.
    pub const FIRST_MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// What we offer to a server that needs `initialize`.
    pub const NEWEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::FIRST_MODERN
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolVersion;

    #[test]
    fn eras() {
        assert!(ProtocolVersion::V2026_07_28.is_modern());
        assert!(!ProtocolVersion::V2025_11_25.is_modern());
        assert!(!ProtocolVersion::V2024_11_05.is_modern());
        assert!(ProtocolVersion::NEWEST_LEGACY < ProtocolVersion::FIRST_MODERN);
        assert_eq!("2025-06-18".parse(), Ok(ProtocolVersion::V2025_06_18));
        assert!("1900-01-01".parse::<ProtocolVersion>().is_err());
    }

    #[test]
    fn label_order_is_version_order() {
        let mut labels = ProtocolVersion::LABELS;
        labels.sort_unstable();
        assert_eq!(labels, ProtocolVersion::LABELS);
    }
}
