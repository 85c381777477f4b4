//! `/metrics` and `/probe` as HTTP endpoints of a real exporter process:
//! gzip when the scraper asks for it, and concurrent scrapers that cannot
//! starve scheduled polling (docs/security.md attack list, item 13).
//! Counts, never timings.

use mcp_testkit::exporter::Fleet;
use mcp_testkit::http::{raw_get, RawResponse};
use mcp_testkit::prometheus::{promtool_check_metrics, PROMETHEUS_ACCEPT};
use mcp_testkit::{sample, scenarios_simulator, Exporter};
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// One HTTP/1.0 GET of the exporter (so the answer is never chunked), the
/// body never decoded.
fn get(exp: &Exporter, path: &str, accept_encoding: Option<&str>) -> RawResponse {
    get_with(
        exp,
        path,
        &accept_encoding
            .map(|enc| ("Accept-Encoding", enc))
            .into_iter()
            .collect::<Vec<_>>(),
    )
}

fn get_with(exp: &Exporter, path: &str, headers: &[(&str, &str)]) -> RawResponse {
    let address = exp.url().trim_start_matches("http://");
    raw_get(address, path, headers).unwrap_or_else(|e| panic!("GET {path}: {e}"))
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
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    http:\n      url: {}/mcp/healthy\n",
        sim.url
    ));
    let polled = [("target", "healthy")];
    let plain = exp.wait(LIMIT, "a first poll", || {
        let r = get(&exp, "/metrics", None);
        let text = r.text();
        (r.status == 200 && sample(&text, "mcp_polls_total", &polled) == Some(1.0)).then_some(text)
    });

    // What Prometheus sends.
    let r = get_with(
        &exp,
        "/metrics",
        &[
            ("Accept-Encoding", "gzip, deflate;q=0.5, identity;q=0.1"),
            ("Accept", PROMETHEUS_ACCEPT),
        ],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert!(r
        .header("vary")
        .is_some_and(|v| v.eq_ignore_ascii_case("accept, accept-encoding")));
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
        assert_eq!(sample(&r.text(), "mcp_polls_total", &polled), Some(1.0));
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
    assert_eq!(sample(&r.text(), "mcp_up", &polled), Some(1.0));
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The format follows `Accept` as client_golang's does: OpenMetrics for
/// Prometheus, the text format 0.0.4 for curl, and `promtool check
/// metrics` (the lint exporter pipelines run) reports nothing in the text
/// form of `/metrics` or `/probe`: every family a busy exporter shows, the
/// event series of misbehaving targets, detail histograms, the discovery
/// sources' and the exporter's own.
#[test]
fn the_text_form_passes_promtool_and_prometheus_gets_openmetrics() {
    let (sim, _f) = scenarios_simulator(
        "  - {name: healthy, scenario: healthy}\n  - {name: cycle, scenario: cycle}\n  - {name: shrinking, scenario: shrink}\n  - {name: failing, scenario: rpc-error}\nregistry:\n  decoys: {not-latest: 1, no-remote: 1}\n",
    );
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    http:\n      url: {url}/mcp/healthy\n    metrics: {{detail: true}}\n    expect: {{tools: 5}}\n  - name: cycle\n    http:\n      url: {url}/mcp/cycle\n  - name: shrinking\n    http:\n      url: {url}/mcp/shrinking\n  - name: failing\n    http:\n      url: {url}/mcp/failing\nmodules:\n  sim:\n    allow: [\"{url}/mcp/\"]\n    kinds: [tools]\ndiscovery:\n  - name: sim-registry\n    module: sim\n    registry: {{http: {{url: \"{url}\"}}, refresh_interval: 1s}}\n",
        url = sim.url
    ));
    let every = ["healthy", "cycle", "shrinking", "failing"];
    exp.wait_metrics(
        LIMIT,
        "two polls of every target and a registry walk",
        |text| {
            every
                .iter()
                .all(|t| sample(text, "mcp_polls_total", &[("target", t)]).unwrap_or(0.0) >= 2.0)
                && text.contains("mcp_target_info{")
        },
    );

    // curl and promtool send no Accept (or */*): the text format.
    for headers in [vec![], vec![("Accept", "*/*")]] {
        let r = get_with(&exp, "/metrics", &headers);
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some(TEXT_0_0_4), "{headers:?}");
        let text = r.text();
        assert!(!text.contains("# EOF"), "{text}");
        assert!(text.contains("# TYPE mcp_polls_total counter\n"), "{text}");
        assert!(!text.contains("# UNIT"), "{text}");
        assert!(!text.contains(" # {"), "no exemplars: {text}");
        let lint = promtool_check_metrics(&text).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            lint.success() && lint.output().trim().is_empty(),
            "promtool check metrics on /metrics:\n{}\n{text}",
            lint.describe()
        );
    }
    for probed in [
        "/probe?target=healthy",
        "/probe?target=cycle",
        "/probe?target=failing",
    ] {
        let r = get_with(&exp, probed, &[]);
        assert_eq!(r.header("content-type"), Some(TEXT_0_0_4), "{probed}");
        let lint = promtool_check_metrics(&r.text()).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            lint.success() && lint.output().trim().is_empty(),
            "promtool check metrics on {probed}:\n{}\n{}",
            lint.describe(),
            r.text()
        );
    }

    // Prometheus asks for OpenMetrics first and gets it; so does a scraper
    // that weighs OpenMetrics above the text format.
    for accept in [
        PROMETHEUS_ACCEPT,
        "text/plain;version=0.0.4;q=0.3, application/openmetrics-text;q=0.9",
    ] {
        for path in ["/metrics", "/probe?target=healthy"] {
            let r = get_with(&exp, path, &[("Accept", accept)]);
            assert_eq!(
                r.header("content-type"),
                Some(OPENMETRICS),
                "{path} {accept}"
            );
            let text = r.text();
            assert!(text.ends_with("# EOF\n"), "{text}");
            assert!(text.contains("# TYPE mcp_polls counter\n"), "{text}");
        }
    }
    // A scraper that prefers the text format gets it.
    let r = get_with(
        &exp,
        "/metrics",
        &[(
            "Accept",
            "application/openmetrics-text;q=0.2, text/plain;q=0.8",
        )],
    );
    assert_eq!(r.header("content-type"), Some(TEXT_0_0_4));
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
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - name: a\n    http:\n      url: {url}/mcp/a\n    metrics: {{detail: {detail}}}\n  - name: b\n    http:\n      url: {url}/mcp/b\n",
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

/// One sample of an unlabelled series, which must be there.
fn value(text: &str, name: &str) -> f64 {
    sample(text, name, &[]).unwrap_or_else(|| panic!("no {name} in:\n{text}"))
}

/// The soft `Max open files` limit of process `pid`.
fn max_open_files(pid: u32) -> f64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a Max open files line");
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// The exporter's own cost on a live scrape: the standard `process_*`
/// series agree with what /proc says of the exporter's pid, and
/// `mcp_exporter_metrics_response_bytes` is the size of the render before.
#[test]
fn the_exporter_shows_its_own_process_and_render_cost() {
    let (sim, _f) = scenarios_simulator("  - {name: healthy, scenario: healthy}\n");
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    http:\n      url: {}/mcp/healthy\n",
        sim.url
    ));
    let text = exp.wait_metrics(LIMIT, "a first poll", |text| {
        sample(text, "mcp_polls_total", &[("target", "healthy")]) == Some(1.0)
    });
    let pid = exp.pid();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // SAFETY: sysconf only reads its argument.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let btime: f64 = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = btime + fields[22 - 3].parse::<f64>().unwrap() / ticks;
    let start = value(&text, "process_start_time_seconds");
    assert!((start - started).abs() < 0.02, "{start} vs {started}");
    let resident = value(&text, "process_resident_memory_bytes");
    let virtual_bytes = value(&text, "process_virtual_memory_bytes");
    assert!(
        resident > 1e6 && resident < virtual_bytes,
        "{resident} {virtual_bytes}"
    );
    let cpu = value(&text, "process_cpu_seconds_total");
    let cpu_now =
        (fields[14 - 3].parse::<f64>().unwrap() + fields[15 - 3].parse::<f64>().unwrap()) / ticks;
    assert!(cpu > 0.0 && cpu <= cpu_now, "{cpu} vs {cpu_now} after");
    assert_eq!(value(&text, "process_max_fds"), max_open_files(pid));
    let fds = value(&text, "process_open_fds");
    let fds_now = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as f64;
    assert!(
        fds >= 5.0 && (fds - fds_now).abs() <= 8.0,
        "{fds} vs {fds_now}"
    );
    for name in [
        "process_cpu_seconds_total",
        "process_open_fds",
        "process_resident_memory_bytes",
    ] {
        assert!(
            text.contains(&format!("# HELP {}", name.trim_end_matches("_total"))),
            "{name}"
        );
    }

    // Each fresh render reports the size of its text: the next render
    // carries it (a render shared within its reuse window is the same text).
    exp.wait(
        LIMIT,
        "a render reporting the size of the one before",
        || {
            let before = get_with(&exp, "/metrics", &[]).body.len() as f64;
            std::thread::sleep(Duration::from_millis(50));
            let after = get_with(&exp, "/metrics", &[]).text();
            let seconds = sample(&after, "mcp_exporter_metrics_render_seconds", &[])?;
            assert!(seconds > 0.0, "{after}");
            (sample(&after, "mcp_exporter_metrics_response_bytes", &[]) == Some(before))
                .then_some(())
        },
    );
}
