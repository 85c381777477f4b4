//! Which polls are traced. Every poll is a root span, so the parent-based
//! samplers behave like their root variants. The ratio decision is a pure
//! function of the trace id (as in the OTel `TraceIdRatioBased` sampler), so
//! a server that samples by ratio on the same id agrees with us.

use super::error::TracingError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampler {
    AlwaysOn,
    AlwaysOff,
    /// Fraction of traces kept, 0.0 ..= 1.0.
    Ratio(f64),
}

impl Sampler {
    pub fn ratio(ratio: f64, source: &'static str) -> Result<Sampler, TracingError> {
        if !(0.0..=1.0).contains(&ratio) {
            return Err(TracingError::InvalidNumber {
                setting: source,
                value: ratio.to_string(),
            });
        }
        Ok(Sampler::Ratio(ratio))
    }

    /// `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`.
    pub fn from_env(name: Option<&str>, arg: Option<&str>) -> Result<Sampler, TracingError> {
        let Some(name) = name else {
            return Ok(Sampler::AlwaysOn);
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "always_on" | "parentbased_always_on" => Ok(Sampler::AlwaysOn),
            "always_off" | "parentbased_always_off" => Ok(Sampler::AlwaysOff),
            "traceidratio" | "parentbased_traceidratio" => match arg {
                // The spec's default ratio when the argument is missing.
                None => Ok(Sampler::Ratio(1.0)),
                Some(a) => {
                    let ratio =
                        a.trim()
                            .parse::<f64>()
                            .map_err(|_| TracingError::InvalidNumber {
                                setting: "OTEL_TRACES_SAMPLER_ARG",
                                value: a.to_string(),
                            })?;
                    Sampler::ratio(ratio, "OTEL_TRACES_SAMPLER_ARG")
                }
            },
            other => Err(TracingError::UnsupportedSampler(other.to_string())),
        }
    }

    /// Whether the trace with this id is recorded and exported.
    pub fn samples(&self, trace_id: u128) -> bool {
        match *self {
            Sampler::AlwaysOn => true,
            Sampler::AlwaysOff => false,
            Sampler::Ratio(r) if r >= 1.0 => true,
            Sampler::Ratio(r) if r <= 0.0 => false,
            Sampler::Ratio(r) => {
                // Low 64 bits of the id, shifted to 63 bits so the bound
                // `r * 2^63` fits without overflow.
                let low = (trace_id as u64) >> 1;
                let bound = (r * (1u64 << 63) as f64) as u64;
                low < bound
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names() {
        assert_eq!(Sampler::from_env(None, None).unwrap(), Sampler::AlwaysOn);
        assert_eq!(
            Sampler::from_env(Some("always_off"), None).unwrap(),
            Sampler::AlwaysOff
        );
        assert_eq!(
            Sampler::from_env(Some("traceidratio"), Some("0.1")).unwrap(),
            Sampler::Ratio(0.1)
        );
        assert!(Sampler::from_env(Some("traceidratio"), Some("2")).is_err());
        assert!(Sampler::from_env(Some("traceidratio"), Some("x")).is_err());
        assert!(Sampler::from_env(Some("jaeger_remote"), None).is_err());
    }

    #[test]
    fn ratio_keeps_about_the_right_share() {
        let s = Sampler::Ratio(0.25);
        // Spread ids evenly over the low 64 bits.
        let step = u64::MAX / 10_000;
        let kept = (0..10_000u64)
            .filter(|i| s.samples((i * step) as u128))
            .count();
        assert!((2_400..=2_600).contains(&kept), "{kept}");
        assert!(!Sampler::Ratio(0.0).samples(0));
        assert!(Sampler::Ratio(1.0).samples(u128::MAX));
    }
}
