//! The exporter process's own cost as every Prometheus exporter shows it
//! (`process_*`, the names and meanings of client_golang's process
//! collector), read from /proc at each scrape. Where /proc cannot be read
//! (not Linux, a hardened mount) the affected series are left out rather
//! than reported as 0.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

/// Registers the `process_*` families, read at each scrape.
pub fn register_process_metrics(registry: &mut Registry) {
    registry.register_collector(Box::new(ProcessCollector));
}

#[derive(Debug)]
struct ProcessCollector;

/// What one read of /proc/self/stat says (see proc(5)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProcessStat {
    /// User plus system CPU time, in clock ticks.
    pub cpu_ticks: u64,
    /// Start time after boot, in clock ticks.
    pub start_ticks: u64,
    pub virtual_bytes: u64,
    /// Resident set size, in pages.
    pub resident_pages: u64,
}

/// Parse /proc/self/stat. The command name (field 2) is in parentheses and
/// may hold spaces or parentheses itself, so fields are counted from the
/// last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<ProcessStat> {
    let after = &text[text.rfind(')')? + 1..];
    // Fields from 3 (state) on; field N is at index N - 3.
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(ProcessStat {
        cpu_ticks: field(14)?.saturating_add(field(15)?),
        start_ticks: field(22)?,
        virtual_bytes: field(23)?,
        resident_pages: field(24)?,
    })
}

/// The boot time in Unix seconds, from the `btime` line of /proc/stat.
pub(crate) fn parse_boot_time(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf(3) only reads its argument.
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v).ok().filter(|&v| v > 0)
}

/// The soft limit on open files.
fn max_fds() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the struct we pass.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    ok.then_some(limit.rlim_cur)
}

fn open_fds() -> Option<u64> {
    let entries = std::fs::read_dir("/proc/self/fd").ok()?;
    // The directory's own descriptor is among them, as client_golang counts.
    Some(entries.count() as u64)
}

/// Ticks to seconds; both are far below 2^53 in practice.
fn seconds(ticks: u64, per_second: u64) -> f64 {
    ticks as f64 / per_second as f64
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let g = ConstGauge::new(value);
    let metric = encoder.encode_descriptor(name, help, unit, g.metric_type())?;
    g.encode(metric)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stat = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|t| parse_stat(&t));
        let ticks = sysconf(libc::_SC_CLK_TCK);
        let page = sysconf(libc::_SC_PAGESIZE);
        if let (Some(stat), Some(ticks)) = (stat, ticks) {
            let cpu = ConstCounter::new(seconds(stat.cpu_ticks, ticks));
            let metric = encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                cpu.metric_type(),
            )?;
            cpu.encode(metric)?;
        }
        if let Some(stat) = stat {
            gauge(
                &mut encoder,
                "process_virtual_memory",
                "Virtual memory size in bytes",
                Some(&Unit::Bytes),
                stat.virtual_bytes as f64,
            )?;
        }
        if let (Some(stat), Some(page)) = (stat, page) {
            gauge(
                &mut encoder,
                "process_resident_memory",
                "Resident memory size in bytes",
                Some(&Unit::Bytes),
                stat.resident_pages.saturating_mul(page) as f64,
            )?;
        }
        let boot = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_boot_time(&t));
        if let (Some(stat), Some(ticks), Some(boot)) = (stat, ticks, boot) {
            gauge(
                &mut encoder,
                "process_start_time",
                "Start time of the process since unix epoch in seconds",
                Some(&Unit::Seconds),
                boot as f64 + seconds(stat.start_ticks, ticks),
            )?;
        }
        if let Some(n) = open_fds() {
            gauge(
                &mut encoder,
                "process_open_fds",
                "Number of open file descriptors",
                None,
                n as f64,
            )?;
        }
        if let Some(n) = max_fds() {
            gauge(
                &mut encoder,
                "process_max_fds",
                "Maximum number of open file descriptors",
                None,
                n as f64,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        // A command name with a space and a parenthesis of its own.
        let line = "4242 (mcp (exp) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 \
                    150 50 0 0 20 0 9 0 123456 987654321 2500 18446744073709551615 \
                    1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(
            parse_stat(line),
            Some(ProcessStat {
                cpu_ticks: 200,
                start_ticks: 123456,
                virtual_bytes: 987654321,
                resident_pages: 2500,
            })
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }

    #[test]
    fn boot_time_comes_from_btime() {
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            Some(1_700_000_000)
        );
        assert_eq!(parse_boot_time("cpu 1\n"), None);
    }

    #[test]
    fn every_family_is_read_from_this_process() {
        let mut registry = Registry::default();
        register_process_metrics(&mut registry);
        let text = super::super::encode(&registry).unwrap();
        for name in [
            "process_cpu_seconds_total ",
            "process_virtual_memory_bytes ",
            "process_resident_memory_bytes ",
            "process_start_time_seconds ",
            "process_open_fds ",
            "process_max_fds ",
        ] {
            let value: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}in\n{text}"));
            assert!(value >= 0.0, "{name}{value}");
            if name != "process_cpu_seconds_total " {
                assert!(value > 0.0, "{name}{value}");
            }
        }
    }
}
