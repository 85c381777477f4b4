//! Request and answer heads as read off the wire: parsed once (httparse),
//! kept as slices of the bytes received, so what is forwarded is what came
//! in — header names in their case, values as sent, in their order.

use bytes::Bytes;
use http::Method;

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

/// Heads of one kind: how to tell a whole one in the bytes read so far,
/// and how to read it from exactly its bytes.
pub(crate) trait Head: Sized {
    /// The length of the head at the start of `buf`, once it is whole.
    fn measure(buf: &[u8]) -> Parsed<()>;
    fn parse(buf: &Bytes) -> Parsed<Self>;
}

impl Head for Request {
    fn measure(buf: &[u8]) -> Parsed<()> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        measured(httparse::Request::new(&mut headers).parse(buf))
    }

    fn parse(buf: &Bytes) -> Parsed<Request> {
        Request::parse(buf)
    }
}

impl Head for Response {
    fn measure(buf: &[u8]) -> Parsed<()> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        measured(httparse::Response::new(&mut headers).parse(buf))
    }

    fn parse(buf: &Bytes) -> Parsed<Response> {
        Response::parse(buf)
    }
}

fn measured(result: httparse::Result<usize>) -> Parsed<()> {
    match result {
        Ok(httparse::Status::Complete(len)) => Parsed::Head((), len),
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(_) => Parsed::Invalid,
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

impl Request {
    /// Parse a request head from the start of `buf` (the bytes read so far).
    pub(crate) fn parse(buf: &Bytes) -> Parsed<Request> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let len = match req.parse(buf) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Parsed::Partial,
            Err(_) => return Parsed::Invalid,
        };
        let (Some(method), Some(target), Some(minor)) = (req.method, req.path, req.version) else {
            return Parsed::Invalid;
        };
        let Ok(method) = Method::from_bytes(method.as_bytes()) else {
            return Parsed::Invalid;
        };
        Parsed::Head(
            Request {
                method,
                target: buf.slice_ref(target.as_bytes()),
                minor,
                fields: fields(buf, req.headers),
            },
            len,
        )
    }
}

impl Response {
    /// Parse an answer head from the start of `buf`.
    pub(crate) fn parse(buf: &Bytes) -> Parsed<Response> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let len = match resp.parse(buf) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Parsed::Partial,
            Err(_) => return Parsed::Invalid,
        };
        let (Some(status), Some(minor)) = (resp.code, resp.version) else {
            return Parsed::Invalid;
        };
        let reason = resp.reason.map(|r| buf.slice_ref(r.as_bytes()));
        Parsed::Head(
            Response {
                status,
                reason: reason.unwrap_or_default(),
                minor,
                fields: fields(buf, resp.headers),
            },
            len,
        )
    }
}

fn fields(buf: &Bytes, headers: &[httparse::Header<'_>]) -> Vec<Field> {
    headers
        .iter()
        .map(|h| Field {
            name: buf.slice_ref(h.name.as_bytes()),
            value: buf.slice_ref(h.value),
        })
        .collect()
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
