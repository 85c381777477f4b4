//! Request and answer heads as read off the wire: parsed once (httparse),
//! kept as slices of the bytes received, so what is forwarded is what came
//! in — header names in their case, values as sent, in their order.

use bytes::Bytes;
use http::Method;
use std::ops::Range;

/// Most header lines a head may have (a head past it is refused as too
/// large, as one past `max_head_bytes` is).
pub(crate) const MAX_HEADERS: usize = 128;

/// One header line: its name and value as received.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: Bytes,
    pub(crate) value: Bytes,
}

impl Field {
    pub(crate) fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name.as_bytes())
    }
}

/// A client's request head.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: Method,
    /// The request target as sent (origin-form, absolute-form, `*` or an
    /// authority).
    pub(crate) target: Bytes,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub(crate) minor: u8,
    pub(crate) fields: Vec<Field>,
}

/// An upstream's answer head.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) reason: Bytes,
    pub(crate) minor: u8,
    pub(crate) fields: Vec<Field>,
}

/// What parsing the bytes read so far found.
#[derive(Debug)]
pub(crate) enum Parsed<T> {
    /// A whole head, and how many bytes it took.
    Head(T, usize),
    /// Not all of it yet.
    Partial,
    /// Not HTTP/1.x, or more header lines than [`MAX_HEADERS`].
    Invalid,
}

/// Heads of one kind, parsed once: where each part lies in the bytes read
/// so far, then the parts taken from exactly those bytes.
pub(crate) trait Head: Sized {
    /// The layout of the head at the start of `buf`, once it is whole.
    fn layout(buf: &[u8]) -> Parsed<Layout>;
    /// The head, its parts shared from `bytes` (the head's bytes).
    fn bind(layout: Layout, bytes: &Bytes) -> Option<Self>;

    /// Parse the head at the start of `buf` (tests).
    #[cfg(test)]
    fn parse(buf: &Bytes) -> Parsed<Self> {
        match Self::layout(buf) {
            Parsed::Head(layout, len) => match Self::bind(layout, buf) {
                Some(head) => Parsed::Head(head, len),
                None => Parsed::Invalid,
            },
            Parsed::Partial => Parsed::Partial,
            Parsed::Invalid => Parsed::Invalid,
        }
    }
}

/// Where a head's parts lie in its bytes.
#[derive(Debug)]
pub(crate) struct Layout {
    first: FirstLine,
    minor: u8,
    fields: Vec<(Range<usize>, Range<usize>)>,
}

#[derive(Debug)]
enum FirstLine {
    Request {
        method: Method,
        target: Range<usize>,
    },
    Response {
        status: u16,
        reason: Range<usize>,
    },
}

/// Where `part` (a slice of `buf`) lies in `buf`.
fn span(buf: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(buf.as_ptr() as usize);
    start..start + part.len()
}

fn spans(buf: &[u8], headers: &[httparse::Header<'_>]) -> Vec<(Range<usize>, Range<usize>)> {
    headers
        .iter()
        .map(|h| (span(buf, h.name.as_bytes()), span(buf, h.value)))
        .collect()
}

/// How many bytes a whole head took, or what parsing found instead.
fn head_len(parsed: httparse::Result<usize>) -> Result<usize, Parsed<Layout>> {
    match parsed {
        Ok(httparse::Status::Complete(len)) => Ok(len),
        Ok(httparse::Status::Partial) => Err(Parsed::Partial),
        Err(_) => Err(Parsed::Invalid),
    }
}

impl Layout {
    /// A whole head of `len` bytes: its first line, version and header
    /// lines, where they lie in `buf`.
    fn whole(
        first: FirstLine,
        minor: u8,
        buf: &[u8],
        headers: &[httparse::Header<'_>],
        len: usize,
    ) -> Parsed<Layout> {
        let fields = spans(buf, headers);
        Parsed::Head(
            Layout {
                first,
                minor,
                fields,
            },
            len,
        )
    }
}

/// The part of `bytes` at `range`, if it lies within them.
fn part(bytes: &Bytes, range: Range<usize>) -> Option<Bytes> {
    bytes.get(range.clone()).map(|_| bytes.slice(range))
}

fn bound_fields(bytes: &Bytes, spans: Vec<(Range<usize>, Range<usize>)>) -> Option<Vec<Field>> {
    let len = bytes.len();
    spans
        .into_iter()
        .map(|(n, v)| {
            (n.end <= len && v.end <= len).then(|| Field {
                name: bytes.slice(n),
                value: bytes.slice(v),
            })
        })
        .collect()
}

impl Head for Request {
    fn layout(buf: &[u8]) -> Parsed<Layout> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let len = match head_len(req.parse(buf)) {
            Ok(len) => len,
            Err(not_whole) => return not_whole,
        };
        let (Some(method), Some(target), Some(minor)) = (req.method, req.path, req.version) else {
            return Parsed::Invalid;
        };
        let Ok(method) = Method::from_bytes(method.as_bytes()) else {
            return Parsed::Invalid;
        };
        let first = FirstLine::Request {
            method,
            target: span(buf, target.as_bytes()),
        };
        Layout::whole(first, minor, buf, req.headers, len)
    }

    fn bind(layout: Layout, bytes: &Bytes) -> Option<Request> {
        let FirstLine::Request { method, target } = layout.first else {
            return None;
        };
        Some(Request {
            method,
            target: part(bytes, target)?,
            minor: layout.minor,
            fields: bound_fields(bytes, layout.fields)?,
        })
    }
}

impl Head for Response {
    fn layout(buf: &[u8]) -> Parsed<Layout> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let len = match head_len(resp.parse(buf)) {
            Ok(len) => len,
            Err(not_whole) => return not_whole,
        };
        let (Some(status), Some(minor)) = (resp.code, resp.version) else {
            return Parsed::Invalid;
        };
        let reason = resp.reason.map_or(0..0, |r| span(buf, r.as_bytes()));
        let first = FirstLine::Response { status, reason };
        Layout::whole(first, minor, buf, resp.headers, len)
    }

    fn bind(layout: Layout, bytes: &Bytes) -> Option<Response> {
        let FirstLine::Response { status, reason } = layout.first else {
            return None;
        };
        Some(Response {
            status,
            reason: part(bytes, reason)?,
            minor: layout.minor,
            fields: bound_fields(bytes, layout.fields)?,
        })
    }
}

/// Finds all values of `name` among `fields`.
pub(crate) fn values<'a>(fields: &'a [Field], name: &'a str) -> impl Iterator<Item = &'a Bytes> {
    fields.iter().filter(move |f| f.is(name)).map(|f| &f.value)
}

/// The one value of `name` (the first, if several).
pub(crate) fn value<'a>(fields: &'a [Field], name: &str) -> Option<&'a Bytes> {
    fields.iter().find(|f| f.is(name)).map(|f| &f.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_keeps_its_bytes() {
        let buf = Bytes::from_static(
            b"POST /mcp?x=1 HTTP/1.1\r\nHost: tap\r\nMcp-Session-Id: abc\r\nX-Two: a\r\nx-two: b\r\n\r\n{}",
        );
        let Parsed::Head(req, len) = Request::parse(&buf) else {
            panic!("a whole head");
        };
        assert_eq!(len, buf.len() - 2);
        assert_eq!(req.method, Method::POST);
        assert_eq!(&req.target[..], b"/mcp?x=1");
        assert_eq!(req.minor, 1);
        assert_eq!(&req.fields[1].name[..], b"Mcp-Session-Id");
        assert_eq!(value(&req.fields, "mcp-session-id").unwrap(), "abc");
        assert_eq!(values(&req.fields, "X-TWO").count(), 2);
    }

    #[test]
    fn partial_and_invalid_heads() {
        assert!(matches!(
            Request::parse(&Bytes::from_static(b"GET / HTTP/1.1\r\nHost:")),
            Parsed::Partial
        ));
        assert!(matches!(
            Request::parse(&Bytes::from_static(b"GET / SPDY/3\r\n\r\n")),
            Parsed::Invalid
        ));
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "a: b\r\n".repeat(MAX_HEADERS + 1)
        );
        assert!(matches!(
            Request::parse(&Bytes::from(many)),
            Parsed::Invalid
        ));
    }

    /// What httparse would take and a stricter peer would read otherwise
    /// is refused: obs-fold, whitespace before a colon, control bytes in a
    /// value, a bare CR.
    #[test]
    fn heads_a_peer_could_read_differently_are_refused() {
        for raw in [
            &b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nX : a\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n",
            b"GET /a b HTTP/1.1\r\n\r\n",
            b"GET  / HTTP/1.1\r\n\r\n",
        ] {
            assert!(
                matches!(Request::parse(&Bytes::from_static(raw)), Parsed::Invalid),
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
        let folded = b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n";
        assert!(matches!(
            Response::parse(&Bytes::from_static(folded)),
            Parsed::Invalid
        ));
    }

    #[test]
    fn an_answer_head_keeps_its_reason() {
        let buf = Bytes::from_static(b"HTTP/1.1 202 Accepted Now\r\nContent-Length: 0\r\n\r\n");
        let Parsed::Head(resp, _) = Response::parse(&buf) else {
            panic!("a whole head");
        };
        assert_eq!(resp.status, 202);
        assert_eq!(&resp.reason[..], b"Accepted Now");
        assert_eq!(value(&resp.fields, "content-length").unwrap(), "0");
    }
}
