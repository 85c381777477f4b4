//! The two text formats `/metrics` and `/probe` answer in, chosen per
//! request by the scraper's `Accept` header (docs/metrics.md, "Formats"):
//! OpenMetrics 1.0.0 for scrapers that ask for it (Prometheus does), the
//! Prometheus text format 0.0.4 for everyone else (curl, `promtool check
//! metrics`, older scrapers). Both are rendered from the registry itself, so
//! the two can never disagree on a value.

use prometheus_client::registry::Registry;

/// The Content-Type of OpenMetrics text; prometheus-client sets none.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The Content-Type of the Prometheus text format 0.0.4.
pub const PROMETHEUS_TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A text exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exposition {
    /// OpenMetrics 1.0.0: counters' HELP and TYPE on the family name
    /// (without `_total`), units, exemplars, `# EOF` at the end.
    OpenMetrics,
    /// Prometheus text 0.0.4: HELP and TYPE on the sample name (`_total`
    /// included), no units, no exemplars, no `# EOF`.
    PrometheusText,
}

impl Exposition {
    /// Both formats, e.g. for one cache slot each.
    pub const ALL: [Exposition; 2] = [Exposition::OpenMetrics, Exposition::PrometheusText];

    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Exposition::PrometheusText => PROMETHEUS_TEXT_CONTENT_TYPE,
        }
    }

    /// Position in [`Exposition::ALL`].
    pub fn index(self) -> usize {
        match self {
            Exposition::OpenMetrics => 0,
            Exposition::PrometheusText => 1,
        }
    }

    /// The whole registry in this format, written to `out`.
    pub fn encode_into<W: std::fmt::Write + ?Sized>(
        self,
        mut out: &mut W,
        registry: &Registry,
    ) -> Result<(), std::fmt::Error> {
        match self {
            Exposition::OpenMetrics => {
                prometheus_client::encoding::text::encode(&mut out, registry)
            }
            Exposition::PrometheusText => {
                prometheus_client::encoding::prometheus_text::encode(&mut out, registry)
            }
        }
    }

    /// The whole registry in this format.
    pub fn encode(self, registry: &Registry) -> Result<String, std::fmt::Error> {
        let mut out = String::with_capacity(16 * 1024);
        self.encode_into(&mut out, registry)?;
        Ok(out)
    }
}
