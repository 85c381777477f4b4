//! Subcommands: argument types and the code behind each.

pub mod check;
pub mod check_client;
pub mod check_config;
pub mod discover;
pub mod probe;
pub mod serve;
pub mod simulate_client;
pub mod tap;

/// What `mcp-exporter` without arguments prints when there is no
/// `mcp-exporter.yaml` to serve.
pub const FIRST_STEPS: &str = "\
mcp-exporter: no configuration to serve (no mcp-exporter.yaml in this folder).

  mcp-exporter --config.file FILE   poll FILE's targets; serve /metrics and the status page
  mcp-exporter check-config -c FILE check a configuration file
  mcp-exporter probe --url URL      list one MCP server now and show every page
  mcp-exporter tap --listen ADDR --upstream URL
                                    see which clients read the whole catalogue
  mcp-exporter --help               every command and flag
  scripts/demo                      (in the source tree) the exporter on simulated servers

Configuration keys: docs/configuration.md; an example: config/example.yaml.
";

/// Parse `30s`, `1m30s`, `500ms`, at most `config::MAX_DURATION` (a
/// flag past it is a usage error, exit 2).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::config::parse_duration(s)
}

/// A duration flag: parsed as [`parse_duration`] parses it, shown in
/// `--help` as the configuration writes it, so a flag's default can be
/// the configuration's own constant (`default_value_t`), declared once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagDuration(pub std::time::Duration);

impl std::fmt::Display for FlagDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl std::str::FromStr for FlagDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_duration(s).map(FlagDuration)
    }
}

/// A byte-size flag: parsed as the configuration parses sizes (`16MiB`,
/// `65536`), shown in `--help` in the largest binary unit that divides it,
/// so a flag's default can be a constant declared once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagBytes(pub u64);

impl FlagBytes {
    /// The size as a count in memory (saturated where `usize` is narrower).
    pub fn usize(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for FlagBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        match [(30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|&(shift, _)| n != 0 && n % (1u64 << shift) == 0)
        {
            Some((shift, unit)) => write!(f, "{}{unit}", n >> shift),
            None => write!(f, "{n}"),
        }
    }
}

impl std::str::FromStr for FlagBytes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::config::parse_byte_size(s).map(FlagBytes)
    }
}

/// Write `text` to stdout. A reader that went away (`... | head -2`) is the
/// reader's choice, not a failure: the rest is dropped, never a panic
/// (`println!` panics on a closed pipe).
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// [`print_stdout`] for stderr (`eprintln!` panics on a closed pipe too).
pub fn print_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
