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
//! - One cache slot per exposition format (OpenMetrics, Prometheus text),
//!   each with its gzip: at most one encode per format and one compression
//!   per encode run at a time, whoever scrapes. A render made for a gzip
//!   request (Prometheus always asks) is compressed on a second thread while
//!   it is encoded, so compression adds little to the render's time, and
//!   only the gzip is kept (a tenth of the text); a plain request sharing it
//!   gets it decompressed. A render made for a plain request is compressed
//!   on first demand.
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
use tokio::sync::{Mutex, OnceCell};

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

/// One render in one format: its text, its gzip, or both — whichever was
/// asked for, the other made on first demand (at least one is set).
#[derive(Debug)]
struct Rendered {
    started: Instant,
    took: Duration,
    /// The text's length, whether or not the text is kept.
    text_bytes: usize,
    plain: OnceCell<Bytes>,
    gzip: OnceCell<Bytes>,
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

/// One format's slot: the render while it may be reused, and the sizes of
/// the last one (the next render's buffers are sized from them).
#[derive(Debug, Default)]
struct Slot {
    render: Option<Arc<Rendered>>,
    text_bytes: usize,
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

    /// The registry's text in `format` (gzipped if `gzip`), rendered for
    /// this request or shared with requests of the same moment.
    pub async fn get(&self, format: Exposition, gzip: bool) -> Result<Bytes, RenderError> {
        let rendered = self.rendered(format, gzip, Instant::now()).await?;
        let (took, text_bytes) = (rendered.took, rendered.text_bytes);
        if gzip {
            // A render made for a plain request: its gzip on first demand.
            let packed = rendered
                .gzip
                .get_or_try_init(|| async {
                    let plain = rendered.plain.get().cloned().ok_or(RenderError::Task)?;
                    let started = Instant::now();
                    let packed = tokio::task::spawn_blocking(move || compression::gzip(&plain))
                        .await
                        .map_err(|_| RenderError::Task)?;
                    self.metrics.rendered(took + started.elapsed(), text_bytes);
                    Ok(packed)
                })
                .await?;
            return Ok(packed.clone());
        }
        // A render made for a gzip request: its text on first demand.
        let plain = rendered
            .plain
            .get_or_try_init(|| async {
                let packed = rendered.gzip.get().cloned().ok_or(RenderError::Task)?;
                tokio::task::spawn_blocking(move || compression::gunzip(&packed, text_bytes))
                    .await
                    .map_err(|_| RenderError::Task)?
                    .map_err(|_| RenderError::Encode)
            })
            .await?;
        Ok(plain.clone())
    }

    /// A render fresh for a request that arrived at `arrived`: the last one,
    /// or a new one (compressed while it is encoded when `gzip`).
    async fn rendered(
        &self,
        format: Exposition,
        gzip: bool,
        arrived: Instant,
    ) -> Result<Arc<Rendered>, RenderError> {
        let slot = &self.last[format.index()];
        let mut last = slot.lock().await;
        if let Some(r) = last.render.as_ref().filter(|r| r.fresh_for(arrived)) {
            return Ok(r.clone());
        }
        // The stale render goes first; room for the last size and a little
        // growth, so each buffer is allocated once.
        last.render = None;
        let text_capacity = (last.text_bytes + last.text_bytes / 8).max(64 * 1024);
        let gzip_capacity = (last.gzip_bytes + last.gzip_bytes / 8).max(8 * 1024);
        let registry = self.registry.clone();
        let started = Instant::now();
        let (text_bytes, plain, packed) = tokio::task::spawn_blocking(move || {
            if gzip {
                compression::gzip_while_writing(gzip_capacity, |out| {
                    format.encode_into(out, &registry)
                })
                .map(|(len, packed)| (len, None, Some(packed)))
            } else {
                let mut out = String::with_capacity(text_capacity);
                format
                    .encode_into(&mut out, &registry)
                    .map(|()| (out.len(), Some(Bytes::from(out)), None))
            }
        })
        .await
        .map_err(|_| RenderError::Task)?
        .map_err(|_| RenderError::Encode)?;
        let rendered = Arc::new(Rendered {
            started,
            took: started.elapsed(),
            text_bytes,
            plain: OnceCell::new_with(plain),
            gzip: OnceCell::new_with(packed),
        });
        self.metrics.rendered(rendered.took, text_bytes);
        last.text_bytes = text_bytes;
        last.gzip_bytes = rendered.gzip.get().map_or(text_bytes / 8, Bytes::len);
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

    #[test]
    fn a_render_is_reused_for_four_times_its_duration_at_most_five_seconds() {
        let started = Instant::now();
        let r = Rendered {
            started,
            took: Duration::from_millis(100),
            text_bytes: 0,
            plain: OnceCell::new_with(Some(Bytes::new())),
            gzip: OnceCell::new(),
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
    async fn concurrent_scrapers_share_one_buffer() {
        let mut registry = Registry::default();
        let g: prometheus_client::metrics::gauge::Gauge = Default::default();
        registry.register("g", "a gauge", g.clone());
        let cache = Arc::new(ScrapeCache::new(
            Arc::new(registry),
            RenderMetrics::default(),
        ));
        let a = cache.get(Exposition::OpenMetrics, false).await.unwrap();
        assert!(String::from_utf8_lossy(&a).ends_with("# EOF\n"));
        let zipped = cache.get(Exposition::OpenMetrics, true).await.unwrap();
        assert_eq!(&zipped[..2], &[0x1f, 0x8b], "gzip magic");
    }

    #[tokio::test]
    async fn a_render_made_for_gzip_keeps_only_its_gzip_and_serves_plain_from_it() {
        let mut registry = Registry::default();
        let g: prometheus_client::metrics::gauge::Gauge = Default::default();
        registry.register("g", "a gauge", g.clone());
        let cache = ScrapeCache::new(Arc::new(registry), RenderMetrics::default());
        let zipped = cache.get(Exposition::OpenMetrics, true).await.unwrap();
        {
            let mut last = cache.last[Exposition::OpenMetrics.index()].lock().await;
            let r = last.render.take().unwrap();
            assert!(r.plain.get().is_none(), "the text is not kept");
            assert_eq!(r.gzip.get(), Some(&zipped));
            // Fresh for the next request whatever the machine's speed.
            last.render = Some(Arc::new(Rendered {
                started: Instant::now(),
                took: Duration::from_secs(60),
                text_bytes: r.text_bytes,
                plain: OnceCell::new(),
                gzip: OnceCell::new_with(Some(zipped.clone())),
            }));
        }
        let plain = cache.get(Exposition::OpenMetrics, false).await.unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut text)
            .unwrap();
        assert_eq!(plain, text.as_bytes());
        assert!(
            text.contains("# TYPE g gauge\n") && text.ends_with("# EOF\n"),
            "{text}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_render_is_let_go_when_nobody_can_reuse_it() {
        let mut registry = Registry::default();
        let g: prometheus_client::metrics::gauge::Gauge = Default::default();
        registry.register("g", "a gauge", g.clone());
        let cache = ScrapeCache::new(Arc::new(registry), RenderMetrics::default());
        let text = cache.get(Exposition::PrometheusText, false).await.unwrap();
        let slot = &cache.last[Exposition::PrometheusText.index()];
        assert!(slot.lock().await.render.is_some(), "kept for reuse");
        // Past the longest reuse window (the clock is paused: no waiting).
        tokio::time::sleep(MAX_REUSE + Duration::from_secs(1)).await;
        let last = slot.lock().await;
        assert!(last.render.is_none(), "let go after its window");
        assert_eq!(last.text_bytes, text.len(), "its size kept for the next");
    }

    #[tokio::test]
    async fn each_format_has_its_own_render() {
        let mut registry = Registry::default();
        let c: prometheus_client::metrics::counter::Counter = Default::default();
        registry.register("c", "a counter", c.clone());
        let mut own = Registry::default();
        let metrics = RenderMetrics::register(&mut own);
        let cache = ScrapeCache::new(Arc::new(registry), metrics);
        let open = cache.get(Exposition::OpenMetrics, false).await.unwrap();
        let text = cache.get(Exposition::PrometheusText, false).await.unwrap();
        assert!(String::from_utf8_lossy(&open).contains("# TYPE c counter\n"));
        assert!(String::from_utf8_lossy(&text).contains("# TYPE c_total counter\n"));
        assert!(!String::from_utf8_lossy(&text).contains("# EOF"));
        let own = Exposition::PrometheusText.encode(&own).unwrap();
        assert!(
            own.contains(&format!(
                "mcp_exporter_metrics_response_bytes {}\n",
                text.len()
            )),
            "{own}"
        );
    }
}
