//! `/metrics` and `/probe` as HTTP endpoints of a real exporter process:
//! gzip when the scraper asks for it, and concurrent scrapers that cannot
//! starve scheduled polling (docs/security.md attack list, item 13).
//! Counts, never timings.

use mcp_testkit::exporter::Fleet;
use mcp_testkit::http::{raw_get, RawResponse};
use mcp_testkit::{sample, scenarios_simulator, Exporter};
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// One HTTP/1.0 GET of the exporter (so the answer is never chunked), the
/// body never decoded.
fn get(exp: &Exporter, path: &str, accept_encoding: Option<&str>) -> RawResponse {
    let address = exp.url().trim_start_matches("http://");
    let headers: Vec<(&str, &str)> = accept_encoding
        .map(|enc| ("Accept-Encoding", enc))
        .into_iter()
        .collect();
    raw_get(address, path, &headers).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

fn gunzip(body: &[u8]) -> String {
    let mut out = String::new();
    flate2::read::GzDecoder::new(body)
        .read_to_string(&mut out)
        .expect("a gzip body");
    out
}

#[test]
fn metrics_and_probe_are_gzipped_when_the_scraper_asks() {
    let (sim, _f) = scenarios_simulator("  - {name: healthy, scenario: healthy}\n");
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    url: {}/mcp/healthy\n",
        sim.url
    ));
    let polled = [("target", "healthy")];
    let plain = exp.wait(LIMIT, "a first poll", || {
        let r = get(&exp, "/metrics", None);
        let text = r.text();
        (r.status == 200 && sample(&text, "mcp_polls_total", &polled) == Some(1.0)).then_some(text)
    });

    // What Prometheus sends.
    let r = get(
        &exp,
        "/metrics",
        Some("gzip, deflate;q=0.5, identity;q=0.1"),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert!(r
        .header("vary")
        .is_some_and(|v| v.eq_ignore_ascii_case("accept-encoding")));
    assert!(
        r.header("content-type")
            .is_some_and(|v| v.starts_with("application/openmetrics-text")),
        "{:?}",
        r.headers
    );
    let unzipped = gunzip(&r.body);
    assert!(unzipped.ends_with("# EOF\n"), "{unzipped}");
    assert_eq!(sample(&unzipped, "mcp_polls_total", &polled), Some(1.0));
    assert!(
        r.body.len() * 4 < unzipped.len(),
        "gzip saved little: {} of {} bytes",
        r.body.len(),
        unzipped.len()
    );
    // No gzip without asking, nor when refused.
    for refused in [None, Some("identity"), Some("gzip;q=0")] {
        let r = get(&exp, "/metrics", refused);
        assert_eq!(r.header("content-encoding"), None, "{refused:?}");
        assert!(r.text().ends_with("# EOF\n"));
    }
    assert!(plain.contains("mcp_up{target=\"healthy\"} 1"), "{plain}");

    // /probe too.
    let r = get(&exp, "/probe?target=healthy", Some("gzip"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let probe = gunzip(&r.body);
    assert_eq!(sample(&probe, "mcp_up", &polled), Some(1.0), "{probe}");
    let r = get(&exp, "/probe?target=healthy", None);
    assert_eq!(r.header("content-encoding"), None);
    assert!(r.text().ends_with("# EOF\n"));
}

/// `metrics: {detail: true}` is reloadable: a reload that turns it on for
/// one target adds that target's histograms (and no other's), and a reload
/// that turns it off drops them.
#[test]
fn detail_histograms_follow_the_configuration_across_reloads() {
    let (sim, _f) =
        scenarios_simulator("  - {name: a, scenario: healthy}\n  - {name: b, scenario: healthy}\n");
    let config = |detail: bool| {
        format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - name: a\n    url: {url}/mcp/a\n    metrics: {{detail: {detail}}}\n  - name: b\n    url: {url}/mcp/b\n",
            url = sim.url
        )
    };
    let exp = Exporter::start_with(&config(false), &["--web.enable-lifecycle"], &[]);
    let text = exp.wait_metrics(LIMIT, "a first poll of a", |text| {
        sample(text, "mcp_polls_total", &[("target", "a")]).unwrap_or(0.0) >= 1.0
    });
    assert!(!text.contains("mcp_detail_"), "{text}");

    let (status, body) = exp.reload(&config(true));
    assert_eq!(status, 200, "{body}");
    let detail = [("target", "a"), ("kind", "tools")];
    let text = exp.wait_metrics(LIMIT, "a's page latency histogram filling", |text| {
        sample(
            text,
            "mcp_detail_page_request_duration_seconds_count",
            &detail,
        )
        .unwrap_or(0.0)
            >= 1.0
    });
    assert!(
        sample(
            &text,
            "mcp_detail_poll_duration_seconds_count",
            &[("target", "a")]
        )
        .unwrap_or(0.0)
            >= 1.0,
        "{text}"
    );
    assert!(
        !text.contains("mcp_detail_poll_duration_seconds_count{target=\"b\"}"),
        "{text}"
    );

    let (status, body) = exp.reload(&config(false));
    assert_eq!(status, 200, "{body}");
    // A render from before the reload may be shared for a few milliseconds.
    let text = exp.wait_metrics(LIMIT, "a's histograms dropped", |text| {
        !text.contains("mcp_detail_")
    });
    assert_eq!(sample(&text, "mcp_up", &[("target", "a")]), Some(1.0));
}

/// Item 13: ten scrapers in tight loops against a 200-target exporter must
/// not starve its schedule. Before the fix every scrape rendered the whole
/// registry on the runtime's worker threads, so polls waited behind renders.
/// Now concurrent scrapers share one render made on the blocking pool.
///
/// Counted, never timed: once the storm has made 100 scrapes, and while it
/// goes on, every one of the 200 targets completes another poll. How much
/// polling a storm costs against a quiet spell is measured by
/// `cargo bench --bench scrape_storm` (docs/reliability.md, item 13).
#[test]
fn concurrent_scrapers_do_not_starve_polling() {
    const TARGETS: usize = 200;
    const SCRAPERS: usize = 10;
    const SCRAPES_FIRST: u64 = 100;

    let fleet = Fleet::start(TARGETS);
    let exp = &fleet.exporter;
    let listings = || fleet.listings(&gunzip(&get(exp, "/metrics", Some("gzip")).body));
    exp.wait(LIMIT, "every target polled once", || {
        listings().iter().all(|&n| n >= 1.0).then_some(())
    });

    let stop = Arc::new(AtomicBool::new(false));
    let scrapes = Arc::new(AtomicU64::new(0));
    let address = exp.url().trim_start_matches("http://").to_string();
    let scrapers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let (address, stop, scrapes) = (address.clone(), stop.clone(), scrapes.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let r = raw_get(&address, "/metrics", &[("Accept-Encoding", "gzip")]);
                    assert_eq!(r.map(|r| r.status).ok(), Some(200));
                    scrapes.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    exp.wait(LIMIT, "the storm's first 100 scrapes", || {
        (scrapes.load(Ordering::Relaxed) >= SCRAPES_FIRST).then_some(())
    });
    let before = listings();
    exp.wait(
        LIMIT,
        "another poll of every target during the storm",
        || {
            let now = listings();
            now.iter().zip(&before).all(|(n, b)| n > b).then_some(())
        },
    );
    let still_storming = scrapers.iter().all(|s| !s.is_finished());
    stop.store(true, Ordering::Relaxed);
    for s in scrapers {
        s.join().expect("every scrape answered 200");
    }
    assert!(
        still_storming,
        "a scraper stopped before the polls were done"
    );
}
