//! `mcp-exporter check-client --json` run to completion against a client
//! command, and its report read back: one grade per scenario.

use crate::process::{run_leaving_nothing, Finished};
use serde_json::Value;
use std::process::Command;

/// A finished run: its exit status, report and output.
pub struct Graded {
    pub code: Option<i32>,
    pub report: Value,
    pub finished: Finished,
}

/// One scenario's grade in a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grade {
    pub status: String,
    pub message: String,
}

/// `mcp-exporter check-client --json FLAGS -- CLIENT...`, leaving no process
/// of its group behind.
pub fn check_client(flags: &[&str], client: &[String]) -> Graded {
    let mut command = Command::new(crate::exporter_bin());
    command
        .arg("check-client")
        .arg("--json")
        .args(flags)
        .arg("--")
        .args(client);
    let what = format!("check-client {flags:?} -- {client:?}");
    let finished = run_leaving_nothing(command, &what);
    let report = serde_json::from_str(&finished.stdout)
        .unwrap_or_else(|e| panic!("{what}: not a JSON report ({e}):\n{}", finished.describe()));
    Graded {
        code: finished.code(),
        report,
        finished,
    }
}

impl Graded {
    /// The grade of `scenario`; fails the test when it was not played.
    pub fn grade(&self, scenario: &str) -> Grade {
        let found = self.report["scenarios"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["scenario"] == scenario));
        let Some(s) = found else {
            panic!("no grade for {scenario}:\n{}", self.describe());
        };
        Grade {
            status: s["status"].as_str().unwrap_or_default().to_string(),
            message: s["message"].as_str().unwrap_or_default().to_string(),
        }
    }

    /// Asserts `scenario` got `status` with `words` in its message.
    pub fn expect(&self, scenario: &str, status: &str, words: &str) {
        let grade = self.grade(scenario);
        assert!(
            grade.status == status && grade.message.contains(words),
            "{scenario}: expected {status} with {words:?}, got {grade:?}\n{}",
            self.describe()
        );
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n{}\nstderr:\n{}",
            self.code,
            serde_json::to_string_pretty(&self.report).unwrap_or_default(),
            self.finished.stderr
        )
    }
}
