//! Scrape storms against polling (docs/security.md attack list, item 13):
//! ten scrapers in tight loops against a 200-target exporter, in rounds of
//! a quiet spell and an equally long storm, counting the listings the
//! exporter itself reports done in each. The machine may be shared, so
//! storms are compared with the quiet spells interleaved with them, not
//! with a rate. Exits 1 when storms got less than 70 % of the quiet
//! spells' listings (the old per-request render got about half).
//!
//! Run: `cargo bench --bench scrape_storm` (about a minute; the test suite
//! only checks that polling goes on during a storm, by counting).

use mcp_testkit::exporter::Fleet;
use mcp_testkit::http::raw_get;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TARGETS: usize = 200;
const SCRAPERS: usize = 10;
const ROUNDS: usize = 3;
const SPELL: Duration = Duration::from_secs(10);
const HELD: f64 = 0.7;

/// Listings of every target so far, from one gzipped scrape.
fn listings_done(fleet: &Fleet, address: &str) -> f64 {
    let r = raw_get(address, "/metrics", &[("Accept-Encoding", "gzip")]).expect("a scrape");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_string(&mut text)
        .expect("a gzip body");
    fleet.listings(&text).iter().sum()
}

fn main() {
    let fleet = Fleet::start(TARGETS);
    let exp = &fleet.exporter;
    let address = exp.url().trim_start_matches("http://").to_string();
    exp.wait(Duration::from_secs(120), "every target polled once", || {
        (listings_done(&fleet, &address) >= TARGETS as f64).then_some(())
    });

    let storm = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let scrapes = Arc::new(AtomicU64::new(0));
    let scrapers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let address = address.clone();
            let (storm, stop, scrapes) = (storm.clone(), stop.clone(), scrapes.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if !storm.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    if raw_get(&address, "/metrics", &[("Accept-Encoding", "gzip")]).is_ok() {
                        scrapes.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let (mut quiet, mut stormy) = (0.0, 0.0);
    for _ in 0..ROUNDS {
        let start = listings_done(&fleet, &address);
        std::thread::sleep(SPELL);
        let middle = listings_done(&fleet, &address);
        storm.store(true, Ordering::Relaxed);
        std::thread::sleep(SPELL);
        storm.store(false, Ordering::Relaxed);
        let end = listings_done(&fleet, &address);
        quiet += middle - start;
        stormy += end - middle;
    }
    stop.store(true, Ordering::Relaxed);
    for s in scrapers {
        let _ = s.join();
    }
    let scrapes = scrapes.load(Ordering::Relaxed);
    println!(
        "scrape_storm: {stormy} listings during {ROUNDS} storms of {SPELL:?} ({scrapes} scrapes), {quiet} in equal quiet spells"
    );
    if stormy < HELD * quiet {
        eprintln!("scrape_storm: storms got less than {HELD} of the quiet spells' listings");
        std::process::exit(1);
    }
}
