//! `check-client --serve stdio --state FILE`: for clients that cannot be
//! scripted (a desktop app, an IDE). The app's MCP configuration launches
//! this command in place of a server; each launch plays the next scenario
//! (the state file says which) and serves it on stdin and stdout through
//! the stdio tap. The grade so far goes to the state file each time the
//! app's listing has ended and it has gone quiet; when the app lets go
//! (stdin closed, or a signal) the final grade goes there and to `--report`.
//! `check-client --state FILE` alone shows the grades so far.

use super::args::{CheckClientArgs, SERVE_DEADLINE};
use super::grade::{grade, Reach};
use super::rig_setup::{queue, simulator_flags, RigOptions, Transport};
use super::rig_stdio::server_settings;
use super::run::flood;
use super::run_report::{Report, ScenarioReport};
use super::scenarios::ClientScenario;
use super::serving::{append, ABANDON_AFTER};
use super::state::{self, Claim, SavedGrade};
use super::verdict::{ClientEnd, Exit, Stopped, Verdict};
use super::watch::{settled, Watch, WatchTask};
use mcp_tap::{run_stdio, TapStats};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn main(args: &CheckClientArgs) -> ExitCode {
    let Some(path) = args.state.as_deref() else {
        return super::usage("--serve stdio needs --state FILE");
    };
    let scenarios = args.scenarios();
    let claim = match state::claim(path, &scenarios) {
        Ok(claim) => claim,
        Err(e) => return super::usage(&format!("cannot use {}: {e}", path.display())),
    };
    let setup = claim.scenario.setup();
    crate::cli::print_stderr(&format!(
        "mcp-exporter check-client: launch {}: scenario {} ({} of {}, round {}): {}\n",
        claim.launch, claim.scenario, claim.place, claim.of, claim.round, setup.title
    ));
    let (verdict, requests, elapsed) = serve(args, &claim, path).await;
    let saved = saved(&claim, &verdict, requests, elapsed);
    let line = format!(
        "launch {} · round {} · {} · {}: {}\n",
        saved.launch, saved.round, saved.scenario, saved.status, saved.message
    );
    crate::cli::print_stderr(&format!("mcp-exporter check-client: {line}"));
    if let Err(e) = state::record(path, saved) {
        crate::cli::print_stderr(&format!(
            "mcp-exporter check-client: cannot write the grade: {e}\n"
        ));
    }
    if let Some(report) = &args.report {
        append(report, &line);
    }
    // A read of stdin may still be blocked on a thread the runtime would
    // wait for: the app has let go, so leave at once.
    std::process::exit(0)
}

/// Serve the claimed scenario until the app lets go; its grade. Meanwhile,
/// each time a listing has ended and the app has gone quiet, the grade so
/// far is written to the state file (an app may hold its server for hours,
/// or kill it outright).
async fn serve(args: &CheckClientArgs, claim: &Claim, path: &Path) -> (Verdict, u64, Duration) {
    let setup = claim.scenario.setup();
    let kinds = args.kinds();
    let limits = args.limits(SERVE_DEADLINE);
    let max = usize::try_from(limits.max_requests).unwrap_or(usize::MAX);
    let watch = Watch::new(&setup, &kinds, max, ABANDON_AFTER);
    let (sender, receiver) = queue();
    let task = WatchTask::spawn(receiver, watch);
    let options = RigOptions {
        transport: Transport::Stdio,
        protocol: args.protocol,
        listen: None,
    };
    let started = Instant::now();
    let exe = std::env::current_exe().map_or_else(
        |_| "mcp-exporter".into(),
        |p| p.to_string_lossy().into_owned(),
    );
    let mut server_args = vec!["simulate".to_string(), "--transport".into(), "stdio".into()];
    server_args.extend(simulator_flags(&setup, &options));
    let served = run_stdio(
        server_settings(&exe, server_args),
        Arc::new(sender),
        Arc::new(TapStats::default()),
        tokio::io::stdin(),
        tokio::io::stdout(),
    );
    // Only a deadline asked for: an app holds its server as long as it likes.
    let deadline = async {
        match args.deadline {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let exit = tokio::select! {
        _ = served => Exit::Unknown,
        why = flood(task.progress.clone(), limits) => Exit::Killed(why),
        () = deadline => Exit::Killed(Stopped::Deadline),
        () = let_go() => Exit::Unknown,
        () = grade_as_it_settles(&task, claim, &kinds, path, started) => Exit::Unknown,
    };
    let seen = task.stop().await.map(Watch::finish).unwrap_or_default();
    let verdict = grade(
        &setup,
        &kinds,
        &seen.record,
        end_now(exit, started),
        Reach::Launched,
    );
    (verdict, seen.record.list_requests, started.elapsed())
}

fn end_now(exit: Exit, started: Instant) -> ClientEnd {
    ClientEnd {
        exit,
        printed: None,
        elapsed: started.elapsed(),
        ended: Instant::now(),
    }
}

/// Never resolves: after every settled listing, the grade so far goes to
/// the state file in place of the placeholder.
async fn grade_as_it_settles(
    task: &WatchTask,
    claim: &Claim,
    kinds: &[mcp_listing::Kind],
    path: &Path,
    started: Instant,
) {
    let mut progress = task.progress.clone();
    let setup = claim.scenario.setup();
    loop {
        if !settled(&mut progress).await {
            return std::future::pending().await;
        }
        if let Some(record) = task.record_now().await {
            let end = end_now(Exit::Unknown, started);
            let verdict = grade(&setup, kinds, &record, end, Reach::Launched);
            let _ = state::record(
                path,
                saved(claim, &verdict, record.list_requests, started.elapsed()),
            );
        }
        if progress.changed().await.is_err() {
            return std::future::pending().await;
        }
    }
}

fn saved(claim: &Claim, verdict: &Verdict, requests: u64, elapsed: Duration) -> SavedGrade {
    SavedGrade {
        launch: claim.launch,
        round: claim.round,
        scenario: claim.scenario.label().to_string(),
        status: verdict.status.label().to_string(),
        message: verdict.message.clone(),
        list_requests: requests,
        seconds: (elapsed.as_secs_f64() * 100.0).round() / 100.0,
    }
}

/// Resolves on SIGTERM, SIGINT or SIGHUP: how apps stop their servers.
async fn let_go() {
    use tokio::signal::unix::{signal, SignalKind};
    let kinds = [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ];
    let mut streams: Vec<_> = kinds.into_iter().filter_map(|k| signal(k).ok()).collect();
    if streams.is_empty() {
        return std::future::pending().await;
    }
    let waits = streams.iter_mut().map(|s| Box::pin(s.recv()));
    futures_util::future::select_all(waits).await;
}

/// `check-client --state FILE`: the grades so far, as a report.
pub fn show(args: &CheckClientArgs, path: &Path) -> Result<Report, String> {
    let saved = state::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut report = Report::serving(Transport::Stdio, args.protocol, args.kinds());
    for grade in &saved.grades {
        let Ok(scenario) = grade.scenario.parse::<ClientScenario>() else {
            continue;
        };
        report.push(ScenarioReport::saved(scenario, grade));
    }
    Ok(report)
}
