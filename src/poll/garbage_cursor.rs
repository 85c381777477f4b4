//! The invalid-cursor check: after a complete multi-page listing, send one
//! cursor no server could have issued and record how the server answers.
//! The spec says -32602; anything else is a compliance finding.

use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::{Kind, ListingReport};
use mcp_wire::session::Session;
use mcp_wire::transport::ExchangeError;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// A cursor no server could have issued.
const GARBAGE_CURSOR: &str = "mcp-exporter/invalid-cursor-probe";

mcp_listing::labelled_enum! {
    /// How a server answered the garbage cursor: the `result` label of
    /// `mcp_invalid_cursor_probe_result`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum GarbageCursorAnswer as "garbage cursor answer" {
        /// -32602, as the spec says.
        InvalidParams => "invalid_params",
        /// Items we already listed, as if the cursor were absent.
        SilentRestart => "silent_restart",
        /// Any other error.
        OtherError => "other_error",
        /// Anything else: the cursor was taken.
        Accepted => "accepted",
    }
}

/// One kind's check.
#[derive(Debug, Clone, Serialize)]
pub struct GarbageCursorCheck {
    pub kind: Kind,
    pub result: GarbageCursorAnswer,
}

/// Whether `listing` earns a check: complete and more than one page (a
/// one-page catalogue never hands out a cursor to fake).
pub fn wanted(enabled: bool, listing: &ListingReport) -> bool {
    enabled && listing.outcome.is_complete() && listing.final_pages > 1
}

/// Send the garbage cursor for the listing's kind on the open session.
pub async fn invalid_cursor_check(
    session: &mut Session,
    listing: &ListingReport,
    timeout: Duration,
) -> GarbageCursorCheck {
    let mut params = Map::new();
    params.insert("cursor".into(), json!(GARBAGE_CURSOR));
    let answer = session
        .request(listing.kind.method(), params, timeout)
        .await;
    let result = match answer.exchange.outcome {
        Err(ExchangeError::Rpc { code, .. }) if code == INVALID_PARAMS => {
            GarbageCursorAnswer::InvalidParams
        }
        Err(_) => GarbageCursorAnswer::OtherError,
        Ok(result) if only_known_items(&result, listing) => GarbageCursorAnswer::SilentRestart,
        Ok(_) => GarbageCursorAnswer::Accepted,
    };
    GarbageCursorCheck {
        kind: listing.kind,
        result,
    }
}

/// A non-empty page whose every item is one we already listed.
fn only_known_items(result: &Value, listing: &ListingReport) -> bool {
    let key = listing.kind.identity_key();
    let Some(items) = result
        .get(listing.kind.array_field())
        .and_then(Value::as_array)
    else {
        return false;
    };
    !items.is_empty()
        && items.iter().all(|i| {
            i.get(key).and_then(Value::as_str).is_some_and(|n| {
                listing
                    .names
                    .binary_search_by(|x| x.as_str().cmp(n))
                    .is_ok()
            })
        })
}
