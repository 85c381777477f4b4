//! Every known secret out of every server-supplied string a report keeps.
//! A server can echo what we send it (an `Authorization` header, another
//! target's token in a child's environment) into tool names, descriptions,
//! server info or error messages; whatever it sends, the report that
//! leaves `poll` holds no secret the configuration knows. This runs where a
//! report is finished, before any sink (status pages, `/api`, baselines,
//! metrics, spans, `probe --json`) sees it, so no sink needs its own.

use super::poll_report::PollReport;
use mcp_listing::{text, ListingReport};
use mcp_wire::secrets::SecretScrubber;

/// Scrub `report` in place, then cut every echoed server string to
/// [`text::MAX_ECHO_BYTES`] (after scrubbing, so no secret straddles a cut).
pub fn scrub_report(report: &mut PollReport, secrets: &SecretScrubber) {
    scrub_report_secrets(report, secrets);
    cut_opt(&mut report.protocol_version);
    cut_opt(&mut report.session_id);
    if let Some(server) = &mut report.server {
        cut(&mut server.name);
        cut(&mut server.version);
    }
    if let Some(failure) = &mut report.session_error {
        cut(&mut failure.detail);
    }
    for listing in &mut report.listings {
        cut_opt(&mut listing.detail);
    }
}

fn cut(field: &mut String) {
    if field.len() > text::MAX_ECHO_BYTES {
        *field = text::echo(field).into_owned();
    }
}

fn cut_opt(field: &mut Option<String>) {
    if let Some(f) = field {
        cut(f);
    }
}

fn scrub_report_secrets(report: &mut PollReport, secrets: &SecretScrubber) {
    if secrets.is_empty() {
        return;
    }
    scrub_opt(&mut report.protocol_version, secrets);
    if let Some(server) = &mut report.server {
        scrub(&mut server.name, secrets);
        scrub(&mut server.version, secrets);
    }
    if let Some(failure) = &mut report.session_error {
        scrub(&mut failure.detail, secrets);
    }
    scrub_opt(&mut report.session_id, secrets);
    scrub_opt(&mut report.stderr_tail, secrets);
    for listing in &mut report.listings {
        scrub_listing(listing, secrets);
    }
}

/// Scrub one listing in place: names, details, page errors, item shapes.
pub fn scrub_listing(listing: &mut ListingReport, secrets: &SecretScrubber) {
    if secrets.is_empty() {
        return;
    }
    scrub_opt(&mut listing.detail, secrets);
    scrub_opt(&mut listing.cache.cache_scope, secrets);
    listing.names.iter_mut().for_each(|n| scrub(n, secrets));
    listing
        .duplicate_names
        .iter_mut()
        .for_each(|n| scrub(n, secrets));
    for page in &mut listing.pages {
        scrub_opt(&mut page.sent_cursor, secrets);
    }
    if listing.fingerprints.keys().any(|k| secrets.scrub(k) != *k) {
        let fingerprints = std::mem::take(&mut listing.fingerprints);
        listing.fingerprints = fingerprints
            .into_iter()
            .map(|(k, v)| (secrets.scrub(&k), v))
            .collect();
    }
    for fp in listing.fingerprints.values_mut() {
        if let Some(shape) = &mut fp.shape {
            **shape = shape.renamed(|name| secrets.scrub(name));
        }
    }
}

fn scrub(text: &mut String, secrets: &SecretScrubber) {
    let clean = secrets.scrub(text);
    if clean != *text {
        *text = clean;
    }
}

fn scrub_opt(text: &mut Option<String>, secrets: &SecretScrubber) {
    if let Some(t) = text {
        scrub(t, secrets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::poll_report::ServerInfo;
    use mcp_listing::TransportKind;
    use mcp_listing::{Kind, Outcome};
    use std::time::SystemTime;

    #[test]
    fn every_kept_server_string_loses_the_secret() {
        let secret = "tok-0123456789";
        let secrets = SecretScrubber::new([secret]);
        let echo = format!("x Bearer {secret}");
        let mut report = PollReport::new("t", TransportKind::StreamableHttp, SystemTime::now());
        report.server = Some(ServerInfo {
            name: echo.clone(),
            version: echo.clone(),
        });
        report.protocol_version = Some(echo.clone());
        let mut listing = ListingReport::empty(Kind::Tools, Outcome::Complete);
        listing.names = vec![echo.clone()];
        listing.duplicate_names = vec![echo.clone()];
        listing.detail = Some(echo.clone());
        listing.fingerprints.insert(
            echo.clone(),
            mcp_listing::fingerprint::ItemFingerprint {
                digest: 0,
                parts: Default::default(),
                shape: None,
            },
        );
        report.listings.push(listing);
        scrub_report(&mut report, &secrets);
        let kept = format!("{report:?}");
        assert!(!kept.contains(secret), "{kept}");
        assert!(kept.contains("x Bearer <redacted>"), "{kept}");
    }

    #[test]
    fn echoed_strings_are_cut_after_scrubbing() {
        let secret = "tok-0123456789";
        let secrets = SecretScrubber::new([secret]);
        let pad = "x".repeat(text::MAX_ECHO_BYTES - 5);
        let mut report = PollReport::new("t", TransportKind::StreamableHttp, SystemTime::now());
        let mut listing = ListingReport::empty(Kind::Tools, Outcome::Complete);
        listing.detail = Some(format!("{pad}{secret}{}", "y".repeat(5_000_000)));
        report.listings.push(listing);
        report.protocol_version = Some("v".repeat(1 << 20));
        scrub_report(&mut report, &secrets);
        let detail = report.listings[0].detail.as_deref().unwrap_or_default();
        assert!(detail.len() <= text::MAX_ECHO_BYTES, "{}", detail.len());
        assert!(!detail.contains("tok-"), "{detail}");
        assert!(report.protocol_version.unwrap().len() <= text::MAX_ECHO_BYTES);
    }
}
