//! One `/metrics` render shared by every scraper that asks at about the
//! same time, so scrapes cannot starve polling (hundreds of concurrent
//! scrapers cost one render, one gzip and one shared buffer).
//!
//! - Single flight: one render at a time, behind an async lock; requests
//!   that arrive meanwhile wait for it and share its bytes.
//! - A render is reused by requests arriving within four times its own
//!   duration after it started, so rendering takes at most about a fifth
//!   of one core however often it is asked for, and a small registry
//!   (fast render) is re-rendered for nearly every scrape.
//! - One cache slot per exposition format (OpenMetrics, Prometheus text):
//!   at most one encode per format run at a time, whoever scrapes. Every
//!   render is compressed on a second thread while it is encoded, so
//!   compression adds little to its time, and only the gzip is kept — a
//!   tenth of the text, which is never held whole (~54 MB at 10,000
//!   targets). A request that does not take gzip (Prometheus always does)
//!   gets the text inflated piece by piece while it is sent
//!   ([`Scrape::inflated`]).
//! - A render is let go when its reuse window ends, and before a new one
//!   starts: a slot never holds two, nor one nobody can reuse (at 10,000
//!   targets each text is ~54 MB; a plain `curl` once must not keep one).
//! - Encoding and compression run on the blocking pool, never on the
//!   runtime's workers that drive polls; the registry's family locks are
//!   read locks, taken one family at a time.
//! - Each fresh render sets `mcp_exporter_metrics_render_seconds` and
//!   `mcp_exporter_metrics_response_bytes` ([`RenderMetrics`]).
//! - The bytes are reference-counted: every response holds the same
//!   buffer, so memory per scrape is a handle, not a copy.

use super::compression;
use crate::telemetry::metrics::{Exposition, RenderMetrics};
use bytes::Bytes;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// A render is reused for this many times its own duration.
const REUSE_FACTOR: u32 = 4;
/// Reuse never stretches past this, however slow the render was.
const MAX_REUSE: Duration = Duration::from_secs(5);

/// Why a scrape got no body.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("encoding metrics failed")]
    Encode,
    #[error("the render task did not finish")]
    Task,
}

/// One render in one format, gzipped.
#[derive(Debug)]
struct Rendered {
    started: Instant,
    took: Duration,
    /// The text's length.
    text_bytes: usize,
    gzip: Bytes,
}

/// What a scrape gets: a render's gzip, sent as is to a request that takes
/// gzip, or inflated while it is sent.
#[derive(Debug, Clone)]
pub struct Scrape {
    pub gzip: Bytes,
    /// The text's length (the plain answer's `Content-Length`).
    pub text_bytes: usize,
}

/// Text handed to the connection at a time when inflating.
const INFLATE_PIECE_BYTES: usize = 64 * 1024;

impl Scrape {
    /// The text, inflated a piece at a time as the connection takes it:
    /// never whole in memory. Inflating runs on the runtime's worker in
    /// pieces of [`INFLATE_PIECE_BYTES`] (tens of microseconds each), not
    /// as one long block as encoding would.
    pub fn inflated(self) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Send {
        use bytes::Buf;
        let decoder = flate2::read::GzDecoder::new(self.gzip.reader());
        futures_util::stream::unfold(Some(decoder), |state| async move {
            let mut decoder = state?;
            let mut piece = vec![0u8; INFLATE_PIECE_BYTES];
            match fill(&mut decoder, &mut piece) {
                Ok(0) => None,
                Ok(n) => {
                    piece.truncate(n);
                    Some((Ok(Bytes::from(piece)), Some(decoder)))
                }
                Err(e) => Some((Err(e), None)),
            }
        })
    }
}

/// Read until `buf` is full or the end: a decoder may return less.
fn fill(reader: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Rendered {
    /// How long after it started the render is reused.
    fn window(&self) -> Duration {
        (self.took * REUSE_FACTOR).min(MAX_REUSE)
    }

    /// Fresh for a request that arrived at `arrived`.
    fn fresh_for(&self, arrived: Instant) -> bool {
        arrived <= self.started + self.window()
    }
}

/// One format's slot: the render while it may be reused, and the size of
/// the last one (the next render's buffer is sized from it).
#[derive(Debug, Default)]
struct Slot {
    render: Option<Arc<Rendered>>,
    gzip_bytes: usize,
}

#[derive(Debug)]
pub struct ScrapeCache {
    registry: Arc<Registry>,
    metrics: RenderMetrics,
    /// Each format's slot, by [`Exposition::index`].
    last: [Arc<Mutex<Slot>>; Exposition::ALL.len()],
}

impl ScrapeCache {
    pub fn new(registry: Arc<Registry>, metrics: RenderMetrics) -> ScrapeCache {
        ScrapeCache {
            registry,
            metrics,
            last: Default::default(),
        }
    }

    /// The registry's text in `format`, gzipped: rendered for this
    /// request or shared with requests of the same moment.
    pub async fn get(&self, format: Exposition) -> Result<Scrape, RenderError> {
        let rendered = self.rendered(format, Instant::now()).await?;
        Ok(Scrape {
            gzip: rendered.gzip.clone(),
            text_bytes: rendered.text_bytes,
        })
    }

    /// A render fresh for a request that arrived at `arrived`: the last one,
    /// or a new one.
    async fn rendered(
        &self,
        format: Exposition,
        arrived: Instant,
    ) -> Result<Arc<Rendered>, RenderError> {
        let slot = &self.last[format.index()];
        let mut last = slot.lock().await;
        if let Some(r) = last.render.as_ref().filter(|r| r.fresh_for(arrived)) {
            return Ok(r.clone());
        }
        // The stale render goes first; room for the last size and a little
        // growth, so the buffer is allocated once.
        last.render = None;
        let gzip_capacity = (last.gzip_bytes + last.gzip_bytes / 8).max(8 * 1024);
        let registry = self.registry.clone();
        let started = Instant::now();
        let (text_bytes, gzip) = tokio::task::spawn_blocking(move || {
            compression::gzip_while_writing(gzip_capacity, |out| format.encode_into(out, &registry))
        })
        .await
        .map_err(|_| RenderError::Task)?
        .map_err(|_| RenderError::Encode)?;
        let rendered = Arc::new(Rendered {
            started,
            took: started.elapsed(),
            text_bytes,
            gzip,
        });
        self.metrics.rendered(rendered.took, text_bytes);
        last.gzip_bytes = rendered.gzip.len();
        last.render = Some(rendered.clone());
        forget_when_stale(slot.clone(), &rendered);
        Ok(rendered)
    }
}

/// Empty `slot` once `rendered`'s reuse window is over, unless a newer
/// render took its place meanwhile.
fn forget_when_stale(slot: Arc<Mutex<Slot>>, rendered: &Arc<Rendered>) {
    let window = rendered.window();
    let rendered = Arc::downgrade(rendered);
    tokio::spawn(async move {
        tokio::time::sleep(window).await;
        let mut last = slot.lock().await;
        if last
            .render
            .as_ref()
            .is_some_and(|r| std::ptr::eq(Arc::as_ptr(r), rendered.as_ptr()))
        {
            last.render = None;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn registry_with_gauge() -> Registry {
        let mut registry = Registry::default();
        let g: prometheus_client::metrics::gauge::Gauge = Default::default();
        registry.register("g", "a gauge", g.clone());
        registry
    }

    async fn text(scrape: Scrape) -> String {
        let pieces: Vec<Bytes> = scrape
            .inflated()
            .map(|piece| piece.unwrap())
            .collect()
            .await;
        String::from_utf8(pieces.concat()).unwrap()
    }

    #[test]
    fn a_render_is_reused_for_four_times_its_duration_at_most_five_seconds() {
        let started = Instant::now();
        let r = Rendered {
            started,
            took: Duration::from_millis(100),
            text_bytes: 0,
            gzip: Bytes::new(),
        };
        assert!(r.fresh_for(started + Duration::from_millis(400)));
        assert!(!r.fresh_for(started + Duration::from_millis(401)));
        let slow = Rendered {
            took: Duration::from_secs(60),
            ..r
        };
        assert!(!slow.fresh_for(started + Duration::from_millis(5001)));
    }

    #[tokio::test]
    async fn a_render_is_kept_gzipped_and_inflated_while_sent() {
        let cache = ScrapeCache::new(Arc::new(registry_with_gauge()), RenderMetrics::default());
        let scrape = cache.get(Exposition::OpenMetrics).await.unwrap();
        assert_eq!(&scrape.gzip[..2], &[0x1f, 0x8b], "gzip magic");
        let text = text(scrape.clone()).await;
        assert_eq!(text.len(), scrape.text_bytes);
        assert!(
            text.contains("# TYPE g gauge\n") && text.ends_with("# EOF\n"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_large_text_is_inflated_in_pieces() {
        let line = "mcp_up{target=\"a\"} 1\n";
        let (text_bytes, gzip) = compression::gzip_while_writing(16, |w| {
            for _ in 0..20_000 {
                w.write_str(line)?;
            }
            Ok(())
        })
        .unwrap();
        let pieces: Vec<Bytes> = Scrape { gzip, text_bytes }
            .inflated()
            .map(|piece| piece.unwrap())
            .collect()
            .await;
        assert!(pieces.len() > 1 && pieces.iter().all(|p| p.len() <= INFLATE_PIECE_BYTES));
        assert_eq!(pieces.concat(), line.repeat(20_000).as_bytes());
    }

    #[tokio::test(start_paused = true)]
    async fn a_render_is_let_go_when_nobody_can_reuse_it() {
        let cache = ScrapeCache::new(Arc::new(registry_with_gauge()), RenderMetrics::default());
        let scrape = cache.get(Exposition::PrometheusText).await.unwrap();
        let slot = &cache.last[Exposition::PrometheusText.index()];
        assert!(slot.lock().await.render.is_some(), "kept for reuse");
        // Past the longest reuse window (the clock is paused: no waiting).
        tokio::time::sleep(MAX_REUSE + Duration::from_secs(1)).await;
        let last = slot.lock().await;
        assert!(last.render.is_none(), "let go after its window");
        assert_eq!(
            last.gzip_bytes,
            scrape.gzip.len(),
            "its size kept for the next"
        );
    }

    #[tokio::test]
    async fn each_format_has_its_own_render() {
        let mut registry = Registry::default();
        let c: prometheus_client::metrics::counter::Counter = Default::default();
        registry.register("c", "a counter", c.clone());
        let mut own = Registry::default();
        let metrics = RenderMetrics::register(&mut own);
        let cache = ScrapeCache::new(Arc::new(registry), metrics);
        let open = text(cache.get(Exposition::OpenMetrics).await.unwrap()).await;
        let plain = text(cache.get(Exposition::PrometheusText).await.unwrap()).await;
        assert!(open.contains("# TYPE c counter\n"));
        assert!(plain.contains("# TYPE c_total counter\n"));
        assert!(!plain.contains("# EOF"));
        let own = Exposition::PrometheusText.encode(&own).unwrap();
        assert!(
            own.contains(&format!(
                "mcp_exporter_metrics_response_bytes {}\n",
                plain.len()
            )),
            "{own}"
        );
    }
}
