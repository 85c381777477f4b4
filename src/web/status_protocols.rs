//! The target page's per-protocol section (`protocols:` in the config): the
//! latest poll's catalogue at every configured version, with the names each
//! version lacks. Absent for targets without `protocols:`.

use super::status_sections::names_cell;
use crate::poll::{ProtocolCatalogue, ProtocolKind};
use maud::{html, Markup};

pub fn section(protocols: &[ProtocolCatalogue]) -> Markup {
    if protocols.is_empty() {
        return html! {};
    }
    html! {
        h2 { "Per protocol version" }
        p.muted { "One session per configured version, newest first; the primary's listing is the one charted above. Missing: listed under another version but not this one." }
        table {
            tr { th { "version" } th { "kind" } th { "outcome" } th.num { "items" } th.num { "missing here" } th { "missing names" } }
            @for p in protocols {
                @let version = version_cell(p);
                @if let Some(e) = &p.session_error {
                    tr {
                        td { (version) }
                        td colspan="5" class="muted" { "no session (not spoken): " (e) }
                    }
                } @else {
                    @for k in &p.kinds {
                        tr.protocol {
                            td { (version) }
                            (kind_cells(k))
                        }
                    }
                }
            }
        }
    }
}

/// The version, marked when it is the primary.
fn version_cell(p: &ProtocolCatalogue) -> Markup {
    html! {
        (p.protocol_version.label())
        @if p.primary { " " span.muted { "(primary)" } }
    }
}

/// One kind at one version: outcome, items, and what it lacks.
fn kind_cells(k: &ProtocolKind) -> Markup {
    html! {
        td { (k.kind) }
        td {
            (k.outcome)
            @if let Some(r) = &k.reason { " (" (r.label()) ")" }
        }
        td.num { (k.unique_items) }
        @match k.missing_total {
            None => { td."num muted" { "-" } td {} },
            Some(0) => { td."num ok" { "0" } td {} },
            Some(n) => { td."num bad" { (n) } td { (names_cell(&k.missing, n)) } },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_listing::{Kind, Outcome, ProtocolVersion};

    #[test]
    fn names_what_each_version_lacks_and_escapes() {
        let kind = |missing: Option<u64>, names: &[&str]| ProtocolKind {
            kind: Kind::Tools,
            outcome: Outcome::Complete,
            reason: None,
            unique_items: 2,
            missing_total: missing,
            missing: names.iter().map(|s| s.to_string()).collect(),
        };
        let html = section(&[
            ProtocolCatalogue {
                protocol_version: ProtocolVersion::V2026_07_28,
                primary: true,
                negotiated: Some("2026-07-28".into()),
                session_error: None,
                kinds: vec![kind(Some(2), &["legacy_<b>", "legacy_x"])],
            },
            ProtocolCatalogue {
                protocol_version: ProtocolVersion::V2024_11_05,
                primary: false,
                negotiated: None,
                session_error: Some("transport_error: HTTP 400".into()),
                kinds: vec![],
            },
        ])
        .into_string();
        assert!(
            html.contains("2026-07-28 <span class=\"muted\">(primary)</span>"),
            "{html}"
        );
        assert!(html.contains("legacy_&lt;b&gt;, legacy_x"), "{html}");
        assert!(
            html.contains("no session (not spoken): transport_error: HTTP 400"),
            "{html}"
        );
        assert_eq!(section(&[]).into_string(), "");
    }
}
