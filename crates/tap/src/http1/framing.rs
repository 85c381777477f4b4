//! Where a message's body ends (RFC 9112 §6): no body, a length, chunked,
//! or until the connection closes; and the chunked transfer coding read
//! incrementally, each byte once, whatever the reads' sizes. Framing that
//! is ambiguous (both a length and a transfer coding, lengths that
//! disagree, `chunked` twice or not last in a request, a transfer coding in
//! an HTTP/1.0 request) is refused rather than guessed at: the upstream
//! must never read a body differently from the tap. The tap writes the
//! framing lines of what it forwards itself ([`codings`], [`declared_length`]
//! for the head, its own chunks for the body): none of a peer's framing
//! bytes pass.

use super::head::{values, Field};
use std::ops::Range;

/// How a body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
    /// An answer that ends when the upstream closes the connection.
    UntilClose,
}

/// Framing that cannot be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ambiguous;

/// What `Transfer-Encoding` says of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coded {
    /// No coding named.
    Not,
    /// Codings that end in `chunked` (named once).
    Chunked,
    /// Codings without `chunked`.
    Other,
}

/// A request body's framing (`minor`: its HTTP/1.x version).
pub(crate) fn request(fields: &[Field], minor: u8) -> Result<Framing, Ambiguous> {
    let length = content_length(fields)?;
    match (transfer_coding(fields)?, length) {
        (Coded::Not, Some(n)) => Ok(Framing::Length(n)),
        (Coded::Not, None) => Ok(Framing::None),
        // RFC 9112 §6.1: an HTTP/1.0 message with a transfer coding has
        // faulty framing.
        (_, _) if minor == 0 => Err(Ambiguous),
        (Coded::Chunked, None) => Ok(Framing::Chunked),
        // Both a length and a coding; or a request coding not ending in
        // chunked.
        (_, _) => Err(Ambiguous),
    }
}

/// An answer body's framing, for a request with `head_request` (HEAD).
pub(crate) fn response(
    status: u16,
    head_request: bool,
    fields: &[Field],
) -> Result<Framing, Ambiguous> {
    if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(Framing::None);
    }
    // Both a coding and a length: refused, as nginx refuses it from an
    // upstream (RFC 9112 §6.3: "ought to be handled as an error").
    match (transfer_coding(fields)?, content_length(fields)?) {
        (Coded::Chunked | Coded::Other, Some(_)) => Err(Ambiguous),
        (Coded::Chunked, None) => Ok(Framing::Chunked),
        (Coded::Other, None) | (Coded::Not, None) => Ok(Framing::UntilClose),
        (Coded::Not, Some(n)) => Ok(Framing::Length(n)),
    }
}

/// The transfer codings named, in order, each trimmed: what the tap
/// writes back in a `Transfer-Encoding` line of its own.
pub(crate) fn codings(fields: &[Field]) -> Vec<&[u8]> {
    values(fields, "transfer-encoding")
        .flat_map(|value| value.split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|coding| !coding.is_empty())
        .collect()
}

/// The length a head declares, when it declares one without ambiguity (an
/// answer to HEAD, a 304: the length its body would have had).
pub(crate) fn declared_length(fields: &[Field]) -> Option<u64> {
    content_length(fields).ok().flatten()
}

fn transfer_coding(fields: &[Field]) -> Result<Coded, Ambiguous> {
    if values(fields, "transfer-encoding").next().is_none() {
        return Ok(Coded::Not);
    }
    let codings = codings(fields);
    let chunked = |c: &[u8]| c.eq_ignore_ascii_case(b"chunked");
    match (
        codings.last(),
        codings.iter().filter(|c| chunked(c)).count(),
    ) {
        // The field is there and names nothing.
        (None, _) => Err(Ambiguous),
        (Some(last), 1) if chunked(last) => Ok(Coded::Chunked),
        // Not ending in chunked: an answer then lasts until the connection
        // closes (RFC 9112 §6.3); a request is refused.
        (Some(last), _) if !chunked(last) => Ok(Coded::Other),
        // `chunked` named twice.
        _ => Err(Ambiguous),
    }
}

/// The `Content-Length`: every value (and list member) the same number.
fn content_length(fields: &[Field]) -> Result<Option<u64>, Ambiguous> {
    let mut found = None;
    for value in values(fields, "content-length") {
        for part in value.split(|&b| b == b',') {
            let part = part.trim_ascii();
            if part.is_empty() || part.len() > 19 || !part.iter().all(u8::is_ascii_digit) {
                return Err(Ambiguous);
            }
            let n = part.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            if found.is_some_and(|f| f != n) {
                return Err(Ambiguous);
            }
            found = Some(n);
        }
    }
    Ok(found)
}

/// Bytes of one chunk-size line (with its extensions), and of all trailer
/// lines together, at most.
const MAX_LINE: usize = 4096;
const MAX_TRAILERS: usize = 16 * 1024;

/// Where the decoder is. Every line of the coding's own (sizes, extensions,
/// trailers) is held to RFC 9112's grammar byte by byte, line ends CRLF
/// only: a bare LF or CR, NUL or any other control byte but HTAB is
/// refused, so no peer behind the tap can end a line, a chunk or the body
/// anywhere else than the tap did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Hex digits of the chunk size (so many so far).
    Size(u8),
    /// Whitespace after the size, before `;` or the line end.
    SizeSpace,
    /// A chunk extension (§7.1.1).
    Ext(Ext),
    SizeLf,
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer line, or of the final empty line.
    TrailerStart,
    TrailerName,
    TrailerValue,
    TrailerLf,
    EndLf,
    Done,
}

/// `*( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ext {
    BeforeName,
    Name,
    AfterName,
    BeforeValue,
    Token,
    Quoted,
    QuotedPair,
    AfterValue,
}

/// The chunked coding's grammar was broken, or a bound passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadChunk;

/// How far one call got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Bytes of the input that belong to this body (all of them unless
    /// the body ended: what follows is the next message's).
    pub(crate) consumed: usize,
    pub(crate) done: bool,
}

/// The chunked coding, decoded. Only the data comes out: extensions and
/// trailers are read (to find where the body ends) and dropped, since the
/// tap codes every body it forwards itself.
#[derive(Debug)]
pub(crate) struct Chunked {
    state: State,
    /// The chunk size being read, then the data left of the chunk.
    left: u64,
    line: usize,
    trailers: usize,
}

impl Chunked {
    pub(crate) fn new() -> Chunked {
        Chunked {
            state: State::Size(0),
            left: 0,
            line: 0,
            trailers: 0,
        }
    }

    /// Read `input`, reporting the ranges of it that are data to `out`.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        mut out: impl FnMut(Range<usize>),
    ) -> Result<Progress, BadChunk> {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Data {
                let take = (input.len() - i).min(usize::try_from(self.left).unwrap_or(usize::MAX));
                out(i..i + take);
                i += take;
                self.left -= take as u64;
                if self.left == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            self.state = self.step(input[i])?;
            i += 1;
            if self.state == State::Done {
                return Ok(Progress {
                    consumed: i,
                    done: true,
                });
            }
        }
        Ok(Progress {
            consumed: input.len(),
            done: false,
        })
    }

    fn step(&mut self, b: u8) -> Result<State, BadChunk> {
        match self.state {
            State::Size(_) | State::SizeSpace | State::Ext(_) => {
                self.line += 1;
                if self.line > MAX_LINE {
                    return Err(BadChunk);
                }
                match self.state {
                    State::Size(digits) => self.size_byte(b, digits),
                    State::Ext(ext) => ext_byte(b, ext),
                    _ => after_size(b),
                }
            }
            State::SizeLf if b == b'\n' => Ok(if self.left == 0 {
                State::TrailerStart
            } else {
                State::Data
            }),
            State::DataCr if b == b'\r' => Ok(State::DataLf),
            State::DataLf if b == b'\n' => {
                self.line = 0;
                Ok(State::Size(0))
            }
            State::TrailerStart | State::TrailerName | State::TrailerValue | State::TrailerLf => {
                self.trailers += 1;
                if self.trailers > MAX_TRAILERS {
                    return Err(BadChunk);
                }
                trailer_byte(b, self.state)
            }
            State::EndLf if b == b'\n' => Ok(State::Done),
            _ => Err(BadChunk),
        }
    }

    fn size_byte(&mut self, b: u8, digits: u8) -> Result<State, BadChunk> {
        match (b as char).to_digit(16) {
            // 15 hex digits: sizes up to 2^60, and no overflow.
            Some(d) if digits < 15 => {
                self.left = self.left * 16 + u64::from(d);
                Ok(State::Size(digits + 1))
            }
            None if digits > 0 => after_size(b),
            _ => Err(BadChunk),
        }
    }
}

/// Space or tab: the grammar's BWS.
fn blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A `tchar` (RFC 9110 §5.6.2).
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A byte of a field value or quoted text: visible, space, tab or
/// obs-text; never a control byte (DEL included).
fn text(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80
}

/// After the size's digits (or whitespace following them).
fn after_size(b: u8) -> Result<State, BadChunk> {
    match b {
        _ if blank(b) => Ok(State::SizeSpace),
        b';' => Ok(State::Ext(Ext::BeforeName)),
        b'\r' => Ok(State::SizeLf),
        _ => Err(BadChunk),
    }
}

fn ext_byte(b: u8, ext: Ext) -> Result<State, BadChunk> {
    let next = match (ext, b) {
        (Ext::Quoted, b'"') => Ext::AfterValue,
        (Ext::Quoted, b'\\') => Ext::QuotedPair,
        (Ext::Quoted | Ext::QuotedPair, _) if text(b) => Ext::Quoted,
        (Ext::Quoted | Ext::QuotedPair, _) => return Err(BadChunk),
        (Ext::BeforeName | Ext::BeforeValue | Ext::AfterName | Ext::AfterValue, _) if blank(b) => {
            ext
        }
        (Ext::Name | Ext::Token, _) if blank(b) => {
            if ext == Ext::Name {
                Ext::AfterName
            } else {
                Ext::AfterValue
            }
        }
        (Ext::BeforeName | Ext::Name, _) if tchar(b) => Ext::Name,
        (Ext::BeforeValue | Ext::Token, _) if tchar(b) => Ext::Token,
        (Ext::BeforeValue, b'"') => Ext::Quoted,
        (Ext::Name | Ext::AfterName, b'=') => Ext::BeforeValue,
        (Ext::Name | Ext::AfterName | Ext::Token | Ext::AfterValue, b';') => Ext::BeforeName,
        (Ext::Name | Ext::AfterName | Ext::Token | Ext::AfterValue, b'\r') => {
            return Ok(State::SizeLf)
        }
        _ => return Err(BadChunk),
    };
    Ok(State::Ext(next))
}

/// A trailer field line: `token ":" value CRLF`, no whitespace before the
/// colon, no obs-fold (a line starting with whitespace).
fn trailer_byte(b: u8, state: State) -> Result<State, BadChunk> {
    match (state, b) {
        (State::TrailerStart, b'\r') => Ok(State::EndLf),
        (State::TrailerStart | State::TrailerName, _) if tchar(b) => Ok(State::TrailerName),
        (State::TrailerName, b':') => Ok(State::TrailerValue),
        (State::TrailerValue, b'\r') => Ok(State::TrailerLf),
        (State::TrailerValue, _) if text(b) => Ok(State::TrailerValue),
        (State::TrailerLf, b'\n') => Ok(State::TrailerStart),
        _ => Err(BadChunk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn fields(pairs: &[(&'static str, &'static str)]) -> Vec<Field> {
        pairs
            .iter()
            .map(|(n, v)| Field {
                name: Bytes::from_static(n.as_bytes()),
                value: Bytes::from_static(v.as_bytes()),
            })
            .collect()
    }

    #[test]
    fn request_framing_refuses_what_is_ambiguous() {
        assert_eq!(request(&fields(&[]), 1), Ok(Framing::None));
        assert_eq!(
            request(&fields(&[("Content-Length", "12")]), 1),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            request(&fields(&[("content-length", "3, 3")]), 1),
            Ok(Framing::Length(3))
        );
        assert_eq!(
            request(&fields(&[("Transfer-Encoding", "gzip, Chunked")]), 1),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            request(&fields(&[("Content-Length", "3")]), 0),
            Ok(Framing::Length(3))
        );
        for bad in [
            &[("Content-Length", "3"), ("Content-Length", "4")][..],
            &[("Content-Length", "+3")],
            &[("Content-Length", "3 3")],
            &[("Content-Length", "99999999999999999999")],
            &[("Transfer-Encoding", "chunked"), ("Content-Length", "3")],
            &[("Transfer-Encoding", "chunked, gzip")],
            &[("Transfer-Encoding", "chunked, chunked")],
            &[
                ("Transfer-Encoding", "chunked"),
                ("Transfer-Encoding", "chunked"),
            ],
            &[("Transfer-Encoding", "identity")],
            &[("Transfer-Encoding", "")],
            &[("Transfer-Encoding", " , ")],
        ] {
            assert_eq!(request(&fields(bad), 1), Err(Ambiguous), "{bad:?}");
        }
        let chunked = fields(&[("Transfer-Encoding", "chunked")]);
        assert_eq!(
            request(&chunked, 0),
            Err(Ambiguous),
            "HTTP/1.0 with a coding"
        );
    }

    #[test]
    fn response_framing_follows_status_method_and_fields() {
        let cl = fields(&[("Content-Length", "5")]);
        assert_eq!(response(200, false, &cl), Ok(Framing::Length(5)));
        assert_eq!(response(200, true, &cl), Ok(Framing::None));
        assert_eq!(response(204, false, &cl), Ok(Framing::None));
        assert_eq!(response(304, false, &[]), Ok(Framing::None));
        assert_eq!(response(200, false, &[]), Ok(Framing::UntilClose));
        let gz = fields(&[("Transfer-Encoding", "gzip")]);
        assert_eq!(response(200, false, &gz), Ok(Framing::UntilClose));
        let late = fields(&[("Transfer-Encoding", "chunked, gzip")]);
        assert_eq!(response(200, false, &late), Ok(Framing::UntilClose));
        let twice = fields(&[("Transfer-Encoding", "chunked, chunked")]);
        assert_eq!(response(200, false, &twice), Err(Ambiguous));
        let both = fields(&[("Transfer-Encoding", "chunked"), ("Content-Length", "5")]);
        assert_eq!(response(200, false, &both), Err(Ambiguous));
        assert_eq!(
            response(200, true, &both),
            Ok(Framing::None),
            "HEAD: no body"
        );
    }

    #[test]
    fn codings_and_lengths_are_read_back_canonically() {
        let f = fields(&[
            ("Transfer-Encoding", " gzip ,\tchunked"),
            ("Content-Length", "007, 7"),
        ]);
        assert_eq!(codings(&f), vec![&b"gzip"[..], b"chunked"]);
        assert_eq!(declared_length(&f), Some(7));
        assert_eq!(
            declared_length(&fields(&[("Content-Length", "1, 2")])),
            None
        );
    }

    /// Decode `body` fed in two parts cut at `at`: the data, the bytes
    /// consumed, whether it ended.
    fn decode_cut(body: &[u8], at: usize) -> Result<(Vec<u8>, usize, bool), BadChunk> {
        let mut decoder = Chunked::new();
        let (mut data, mut consumed) = (Vec::new(), 0);
        for part in [&body[..at], &body[at..]] {
            let p = decoder.feed(part, |r| data.extend_from_slice(&part[r]))?;
            consumed += p.consumed;
            if p.done {
                return Ok((data, consumed, true));
            }
        }
        Ok((data, consumed, false))
    }

    /// Data of `body` fed in two parts cut at every place; trailers and
    /// extensions read and dropped.
    #[test]
    fn chunked_bodies_decode_however_they_are_cut() {
        let body = b"5\r\nhello\r\n1;ext=1\r\n \r\n10 ; a ; b = \"q \\\" t\" ;c=d\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\nY:\r\n\r\nNEXT";
        for at in 0..body.len() {
            let (data, consumed, done) = decode_cut(body, at).unwrap();
            assert!(done, "cut at {at}");
            assert_eq!(data, b"hello 0123456789abcdef", "cut at {at}");
            assert_eq!(consumed, body.len() - 4, "cut at {at}");
        }
    }

    /// Every byte pattern a peer behind the tap could read differently
    /// (RFC 9112 §7.1, §5), and every bound, is an error wherever it is
    /// cut.
    #[test]
    fn every_ambiguous_byte_pattern_is_refused() {
        let long_ext = format!("1;{}\r\n", "e".repeat(MAX_LINE));
        let long_trailers = format!("0\r\n{}\r\n", "X: 1\r\n".repeat(MAX_TRAILERS / 6 + 1));
        let cases: Vec<(&str, &[u8])> = vec![
            ("no digits", b"x\r\n"),
            ("an empty size line", b"\r\n"),
            ("whitespace before the size", b" 5\r\nhello\r\n"),
            ("a bare LF after the size", b"5\nhello\r\n0\r\n\r\n"),
            ("a bare CR after the size", b"5\rhello\r\n"),
            ("NUL after the size", b"5\x00\r\n"),
            ("17 hex digits", b"fffffffffffffffff\r\n"),
            ("data not followed by CRLF", b"2\r\nabX\r\n"),
            ("data followed by a bare LF", b"2\r\nab\n0\r\n\r\n"),
            ("a bare LF in an extension", b"1;a\nb\r\nX\r\n0\r\n\r\n"),
            ("a bare LF ending an extension", b"1;a\n"),
            ("a bare CR in an extension", b"1;a\rb\r\n"),
            ("NUL in an extension", b"1;a\x00\r\n"),
            ("a control byte in an extension", b"1;a=\x0b\r\n"),
            ("an extension without a name", b"1;=v\r\n"),
            ("an empty extension", b"1;\r\n"),
            ("a separator in an extension name", b"1;a@b\r\n"),
            ("a separator in an extension value", b"1;a=b@c\r\n"),
            ("an empty extension value", b"1;a=\r\n"),
            ("an unquoted value with a quote", b"1;a=b\"\r\n"),
            ("a quoted value not closed", b"1;a=\"b\r\n"),
            ("a quoted value with a bare LF", b"1;a=\"b\nc\"\r\n"),
            ("a quoted pair of a CR", b"1;a=\"\\\r\"\r\n"),
            ("DEL in a quoted value", b"1;a=\"\x7f\"\r\n"),
            ("an extension past the line bound", long_ext.as_bytes()),
            (
                "a bare LF in a trailer",
                b"0\r\nX: a\nGET / HTTP/1.1\r\n\r\n",
            ),
            (
                "trailers ended by LF LF",
                b"0\r\nX: a\n\nGET / HTTP/1.1\r\n\r\n",
            ),
            ("a bare LF ending the body", b"0\r\n\n"),
            ("a bare CR in a trailer", b"0\r\nX: a\rb\r\n\r\n"),
            ("CR CR ending the body", b"0\r\n\r\r"),
            ("NUL in a trailer", b"0\r\nX: a\x00\r\n\r\n"),
            ("DEL in a trailer", b"0\r\nX: a\x7f\r\n\r\n"),
            ("an escape in a trailer", b"0\r\nX: \x1b[2J\r\n\r\n"),
            ("an obs-fold trailer", b"0\r\nX: a\r\n b\r\n\r\n"),
            ("a trailer starting with a tab", b"0\r\n\tX: a\r\n\r\n"),
            ("whitespace before the colon", b"0\r\nX : a\r\n\r\n"),
            ("a trailer without a colon", b"0\r\nX\r\n\r\n"),
            ("a trailer without a name", b"0\r\n: a\r\n\r\n"),
            ("trailers past their bound", long_trailers.as_bytes()),
        ];
        for (what, bad) in cases {
            // Short ones cut everywhere; the bounds' long ones at a few places.
            let cuts: Vec<usize> = if bad.len() < 64 {
                (0..bad.len()).collect()
            } else {
                vec![0, 1, bad.len() / 2, bad.len() - 1]
            };
            for at in cuts {
                assert_eq!(decode_cut(bad, at), Err(BadChunk), "{what}, cut at {at}");
            }
        }
    }
}
