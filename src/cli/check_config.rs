//! `mcp-exporter check-config`: validate a file and say what it would poll.

use super::{print_stderr, print_stdout};
use crate::config::{self, Config, EndpointConfig, HttpEndpoint, StdioCommand};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckConfigArgs {
    #[arg(short = 'c', long = "config.file", default_value = "mcp-exporter.yaml")]
    pub config_file: PathBuf,
}

pub fn main(args: CheckConfigArgs) -> ExitCode {
    match config::load_file(&args.config_file) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                print_stderr(&format!("{w}\n"));
            }
            let origin = args.config_file.display().to_string();
            for w in reachability_warnings(&loaded.config) {
                print_stderr(&format!("{origin}: warning: {w}\n"));
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
                    crate::scheduler::service::describe_endpoint(t),
                    t.settings.schedule.describe(),
                    if t.settings.conformance.enabled {
                        format!(
                            " · conformance every {}",
                            humantime::format_duration(t.settings.conformance.every)
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
            tap_lines(&mut out, &loaded.config.taps);
            print_stdout(&out);
            ExitCode::SUCCESS
        }
        Err(e) => {
            print_stderr(&format!("{e}\n"));
            ExitCode::from(1)
        }
    }
}

/// What would fail at the first poll although the file is valid: a stdio
/// command not found on the PATH it gets, a URL whose host does not
/// resolve from here. Warnings, not errors: the file may be checked on
/// another machine than the one that runs it.
fn reachability_warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    for t in &config.targets {
        match &t.endpoint {
            EndpointConfig::Stdio(StdioCommand {
                command, env, cwd, ..
            }) => {
                let path = env
                    .get("PATH")
                    .cloned()
                    .or_else(|| std::env::var("PATH").ok())
                    .unwrap_or_default();
                if !command_exists(command, &path, cwd.as_deref()) {
                    let looked = if command.contains('/') {
                        "no such executable file"
                    } else {
                        "not found on PATH"
                    };
                    warnings.push(format!(
                        "target `{}`: command `{command}`: {looked}",
                        t.name
                    ));
                }
            }
            EndpointConfig::Http(HttpEndpoint { url, .. }) => {
                if let Some(host) = url.host_str() {
                    let port = url.port_or_known_default().unwrap_or(443);
                    let resolves = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
                        .map(|mut addrs| addrs.next().is_some())
                        .unwrap_or(false);
                    if !resolves {
                        warnings.push(format!(
                            "target `{}`: host `{host}` does not resolve from here",
                            t.name
                        ));
                    }
                }
            }
        }
    }
    warnings
}

/// Whether `command` names an executable file: as a path when it has a
/// `/` (relative to `cwd` when set), else in one of `path`'s folders.
fn command_exists(command: &str, path: &str, cwd: Option<&std::path::Path>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = std::path::Path::new(command);
        return match cwd {
            Some(dir) if p.is_relative() => executable(&dir.join(p)),
            _ => executable(p),
        };
    }
    std::env::split_paths(path).any(|dir| executable(&dir.join(command)))
}

/// One line per tap: where clients connect, what it stands in front of;
/// one more per configured route.
fn tap_lines(out: &mut String, taps: &[crate::config::taps::TapConfig]) {
    for t in taps {
        let _ = writeln!(
            out,
            "  tap {}: listens on {} · upstream {}{}",
            t.name,
            t.listener.address,
            crate::tap::run::shown_url(&t.upstream.url),
            t.target
                .as_ref()
                .map(|target| format!(" · compared with target {target}"))
                .unwrap_or_default()
        );
        for r in &t.routes.named {
            let _ = writeln!(
                out,
                "    route {}{}{}",
                r.rule.written,
                r.rule
                    .name()
                    .map(|n| format!(" as {n}"))
                    .unwrap_or_default(),
                r.target
                    .as_ref()
                    .map(|target| format!(" · compared with target {target}"))
                    .unwrap_or_default()
            );
        }
    }
}
