//! A registry page read for what a refresh keeps of it, as a stream: each
//! server entry is read (its text borrowed from the page), cut to what a
//! target or a skip reason needs, and handed on before the next is read;
//! descriptions, packages, schemas and whatever else an entry holds are
//! skipped over, never built. A page of a million `{}` entries costs its
//! bytes, not a tree of a million values. What the walker sees of the
//! page is the identity of each named entry and the cursor.

use super::any_seed::AnySeed;
use super::scalar::Scalar;
use mcp_listing::{text, HttpMode};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// The `_meta` key of the official registry's per-entry facts.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// Longest status or required header name kept.
const MAX_FIELD_BYTES: usize = 512;

/// Required header names kept per remote.
const MAX_HEADERS: usize = 16;

/// One registry entry, as much of it as a target or a skip needs, cut.
#[derive(Debug, Default)]
pub struct ServerEntry {
    /// `name@version` (or the name alone), cut as every name is
    /// ([`text::name`]: 256 bytes at most, a hash of the whole kept), so
    /// the walker's identity and ours are the same text; `None` for an
    /// entry without a name.
    pub identity: Option<String>,
    /// Cut as a name.
    pub name: Option<String>,
    pub status: Option<String>,
    pub is_latest: Option<bool>,
    pub remote: Option<Remote>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Remote {
    pub url: String,
    pub transport: HttpMode,
    pub required_headers: Vec<String>,
}

/// What the walker sees of a page: `{"servers": [IDENTITY, ...],
/// "metadata": {"nextCursor": ...}}`, or `null` for a page that is not an
/// object. `keep` takes each entry and says what identity the walker sees
/// (none for an entry without a name); its error stops reading.
pub fn read_page<E: fmt::Display>(
    bytes: &[u8],
    keep: &mut dyn FnMut(ServerEntry) -> Result<Option<String>, E>,
) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let page = AnySeed(PageSeed { keep })
        .deserialize(&mut de)
        .and_then(|page| de.end().map(|()| page));
    page.map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            format!("not JSON: {e}")
        } else {
            crate::config::sanitize_parser_message(&e.to_string())
        }
    })
}

/// Visits of every value a reader takes as absent (scalars); each reader
/// drains the container it does not want itself.
macro_rules! absent_scalars {
    ($absent:expr) => {
        fn visit_bool<Er: de::Error>(self, _: bool) -> Result<Self::Value, Er> {
            Ok($absent)
        }
        fn visit_i64<Er: de::Error>(self, _: i64) -> Result<Self::Value, Er> {
            Ok($absent)
        }
        fn visit_u64<Er: de::Error>(self, _: u64) -> Result<Self::Value, Er> {
            Ok($absent)
        }
        fn visit_f64<Er: de::Error>(self, _: f64) -> Result<Self::Value, Er> {
            Ok($absent)
        }
        fn visit_str<Er: de::Error>(self, _: &str) -> Result<Self::Value, Er> {
            Ok($absent)
        }
        fn visit_unit<Er: de::Error>(self) -> Result<Self::Value, Er> {
            Ok($absent)
        }
    };
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

struct PageSeed<'k, E> {
    keep: &'k mut dyn FnMut(ServerEntry) -> Result<Option<String>, E>,
}

impl<'de, E: fmt::Display> Visitor<'de> for PageSeed<'_, E> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a registry page")
    }

    absent_scalars!(Value::Null);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        drain_seq(seq).map(|()| Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut page = Map::new();
        while let Some(key) = map.next_key::<Scalar>()? {
            match key.text().as_deref() {
                Some("servers") => {
                    let seed = AnySeed(ServersSeed { keep: self.keep });
                    if let Some(ids) = map.next_value_seed(seed)? {
                        page.insert("servers".into(), Value::Array(ids));
                    }
                }
                Some("metadata") => {
                    let metadata = map.next_value::<Lenient<Metadata>>()?;
                    let cursor = metadata.0.and_then(|m| m.next_cursor);
                    let metadata = cursor.map(|c| Map::from_iter([("nextCursor".into(), c)]));
                    page.insert(
                        "metadata".into(),
                        metadata.map_or(Value::Null, Value::Object),
                    );
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(page))
    }
}

/// `servers`: each entry kept (or not) as it is read; the identities the
/// walker sees, or `None` when `servers` is not a list.
struct ServersSeed<'k, E> {
    keep: &'k mut dyn FnMut(ServerEntry) -> Result<Option<String>, E>,
}

impl<'de, E: fmt::Display> Visitor<'de> for ServersSeed<'_, E> {
    type Value = Option<Vec<Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of server entries")
    }

    absent_scalars!(None);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut ids = Vec::new();
        while let Some(entry) = seq.next_element::<Lenient<EntryIn>>()? {
            let entry = entry.0.map(EntryIn::cut).unwrap_or_default();
            match (self.keep)(entry) {
                Ok(Some(id)) => ids.push(Value::String(id)),
                Ok(None) => {}
                Err(e) => return Err(de::Error::custom(e)),
            }
        }
        Ok(Some(ids))
    }
}

/// `T` when the value is a mapping; absent when it is anything else (an
/// entry's field of the wrong type is no field, not a broken page).
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping")
    }

    absent_scalars!(Lenient(None));

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|()| Lenient(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
    }
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "nextCursor", default, deserialize_with = "cursor")]
    next_cursor: Option<Value>,
}

/// The cursor as written when it is text or null; a value of another type
/// of the same JSON type but empty (the walker names its type), never the
/// value built.
fn cursor<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Ok(Some(match Scalar::deserialize(d)? {
        Scalar::Text(t) => Value::String(t.into_owned()),
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Other("a number") => Value::from(0),
        Scalar::Other("a list") => Value::Array(Vec::new()),
        Scalar::Other(_) => Value::Object(Map::new()),
    }))
}

#[derive(Deserialize)]
struct EntryIn<'a> {
    #[serde(borrow, default)]
    server: Lenient<ServerIn<'a>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Lenient<MetaIn<'a>>,
}

#[derive(Deserialize)]
struct ServerIn<'a> {
    #[serde(borrow, default)]
    name: Option<Scalar<'a>>,
    #[serde(borrow, default)]
    version: Option<Scalar<'a>>,
    #[serde(default, deserialize_with = "list_of")]
    remotes: Remotes,
}

#[derive(Deserialize)]
struct MetaIn<'a> {
    #[serde(rename = "io.modelcontextprotocol.registry/official", borrow, default)]
    official: Lenient<OfficialIn<'a>>,
}

#[derive(Deserialize)]
struct OfficialIn<'a> {
    #[serde(borrow, default)]
    status: Option<Scalar<'a>>,
    #[serde(rename = "isLatest", borrow, default)]
    is_latest: Option<Scalar<'a>>,
}

impl EntryIn<'_> {
    /// What is kept of the entry, cut.
    fn cut(self) -> ServerEntry {
        let server = self.server.0;
        let official = self.meta.0.and_then(|m| m.official.0);
        let name = server.as_ref().and_then(|s| text_of(&s.name));
        let version = server.as_ref().and_then(|s| text_of(&s.version));
        ServerEntry {
            identity: name.map(|name| match version {
                Some(version) => text::name(&format!("{name}@{version}")).into_owned(),
                None => text::name(name).into_owned(),
            }),
            name: name.map(|n| text::name(n).into_owned()),
            status: official
                .as_ref()
                .and_then(|o| text_of(&o.status))
                .map(|s| text::cut(s, MAX_FIELD_BYTES).into_owned()),
            is_latest: official.and_then(|o| o.is_latest.as_ref().and_then(Scalar::bool)),
            remote: server.and_then(|s| s.remotes.pick()),
        }
    }
}

fn text_of<'s>(field: &'s Option<Scalar<'_>>) -> Option<&'s str> {
    match field {
        Some(Scalar::Text(t)) => Some(t),
        _ => None,
    }
}

/// An entry's `remotes`: of each transport the first remote listed, read
/// as they come, the others dropped at once.
#[derive(Default)]
struct Remotes {
    streamable_http: Option<RemoteRead>,
    sse: Option<RemoteRead>,
}

/// A remote as read: its URL may be missing (then the entry has none).
struct RemoteRead {
    url: Option<String>,
    required_headers: Vec<String>,
}

impl Remotes {
    /// The first `streamable-http` remote, else the first `sse` one.
    fn pick(self) -> Option<Remote> {
        let (read, transport) = match (self.streamable_http, self.sse) {
            (Some(r), _) => (r, HttpMode::StreamableHttp),
            (None, Some(r)) => (r, HttpMode::Sse),
            (None, None) => return None,
        };
        Some(Remote {
            url: read.url?,
            transport,
            required_headers: read.required_headers,
        })
    }
}

impl<'de> ListOf<'de> for Remotes {
    type Item = RemoteIn<'de>;
    const EXPECTING: &'static str = "a list of remotes";

    fn push(&mut self, remote: RemoteIn<'de>) {
        let slot = match text_of(&remote.kind) {
            Some("streamable-http") => &mut self.streamable_http,
            Some("sse") => &mut self.sse,
            _ => return,
        };
        if slot.is_none() {
            *slot = Some(RemoteRead {
                // Longer than an entry's URL may be, and still too
                // long once cut (counted in characters, each at least
                // a byte), so the entry's URL check refuses it.
                url: text_of(&remote.url)
                    .map(|u| u.chars().take(super::entry::MAX_URL_BYTES + 1).collect()),
                required_headers: remote.headers.0,
            });
        }
    }
}

#[derive(Deserialize)]
struct RemoteIn<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Scalar<'a>>,
    #[serde(borrow, default)]
    url: Option<Scalar<'a>>,
    #[serde(default, deserialize_with = "list_of")]
    headers: RequiredHeaders,
}

/// A remote's `headers`: the names of the first [`MAX_HEADERS`] required
/// ones, cut.
#[derive(Default)]
struct RequiredHeaders(Vec<String>);

#[derive(Deserialize)]
struct HeaderIn<'a> {
    #[serde(borrow, default)]
    name: Option<Scalar<'a>>,
    #[serde(rename = "isRequired", borrow, default)]
    is_required: Option<Scalar<'a>>,
}

impl<'de> ListOf<'de> for RequiredHeaders {
    type Item = HeaderIn<'de>;
    const EXPECTING: &'static str = "a list of headers";

    fn push(&mut self, header: HeaderIn<'de>) {
        let required = header.is_required.as_ref().and_then(Scalar::bool) == Some(true);
        if let (true, Some(name), true) =
            (required, text_of(&header.name), self.0.len() < MAX_HEADERS)
        {
            self.0.push(text::cut(name, MAX_FIELD_BYTES).into_owned());
        }
    }
}

/// A list of an entry's, read item by item: each item that is a mapping is
/// read as an `Item` and pushed, any other item skipped; a value that is
/// not a list is the empty one.
trait ListOf<'de>: Default {
    type Item: Deserialize<'de>;
    const EXPECTING: &'static str;
    fn push(&mut self, item: Self::Item);
}

fn list_of<'de, D: Deserializer<'de>, L: ListOf<'de>>(d: D) -> Result<L, D::Error> {
    d.deserialize_any(ListVisitor(PhantomData))
}

struct ListVisitor<L>(PhantomData<L>);

impl<'de, L: ListOf<'de>> Visitor<'de> for ListVisitor<L> {
    type Value = L;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(L::EXPECTING)
    }

    absent_scalars!(L::default());

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<L, A::Error> {
        drain_map(map).map(|()| L::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<L, A::Error> {
        let mut list = L::default();
        while let Some(item) = seq.next_element::<Lenient<L::Item>>()? {
            if let Some(item) = item.0 {
                list.push(item);
            }
        }
        Ok(list)
    }
}

#[cfg(test)]
#[path = "registry_page_tests.rs"]
mod tests;
