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

/// The two eras of the protocol, whose rules for a listing differ: before
/// 2026-07-28 a `""` cursor ends a listing and a repeated cursor is a
/// cycle; from it `""` is a cursor like any other and a constant cursor is
/// legal while it brings new items. Decided here, once, for the walker,
/// the tap and its observer alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    Legacy,
    Modern,
}

impl Era {
    pub fn of(version: ProtocolVersion) -> Era {
        if version.is_modern() {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    /// A revision a peer names, known to us or not. Revisions are dates
    /// (`YYYY-MM-DD`): one we do not know yet but dated from the first
    /// modern one on is modern; anything else (garbage, an older unknown
    /// date) is read as the legacy era, as a server that never said
    /// otherwise is.
    pub fn of_label(label: &[u8]) -> Era {
        if let Some(known) = std::str::from_utf8(label)
            .ok()
            .and_then(|l| l.parse::<ProtocolVersion>().ok())
        {
            return Era::of(known);
        }
        let is_date = label.len() == 10
            && label.iter().enumerate().all(|(i, b)| match i {
                4 | 7 => *b == b'-',
                _ => b.is_ascii_digit(),
            });
        // Same-length dates compare as text in time order.
        if is_date && label >= ProtocolVersion::FIRST_MODERN.label().as_bytes() {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    /// `Modern` when `modern` (a session's negotiated era, kept as a flag).
    pub fn modern_if(modern: bool) -> Era {
        if modern {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    pub fn is_modern(self) -> bool {
        self == Era::Modern
    }
}

#[cfg(test)]
mod tests {
    use super::{Era, ProtocolVersion};

    #[test]
    fn the_era_of_a_label_known_or_not() {
        assert_eq!(Era::of_label(b"2026-07-28"), Era::Modern);
        assert_eq!(Era::of_label(b"2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_label(b"2027-03-01"), Era::Modern, "a later date");
        assert_eq!(Era::of_label(b"2025-01-01"), Era::Legacy);
        for garbage in ["", "9999", "2026-07-28x", "zzzz-zz-zz", "2026/07/28"] {
            assert_eq!(
                Era::of_label(garbage.as_bytes()),
                Era::Legacy,
                "{garbage:?}"
            );
        }
    }

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
