//! What a client accepts, from `Accept` and `Accept-Encoding`
//! (RFC 9110 §12.5): a comma-separated list of offers, each with optional
//! `;key=value` parameters and a `q` weight (1 when absent, 0 refuses).
//! Header values are client input: anything unreadable is skipped, never a
//! panic.
//!
//! The exposition format is chosen as client_golang chooses it: the
//! highest-weighted offer we can serve wins (the first listed on a tie),
//! OpenMetrics for `application/openmetrics-text` (version 1.0.0, 0.0.1 or
//! none), the Prometheus text format for `text/plain` (version 0.0.4 or
//! none); with no such offer (no header, `*/*`, anything else) the
//! Prometheus text format, as every scraper understands it.

use crate::telemetry::metrics::Exposition;
use axum::http::header::{HeaderMap, HeaderName, ACCEPT};

/// One item of an `Accept`-like header.
#[derive(Debug, PartialEq)]
pub struct Offer<'a> {
    /// The media type or coding, as sent (compare case-insensitively).
    pub value: &'a str,
    /// Parameters other than `q`, keys as sent, values unquoted.
    pub params: Vec<(&'a str, &'a str)>,
    /// The weight: 1 when absent, 0 when unreadable (so it refuses).
    pub q: f32,
}

impl Offer<'_> {
    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }
}

/// Every offer of every `name` header, in the order sent.
pub fn offers<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Vec<Offer<'h>> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(parse_offer)
        .collect()
}

fn parse_offer(item: &str) -> Option<Offer<'_>> {
    let mut parts = item.split(';');
    let value = parts.next()?.trim();
    if value.is_empty() {
        return None;
    }
    let mut offer = Offer {
        value,
        params: Vec::new(),
        q: 1.0,
    };
    for param in parts {
        let Some((key, v)) = param.split_once('=') else {
            continue;
        };
        let (key, v) = (key.trim(), v.trim().trim_matches('"'));
        if key.eq_ignore_ascii_case("q") {
            offer.q = v
                .parse::<f32>()
                .ok()
                .filter(|q| q.is_finite())
                .unwrap_or(0.0)
                .clamp(0.0, 1.0);
        } else {
            offer.params.push((key, v));
        }
    }
    Some(offer)
}

/// The format a scrape with these request headers gets.
pub fn exposition_for(headers: &HeaderMap) -> Exposition {
    let mut best: Option<(f32, Exposition)> = None;
    for offer in offers(headers, &ACCEPT) {
        let Some(format) = servable(&offer) else {
            continue;
        };
        if offer.q > 0.0 && best.is_none_or(|(q, _)| offer.q > q) {
            best = Some((offer.q, format));
        }
    }
    best.map_or(Exposition::PrometheusText, |(_, format)| format)
}

/// The format an offer names, if we serve it.
fn servable(offer: &Offer<'_>) -> Option<Exposition> {
    let version = offer.param("version");
    if offer
        .value
        .eq_ignore_ascii_case("application/openmetrics-text")
        && matches!(version, None | Some("1.0.0" | "0.0.1"))
    {
        return Some(Exposition::OpenMetrics);
    }
    if offer.value.eq_ignore_ascii_case("text/plain") && matches!(version, None | Some("0.0.4")) {
        return Some(Exposition::PrometheusText);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(value: &str) -> Exposition {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_str(value).unwrap());
        exposition_for(&h)
    }

    #[test]
    fn prometheus_gets_openmetrics() {
        // Prometheus 3's default scrape_protocols.
        assert_eq!(
            accept("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"),
            Exposition::OpenMetrics
        );
        // Prometheus 2.
        assert_eq!(
            accept("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Exposition::OpenMetrics
        );
        assert_eq!(
            accept("application/openmetrics-text"),
            Exposition::OpenMetrics
        );
    }

    #[test]
    fn everyone_else_gets_the_text_format() {
        assert_eq!(
            exposition_for(&HeaderMap::new()),
            Exposition::PrometheusText
        );
        for value in [
            "*/*",
            "text/plain",
            "text/plain;version=0.0.4",
            "application/json",
            "application/openmetrics-text;version=2.0.0",
            "application/openmetrics-text;q=0",
            ";;;,,=,q=",
        ] {
            assert_eq!(accept(value), Exposition::PrometheusText, "{value}");
        }
    }

    #[test]
    fn the_highest_weight_wins_and_the_first_on_a_tie() {
        assert_eq!(
            accept("application/openmetrics-text;q=0.2, text/plain;q=0.9"),
            Exposition::PrometheusText
        );
        assert_eq!(
            accept("text/plain;q=0.1, application/openmetrics-text;q=0.2"),
            Exposition::OpenMetrics
        );
        assert_eq!(
            accept("text/plain, application/openmetrics-text"),
            Exposition::PrometheusText
        );
        assert_eq!(
            accept("application/openmetrics-text; q=\"0.5\", text/plain;q=garbage"),
            Exposition::OpenMetrics
        );
    }

    #[test]
    fn offers_keep_their_parameters() {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_static("a/b; v=\"1\" ;q=0.3, c"));
        let got = offers(&h, &ACCEPT);
        assert_eq!(
            got,
            vec![
                Offer {
                    value: "a/b",
                    params: vec![("v", "1")],
                    q: 0.3
                },
                Offer {
                    value: "c",
                    params: vec![],
                    q: 1.0
                }
            ]
        );
    }
}
