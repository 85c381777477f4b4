//! The target page's per-protocol section (`protocols:` in the config): the
//! latest poll's catalogue at every configured version, with the names each
//! version lacks. Absent for targets without `protocols:`.

use super::html::esc;
use crate::poll::ProtocolCatalogue;
use std::fmt::Write as _;

pub fn section(protocols: &[ProtocolCatalogue]) -> String {
    if protocols.is_empty() {
        return String::new();
    }
    let mut b = String::from("<h2>Per protocol version</h2><p class=\"muted\">One session per configured version, newest first; the primary's listing is the one charted above. Missing: listed under another version but not this one.</p><table><tr><th>version</th><th>kind</th><th>outcome</th><th class=\"num\">items</th><th class=\"num\">missing here</th><th>missing names</th></tr>");
    for p in protocols {
        let version = if p.primary {
            format!(
                "{} <span class=\"muted\">(primary)</span>",
                esc(p.protocol_version.label())
            )
        } else {
            esc(p.protocol_version.label())
        };
        if let Some(e) = &p.session_error {
            let _ = write!(
                b,
                "<tr><td>{version}</td><td colspan=\"5\" class=\"muted\">no session (not spoken): {}</td></tr>",
                esc(e)
            );
            continue;
        }
        for k in &p.kinds {
            let outcome = match &k.reason {
                Some(r) => format!("{} ({})", k.outcome, esc(r.label())),
                None => k.outcome.to_string(),
            };
            let (class, missing, names) = match k.missing_total {
                None => ("muted", "-".to_string(), String::new()),
                Some(0) => ("ok", "0".to_string(), String::new()),
                Some(n) => {
                    let mut names = esc(&k.missing.join(", "));
                    if n > k.missing.len() as u64 {
                        let _ = write!(
                            names,
                            " <span class=\"muted\">… and {} more</span>",
                            n - k.missing.len() as u64
                        );
                    }
                    ("bad", n.to_string(), names)
                }
            };
            let _ = write!(
                b,
                "<tr class=\"protocol\"><td>{version}</td><td>{}</td><td>{outcome}</td><td class=\"num\">{}</td><td class=\"num {class}\">{missing}</td><td>{names}</td></tr>",
                k.kind, k.unique_items
            );
        }
    }
    b.push_str("</table>");
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::ProtocolKind;
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
        ]);
        assert!(
            html.contains("2026-07-28 <span class=\"muted\">(primary)</span>"),
            "{html}"
        );
        assert!(html.contains("legacy_&lt;b&gt;, legacy_x"), "{html}");
        assert!(
            html.contains("no session (not spoken): transport_error: HTTP 400"),
            "{html}"
        );
        assert_eq!(section(&[]), "");
    }
}
