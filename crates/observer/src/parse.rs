//! Reading one JSON-RPC message for what listings need, and nothing else:
//! the method, the id, a request's cursor, client info and protocol
//! version, an answer's items (their identity keys only), `nextCursor`
//! and error code. Everything else is skipped while parsing, never built:
//! a page's schemas and descriptions cost a scan, not an allocation.
//!
//! Every field is read leniently — a field of the wrong type reads as
//! absent or as "not what the walker accepts", never as a parse failure —
//! so a hostile message is classified the way the walker would classify
//! it. Strings borrow from the message where JSON escapes allow.

use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A JSON-RPC id as kept: integers as they are, anything else as a digest
/// of its text (ids are the client's to choose, any length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RpcId {
    Int(i64),
    Text(CursorDigest),
    Number(CursorDigest),
}

/// A cursor field (`params.cursor`, `result.nextCursor`) as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum CursorField {
    #[default]
    Absent,
    Null,
    Text(CursorDigest),
    /// Not a string (a number, an object).
    Other,
}

/// What a request's `params` say that listings need.
#[derive(Debug, Default)]
pub(crate) struct Params<'a> {
    pub cursor: CursorField,
    /// `initialize`'s `clientInfo` and the `_meta` object, as written
    /// (both small; `mcp_tap_contract::identity` reads them).
    pub client_info: Option<Value>,
    pub meta: Option<Value>,
    /// `initialize`'s `protocolVersion`.
    pub protocol_version: Option<Cow<'a, str>>,
}

/// A kind's result array: how many items it holds and, in order, the
/// identity key (`Kind::identity_key`) of each that has one — only those
/// are kept, so a page of a million `0`s or of keyless objects costs a
/// count, not a slot per item; or a field that is not an array.
#[derive(Debug)]
pub(crate) enum Items<'a> {
    Array { keys: Vec<Cow<'a, str>>, count: u64 },
    NotArray,
}

/// What a `result` says that listings need.
#[derive(Debug, Default)]
pub(crate) struct Body<'a> {
    /// Each kind's array (`Kind::array_field`), by `Kind as usize`.
    pub arrays: [Option<Items<'a>>; 4],
    pub next_cursor: CursorField,
    /// `resultType` absent or `"complete"` (the walker refuses any other).
    pub result_type_ok: bool,
    /// `initialize`'s negotiated `protocolVersion`.
    pub protocol_version: Option<Cow<'a, str>>,
    /// The result was an object at all.
    pub object: bool,
}

/// A message as far as listings care.
#[derive(Debug)]
pub(crate) enum Message<'a> {
    Request {
        id: RpcId,
        method: Cow<'a, str>,
        params: Params<'a>,
    },
    Notification,
    Response {
        id: RpcId,
        answer: Answer<'a>,
    },
    /// Valid JSON-RPC with nothing to pair (an error answer with id null).
    Orphan,
}

#[derive(Debug)]
pub(crate) enum Answer<'a> {
    Result(Body<'a>),
    Error { code: Option<i64> },
}

/// Why a message could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    Batch,
    Unparsable,
}

/// Read one message (a JSON body, an SSE event's data, a stdio line).
pub(crate) fn read(bytes: &[u8]) -> Result<Message<'_>, Unreadable> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(Unreadable::Batch);
    }
    let envelope: Envelope<'_> =
        serde_json::from_slice(bytes).map_err(|_| Unreadable::Unparsable)?;
    envelope.classify()
}

#[derive(Default)]
struct Envelope<'a> {
    id: Option<Option<RpcId>>,
    method: Option<Option<Cow<'a, str>>>,
    params: Params<'a>,
    result: Option<Body<'a>>,
    error: Option<Option<i64>>,
}

impl<'a> Envelope<'a> {
    fn classify(self) -> Result<Message<'a>, Unreadable> {
        match (self.method, self.id.flatten()) {
            (Some(Some(method)), Some(id)) => Ok(Message::Request {
                id,
                method,
                params: self.params,
            }),
            (Some(Some(_)), None) => Ok(Message::Notification),
            (Some(None), _) => Err(Unreadable::Unparsable),
            (None, id) => {
                let answer = match (self.result, self.error) {
                    (_, Some(code)) => Answer::Error { code },
                    (Some(body), None) => Answer::Result(body),
                    (None, None) => return Err(Unreadable::Unparsable),
                };
                Ok(match id {
                    Some(id) => Message::Response { id, answer },
                    None => Message::Orphan,
                })
            }
        }
    }
}

/// A field read leniently: every JSON value reads as something, never as
/// an error. Each type says what the values it cares about read as; any
/// other value (consumed whole) reads as [`Lenient::other`].
trait Lenient<'de>: Sized {
    /// What a value of a type this field does not take reads as.
    fn other() -> Self;

    fn borrowed_str(v: &'de str) -> Self {
        Self::str(v)
    }
    fn str(_: &str) -> Self {
        Self::other()
    }
    fn string(v: String) -> Self {
        Self::str(&v)
    }
    fn int(_: i64) -> Self {
        Self::other()
    }
    fn uint(_: u64) -> Self {
        Self::other()
    }
    fn float(_: f64) -> Self {
        Self::other()
    }
    fn null() -> Self {
        Self::other()
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::other())
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::other())
    }
}

/// The one visitor of every [`Lenient`] field.
struct Leniently<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for Leniently<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never said: every JSON value reads as something.
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<T, E> {
        Ok(T::other())
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::uint(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(T::float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<T, E> {
        Ok(T::borrowed_str(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::str(v))
    }
    fn visit_string<E>(self, v: String) -> Result<T, E> {
        Ok(T::string(v))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::null())
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::null())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::map(map)
    }
}

/// `Deserialize` for [`Lenient`] types: one line each.
macro_rules! deserialize_leniently {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(Leniently(PhantomData))
            }
        }
    )*};
}

deserialize_leniently!(
    Text<'de>,
    CursorField,
    RawId,
    ErrorCode,
    Params<'de>,
    Body<'de>,
    Envelope<'de>,
);

/// A string field: `Some` for a JSON string, `None` for any other value.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> Lenient<'de> for Text<'de> {
    fn other() -> Self {
        Text(None)
    }
    fn borrowed_str(v: &'de str) -> Self {
        Text(Some(Cow::Borrowed(v)))
    }
    fn str(v: &str) -> Self {
        Text(Some(Cow::Owned(v.to_owned())))
    }
    fn string(v: String) -> Self {
        Text(Some(Cow::Owned(v)))
    }
}

impl Lenient<'_> for CursorField {
    fn other() -> Self {
        CursorField::Other
    }
    fn str(v: &str) -> Self {
        CursorField::Text(CursorDigest::of(v))
    }
    fn null() -> Self {
        CursorField::Null
    }
}

/// An id: `None` for null or a value JSON-RPC does not allow.
struct RawId(Option<RpcId>);

impl Lenient<'_> for RawId {
    fn other() -> Self {
        RawId(None)
    }
    fn int(v: i64) -> Self {
        RawId(Some(RpcId::Int(v)))
    }
    fn uint(v: u64) -> Self {
        RawId(Some(match i64::try_from(v) {
            Ok(v) => RpcId::Int(v),
            Err(_) => RpcId::Number(CursorDigest::of(&v.to_string())),
        }))
    }
    fn float(v: f64) -> Self {
        RawId(Some(RpcId::Number(CursorDigest::of(&v.to_string()))))
    }
    fn str(v: &str) -> Self {
        RawId(Some(RpcId::Text(CursorDigest::of(v))))
    }
}

/// An error object's `code` (an integer), if it has one.
/// An object read key by key: each type takes the keys it knows, and the
/// values of all others are skipped unread. Any value that is not an
/// object reads as the type's `Default`.
trait Fields<'de>: Default {
    /// The value before any key is read.
    fn start() -> Self {
        Self::default()
    }

    /// Read `key`'s value from `map` if this type takes it; `false` leaves
    /// it to be skipped.
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
}

impl<'de, T: Fields<'de>> Lenient<'de> for T {
    fn other() -> Self {
        T::default()
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut value = T::start();
        while let Some(key) = map.next_key::<Text<'de>>()? {
            let taken = match key.0 {
                Some(key) => value.field(&key, &mut map)?,
                None => false,
            };
            if !taken {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(value)
    }
}

/// An error object's `code` (an integer), if it has one.
#[derive(Default)]
struct ErrorCode(Option<i64>);

impl<'de> Fields<'de> for ErrorCode {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        if key != "code" {
            return Ok(false);
        }
        self.0 = map.next_value::<Option<Value>>()?.and_then(|v| v.as_i64());
        Ok(true)
    }
}

impl<'de> Fields<'de> for Params<'de> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "cursor" => self.cursor = map.next_value()?,
            "clientInfo" => self.client_info = map.next_value()?,
            "_meta" => self.meta = map.next_value()?,
            "protocolVersion" => self.protocol_version = map.next_value::<Text<'de>>()?.0,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Reads a kind's result array: any other value is `NotArray` (consumed).
struct ItemsOf(Kind);

impl<'de> DeserializeSeed<'de> for ItemsOf {
    type Value = Items<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Items<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsOf {
    type Value = Items<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never said: every JSON value reads as something.
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
        let (mut keys, mut count) = (Vec::new(), 0u64);
        let key = KeyOf(self.0.identity_key());
        while let Some(item) = seq.next_element_seed(key)? {
            count += 1;
            keys.extend(item);
        }
        Ok(Items::Array { keys, count })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Items::NotArray)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
    fn visit_str<E>(self, _: &str) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
    fn visit_unit<E>(self) -> Result<Items<'de>, E> {
        Ok(Items::NotArray)
    }
}

/// Reads one item for its identity key (the field named): `None` for an
/// item that is not an object, or whose key is missing or not a string.
#[derive(Clone, Copy)]
struct KeyOf(&'static str);

impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyOf {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Text<'de>>()? {
            // The last of a repeated key, as a JSON parser reading the
            // whole item (the walker's) would keep.
            if key.0.as_deref() == Some(self.0) {
                found = map.next_value::<Text<'de>>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

impl<'de> Fields<'de> for Body<'de> {
    fn start() -> Self {
        Body {
            result_type_ok: true,
            object: true,
            ..Body::default()
        }
    }
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        if let Some(kind) = Kind::ALL.iter().find(|k| k.array_field() == key) {
            self.arrays[*kind as usize] = Some(map.next_value_seed(ItemsOf(*kind))?);
            return Ok(true);
        }
        match key {
            "nextCursor" => self.next_cursor = map.next_value()?,
            "resultType" => {
                let rt = map.next_value::<Text<'de>>()?.0;
                self.result_type_ok = rt.as_deref() == Some("complete");
            }
            "protocolVersion" => self.protocol_version = map.next_value::<Text<'de>>()?.0,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Anything but an object reads as an empty envelope, which `classify`
/// finds unparsable.
impl<'de> Fields<'de> for Envelope<'de> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "id" => self.id = Some(map.next_value::<RawId>()?.0),
            "method" => self.method = Some(map.next_value::<Text<'de>>()?.0),
            "params" => self.params = map.next_value()?,
            "result" => self.result = Some(map.next_value()?),
            "error" => self.error = Some(map.next_value::<ErrorCode>()?.0),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
