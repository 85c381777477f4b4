//! Heads as the tap writes them: every end-to-end header line as it came
//! (name in its case, value as sent, in order), the hop-by-hop ones
//! (RFC 9110 §7.6.1: `Connection` and what it names, `Keep-Alive`,
//! `Proxy-*`, `TE`, `Upgrade`) dropped since each side's connection has its
//! own, `Host` the upstream's, and `Expect` answered by the tap itself.
//! The framing lines (`Content-Length`, `Transfer-Encoding`, `Trailer`) are
//! the tap's own, written from what it read: a number, the codings one by
//! one; no trailers ever follow. Line ends are CRLF whatever the peer used
//! (httparse takes bare LF line ends; it refuses obs-fold and whitespace
//! before a colon, so a field reaches the other side as the tap read it).

use super::framing::{codings, declared_length, Framing};
use super::head::{values, Field, Request, Response};
use std::io::Write as _;

/// The header names `Connection` lists (lowercase), hop-by-hop too.
fn connection_tokens(fields: &[Field]) -> Vec<Vec<u8>> {
    values(fields, "connection")
        .flat_map(|v| v.split(|&b| b == b','))
        .map(|t| t.trim_ascii().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether the connection should close after this message, as its
/// `Connection` header (or HTTP/1.0 without keep-alive) says.
pub(crate) fn wants_close(fields: &[Field], minor: u8) -> bool {
    let tokens = connection_tokens(fields);
    let has = |t: &[u8]| tokens.iter().any(|x| x == t);
    has(b"close") || (minor == 0 && !has(b"keep-alive"))
}

/// Whether a line of this name is never passed as it came: a framing line
/// (the tap writes its own) or a hop-by-hop one. Every line of every head
/// asks, so the name's length picks the one or two names it could be.
fn held_back(name: &[u8]) -> bool {
    let candidates: &[&str] = match name.len() {
        2 => &["te"],
        6 => &["expect"],
        7 => &["upgrade", "trailer"],
        10 => &["connection", "keep-alive"],
        14 => &["content-length"],
        17 => &["transfer-encoding"],
        _ => &[],
    };
    candidates
        .iter()
        .any(|c| name.eq_ignore_ascii_case(c.as_bytes()))
        // `proxy-connection` with the rest of the `Proxy-*` lines.
        || name
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"proxy-"))
}

fn passes(field: &Field, named: &[Vec<u8>], extra: &[&str]) -> bool {
    let name = &field.name[..];
    !(held_back(name)
        || extra
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h.as_bytes()))
        || named.iter().any(|t| name.eq_ignore_ascii_case(t)))
}

fn push_fields(out: &mut Vec<u8>, fields: &[Field], extra: &[&str]) {
    let named = connection_tokens(fields);
    for field in fields.iter().filter(|f| passes(f, &named, extra)) {
        out.extend_from_slice(&field.name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(&field.value);
        out.extend_from_slice(b"\r\n");
    }
}

fn push_length(out: &mut Vec<u8>, n: u64) {
    // Straight into the head, no string between; writing to a Vec cannot fail.
    let _ = write!(out, "Content-Length: {n}\r\n");
}

/// `Transfer-Encoding` with the codings of `fields`, each as read.
fn push_codings(out: &mut Vec<u8>, fields: &[Field]) {
    let codings = codings(fields);
    if codings.is_empty() {
        return;
    }
    out.extend_from_slice(b"Transfer-Encoding: ");
    out.extend_from_slice(&codings.join(&b", "[..]));
    out.extend_from_slice(b"\r\n");
}

/// The request head the upstream gets: `path` (origin-form), its own
/// `Host`, the client's end-to-end lines, and the framing of the body that
/// follows as the tap sends it (`Framing::Length` for a body of the tap's
/// own too).
pub(crate) fn request_head(req: &Request, path: &[u8], host: &[u8], body: Framing) -> Vec<u8> {
    let size = fields_size(&req.fields);
    let mut out = Vec::with_capacity(size + path.len() + host.len() + 48);
    out.extend_from_slice(req.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(path);
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(host);
    out.extend_from_slice(b"\r\n");
    push_fields(&mut out, &req.fields, &["host"]);
    match body {
        Framing::Length(n) => push_length(&mut out, n),
        Framing::Chunked => push_codings(&mut out, &req.fields),
        Framing::None | Framing::UntilClose => {}
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// How the client gets an answer's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ToClient {
    /// The body's framing as the tap reads it from the upstream.
    pub(crate) framing: Framing,
    /// Chunked from the upstream, but the client speaks HTTP/1.0: the data
    /// goes plain and the connection closes after it.
    pub(crate) dechunk: bool,
    /// The connection closes after this answer.
    pub(crate) close: bool,
}

/// The head of an answer whose body the tap holds whole (`length` bytes:
/// a merged answer, or a page 1 read during a walk): the upstream's lines
/// with that length for framing.
pub(crate) fn held_response_head(resp: &Response, length: usize, close: bool) -> Vec<u8> {
    let mut out = status_line(resp);
    push_fields(&mut out, &resp.fields, &[]);
    push_length(&mut out, length as u64);
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Bytes the header lines of `fields` take.
fn fields_size(fields: &[Field]) -> usize {
    fields
        .iter()
        .map(|f| f.name.len() + f.value.len() + 4)
        .sum()
}

/// The status line, in a buffer with room for the rest of the head.
fn status_line(resp: &Response) -> Vec<u8> {
    let size = fields_size(&resp.fields) + resp.reason.len() + 64;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(b"HTTP/1.1 ");
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{}", resp.status);
    out.push(b' ');
    out.extend_from_slice(&resp.reason);
    out.extend_from_slice(b"\r\n");
    out
}

/// The answer head the client gets (an interim 1xx one too).
pub(crate) fn response_head(resp: &Response, to: ToClient) -> Vec<u8> {
    let mut out = status_line(resp);
    push_fields(&mut out, &resp.fields, &[]);
    let f = &resp.fields;
    match to.framing {
        Framing::Length(n) => push_length(&mut out, n),
        // An HTTP/1.0 client gets the data as it is, until the close.
        Framing::Chunked if to.dechunk => {}
        Framing::Chunked | Framing::UntilClose => push_codings(&mut out, f),
        // No body: 1xx and 204 have no framing; an answer to HEAD or a
        // 304 says what the body would have been.
        Framing::None if (100..200).contains(&resp.status) || resp.status == 204 => {}
        Framing::None if !codings(f).is_empty() => push_codings(&mut out, f),
        Framing::None => {
            if let Some(n) = declared_length(f) {
                push_length(&mut out, n);
            }
        }
    }
    if to.close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::head::{Head, Parsed};
    use super::*;
    use bytes::Bytes;

    fn request(raw: &'static [u8]) -> Request {
        match Request::parse(&Bytes::from_static(raw)) {
            Parsed::Head(r, _) => r,
            other => panic!("{other:?}"),
        }
    }

    fn response(raw: &'static [u8]) -> Response {
        match Response::parse(&Bytes::from_static(raw)) {
            Parsed::Head(r, _) => r,
            other => panic!("{other:?}"),
        }
    }

    fn to(framing: Framing, dechunk: bool, close: bool) -> ToClient {
        ToClient {
            framing,
            dechunk,
            close,
        }
    }

    #[test]
    fn the_upstream_gets_the_end_to_end_lines_as_sent_and_our_framing() {
        let req = request(
            b"POST http://tap.test/mcp HTTP/1.1\r\nHost: tap.test\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\nProxy-Authorization: x\r\nTE: trailers\r\nUpgrade: h2c\r\nExpect: 100-continue\r\nMcp-Session-Id: S\r\nauthorization: Bearer t\r\nTransfer-Encoding:  Chunked \r\nTrailer: X-T\r\nAccept: a\r\nAccept: b\r\n\r\n",
        );
        let head = request_head(&req, b"/mcp", b"up.test:8080", Framing::Chunked);
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /mcp HTTP/1.1\r\nHost: up.test:8080\r\nMcp-Session-Id: S\r\nauthorization: Bearer t\r\nAccept: a\r\nAccept: b\r\nTransfer-Encoding: Chunked\r\n\r\n"
        );
        let own = request_head(&req, b"/mcp", b"up", Framing::Length(12));
        assert!(String::from_utf8(own)
            .unwrap()
            .ends_with("Accept: b\r\nContent-Length: 12\r\n\r\n"));
    }

    /// httparse takes bare LF line ends and a length written oddly; what
    /// goes on is CRLF and the number.
    #[test]
    fn a_lenient_head_goes_on_in_canonical_form() {
        let req = request(b"POST /mcp HTTP/1.1\nHost: t\nContent-Length: 002, 2\nX-A: 1\n\n");
        let head = request_head(&req, b"/mcp", b"up", Framing::Length(2));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /mcp HTTP/1.1\r\nHost: up\r\nX-A: 1\r\nContent-Length: 2\r\n\r\n"
        );
        let resp = response(b"HTTP/1.1 200 OK\nContent-Length: 05\nX-B: 2\n\n");
        let head = response_head(&resp, to(Framing::Length(5), false, false));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 200 OK\r\nX-B: 2\r\nContent-Length: 5\r\n\r\n"
        );
    }

    #[test]
    fn the_client_gets_the_answer_lines_and_our_framing() {
        let resp = response(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nmcp-session-id: s\r\n\r\n",
        );
        let head = response_head(&resp, to(Framing::Chunked, false, false));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nmcp-session-id: s\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        let head = response_head(&resp, to(Framing::Chunked, true, true));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nmcp-session-id: s\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn answers_without_a_body_keep_only_what_they_may_declare() {
        let head_answer = response(b"HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n");
        let head = response_head(&head_answer, to(Framing::None, false, false));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n"
        );
        let early =
            response(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nContent-Length: 3\r\n\r\n");
        let head = response_head(&early, to(Framing::None, false, false));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        );
    }

    /// The framing lines, never passed as they came: the tap writes its own.
    const FRAMING: [&str; 3] = ["content-length", "transfer-encoding", "trailer"];

    /// Header names never forwarded, whichever way.
    const HOP_BY_HOP: [&str; 6] = [
        "connection",
        "keep-alive",
        "te",
        "upgrade",
        "proxy-connection",
        "expect",
    ];

    #[test]
    fn every_framing_and_hop_by_hop_name_is_held_back_in_any_case() {
        for name in FRAMING.iter().chain(&HOP_BY_HOP) {
            assert!(held_back(name.as_bytes()), "{name}");
            assert!(held_back(name.to_ascii_uppercase().as_bytes()), "{name}");
        }
        for name in ["Proxy-Authorization", "proxy-x", "PROXY-"] {
            assert!(held_back(name.as_bytes()), "{name}");
        }
        for name in [
            "Host",
            "Accept",
            "Content-Type",
            "Mcp-Session-Id",
            "Authorization",
            "tee",
            "Connections",
            "Content-Length2",
            "Proxy",
            "",
        ] {
            assert!(!held_back(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn close_is_what_the_connection_header_or_http_1_0_says() {
        let f = |v: &'static str| {
            vec![Field {
                name: Bytes::from_static(b"Connection"),
                value: Bytes::from_static(v.as_bytes()),
            }]
        };
        assert!(wants_close(&f("Close"), 1));
        assert!(!wants_close(&f("keep-alive"), 1));
        assert!(wants_close(&[], 0));
        assert!(!wants_close(&f("Keep-Alive"), 0));
    }
}
