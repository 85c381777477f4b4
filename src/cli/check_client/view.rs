//! One kind's requests, read as listings: a listing starts with a request
//! without a cursor (or with `null`) and runs until the next one. What a
//! grade asks of them — pages, items, repeats, how the last one stopped —
//! is answered here, from the record alone.

use super::record::{key_digest, ListRequest, NextCursor, PageAnswer, Record, SentCursor};
use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use std::collections::HashSet;

/// The requests of one kind, in order.
pub struct KindView<'a> {
    pub requests: Vec<&'a ListRequest>,
}

/// One listing: its requests, in order.
#[derive(Clone, Copy)]
pub struct Listing<'v, 'a> {
    pub requests: &'v [&'a ListRequest],
}

/// How a listing's last request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastPage {
    /// A page without `nextCursor` (or with `null`).
    End,
    /// A page handing out a cursor the client did not send.
    CursorLeft(NextCursor),
    Error(Option<i64>),
    Malformed,
    /// No answer (yet) when the record ends.
    Unanswered,
}

fn starts_listing(cursor: SentCursor) -> bool {
    matches!(cursor, SentCursor::None | SentCursor::Null)
}

impl<'a> KindView<'a> {
    pub fn of(record: &'a Record, kind: Kind) -> KindView<'a> {
        KindView {
            requests: record.requests.iter().filter(|r| r.kind == kind).collect(),
        }
    }

    /// The listings, in order (a continuation before any page 1 counts as
    /// a listing of its own).
    pub fn listings(&self) -> Vec<Listing<'_, 'a>> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, r) in self.requests.iter().enumerate() {
            if i > start && starts_listing(r.cursor) {
                out.push(Listing {
                    requests: &self.requests[start..i],
                });
                start = i;
            }
        }
        if start < self.requests.len() {
            out.push(Listing {
                requests: &self.requests[start..],
            });
        }
        out
    }

    pub fn last(&self) -> Option<Listing<'_, 'a>> {
        self.listings().pop()
    }

    /// A request with a cursor after a page that ended the listing (a
    /// cursor made up, or `null` sent back as one).
    pub fn continued_past_end(&self) -> bool {
        self.requests.windows(2).any(|w| {
            let ended = matches!(w[0].answer, Some(PageAnswer::Page { next, .. }) if next.ends());
            ended && !matches!(w[1].cursor, SentCursor::None)
        })
    }

    /// Was a request sent with `"cursor": null` (a `nextCursor: null` sent back)?
    pub fn sent_null(&self) -> bool {
        self.requests.iter().any(|r| r.cursor == SentCursor::Null)
    }

    /// Did a page 1 follow an error answer (a restart after -32602)?
    pub fn restarted_after_error(&self) -> bool {
        self.requests.windows(2).any(|w| {
            matches!(w[0].answer, Some(PageAnswer::Error(_))) && starts_listing(w[1].cursor)
        })
    }

    /// Was a cursor answered with an error sent again in the same listing
    /// (a retry, not a restart from page 1)?
    pub fn resent_rejected(&self) -> bool {
        self.listings().iter().any(|l| {
            let mut rejected = HashSet::new();
            l.requests.iter().any(|r| {
                let digest = sent_digest(r.cursor);
                let again = digest.is_some_and(|d| rejected.contains(&d));
                if let (Some(d), Some(PageAnswer::Error(_))) = (digest, &r.answer) {
                    rejected.insert(d);
                }
                again
            })
        })
    }
}

impl KindView<'_> {
    /// Did a continuation follow a `list_changed` the listing had not seen
    /// at its start (a walk across two catalogues)?
    pub fn continued_after_change(&self) -> bool {
        self.listings().iter().any(|l| {
            let start = l.requests[0].changes_before;
            l.requests[1..].iter().any(|r| r.changes_before > start)
        })
    }

    /// Did a new listing start after a `list_changed` (a listing again from
    /// page 1)?
    pub fn relisted_after_change(&self) -> bool {
        self.listings()
            .windows(2)
            .any(|w| w[1].requests[0].changes_before > w[0].requests[0].changes_before)
    }
}

fn sent_digest(cursor: SentCursor) -> Option<CursorDigest> {
    match cursor {
        SentCursor::Str(d) => Some(d),
        _ => None,
    }
}

impl Listing<'_, '_> {
    pub fn pages(&self) -> u32 {
        u32::try_from(self.requests.len()).unwrap_or(u32::MAX)
    }

    /// Requests answered with a page (not an error, not unanswered).
    pub fn pages_read(&self) -> u32 {
        let read = self
            .requests
            .iter()
            .filter(|r| matches!(r.answer, Some(PageAnswer::Page { .. })))
            .count();
        u32::try_from(read).unwrap_or(u32::MAX)
    }

    /// Items as sent, duplicates included.
    pub fn raw_items(&self) -> u64 {
        self.requests
            .iter()
            .map(|r| match &r.answer {
                Some(PageAnswer::Page { count, .. }) => u64::from(*count),
                _ => 0,
            })
            .sum()
    }

    /// Digests of the identity keys received.
    pub fn keys(&self) -> HashSet<u64> {
        self.requests
            .iter()
            .filter_map(|r| match &r.answer {
                Some(PageAnswer::Page { keys, .. }) => Some(keys.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The names of `catalogue` this listing never received, in order.
    pub fn missing(&self, catalogue: &[String]) -> Vec<String> {
        let keys = self.keys();
        catalogue
            .iter()
            .filter(|name| !keys.contains(&key_digest(name)))
            .cloned()
            .collect()
    }

    pub fn last_page(&self) -> LastPage {
        match self.requests.last().and_then(|r| r.answer.as_ref()) {
            None => LastPage::Unanswered,
            Some(PageAnswer::Error(code)) => LastPage::Error(*code),
            Some(PageAnswer::Malformed) => LastPage::Malformed,
            Some(PageAnswer::Page { next, .. }) if next.ends() => LastPage::End,
            Some(PageAnswer::Page { next, .. }) => LastPage::CursorLeft(*next),
        }
    }

    /// The 1-based page at which a cursor already sent in this listing was
    /// sent again, if any.
    pub fn first_repeat(&self) -> Option<u32> {
        let mut sent = HashSet::new();
        self.requests.iter().enumerate().find_map(|(i, r)| {
            let digest = sent_digest(r.cursor)?;
            (!sent.insert(digest)).then(|| u32::try_from(i + 1).unwrap_or(u32::MAX))
        })
    }

    /// Was the cursor the last page handed out one this listing had
    /// already sent (so stopping there is stopping at a repeat)?
    pub fn ends_at_repeat(&self) -> bool {
        let Some(Some(PageAnswer::Page {
            next: NextCursor::Str(next),
            ..
        })) = self.requests.last().map(|r| &r.answer)
        else {
            return false;
        };
        self.requests
            .iter()
            .any(|r| sent_digest(r.cursor) == Some(*next))
    }

    /// The requests' total wait for their answers, and the longest.
    pub fn longest_wait(&self) -> std::time::Duration {
        self.requests
            .iter()
            .filter_map(|r| Some(r.answered?.saturating_duration_since(r.at)))
            .max()
            .unwrap_or_default()
    }
}
