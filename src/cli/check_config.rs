//! `mcp-exporter check-config`: validate a file and say what it would poll.

use super::{print_stderr, print_stdout};
use crate::config;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckConfigArgs {
    #[arg(long = "config.file", default_value = "mcp-exporter.yaml")]
    pub config_file: PathBuf,
}

pub fn main(args: CheckConfigArgs) -> ExitCode {
    match config::load_file(&args.config_file) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                print_stderr(&format!("{w}\n"));
            }
            // Writing to a String cannot fail.
            let mut out = String::new();
            let _ = writeln!(
                out,
                "{}: OK, {} target(s), {} module(s), {} discovery source(s), checksum {}",
                args.config_file.display(),
                loaded.config.targets.len(),
                loaded.config.modules.len(),
                loaded.config.discovery.len(),
                &loaded.checksum[..12.min(loaded.checksum.len())]
            );
            for t in &loaded.config.targets {
                let _ = writeln!(
                    out,
                    "  {}: {} · {}{}",
                    t.name,
                    crate::poller::service::describe_endpoint(t),
                    t.schedule.describe(),
                    if t.conformance.enabled {
                        format!(
                            " · conformance every {}",
                            humantime::format_duration(t.conformance.every)
                        )
                    } else {
                        String::new()
                    }
                );
            }
            for s in &loaded.config.discovery {
                let _ = writeln!(
                    out,
                    "  source {}: {} · module {} · refresh every {} · at most {} target(s) · {}",
                    s.name,
                    s.kind.label(),
                    s.module,
                    humantime::format_duration(s.refresh_interval),
                    s.max_targets,
                    s.schedule.describe()
                );
            }
            print_stdout(&out);
            ExitCode::SUCCESS
        }
        Err(e) => {
            print_stderr(&format!("{e}\n"));
            ExitCode::from(1)
        }
    }
}
