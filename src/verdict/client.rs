//! The verdict of one client identity behind a tap, in the same words and
//! levels as a target's: `healthy` when it walks every catalogue to the
//! end, `down` when most of its listings of a multi-page catalogue stop
//! before the last page (its users see a prefix), `degraded` for the rest
//! of what a client gets wrong (some listings abandoned, restarts, cursors
//! rejected with -32602, cursors from another session). Pure: the tap's
//! observer task fills a [`ClientInput`] from its tally of recent listings.

use super::code::Code;
use super::reasons::noun;
use super::types::{Health, Reason, Verdict};
use mcp_listing::Kind;
use serde::Serialize;
use std::fmt::Write as _;

/// Listings abandoned (of the recent ones) from which a client is `down`:
/// most of what its users see is a prefix.
pub const DOWN_SHARE: f64 = 0.5;

/// What one client identity did recently, per kind it listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientInput<'a> {
    /// The identity as shown (cut and escaped already).
    pub name: &'a str,
    /// The version it announced last, if any (cut and escaped already).
    pub version: Option<&'a str>,
    /// The route its listings were for, when the tap tells routes apart
    /// (`None` for a tap in front of one server): "… of /mcp/alpha …".
    pub route: Option<&'a str>,
    pub kinds: Vec<ClientKindInput>,
}

/// One kind's recent listings by one client identity.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientKindInput {
    pub kind: Kind,
    /// Recent listings that ended, by outcome.
    pub recent: Outcomes,
    /// Recent -32602 answers to its cursors.
    pub invalid_cursors: u32,
    /// Recent cursors handed out in another session, and never handed out.
    pub foreign_cursors: ForeignCursors,
    /// The last abandoned listing, if one is among the recent ones.
    pub last_abandoned: Option<Abandoned>,
    /// The JSON-RPC error code of the last failed listing.
    pub last_error_code: Option<i64>,
}

/// A client's listings that ended, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Outcomes {
    pub complete: u64,
    pub abandoned: u64,
    pub restarted: u64,
    pub failed: u64,
}

impl Outcomes {
    /// Listings that ended, whatever their outcome.
    pub fn total(&self) -> u64 {
        self.complete + self.abandoned + self.restarted + self.failed
    }
}

/// Cursors a client sent that its session was never handed: handed out
/// in another session, or never handed out at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ForeignCursors {
    pub other_session: u64,
    pub unknown: u64,
}

/// What the client's last abandoned listing saw, against the catalogue
/// when it is known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Abandoned {
    /// Pages it read before it stopped.
    pub pages_read: u32,
    /// Items those pages carried.
    pub items_received: u64,
    /// What it missed, when the whole catalogue is known (a complete walk
    /// through the tap or the tap's reference target).
    pub missed: Option<Missed>,
}

/// What a listing missed of the known catalogue of its kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Missed {
    /// Items the listing never received.
    pub count: u64,
    /// Unique items in the catalogue.
    pub catalogue_items: u64,
    /// Pages a complete walk took, when known.
    pub catalogue_pages: Option<u32>,
    /// The first names missed (at most 8, cut and escaped), in name order.
    pub names: Vec<String>,
    /// The last name missed, when `names` does not hold every one.
    pub last: Option<String>,
}

impl ClientKindInput {
    /// Nothing seen yet for `kind`.
    pub fn new(kind: Kind) -> ClientKindInput {
        ClientKindInput {
            kind,
            recent: Outcomes::default(),
            invalid_cursors: 0,
            foreign_cursors: ForeignCursors::default(),
            last_abandoned: None,
            last_error_code: None,
        }
    }
}

/// One verdict per client identity (the worst kind's level, every reason)
/// and one per kind it listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientVerdict {
    #[serde(flatten)]
    pub overall: Verdict,
    #[serde(skip)]
    pub kinds: Vec<(Kind, Verdict)>,
}

/// The verdict of one client identity.
pub fn judge_client(input: &ClientInput<'_>) -> ClientVerdict {
    let who = match input.version {
        Some(v) if !v.is_empty() => format!("{} {v}", input.name),
        _ => input.name.to_string(),
    };
    let of_route = input.route.map_or_else(String::new, |r| format!(" of {r}"));
    let mut all = Vec::new();
    let mut kinds = Vec::new();
    for k in &input.kinds {
        let reasons = kind_reasons(&who, &of_route, k);
        all.extend(reasons.iter().cloned());
        kinds.push((k.kind, Verdict::from_reasons(reasons)));
    }
    ClientVerdict {
        overall: Verdict::from_reasons(all),
        kinds,
    }
}

/// The reasons of one kind; `of_route` is `" of ROUTE"` or empty.
fn kind_reasons(who: &str, of_route: &str, k: &ClientKindInput) -> Vec<Reason> {
    let mut out = Vec::new();
    let listings = k.recent.total();
    let noun = noun(k.kind);
    let mut add = |code: Code, level: Health, message: String| {
        out.push(Reason {
            code,
            kind: Some(k.kind),
            level,
            message,
        });
    };
    if k.recent.abandoned > 0 {
        let share = k.recent.abandoned as f64 / listings.max(1) as f64;
        let (code, level) = if share >= DOWN_SHARE {
            (Code::ClientReadsPrefix, Health::Down)
        } else {
            (Code::ClientAbandonsListings, Health::Degraded)
        };
        add(code, level, abandoned_sentence(who, of_route, k, listings));
    }
    if k.recent.restarted > 0 {
        let n = k.recent.restarted;
        let message = format!(
            "{who} started over from page 1 in {n} of {listings} {noun} listings{of_route}"
        );
        add(Code::ClientRestarts, Health::Degraded, message);
    }
    if k.invalid_cursors > 0 {
        let n = k.invalid_cursors;
        let message = format!(
            "the upstream answered {n} of {who}'s {noun} cursors{of_route} with -32602 (invalid params)"
        );
        add(Code::ClientInvalidCursors, Health::Degraded, message);
    }
    if k.foreign_cursors.other_session + k.foreign_cursors.unknown > 0 {
        add(
            Code::ClientForeignCursors,
            Health::Degraded,
            foreign_sentence(who, &format!("{noun} cursors{of_route}"), k),
        );
    }
    let failed_otherwise = k.recent.failed.saturating_sub(u64::from(k.invalid_cursors));
    if failed_otherwise > 0 {
        let mut message = format!(
            "{failed_otherwise} of {listings} {noun} listings{of_route} by {who} ended in an error"
        );
        if let Some(code) = k.last_error_code {
            let _ = write!(message, " (last: {code})");
        }
        add(Code::ClientListingsFailed, Health::Degraded, message);
    }
    out
}

/// "mcp 0.1.0 read page 1 of 2 in 37 of 40 tools listings: sees 8 of 14
/// tools, missing tool-009 … tool-014"; behind a gateway "… read page 1 of
/// 2 of /mcp/alpha in …".
fn abandoned_sentence(who: &str, of_route: &str, k: &ClientKindInput, listings: u64) -> String {
    let noun = noun(k.kind);
    let Some(last) = &k.last_abandoned else {
        return format!(
            "{who} stopped before the last page in {} of {listings} {noun} listings{of_route}",
            k.recent.abandoned
        );
    };
    let missed = last.missed.as_ref();
    let mut s = match last.pages_read {
        1 => format!("{who} read page 1"),
        n => format!("{who} read {n} pages"),
    };
    if let Some(pages) = missed.and_then(|m| m.catalogue_pages) {
        let _ = write!(s, " of {pages}");
    }
    s.push_str(of_route);
    let _ = write!(
        s,
        " in {} of {listings} {noun} listings: ",
        k.recent.abandoned
    );
    match missed {
        Some(m) => {
            let _ = write!(
                s,
                "sees {} of {} {noun}",
                last.items_received, m.catalogue_items
            );
            if m.count > 0 {
                let _ = write!(s, ", missing {}", missed_names(m));
            }
        }
        None => {
            let _ = write!(
                s,
                "sees {} {noun} (the whole catalogue is not known yet)",
                last.items_received
            );
        }
    }
    s
}

/// A few missed names in full (`tool-013, tool-014`), more as the first and
/// the last (`tool-009 … tool-014`), or only how many when no name is known.
fn missed_names(m: &Missed) -> String {
    let last = m.last.as_ref().or(m.names.last());
    match (m.names.first(), last) {
        (None, _) | (_, None) => format!("{} items", m.count),
        (Some(_), Some(_)) if m.count <= 3 && m.names.len() as u64 == m.count => m.names.join(", "),
        (Some(first), Some(last)) if first != last => format!("{first} … {last}"),
        (Some(first), Some(_)) => format!("{first} and {} more", m.count.saturating_sub(1)),
    }
}

/// "app sent tools cursors: 1 handed out in another session"; `what` is
/// the cursors' kind (and route).
fn foreign_sentence(who: &str, what: &str, k: &ClientKindInput) -> String {
    let mut parts = Vec::new();
    let foreign = k.foreign_cursors;
    if foreign.other_session > 0 {
        parts.push(format!(
            "{} handed out in another session",
            foreign.other_session
        ));
    }
    if foreign.unknown > 0 {
        parts.push(format!("{} the tap never handed out", foreign.unknown));
    }
    format!("{who} sent {what}: {}", parts.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_one_reader() -> ClientKindInput {
        ClientKindInput {
            recent: Outcomes {
                complete: 3,
                abandoned: 37,
                ..Outcomes::default()
            },
            last_abandoned: Some(Abandoned {
                pages_read: 1,
                items_received: 8,
                missed: Some(Missed {
                    count: 6,
                    catalogue_items: 14,
                    catalogue_pages: Some(2),
                    names: vec!["tool-009".into()],
                    last: Some("tool-014".into()),
                }),
            }),
            ..ClientKindInput::new(Kind::Tools)
        }
    }

    /// A client that walked `kind` to the end `complete` times, and did
    /// nothing else.
    fn walker(kind: Kind, complete: u64) -> ClientKindInput {
        ClientKindInput {
            recent: Outcomes {
                complete,
                ..Outcomes::default()
            },
            ..ClientKindInput::new(kind)
        }
    }

    fn judge(name: &str, version: Option<&str>, kinds: Vec<ClientKindInput>) -> ClientVerdict {
        judge_client(&ClientInput {
            name,
            version,
            route: None,
            kinds,
        })
    }

    /// The overall verdict's first reason: its code and message.
    fn first_reason(v: &ClientVerdict) -> (Code, &str) {
        let reason = v.overall.first_reason().expect("a reason");
        (reason.code, reason.message.as_str())
    }

    #[test]
    fn a_client_that_reads_page_one_is_down_in_the_house_words() {
        let v = judge("mcp", Some("0.1.0"), vec![page_one_reader()]);
        assert_eq!(v.overall.level, Health::Down);
        assert_eq!(
            first_reason(&v),
            (
                Code::ClientReadsPrefix,
                "mcp 0.1.0 read page 1 of 2 in 37 of 40 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
            )
        );
        assert_eq!(v.kinds[0].1.level, Health::Down);
    }

    #[test]
    fn behind_a_gateway_the_sentence_names_the_route() {
        let v = judge_client(&ClientInput {
            name: "mcp",
            version: Some("0.1.0"),
            route: Some("/mcp/alpha"),
            kinds: vec![page_one_reader()],
        });
        assert_eq!(
            first_reason(&v).1,
            "mcp 0.1.0 read page 1 of 2 of /mcp/alpha in 37 of 40 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
        );
        let restarts = ClientKindInput {
            recent: Outcomes {
                restarted: 1,
                ..Outcomes::default()
            },
            ..ClientKindInput::new(Kind::Tools)
        };
        let v = judge_client(&ClientInput {
            name: "app",
            version: None,
            route: Some("beta"),
            kinds: vec![restarts],
        });
        assert_eq!(
            first_reason(&v).1,
            "app started over from page 1 in 1 of 1 tools listings of beta"
        );
    }

    #[test]
    fn a_walker_is_healthy_and_says_nothing() {
        let walker = walker(Kind::Tools, 40);
        let v = judge("agent-sdk", None, vec![walker]);
        assert_eq!(v.overall, Verdict::healthy());
    }

    #[test]
    fn a_few_abandoned_listings_are_degraded_and_an_unknown_catalogue_is_said() {
        let mixed = ClientKindInput {
            recent: Outcomes {
                complete: 30,
                abandoned: 2,
                ..Outcomes::default()
            },
            last_abandoned: Some(Abandoned {
                pages_read: 2,
                items_received: 10,
                missed: None,
            }),
            ..ClientKindInput::new(Kind::Prompts)
        };
        let v = judge("mcp", None, vec![mixed]);
        assert_eq!(v.overall.level, Health::Degraded);
        assert_eq!(
            first_reason(&v),
            (
                Code::ClientAbandonsListings,
                "mcp read 2 pages in 2 of 32 prompts listings: sees 10 prompts (the whole catalogue is not known yet)"
            )
        );
    }

    #[test]
    fn cursor_misuse_and_restarts_are_degraded_with_their_numbers() {
        let misuse = ClientKindInput {
            recent: Outcomes {
                complete: 5,
                abandoned: 0,
                restarted: 2,
                failed: 3,
            },
            invalid_cursors: 2,
            foreign_cursors: ForeignCursors {
                other_session: 1,
                unknown: 4,
            },
            last_error_code: Some(-32603),
            ..ClientKindInput::new(Kind::Resources)
        };
        let v = judge("app", Some("2"), vec![misuse]);
        assert_eq!(v.overall.level, Health::Degraded);
        let messages: Vec<(Code, &str)> = v
            .overall
            .reasons
            .iter()
            .map(|r| (r.code, r.message.as_str()))
            .collect();
        assert_eq!(
            messages,
            vec![
                (
                    Code::ClientRestarts,
                    "app 2 started over from page 1 in 2 of 10 resources listings"
                ),
                (
                    Code::ClientInvalidCursors,
                    "the upstream answered 2 of app 2's resources cursors with -32602 (invalid params)"
                ),
                (
                    Code::ClientForeignCursors,
                    "app 2 sent resources cursors: 1 handed out in another session and 4 the tap never handed out"
                ),
                (
                    Code::ClientListingsFailed,
                    "1 of 10 resources listings by app 2 ended in an error (last: -32603)"
                ),
            ]
        );
    }

    #[test]
    fn the_worst_kind_decides_and_each_kind_keeps_its_own() {
        let walker = walker(Kind::Prompts, 4);
        let v = judge("mcp", None, vec![walker, page_one_reader()]);
        assert_eq!(v.overall.level, Health::Down);
        assert_eq!(v.kinds[0], (Kind::Prompts, Verdict::healthy()));
        assert_eq!(v.kinds[1].1.level, Health::Down);
    }

    #[test]
    fn missed_names_read_as_a_list_or_a_range() {
        let mut c = Missed {
            count: 2,
            catalogue_items: 14,
            catalogue_pages: None,
            names: vec!["a".into(), "b".into()],
            last: None,
        };
        assert_eq!(missed_names(&c), "a, b");
        c.count = 6;
        c.names = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
        assert_eq!(missed_names(&c), "a … f");
        c.count = 90;
        c.last = Some("z".into());
        assert_eq!(missed_names(&c), "a … z");
        c.names = vec!["a".into()];
        c.last = None;
        assert_eq!(missed_names(&c), "a and 89 more");
        c.names.clear();
        assert_eq!(missed_names(&c), "90 items");
    }
}
