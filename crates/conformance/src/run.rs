//! Gathering what the rules need for one kind over any [`Pager`]: two
//! listings in a row (recorded page by page), one garbage cursor, and the
//! first continuation cursor asked a second time. Bounded: at most
//! 2 × `max_pages` + 2 requests per kind, each under the walk's deadlines.

use super::record::{PageContent, PageObservation, RecordingPager};
use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::{walk, Era, ErrorKind, Kind, ListingReport, Pager, WalkLimits};
use std::collections::BTreeSet;

/// A cursor no server could have issued.
pub const GARBAGE_CURSOR: &str = "mcp-exporter/conformance-garbage-cursor";

/// One listing: the walker's report and every page as recorded.
#[derive(Debug, Clone)]
pub struct Listed {
    pub report: ListingReport,
    pub pages: Vec<PageObservation>,
}

impl Listed {
    /// Pages of the final attempt (after the last restart from page 1).
    pub fn final_attempt(&self) -> &[PageObservation] {
        let start = self
            .pages
            .iter()
            .rposition(|p| p.sent_cursor.is_none())
            .unwrap_or(0);
        &self.pages[start..]
    }

    /// Identity keys of the final attempt in the order served.
    pub fn ordered_keys(&self) -> Vec<&str> {
        self.final_attempt()
            .iter()
            .filter_map(|p| p.outcome.as_ref().ok())
            .flat_map(|c| c.keys.iter().map(String::as_str))
            .collect()
    }

    /// list_changed notifications seen during this listing.
    pub fn list_changed(&self) -> u32 {
        self.pages.iter().map(|p| p.list_changed).sum()
    }
}

/// How the server answered a cursor it never issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GarbageAnswer {
    InvalidParams,
    /// Another error: the JSON-RPC code if any, and what the walker calls it.
    OtherError {
        code: Option<i64>,
        error: ErrorKind,
    },
    /// Items the listing already had: a silent restart.
    Restarted {
        items: Vec<String>,
    },
    /// A page of items the listing did not have, or an empty page.
    Accepted {
        items: u32,
    },
}

/// The first continuation cursor asked once more, right after listing 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatCheck {
    pub cursor_hash: String,
    /// Request index of the original page within listing 2.
    pub page: u32,
    pub answer: RepeatAnswer,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepeatAnswer {
    Same,
    Different {
        first: Vec<String>,
        again: Vec<String>,
    },
    Failed {
        code: Option<i64>,
        error: ErrorKind,
    },
}

/// Everything the rules look at for one kind.
#[derive(Debug, Clone)]
pub struct KindObservations {
    pub kind: Kind,
    /// The protocol era the session speaks.
    pub era: Era,
    /// `capabilities.<cap>.listChanged`; None when the capability is absent.
    pub advertised_list_changed: Option<bool>,
    pub first: Listed,
    pub second: Option<Listed>,
    pub garbage: Option<GarbageAnswer>,
    pub repeat: Option<RepeatCheck>,
    /// Result of opening `subscriptions/listen`, when it was tried.
    pub subscription: Option<SubscriptionObservation>,
}

/// What opening `subscriptions/listen` showed (2026-07-28 only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriptionObservation {
    /// The acknowledgement came first, with our subscription id.
    Acknowledged { honoured: bool },
    /// Something else came first, or nothing within the deadline.
    NotAcknowledged { detail: String },
}

/// List `kind` twice through `pager`, then ask a garbage cursor and the
/// first continuation cursor again.
pub async fn observe_kind<P: Pager + Send>(
    pager: &mut P,
    kind: Kind,
    limits: &WalkLimits,
    era: Era,
    advertised_list_changed: Option<bool>,
) -> KindObservations {
    let first = list_once(pager, kind, limits, era).await;
    let second = if first.report.outcome.is_complete() {
        Some(list_once(pager, kind, limits, era).await)
    } else {
        None
    };
    let garbage = match &second {
        Some(_) => Some(ask_garbage(pager, kind, limits, &first).await),
        None => None,
    };
    let repeat = match &second {
        Some(l) if l.report.outcome.is_complete() => ask_again(pager, kind, limits, l).await,
        _ => None,
    };
    KindObservations {
        kind,
        era,
        advertised_list_changed,
        first,
        second,
        garbage,
        repeat,
        subscription: None,
    }
}

async fn list_once<P: Pager + Send>(
    pager: &mut P,
    kind: Kind,
    limits: &WalkLimits,
    era: Era,
) -> Listed {
    let mut rec = RecordingPager::new(pager);
    let report = walk(&mut rec, kind, limits, era).await;
    Listed {
        report,
        pages: rec.pages,
    }
}

async fn ask_garbage<P: Pager + Send>(
    pager: &mut P,
    kind: Kind,
    limits: &WalkLimits,
    listed: &Listed,
) -> GarbageAnswer {
    let r = pager
        .fetch_page(kind, Some(GARBAGE_CURSOR), limits.page_timeout)
        .await;
    let obs = super::record::observe(0, kind, Some(GARBAGE_CURSOR), &r);
    match obs.outcome {
        Err((Some(code), _)) if code == INVALID_PARAMS => GarbageAnswer::InvalidParams,
        Err((code, error)) => GarbageAnswer::OtherError { code, error },
        Ok(content) => {
            let known: BTreeSet<&str> = listed.report.names.iter().map(String::as_str).collect();
            if !content.keys.is_empty() && content.keys.iter().all(|k| known.contains(k.as_str())) {
                GarbageAnswer::Restarted {
                    items: content.keys,
                }
            } else {
                GarbageAnswer::Accepted {
                    items: content.items,
                }
            }
        }
    }
}

fn has_more(c: &PageContent) -> bool {
    matches!(c.next, Some(super::record::NextCursor::Str(_)))
}

async fn ask_again<P: Pager + Send>(
    pager: &mut P,
    kind: Kind,
    limits: &WalkLimits,
    listed: &Listed,
) -> Option<RepeatCheck> {
    let (page, sent, cursor, first) = listed.final_attempt().iter().find_map(|p| {
        let sent = p.sent_cursor.as_ref()?;
        let cursor = sent.text.as_deref()?;
        let content = p.outcome.as_ref().ok()?;
        Some((p.index, sent, cursor, content))
    })?;
    let r = pager
        .fetch_page(kind, Some(cursor), limits.page_timeout)
        .await;
    let obs = super::record::observe(0, kind, Some(cursor), &r);
    let answer = match obs.outcome {
        Err((code, error)) => RepeatAnswer::Failed { code, error },
        // Same items and the same "more to come": cursors themselves may
        // legitimately differ (some carry a timestamp).
        Ok(again) if again.keys == first.keys && has_more(&again) == has_more(first) => {
            RepeatAnswer::Same
        }
        Ok(again) => RepeatAnswer::Different {
            first: first.keys.clone(),
            again: again.keys,
        },
    };
    Some(RepeatCheck {
        cursor_hash: sent.hash(),
        page,
        answer,
    })
}
