//! gzip for `/metrics` and `/probe`, when the request's `Accept-Encoding`
//! allows it (Prometheus always sends `gzip`).

use super::negotiation::offers;
use axum::http::header::{HeaderMap, ACCEPT_ENCODING};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

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
