//! The report as JUnit XML, as `check` writes it: one test case per
//! scenario; `fail` is a `<failure>`, `n/a` is `<skipped>`, `warn` passes
//! with its message in `<system-out>`; a client that could not be run is
//! one `<error>`.

use super::run_report::Report;
use super::verdict::Status;
use mcp_conformance::junit::escape;
use std::fmt::Write as _;

pub fn render(report: &Report) -> String {
    let s = &report.summary;
    let errors = u8::from(report.error.is_some());
    let tests = report.scenarios.len() + usize::from(errors);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcp-exporter check-client\" tests=\"{tests}\" failures=\"{}\" errors=\"{errors}\" skipped=\"{}\">",
        s.fail, s.not_applicable
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"check-client\" tests=\"{tests}\" failures=\"{}\" errors=\"{errors}\" skipped=\"{}\">",
        s.fail, s.not_applicable
    );
    let _ = writeln!(
        out,
        "    <properties><property name=\"client\" value=\"{}\"/><property name=\"transport\" value=\"{}\"/></properties>",
        escape(&report.client),
        escape(report.transport)
    );
    let classname = format!(
        "check-client.{}",
        report.transport.split(' ').next().unwrap_or("client")
    );
    if let Some(error) = &report.error {
        let _ = writeln!(
            out,
            "    <testcase classname=\"{}\" name=\"run\"><error message=\"{}\">{}</error></testcase>",
            escape(&classname),
            escape(error),
            escape(report.stderr_tail.as_deref().unwrap_or(""))
        );
    }
    for scenario in &report.scenarios {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.2}\"",
            escape(&classname),
            escape(scenario.scenario.label()),
            scenario.seconds
        );
        let body = format!(
            "{} ({}; {})",
            scenario.message, scenario.asks, scenario.spec
        );
        let _ = match scenario.status {
            Status::Pass => writeln!(out, "/>"),
            Status::Warn => writeln!(
                out,
                "><system-out>warn: {}</system-out></testcase>",
                escape(&body)
            ),
            Status::Fail => writeln!(
                out,
                "><failure type=\"fail\" message=\"{}\">{}</failure></testcase>",
                escape(&scenario.message),
                escape(&body)
            ),
            Status::NotApplicable => writeln!(
                out,
                "><skipped message=\"{}\"/></testcase>",
                escape(&scenario.message)
            ),
        };
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
