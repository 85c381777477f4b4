//! `/metrics` and `/probe` as HTTP endpoints of a real exporter process:
//! gzip when the scraper asks for it, and concurrent scrapers that cannot
//! starve scheduled polling (docs/security.md attack list, item 13).
//! Counts, never timings.

mod common;

use common::{http_post, sample, wait_for, Proc};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn exporter(config: &Path) -> Proc {
    Proc::start(&[
        "--config.file",
        config.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ])
}

/// Host and port of a `http://HOST:PORT` URL.
fn address(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

/// One HTTP/1.0 GET (so the answer is never chunked): status, headers
/// (lower-cased names) and the raw body, never decoded.
fn get(
    url: &str,
    path: &str,
    accept_encoding: Option<&str>,
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let addr = address(url);
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect to the exporter");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n");
    if let Some(enc) = accept_encoding {
        request.push_str(&format!("Accept-Encoding: {enc}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
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
    let (sim, _f) = common::scenarios_simulator("  - {name: healthy, scenario: healthy}\n");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    url: {}/mcp/healthy\n",
            sim.url
        ),
    )
    .unwrap();
    let exp = exporter(&cfg);
    let plain = wait_for(LIMIT, "a first poll", || {
        let (status, _, body) = get(&exp.url, "/metrics", None);
        let text = String::from_utf8_lossy(&body).to_string();
        (status == 200 && sample(&text, "mcp_polls_total", &[("target", "healthy")]) == Some(1.0))
            .then_some(text)
    });

    // What Prometheus sends.
    let (status, headers, body) = get(
        &exp.url,
        "/metrics",
        Some("gzip, deflate;q=0.5, identity;q=0.1"),
    );
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert!(header(&headers, "vary").is_some_and(|v| v.eq_ignore_ascii_case("accept-encoding")));
    assert!(
        header(&headers, "content-type")
            .is_some_and(|v| v.starts_with("application/openmetrics-text")),
        "{headers:?}"
    );
    let unzipped = gunzip(&body);
    assert!(unzipped.ends_with("# EOF\n"), "{unzipped}");
    assert_eq!(
        sample(&unzipped, "mcp_polls_total", &[("target", "healthy")]),
        Some(1.0)
    );
    assert!(
        body.len() * 4 < unzipped.len(),
        "gzip saved little: {} of {} bytes",
        body.len(),
        unzipped.len()
    );
    // No gzip without asking, nor when refused.
    for refused in [None, Some("identity"), Some("gzip;q=0")] {
        let (_, headers, body) = get(&exp.url, "/metrics", refused);
        assert_eq!(header(&headers, "content-encoding"), None, "{refused:?}");
        assert!(String::from_utf8_lossy(&body).ends_with("# EOF\n"));
    }
    assert!(plain.contains("mcp_up{target=\"healthy\"} 1"), "{plain}");

    // /probe too.
    let (status, headers, body) = get(&exp.url, "/probe?target=healthy", Some("gzip"));
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    let probe = gunzip(&body);
    assert_eq!(
        sample(&probe, "mcp_up", &[("target", "healthy")]),
        Some(1.0),
        "{probe}"
    );
    let (_, headers, body) = get(&exp.url, "/probe?target=healthy", None);
    assert_eq!(header(&headers, "content-encoding"), None);
    assert!(String::from_utf8_lossy(&body).ends_with("# EOF\n"));
}

/// `metrics: {detail: true}` is reloadable: a reload that turns it on for
/// one target adds that target's histograms (and no other's), and a reload
/// that turns it off drops them.
#[test]
fn detail_histograms_follow_the_configuration_across_reloads() {
    let (sim, _f) = common::scenarios_simulator(
        "  - {name: a, scenario: healthy}\n  - {name: b, scenario: healthy}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let config = |detail: bool| {
        format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - name: a\n    url: {url}/mcp/a\n    metrics: {{detail: {detail}}}\n  - name: b\n    url: {url}/mcp/b\n",
            url = sim.url
        )
    };
    std::fs::write(&cfg, config(false)).unwrap();
    let exp = Proc::start(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
        "--web.enable-lifecycle",
    ]);
    let metrics =
        |exp: &Proc| String::from_utf8_lossy(&get(&exp.url, "/metrics", None).2).to_string();
    let text = wait_for(LIMIT, "a first poll of a", || {
        let text = metrics(&exp);
        (sample(&text, "mcp_polls_total", &[("target", "a")]).unwrap_or(0.0) >= 1.0).then_some(text)
    });
    assert!(!text.contains("mcp_detail_"), "{text}");

    std::fs::write(&cfg, config(true)).unwrap();
    let (status, body) = http_post(&format!("{}/-/reload", exp.url));
    assert_eq!(status, 200, "{body}");
    let detail = [("target", "a"), ("kind", "tools")];
    let text = wait_for(LIMIT, "a's page latency histogram filling", || {
        let text = metrics(&exp);
        (sample(
            &text,
            "mcp_detail_page_request_duration_seconds_count",
            &detail,
        )
        .unwrap_or(0.0)
            >= 1.0)
            .then_some(text)
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

    std::fs::write(&cfg, config(false)).unwrap();
    let (status, body) = http_post(&format!("{}/-/reload", exp.url));
    assert_eq!(status, 200, "{body}");
    // A render from before the reload may be shared for a few milliseconds.
    let text = wait_for(LIMIT, "a's histograms dropped", || {
        let text = metrics(&exp);
        (!text.contains("mcp_detail_")).then_some(text)
    });
    assert_eq!(sample(&text, "mcp_up", &[("target", "a")]), Some(1.0));
}

/// Polls of every target so far: one tools listing per poll.
fn listings_done(text: &str, targets: usize) -> f64 {
    (1..=targets)
        .map(|i| {
            sample(
                text,
                "mcp_listings_total",
                &[("target", &format!("t-{i:04}")), ("kind", "tools")],
            )
            .unwrap_or(0.0)
        })
        .sum()
}

/// Item 13: ten scrapers in tight loops against a 200-target exporter must
/// not starve its schedule. Before the fix every scrape rendered the whole
/// registry on the runtime's worker threads, so polls waited behind renders.
/// Now concurrent scrapers share one render made on the blocking pool.
///
/// The machine is shared, so the listings done during scrape storms are
/// compared with those done in equally long quiet spells interleaved with
/// them (both counted from the exporter's own counters), not with a rate.
#[test]
fn concurrent_scrapers_do_not_starve_polling() {
    const TARGETS: usize = 200;
    const SCRAPERS: usize = 10;
    const ROUNDS: usize = 3;
    const SPELL: Duration = Duration::from_secs(10);

    let (sim, _f) = common::scenarios_simulator(&format!(
        "  - {{name: t, count: {TARGETS}, scenario: healthy}}\n"
    ));
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let mut config = "global:\n  schedule: {every: 10s}\n  jitter: 10s\n  concurrency: 32\n  kinds: [tools]\n  invalid_cursor_probe: false\ntargets:\n".to_string();
    for i in 1..=TARGETS {
        config.push_str(&format!(
            "  - name: t-{i:04}\n    url: {}/mcp/t-{i:04}\n",
            sim.url
        ));
    }
    std::fs::write(&cfg, config).unwrap();
    let exp = exporter(&cfg);
    let scrape = |exp: &Proc| {
        let (_, _, body) = get(&exp.url, "/metrics", Some("gzip"));
        listings_done(&gunzip(&body), TARGETS)
    };
    // Every target polled once before counting starts.
    wait_for(LIMIT, "every target polled once", || {
        (scrape(&exp) >= TARGETS as f64).then_some(())
    });

    let storm = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let scrapes = Arc::new(AtomicU64::new(0));
    let scrapers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let url = exp.url.clone();
            let (storm, stop, scrapes) = (storm.clone(), stop.clone(), scrapes.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if !storm.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    let (status, _, _) = get(&url, "/metrics", Some("gzip"));
                    assert_eq!(status, 200);
                    scrapes.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let (mut quiet, mut stormy) = (0.0, 0.0);
    for _ in 0..ROUNDS {
        let start = scrape(&exp);
        std::thread::sleep(SPELL);
        let middle = scrape(&exp);
        storm.store(true, Ordering::Relaxed);
        std::thread::sleep(SPELL);
        storm.store(false, Ordering::Relaxed);
        let end = scrape(&exp);
        quiet += middle - start;
        stormy += end - middle;
    }
    stop.store(true, Ordering::Relaxed);
    for s in scrapers {
        s.join().expect("scraper");
    }
    let scrapes = scrapes.load(Ordering::Relaxed);
    eprintln!("{stormy} listings during scrape storms, {quiet} in quiet spells, {scrapes} scrapes");
    // The scrapers really hammered ...
    assert!(scrapes >= 100, "only {scrapes} scrapes");
    // ... and the schedule held: before the fix storms got a fraction.
    assert!(
        stormy >= 0.7 * quiet,
        "{stormy} listings during scrape storms against {quiet} in quiet spells ({scrapes} scrapes)"
    );
}
