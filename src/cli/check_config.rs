//! `mcp-exporter check-config`: validate a file and say what it would poll.

use crate::config;
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
                eprintln!("{w}");
            }
            println!(
                "{}: OK, {} target(s), {} module(s), checksum {}",
                args.config_file.display(),
                loaded.config.targets.len(),
                loaded.config.modules.len(),
                &loaded.checksum[..12.min(loaded.checksum.len())]
            );
            for t in &loaded.config.targets {
                println!(
                    "  {}: {} · {}",
                    t.name,
                    crate::poller::service::describe_endpoint(t),
                    t.schedule.describe()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
