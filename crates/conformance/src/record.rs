//! What the conformance rules look at: every page a listing fetched, as the
//! server sent it, recorded by a [`Pager`] wrapper so the walker stays
//! untouched. Cursors are kept as fixed-size digests; the text of one per
//! listing (the first continuation cursor, to ask it again) is kept in
//! memory and never printed: `Debug` shows the short hash.

use mcp_listing::cursor::CursorDigest;
use mcp_listing::text;
use mcp_listing::walk::json_type;
use mcp_listing::{ErrorKind, Kind, PageError, PageResult, Pager};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Identity keys kept per page; a page with more is still counted.
pub const MAX_KEYS_PER_PAGE: usize = 10_000;
/// Pages recorded per listing; the walker's own `max_pages` bounds it too.
pub const MAX_PAGES_RECORDED: usize = 10_000;
/// Longest `cacheScope` / `resultType` value kept, in characters.
const MAX_LABEL: usize = 32;

/// A cursor we sent: its digest, and its text only where a rule asks it
/// again. Only ever shown as its short hash.
#[derive(Clone, PartialEq, Eq)]
pub struct SentCursor {
    pub digest: CursorDigest,
    /// The cursor itself, kept for the first continuation page of the
    /// latest attempt only: a server's cursors may be a MiB each.
    pub text: Option<String>,
}

impl SentCursor {
    pub fn hash(&self) -> String {
        self.digest.short()
    }
}

impl fmt::Debug for SentCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cursor#{}", self.hash())
    }
}

/// What a page said about `nextCursor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextCursor {
    Absent,
    Null,
    /// A string (possibly empty), as its digest.
    Str(CursorDigest),
    /// Another JSON type, named.
    Other(&'static str),
}

/// A field that should be present with a given shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field<T> {
    Absent,
    Valid(T),
    /// Present but of the wrong type or range; the JSON, shortened.
    Invalid(String),
}

/// One page round trip as the rules see it.
#[derive(Debug, Clone)]
pub struct PageObservation {
    /// Order of the request within this recording (0 = first).
    pub index: u32,
    pub sent_cursor: Option<SentCursor>,
    /// `Err` carries the JSON-RPC code when there was one, and what the
    /// walker calls the failure.
    pub outcome: Result<PageContent, (Option<i64>, ErrorKind)>,
    /// `list_changed` notifications for the walked kind around this page.
    pub list_changed: u32,
}

/// The parts of a successful page the rules read.
#[derive(Debug, Clone, Default)]
pub struct PageContent {
    /// Identity keys in page order (at most [`MAX_KEYS_PER_PAGE`]).
    pub keys: Vec<String>,
    /// Items on the page, including ones without their key.
    pub items: u32,
    pub missing_keys: u32,
    /// The items array is missing or not an array.
    pub no_items_array: bool,
    pub next: Option<NextCursor>,
    pub ttl_ms: Option<Field<u64>>,
    pub cache_scope: Option<Field<String>>,
    pub result_type: Option<Field<String>>,
}

impl PageContent {
    /// Read a result the way the rules need it.
    pub fn read(kind: Kind, result: &Value) -> PageContent {
        let mut c = PageContent::default();
        let Some(obj) = result.as_object() else {
            c.no_items_array = true;
            return c;
        };
        match obj.get(kind.array_field()).and_then(Value::as_array) {
            Some(items) => {
                c.items = items.len() as u32;
                for item in items {
                    match item.get(kind.identity_key()).and_then(Value::as_str) {
                        Some(k) if c.keys.len() < MAX_KEYS_PER_PAGE => {
                            c.keys.push(text::name(k).into_owned())
                        }
                        Some(_) => {}
                        None => c.missing_keys += 1,
                    }
                }
            }
            None => c.no_items_array = true,
        }
        c.next = Some(match obj.get("nextCursor") {
            None => NextCursor::Absent,
            Some(Value::Null) => NextCursor::Null,
            Some(Value::String(s)) => NextCursor::Str(CursorDigest::of(s)),
            Some(other) => NextCursor::Other(json_type(other)),
        });
        c.ttl_ms = Some(match obj.get("ttlMs") {
            None => Field::Absent,
            Some(v) => match v.as_u64() {
                Some(n) => Field::Valid(n),
                None => Field::Invalid(shorten(v)),
            },
        });
        c.cache_scope = Some(label_field(obj.get("cacheScope")));
        c.result_type = Some(label_field(obj.get("resultType")));
        c
    }
}

fn label_field(v: Option<&Value>) -> Field<String> {
    match v {
        None => Field::Absent,
        Some(Value::String(s)) => Field::Valid(s.chars().take(MAX_LABEL).collect()),
        Some(other) => Field::Invalid(shorten(other)),
    }
}

fn shorten(v: &Value) -> String {
    v.to_string().chars().take(MAX_LABEL).collect()
}

/// Wraps a pager and records every page it fetches.
pub struct RecordingPager<'a, P> {
    inner: &'a mut P,
    pub pages: Vec<PageObservation>,
}

impl<'a, P: Pager> RecordingPager<'a, P> {
    pub fn new(inner: &'a mut P) -> Self {
        RecordingPager {
            inner,
            pages: Vec::new(),
        }
    }
}

impl<P: Pager + Send> Pager for RecordingPager<'_, P> {
    async fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> PageResult {
        let result = self.inner.fetch_page(kind, cursor, timeout).await;
        if self.pages.len() < MAX_PAGES_RECORDED {
            let mut page = observe(self.pages.len() as u32, kind, cursor, &result);
            let first_continuation = self.pages.last().is_some_and(|p| p.sent_cursor.is_none());
            if let (true, Some(sent), Some(raw)) =
                (first_continuation, &mut page.sent_cursor, cursor)
            {
                // An earlier attempt's kept text is of no use now.
                for p in &mut self.pages {
                    if let Some(c) = &mut p.sent_cursor {
                        c.text = None;
                    }
                }
                sent.text = Some(raw.to_string());
            }
            self.pages.push(page);
        }
        result
    }
}

/// One page result as an observation.
pub fn observe(
    index: u32,
    kind: Kind,
    cursor: Option<&str>,
    result: &PageResult,
) -> PageObservation {
    PageObservation {
        index,
        sent_cursor: cursor.map(|c| SentCursor {
            digest: CursorDigest::of(c),
            text: None,
        }),
        outcome: match &result.outcome {
            Ok(v) => Ok(PageContent::read(kind, v)),
            Err(e) => Err((rpc_code(e), e.error_kind())),
        },
        list_changed: result.list_changed,
    }
}

fn rpc_code(e: &PageError) -> Option<i64> {
    match e {
        PageError::Rpc { code, .. } => Some(*code),
        _ => None,
    }
}
