//! `mcp-exporter check-client`: a pagination conformance run for any MCP
//! client. Each scenario gets a fresh simulated server behind the tap; the
//! client runs once against it; what it sent is graded in the house's
//! words (docs/clients.md, "Grading a client").
//!
//! Layout: `args` (the command line) → `run` (the scenarios in turn) →
//! `rig` (a scenario's server side: `rig_http`, `rig_stdio`, whose client
//! starts `relay`) and `client` (the client's process) → `watch` (the
//! observer and `record`, which reads copies through `message`) → `grade`
//! (`view` of the record; `grade_walks`, `grade_loops`, `grade_cursors`;
//! `verdict`, `words`) → `report`, `junit`. Serving mode, for apps that
//! cannot be scripted: `serve_stdio` (with `state`), `serve_http`.

mod args;
mod client;
mod grade;
mod grade_cursors;
mod grade_loops;
mod grade_walks;
mod junit;
mod message;
mod record;
mod relay;
mod report;
mod rig;
mod rig_http;
mod rig_stdio;
mod run;
mod scenarios;
mod verdict;
mod view;
mod watch;
mod words;

pub use args::CheckClientArgs;
pub use scenarios::ClientScenario;

use std::process::ExitCode;

pub async fn main(args: CheckClientArgs) -> ExitCode {
    if let Some(socket) = &args.relay {
        return relay::main(socket).await;
    }
    let plan = match args.plan() {
        Ok(plan) => plan,
        Err(message) => return usage(&message),
    };
    let report = run::run(&plan).await;
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, junit::render(&report)) {
            return usage(&format!("cannot write {}: {e}", path.display()));
        }
    }
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => super::print_stdout(&format!("{s}\n")),
            Err(e) => return usage(&format!("cannot encode the report: {e}")),
        }
    } else {
        super::print_stdout(&report.render());
    }
    ExitCode::from(report.exit_code())
}

fn usage(message: &str) -> ExitCode {
    super::print_stderr(&format!("mcp-exporter check-client: {message}\n"));
    ExitCode::from(2)
}
