//! A `GET /v0.1/servers` request read: its filters, its page size and
//! where its opaque cursor points.

use crate::cursor::CursorKey;
use chrono::DateTime;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The filters of a listing: a cursor is good only under the filters it
/// was handed out with.
#[derive(Debug, Clone, Default)]
pub struct ListFilters {
    /// Lower-cased substring of the entry name.
    pub search: Option<String>,
    /// `latest`, or an exact version.
    pub version: Option<String>,
    /// Entries updated strictly after this (seconds since the Unix epoch).
    pub updated_since: Option<i64>,
    /// The raw values, for the cursor's fingerprint.
    fingerprint: u32,
}

/// Where a page starts: the offset into the filtered entries and the
/// 1-based page number (a fault hits a page by number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagePosition {
    pub offset: u32,
    pub page: u32,
}

impl PagePosition {
    pub const FIRST: PagePosition = PagePosition { offset: 0, page: 1 };
}

/// One request, read.
#[derive(Debug)]
pub struct ListQuery {
    pub filters: ListFilters,
    pub limit: u32,
    pub at: PagePosition,
}

/// Why a request gets a 400.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListQueryError {
    #[error("limit must be a positive integer")]
    Limit,
    #[error("updated_since must be an RFC 3339 date-time")]
    UpdatedSince,
    #[error("invalid cursor")]
    Cursor,
}

const CURSOR_BODY: usize = 12;

impl ListQuery {
    /// `page_size` when no `limit` is given; a larger `limit` is lowered
    /// to `max_limit`.
    pub fn parse(
        q: &HashMap<String, String>,
        key: &CursorKey,
        page_size: u32,
        max_limit: u32,
    ) -> Result<ListQuery, ListQueryError> {
        let limit = match q.get("limit") {
            None => page_size,
            Some(s) => match s.trim().parse::<u32>() {
                Ok(n) if n > 0 => n.min(max_limit),
                _ => return Err(ListQueryError::Limit),
            },
        };
        let updated_since = match q.get("updated_since") {
            None => None,
            Some(s) => Some(
                DateTime::parse_from_rfc3339(s.trim())
                    .map_err(|_| ListQueryError::UpdatedSince)?
                    .timestamp(),
            ),
        };
        let search = q.get("search").filter(|s| !s.is_empty());
        let version = q.get("version").filter(|s| !s.is_empty());
        let filters = ListFilters {
            search: search.map(|s| s.to_lowercase()),
            version: version.cloned(),
            updated_since,
            fingerprint: fingerprint(&[search, version, q.get("updated_since")]),
        };
        let at = match q.get("cursor") {
            None => PagePosition::FIRST,
            Some(c) => open(key, c, filters.fingerprint).ok_or(ListQueryError::Cursor)?,
        };
        Ok(ListQuery { filters, limit, at })
    }

    /// The opaque cursor of `at` under this query's filters.
    pub fn cursor(&self, key: &CursorKey, at: PagePosition) -> String {
        let mut body = [0u8; CURSOR_BODY];
        body[0..4].copy_from_slice(&at.offset.to_be_bytes());
        body[4..8].copy_from_slice(&at.page.to_be_bytes());
        body[8..12].copy_from_slice(&self.filters.fingerprint.to_be_bytes());
        key.seal(&body)
    }
}

/// The position a cursor names, if this key sealed it under these filters.
fn open(key: &CursorKey, cursor: &str, fingerprint: u32) -> Option<PagePosition> {
    let body = key.open(cursor)?;
    let word = |i: usize| -> Option<u32> {
        Some(u32::from_be_bytes(body.get(i..i + 4)?.try_into().ok()?))
    };
    if body.len() != CURSOR_BODY || word(8)? != fingerprint {
        return None;
    }
    Some(PagePosition {
        offset: word(0)?,
        page: word(4)?,
    })
}

fn fingerprint(values: &[Option<&String>]) -> u32 {
    let mut h = Sha256::new();
    for v in values {
        match v {
            Some(s) => {
                h.update([1]);
                h.update((s.len() as u64).to_be_bytes());
                h.update(s.as_bytes());
            }
            None => h.update([0]),
        }
    }
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cursors_round_trip_only_under_their_filters() {
        let key = CursorKey::new(0, "registry", 0);
        let q = ListQuery::parse(&query(&[("search", "Fleet")]), &key, 30, 100).unwrap();
        assert_eq!(q.filters.search.as_deref(), Some("fleet"));
        let at = PagePosition {
            offset: 30,
            page: 2,
        };
        let c = q.cursor(&key, at);
        let again = ListQuery::parse(
            &query(&[("search", "Fleet"), ("cursor", &c)]),
            &key,
            30,
            100,
        );
        assert_eq!(again.unwrap().at, at);
        let other = ListQuery::parse(&query(&[("search", "x"), ("cursor", &c)]), &key, 30, 100);
        assert_eq!(other.unwrap_err(), ListQueryError::Cursor);
        let garbage = ListQuery::parse(&query(&[("cursor", "abc")]), &key, 30, 100);
        assert_eq!(garbage.unwrap_err(), ListQueryError::Cursor);
    }

    #[test]
    fn limits_and_dates_are_checked() {
        let key = CursorKey::new(0, "registry", 0);
        let parse = |pairs: &[(&str, &str)]| ListQuery::parse(&query(pairs), &key, 30, 100);
        assert_eq!(parse(&[]).unwrap().limit, 30);
        assert_eq!(parse(&[("limit", "500")]).unwrap().limit, 100);
        assert_eq!(parse(&[("limit", "0")]).unwrap_err(), ListQueryError::Limit);
        assert_eq!(parse(&[("limit", "x")]).unwrap_err(), ListQueryError::Limit);
        let since = parse(&[("updated_since", "2025-09-01T00:01:00Z")]).unwrap();
        assert_eq!(since.filters.updated_since, Some(1_756_684_860));
        let bad = parse(&[("updated_since", "yesterday")]);
        assert_eq!(bad.unwrap_err(), ListQueryError::UpdatedSince);
    }
}
