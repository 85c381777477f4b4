//! gzip for `/metrics` and `/probe`, when the request's `Accept-Encoding`
//! allows it (Prometheus always sends `gzip`).

use super::negotiation::offers;
use axum::http::header::{HeaderMap, ACCEPT_ENCODING};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::sync::mpsc::{sync_channel, SyncSender};

/// Text is handed to the compressor in pieces of about this size.
const CHUNK_BYTES: usize = 256 * 1024;
/// Pieces written but not yet compressed, at most: the writer waits past it.
const CHUNKS_IN_FLIGHT: usize = 8;

/// Whether `Accept-Encoding` lists `gzip` (or `*`) with a non-zero q-value.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    offers(headers, &ACCEPT_ENCODING)
        .iter()
        .any(|o| (o.value.eq_ignore_ascii_case("gzip") || o.value == "*") && o.q > 0.0)
}

/// The body gzipped at the fastest level: scrapes are frequent and text
/// compresses well even so (CPU matters more here than the last bytes).
pub fn gzip(body: &[u8]) -> Bytes {
    // Writing into a Vec cannot fail, so the errors below never happen;
    // an empty body would still be a valid (if useless) answer.
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 8 + 64), Compression::fast());
    let _ = encoder.write_all(body);
    Bytes::from(encoder.finish().unwrap_or_default())
}

/// The text `produce` writes, and its gzip made at the same time on a second
/// thread: pieces go to the compressor as they are written, so both are done
/// moments after the text is (the longer of the two, not their sum). The
/// gzip is one stream at the level of [`gzip`]. `capacity` is the expected
/// text size.
pub fn text_and_gzip(
    capacity: usize,
    produce: impl FnOnce(&mut dyn std::fmt::Write) -> std::fmt::Result,
) -> Result<(Bytes, Bytes), std::fmt::Error> {
    let (tx, rx) = sync_channel::<String>(CHUNKS_IN_FLIGHT);
    std::thread::scope(|scope| {
        let compressor = scope.spawn(move || {
            let mut plain = Vec::with_capacity(capacity);
            let mut encoder =
                GzEncoder::new(Vec::with_capacity(capacity / 8 + 64), Compression::fast());
            for chunk in rx {
                // Writing into a Vec cannot fail.
                let _ = encoder.write_all(chunk.as_bytes());
                plain.extend_from_slice(chunk.as_bytes());
            }
            (plain, encoder.finish().unwrap_or_default())
        });
        let mut pieces = Pieces {
            current: String::with_capacity(CHUNK_BYTES * 2),
            tx,
        };
        let produced = produce(&mut pieces).and_then(|()| pieces.send());
        // Dropping the sender ends the compressor's loop.
        drop(pieces);
        let (plain, packed) = compressor.join().map_err(|_| std::fmt::Error)?;
        produced.map(|()| (Bytes::from(plain), Bytes::from(packed)))
    })
}

/// A `fmt::Write` that sends what it is given on in pieces.
struct Pieces {
    current: String,
    tx: SyncSender<String>,
}

impl Pieces {
    fn send(&mut self) -> std::fmt::Result {
        let full = std::mem::replace(&mut self.current, String::with_capacity(CHUNK_BYTES * 2));
        // The compressor only stops when this sender is dropped.
        self.tx.send(full).map_err(|_| std::fmt::Error)
    }
}

impl std::fmt::Write for Pieces {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.current.push_str(s);
        if self.current.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::io::Read;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn gzip_is_chosen_only_when_offered_with_a_positive_q() {
        assert!(accepts_gzip(&headers("gzip")));
        assert!(accepts_gzip(&headers("identity, GZIP;q=0.5")));
        assert!(accepts_gzip(&headers("*")));
        assert!(!accepts_gzip(&headers("gzip;q=0")));
        assert!(!accepts_gzip(&headers("deflate, br")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn text_and_its_gzip_are_made_together() {
        let line = "mcp_up{target=\"a\"} 1\n";
        let (plain, packed) = text_and_gzip(16, |w| {
            for _ in 0..100_000 {
                w.write_str(line)?;
            }
            Ok(())
        })
        .unwrap();
        let text = line.repeat(100_000);
        assert_eq!(plain, text.as_bytes());
        let mut out = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        let failed = text_and_gzip(16, |w| {
            w.write_str(line)?;
            Err(std::fmt::Error)
        });
        assert!(failed.is_err());
    }

    #[test]
    fn gzip_round_trips() {
        let text = "mcp_up{target=\"a\"} 1\n".repeat(100);
        let packed = gzip(text.as_bytes());
        assert!(packed.len() < text.len() / 4);
        let mut out = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
    }
}
