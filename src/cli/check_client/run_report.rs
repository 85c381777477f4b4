//! The report of a run: one line per scenario for people (a table), the
//! same as JSON for scripts, and the exit status (0 nothing failed, 1
//! something did, 2 the client could not be run). Whatever the client or
//! its stderr said is escaped before it is shown.

use super::client::{shell_words, ClientRun};
use super::grade::Reach;
use super::plan::Plan;
use super::scenarios::ClientScenario;
use super::verdict::{Exit, Status, Verdict};
use super::watch::Observation;
use super::words;
use mcp_listing::text::escape as shown;
use mcp_listing::Kind;
use serde::Serialize;
use std::fmt::Write as _;

/// Lines of a failing client's stderr shown.
const STDERR_LINES: usize = 8;
/// Bytes of a failing client's stderr shown.
const STDERR_BYTES: usize = 1024;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The client's command line, as given (`{url}` unfilled).
    pub client: String,
    pub transport: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    pub kinds: Vec<Kind>,
    pub scenarios: Vec<ScenarioReport>,
    pub summary: Summary,
    /// Pages after which the client gave up a listing that never ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_cap: Option<u32>,
    /// Why the client could not be run, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub pass: u32,
    pub warn: u32,
    pub fail: u32,
    #[serde(rename = "n/a")]
    pub not_applicable: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioReport {
    pub scenario: ClientScenario,
    pub status: Status,
    pub message: String,
    /// What the scenario asks of a client.
    pub asks: &'static str,
    pub spec: String,
    pub list_requests: u64,
    pub seconds: f64,
    /// `0`, `1`, `signal 9`, `stopped: deadline`; absent in serving mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub printed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// How each client listing ended, as the tap's observer tells it.
    pub listings: Vec<String>,
    /// Cursors the client sent that its session was never handed (the
    /// observer's foreign cursors: made up, or kept from another session).
    #[serde(skip_serializing_if = "is_zero")]
    pub foreign_cursors: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// What the harness spent on the scenario's server side, in ms:
    /// setting it up (a fresh simulator and tap) and ending it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_ms: Option<f64>,
    #[serde(skip)]
    pub page_cap: Option<u32>,
}

/// The harness's own time around one scenario.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub setup: std::time::Duration,
    pub finish: std::time::Duration,
}

impl ScenarioReport {
    pub fn new(
        scenario: ClientScenario,
        verdict: Verdict,
        run: Option<&ClientRun>,
        seen: &Observation,
    ) -> ScenarioReport {
        let setup = scenario.setup();
        let end = run.map(|r| r.end);
        let stderr_tail = run
            .filter(|_| verdict.status >= Status::Warn)
            .and_then(|r| stderr_excerpt(&r.stderr_tail));
        ScenarioReport {
            scenario,
            status: verdict.status,
            message: shown(&verdict.message).into_owned(),
            asks: setup.title,
            spec: setup.spec.to_string(),
            list_requests: seen.record.list_requests,
            seconds: end.map_or(0.0, |e| (e.elapsed.as_secs_f64() * 100.0).round() / 100.0),
            exit: end.and_then(|e| exit_label(e.exit)),
            printed: end.and_then(|e| e.printed),
            protocol: seen.record.negotiation.negotiated.clone(),
            listings: seen
                .listings
                .iter()
                .map(|l| l.outcome.label().to_string())
                .collect(),
            foreign_cursors: seen.foreign_cursors,
            stderr_tail,
            setup_ms: None,
            finish_ms: None,
            page_cap: verdict.page_cap,
        }
    }

    pub fn timed(mut self, timing: Timing) -> ScenarioReport {
        let ms = |d: std::time::Duration| (d.as_secs_f64() * 10_000.0).round() / 10.0;
        self.setup_ms = Some(ms(timing.setup));
        self.finish_ms = Some(ms(timing.finish));
        self
    }
}

impl ScenarioReport {
    /// A grade kept by `--serve stdio` (no run of ours to describe).
    pub fn saved(scenario: ClientScenario, saved: &super::state::SavedGrade) -> ScenarioReport {
        let setup = scenario.setup();
        ScenarioReport {
            scenario,
            status: saved.status.parse().unwrap_or(Status::NotApplicable),
            message: shown(&saved.message).into_owned(),
            asks: setup.title,
            spec: setup.spec.to_string(),
            list_requests: saved.list_requests,
            seconds: saved.seconds,
            exit: None,
            printed: None,
            protocol: None,
            listings: Vec::new(),
            foreign_cursors: 0,
            stderr_tail: None,
            setup_ms: None,
            finish_ms: None,
            page_cap: None,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn exit_label(exit: Exit) -> Option<String> {
    match exit {
        Exit::Code(c) => Some(c.to_string()),
        Exit::Signal(s) => Some(format!("signal {s}")),
        Exit::Killed(_) => Some("stopped".into()),
        Exit::Unknown => None,
    }
}

/// The last lines of a client's stderr, bounded and escaped.
pub fn stderr_excerpt(tail: &str) -> Option<String> {
    let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(STDERR_LINES);
    let text = lines[from..].join("\n");
    let start = text.len().saturating_sub(STDERR_BYTES);
    let start = (start..=text.len()).find(|&i| text.is_char_boundary(i))?;
    let text = &text[start..];
    (!text.is_empty()).then(|| shown_lines(text))
}

/// Control characters escaped, line breaks kept.
fn shown_lines(text: &str) -> String {
    text.lines()
        .map(|l| shown(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Report {
    pub fn new(plan: &Plan) -> Report {
        Report {
            client: shown(&shell_words(&plan.client.argv)).into_owned(),
            transport: plan.rig.transport.label(),
            protocol: plan.rig.protocol.map(|v| v.label().to_string()),
            kinds: plan.kinds.clone(),
            scenarios: Vec::new(),
            summary: Summary::default(),
            page_cap: None,
            error: None,
            stderr_tail: None,
        }
    }

    /// The report of serving mode: the client is whoever connected.
    pub fn serving(
        transport: super::rig_setup::Transport,
        protocol: Option<mcp_listing::ProtocolVersion>,
        kinds: Vec<Kind>,
    ) -> Report {
        Report {
            client: "the client that connected".into(),
            transport: transport.label(),
            protocol: protocol.map(|v| v.label().to_string()),
            kinds,
            scenarios: Vec::new(),
            summary: Summary::default(),
            page_cap: None,
            error: None,
            stderr_tail: None,
        }
    }

    pub fn push(&mut self, scenario: ScenarioReport) {
        let s = &mut self.summary;
        match scenario.status {
            Status::Pass => s.pass += 1,
            Status::Warn => s.warn += 1,
            Status::Fail => s.fail += 1,
            Status::NotApplicable => s.not_applicable += 1,
        }
        if scenario.scenario == ClientScenario::Endless {
            self.page_cap = scenario.page_cap;
        }
        self.scenarios.push(scenario);
    }

    /// The first scenario saw no request: the client cannot be graded.
    pub fn could_not_run(&mut self, run: &ClientRun, reach: Reach) {
        let verdict = super::grade::grade(
            &ClientScenario::Walk.setup(),
            &self.kinds,
            &Default::default(),
            run.end,
            reach,
        );
        self.error = Some(verdict.message);
        self.stderr_tail = stderr_excerpt(&run.stderr_tail);
    }

    pub fn fail_to_run(&mut self, why: String) {
        self.error = Some(shown(&why).into_owned());
    }

    /// 2 when the client could not be run, 1 when a scenario failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.error.is_some() {
            2
        } else {
            u8::from(self.summary.fail > 0)
        }
    }

    /// The table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "check-client · transport {} · {}",
            self.transport, self.client
        );
        if let Some(error) = &self.error {
            let _ = writeln!(out, "cannot grade the client: {error}");
            if let Some(tail) = &self.stderr_tail {
                let _ = writeln!(out, "its stderr ends:\n{}", indent(tail));
            }
            let _ = writeln!(out, "→ exit {}", self.exit_code());
            return out;
        }
        let _ = writeln!(
            out,
            "{:<18} {:<7} {:>8} {:>7}  MESSAGE",
            "SCENARIO", "VERDICT", "REQUESTS", "TIME"
        );
        for s in &self.scenarios {
            render_row(&mut out, s);
        }
        let s = &self.summary;
        let cap = self
            .page_cap
            .map(|c| format!("; page cap {}", words::count(u64::from(c))))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} pass, {} warn, {} fail, {} n/a{cap} → exit {}",
            s.pass,
            s.warn,
            s.fail,
            s.not_applicable,
            self.exit_code()
        );
        out
    }
}

fn render_row(out: &mut String, s: &ScenarioReport) {
    let _ = writeln!(
        out,
        "{:<18} {:<7} {:>8} {:>6.1}s  {}",
        s.scenario.label(),
        s.status.label(),
        words::count(s.list_requests),
        s.seconds,
        s.message
    );
    if s.status >= Status::Warn {
        let _ = writeln!(out, "{:<45}↳ {} ({})", "", s.asks, s.spec);
        if let Some(tail) = &s.stderr_tail {
            let _ = writeln!(out, "{:<45}  its stderr ends:\n{}", "", indent(tail));
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
