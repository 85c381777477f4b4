//! What a page of a cursor-paginated catalogue looks like, so that one walk
//! (and every guard of it) serves more than the four MCP kinds: where a
//! page keeps its items, what identifies one, and where it says what the
//! next cursor is. [`Kind`] is the MCP shape; a registry of MCP servers
//! (`GET /v0.1/servers`) is another, described by its user. Knows JSON
//! only, never how a page is fetched.

use super::fingerprint::{fingerprint, ItemFingerprint};
use super::kind::Kind;
use super::text;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The shape of one paginated catalogue's pages.
pub trait PageShape: Copy + Send + Sync {
    /// Field of a page that holds its items (an array).
    fn array_field(self) -> &'static str;

    /// What identifies `item` within the listing; `None` for an item
    /// without an identity (counted as invalid and left out).
    fn identity(self, item: &Value) -> Option<Cow<'_, str>>;

    /// The page's `nextCursor` as written; `None` when the page has none.
    fn next_cursor(self, page: &Map<String, Value>) -> Option<&Value>;

    /// What callers depend on in `item`, kept for drift detection; `None`
    /// for catalogues whose items are not compared over time.
    fn fingerprint(self, item: &Value, with_shape: bool) -> Option<ItemFingerprint>;
}

impl PageShape for Kind {
    fn array_field(self) -> &'static str {
        Kind::array_field(self)
    }

    fn identity(self, item: &Value) -> Option<Cow<'_, str>> {
        item.get(self.identity_key())
            .and_then(Value::as_str)
            .map(Cow::Borrowed)
    }

    fn next_cursor(self, page: &Map<String, Value>) -> Option<&Value> {
        page.get("nextCursor")
    }

    fn fingerprint(self, item: &Value, with_shape: bool) -> Option<ItemFingerprint> {
        Some(fingerprint(self, item, with_shape))
    }
}

/// The key an item is told apart by within a listing, from its identity
/// (`PageShape::identity`): unchanged up to [`text::MAX_NAME_BYTES`], a
/// longer one cut with a hash of the whole (`text::name`), so identity
/// survives the cut and a kept key is bounded. The walker dedupes by it,
/// and so does a merged answer the tap makes.
pub fn item_key(identity: Cow<'_, str>) -> Cow<'_, str> {
    match identity {
        Cow::Borrowed(id) => text::name(id),
        Cow::Owned(id) if id.len() <= text::MAX_NAME_BYTES => Cow::Owned(id),
        Cow::Owned(id) => Cow::Owned(text::name(&id).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_keys_are_identities_cut_as_names_are() {
        assert_eq!(item_key(Cow::Borrowed("a")), "a");
        let long = "n".repeat(text::MAX_NAME_BYTES + 1);
        let key = item_key(Cow::Owned(long.clone()));
        assert!(key.len() <= text::MAX_NAME_BYTES, "{}", key.len());
        assert_eq!(key, text::name(&long));
        let other = format!("{}m", &long[..long.len() - 1]);
        assert_ne!(item_key(Cow::Borrowed(&other)), key, "apart past the cut");
    }
}
