//! Legacy HTTP+SSE (2024-11-05): the GET stream's first event, `endpoint`,
//! names the URL the client must POST its messages to. That URL is the one
//! thing the tap rewrites: an absolute URL on the upstream's origin would
//! send the client straight to the upstream, so it becomes the tap's own
//! origin with the same path and query. A relative URL already resolves to
//! the tap (which mirrors the upstream's paths) and a URL on another
//! origin is left as it is: the tap never contacts anything but its
//! upstream. The message URL's `sessionId` tells the observer which POSTs
//! belong to the stream.
//!
//! Only the start of the stream is watched, at most [`WATCH_BYTES`] of it,
//! scanned once; after the first event (or that many bytes) the stream
//! passes untouched.

use bytes::{Bytes, BytesMut};
use http::HeaderValue;
use std::ops::Range;

/// Bytes of a GET stream's start held while looking for `endpoint`.
pub(crate) const WATCH_BYTES: usize = 8 * 1024;

/// Where the stream's URLs resolve and where the client reached the tap.
pub(crate) struct Origins {
    /// The upstream URL of this GET (relative endpoint URLs resolve
    /// against it).
    pub(crate) upstream_request: url::Url,
    /// `scheme://authority` the client used to reach the tap; `None` when
    /// the request did not say (then a rewritten URL is path-absolute).
    pub(crate) tap: Option<String>,
}

/// What the watch found in the first event.
pub(crate) struct Found {
    /// The message URL's `sessionId` (or `session_id`) on the upstream's
    /// origin.
    pub(crate) session: Option<HeaderValue>,
}

/// Bytes to forward now, and possibly more right after.
pub(crate) struct Released {
    pub(crate) now: Bytes,
    pub(crate) then: Option<Bytes>,
    /// The watch is over (the event was seen, or the budget spent).
    pub(crate) done: Option<Found>,
}

pub(crate) struct EndpointWatch {
    origins: Origins,
    held: BytesMut,
    /// Bytes of `held` scanned.
    scanned: usize,
    line_start: usize,
    /// The last byte scanned was a `\r`: a `\n` now ends the same line.
    after_cr: bool,
    block: Block,
}

/// The fields of the event in progress that matter here.
#[derive(Default)]
struct Block {
    fields: bool,
    endpoint: bool,
    data: Option<Range<usize>>,
    data_lines: u32,
}

impl EndpointWatch {
    pub(crate) fn new(origins: Origins) -> EndpointWatch {
        EndpointWatch {
            origins,
            held: BytesMut::new(),
            scanned: 0,
            line_start: 0,
            after_cr: false,
            block: Block::default(),
        }
    }

    /// The next chunk of the stream: `None` while it is held (nothing to
    /// forward yet).
    pub(crate) fn push(&mut self, chunk: Bytes) -> Option<Released> {
        let room = WATCH_BYTES.saturating_sub(self.held.len());
        let (head, tail) = if chunk.len() > room {
            (chunk.slice(..room), Some(chunk.slice(room..)))
        } else {
            (chunk, None)
        };
        self.held.extend_from_slice(&head);
        if let Some(found) = self.scan() {
            let now = self.rewritten(&found);
            return Some(Released {
                now,
                then: tail,
                done: Some(Found {
                    session: found.session,
                }),
            });
        }
        if self.held.len() >= WATCH_BYTES {
            // No event within the budget: forward everything unchanged.
            return Some(Released {
                now: std::mem::take(&mut self.held).freeze(),
                then: tail,
                done: Some(Found { session: None }),
            });
        }
        None
    }

    /// The stream ended while held: what was held, unchanged.
    pub(crate) fn flush(&mut self) -> Option<Bytes> {
        (!self.held.is_empty()).then(|| std::mem::take(&mut self.held).freeze())
    }

    /// Scan what was added; the first event's verdict once it is complete.
    fn scan(&mut self) -> Option<Decision> {
        while self.scanned < self.held.len() {
            let at = self.scanned;
            let byte = self.held[at];
            self.scanned += 1;
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                self.line_start = self.scanned;
                continue;
            }
            if byte != b'\n' && byte != b'\r' {
                continue;
            }
            self.after_cr = byte == b'\r';
            let line = self.line_start..at;
            self.line_start = self.scanned;
            if !line.is_empty() {
                self.field(line);
            } else if self.block.fields {
                return Some(self.decide());
            } else {
                // A block of comments only: dispatches nothing.
                self.block = Block::default();
            }
        }
        None
    }

    fn field(&mut self, line: Range<usize>) {
        let text = &self.held[line.clone()];
        let (name, value) = match text.iter().position(|&b| b == b':') {
            Some(0) => return,
            Some(colon) => {
                let skip = usize::from(text.get(colon + 1) == Some(&b' '));
                (&text[..colon], line.start + colon + 1 + skip..line.end)
            }
            None => (text, line.end..line.end),
        };
        match name {
            b"event" => {
                self.block.fields = true;
                self.block.endpoint = &self.held[value] == b"endpoint";
            }
            b"data" => {
                self.block.fields = true;
                self.block.data_lines += 1;
                self.block.data = Some(value);
            }
            _ => {}
        }
    }

    fn decide(&self) -> Decision {
        let none = Decision {
            replace: None,
            session: None,
        };
        let block = &self.block;
        let Some(range) = block
            .data
            .clone()
            .filter(|_| block.endpoint && block.data_lines == 1)
        else {
            return none;
        };
        let Ok(value) = std::str::from_utf8(&self.held[range.clone()]) else {
            return none;
        };
        let Ok(resolved) = self.origins.upstream_request.join(value) else {
            return none;
        };
        if resolved.origin() != self.origins.upstream_request.origin() {
            return none;
        }
        let session = session_of(&resolved);
        let replace = names_an_origin(value).then(|| {
            let rest = &resolved[url::Position::BeforePath..];
            let url = match &self.origins.tap {
                Some(tap) => format!("{tap}{rest}"),
                None => rest.to_string(),
            };
            (range, url)
        });
        Decision { replace, session }
    }

    fn rewritten(&mut self, decision: &Decision) -> Bytes {
        let held = std::mem::take(&mut self.held);
        let Some((range, url)) = &decision.replace else {
            return held.freeze();
        };
        let mut out = BytesMut::with_capacity(held.len() + url.len());
        out.extend_from_slice(&held[..range.start]);
        out.extend_from_slice(url.as_bytes());
        out.extend_from_slice(&held[range.end..]);
        out.freeze()
    }
}

struct Decision {
    /// The data value's bytes and the URL that replaces them.
    replace: Option<(Range<usize>, String)>,
    session: Option<HeaderValue>,
}

/// Whether a URL reference names its own origin (`scheme:` or `//host`),
/// rather than being a path relative to where it was received.
fn names_an_origin(value: &str) -> bool {
    if value.starts_with("//") {
        return true;
    }
    let scheme_end = value.find(':');
    let path_start = value.find(['/', '?', '#']);
    matches!((scheme_end, path_start), (Some(c), Some(p)) if c < p)
        || matches!((scheme_end, path_start), (Some(_), None))
}

/// The session a legacy message URL names: its `sessionId` query value
/// (the reference servers' and the simulator's), or `session_id` (the
/// Python SDK's).
pub(crate) fn session_of(url: &url::Url) -> Option<HeaderValue> {
    query_session(url.query()?)
}

/// [`session_of`] for a request's raw query.
pub(crate) fn query_session(query: &str) -> Option<HeaderValue> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "sessionId" || name == "session_id")
        .and_then(|(_, value)| HeaderValue::from_str(&value).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(tap: Option<&str>) -> EndpointWatch {
        EndpointWatch::new(Origins {
            upstream_request: url::Url::parse("http://up.test:8080/sse").unwrap(),
            tap: tap.map(str::to_string),
        })
    }

    /// What the client gets for a stream cut into `chunks`, and the session.
    fn through(w: &mut EndpointWatch, chunks: &[&[u8]]) -> (Vec<u8>, Option<HeaderValue>) {
        let mut out = Vec::new();
        let mut session = None;
        let mut done = false;
        for chunk in chunks {
            if done {
                out.extend_from_slice(chunk);
                continue;
            }
            if let Some(r) = w.push(Bytes::copy_from_slice(chunk)) {
                out.extend_from_slice(&r.now);
                out.extend_from_slice(r.then.as_deref().unwrap_or_default());
                if let Some(found) = r.done {
                    session = found.session;
                    done = true;
                }
            }
        }
        if !done {
            out.extend_from_slice(&w.flush().unwrap_or_default());
        }
        (out, session)
    }

    #[test]
    fn an_absolute_endpoint_on_the_upstream_becomes_the_taps() {
        let stream = b"event: endpoint\r\ndata: http://up.test:8080/messages?sessionId=abc\r\n\r\nevent: message\ndata: {}\n\n";
        let want = b"event: endpoint\r\ndata: http://tap.test:9/messages?sessionId=abc\r\n\r\nevent: message\ndata: {}\n\n";
        for at in 0..stream.len() {
            let (out, session) = through(
                &mut watch(Some("http://tap.test:9")),
                &[&stream[..at], &stream[at..]],
            );
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(want));
            assert_eq!(session.unwrap(), "abc");
        }
    }

    #[test]
    fn relative_and_foreign_endpoints_pass_unchanged() {
        for (stream, session) in [
            (
                &b": hello\n\nevent: endpoint\ndata: /messages/?session_id=s1\n\n"[..],
                Some("s1"),
            ),
            (
                b"event: endpoint\ndata: messages?sessionId=s2\n\n",
                Some("s2"),
            ),
            (
                b"event: endpoint\ndata: http://elsewhere.test/messages?sessionId=s3\n\n",
                None,
            ),
            (
                b"event: endpoint\ndata: https://up.test:8080/messages?sessionId=s4\n\n",
                None,
            ),
            (b"data: not an endpoint\n\n", None),
        ] {
            let (out, found) = through(&mut watch(Some("http://tap.test")), &[stream]);
            assert_eq!(out, stream);
            assert_eq!(
                found.as_ref().map(|v| v.to_str().unwrap()),
                session,
                "{}",
                String::from_utf8_lossy(stream)
            );
        }
    }

    #[test]
    fn a_scheme_relative_endpoint_and_no_known_tap_origin() {
        let stream = b"event: endpoint\ndata: //up.test:8080/m?sessionId=x\n\n";
        let (out, _) = through(&mut watch(None), &[stream]);
        assert_eq!(out, b"event: endpoint\ndata: /m?sessionId=x\n\n");
    }

    #[test]
    fn a_stream_without_an_event_in_the_budget_passes_unchanged() {
        let mut stream = vec![b':'; WATCH_BYTES * 2];
        stream.extend_from_slice(b"\n\nevent: endpoint\ndata: http://up.test:8080/x\n\n");
        let (out, session) = through(&mut watch(Some("http://tap.test")), &[&stream]);
        assert_eq!(out, stream);
        assert!(session.is_none());
        let short = b"event: endpoint\ndata: http://up.test:8080/x";
        let (out, _) = through(&mut watch(Some("http://tap.test")), &[short]);
        assert_eq!(out, short);
    }

    #[test]
    fn legacy_post_sessions_come_from_the_query() {
        assert_eq!(query_session("a=1&sessionId=s%2F1").unwrap(), "s/1");
        assert_eq!(query_session("session_id=py").unwrap(), "py");
        assert!(query_session("id=1").is_none());
        assert!(query_session("sessionId=%0A").is_none());
    }
}
