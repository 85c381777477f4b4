//! Every page the exporter serves shows what servers chose as text, never
//! as markup. A simulator (`markup-names`) serves item names and error
//! messages holding a `<script>` element, both quotes, an ampersand and a
//! BEL; a stdio server writes the same to stderr; an `http_sd` endpoint
//! answers with a hostile Content-Type; `file_sd` names targets `..` and
//! `a&b`. Each page is read over HTTP as sent and as headless Chromium
//! parses it (its DOM holds no script element, its text holds the names).
//!
//! Needs Debian's `chromium` (scripts/install-test-deps.sh).

use mcp_testkit::chromium::{dump_dom, visible_text};
use mcp_testkit::http::{raw_get, RawResponse};
use mcp_testkit::stub::{Stub, StubResponse};
use mcp_testkit::{scenarios_simulator, Exporter};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// What the simulator and the stderr script put in what they send.
const HOSTILE: &str = "<script>alert(\"x\")</script> & 'q' \u{7}";
/// The same as a page must send it: markup escaped, the BEL made visible.
const ESCAPED: &str = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'q' \\x07";
/// The same as a person reads it in the browser.
const SHOWN: &str = "<script>alert(\"x\")</script> & 'q' \\x07";
/// The http_sd endpoint's Content-Type (a header cannot carry a BEL).
const CONTENT_TYPE: &str = "text/html; <script>alert(\"x\")</script> & 'q'";

/// A stdio "server" that writes [`HOSTILE`] to stderr and exits.
fn stderr_script(dir: &Path) -> String {
    let path = dir.join("hostile.sh");
    std::fs::write(
        &path,
        "printf '<script>alert(\"x\")</script> & %sq%s \\007\\n' \"'\" \"'\" >&2\nexit 1\n",
    )
    .unwrap();
    path.display().to_string()
}

/// `file_sd` groups naming a target `..` and one `a&b`.
fn write_dot_and_ampersand(dir: &Path, sim: &str) -> String {
    let groups = json!([
        {"targets": [format!("{sim}/mcp/spare")], "labels": {"name": ".."}},
        {"targets": [format!("{sim}/mcp/spare")], "labels": {"name": "a&b"}},
    ]);
    let file = dir.join("names.json");
    std::fs::write(&file, serde_json::to_vec(&groups).unwrap()).unwrap();
    file.display().to_string()
}

/// The static targets (markup with protocols and conformance, its failing
/// twin, a plain target holding markup as its reference, the stderr
/// script), the two sources, polled every second.
fn config(dir: &Path, sim: &str, sd: &str) -> String {
    format!(
        "global:
  schedule: {{every: 1s}}
  jitter: 0s
  kinds: [tools]
modules:
  sim:
    allow: [\"{sim}/mcp/\"]
    kinds: [tools]
targets:
  - name: markup
    http: {{url: \"{sim}/mcp/markup\"}}
    protocols: [\"2025-11-25\", \"2025-06-18\"]
    conformance: {{enabled: true}}
  - name: failing
    http: {{url: \"{sim}/mcp/failing\"}}
  - name: plain
    http: {{url: \"{sim}/mcp/plain\"}}
    reference:
      - target: markup
  - name: stderr
    stdio:
      command: sh
      args: [\"{script}\"]
discovery:
  - name: files
    module: sim
    file_sd: {{files: [\"{files}\"], refresh_interval: 1s}}
  - name: inventory
    module: sim
    http_sd: {{http: {{url: \"{sd}/sd\"}}, refresh_interval: 1s}}
",
        script = stderr_script(dir),
        files = write_dot_and_ampersand(dir, sim),
    )
}

/// `path` as the exporter sends it, nothing decoded or normalised.
fn fetch(exp: &Exporter, path: &str) -> RawResponse {
    let address = exp.url().trim_start_matches("http://");
    raw_get(address, path, &[]).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Waits until the page at `path` contains every one of `needles`.
fn wait_page(exp: &Exporter, path: &str, needles: &[&str]) -> String {
    exp.wait(LIMIT, &format!("{path} showing {needles:?}"), || {
        let text = fetch(exp, path).text();
        needles.iter().all(|n| text.contains(n)).then_some(text)
    })
}

/// An HTML page as sent: 200, HTML, no script element, no control
/// character but newline and tab; and as Chromium parses it: no script
/// element in the DOM. Its visible text.
fn read_html(exp: &Exporter, path: &str) -> (String, String) {
    let answer = fetch(exp, path);
    let body = answer.text();
    assert_eq!(answer.status, 200, "{path}: {body}");
    assert!(
        answer
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{path}: {:?}",
        answer.headers
    );
    assert!(
        !body.to_ascii_lowercase().contains("<script"),
        "{path}: {body}"
    );
    assert_no_hidden_controls(path, &body);
    let dom = dump_dom(&exp.at(path)).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !dom.to_ascii_lowercase().contains("<script"),
        "{path}: {dom}"
    );
    (body, visible_text(&dom))
}

fn assert_no_hidden_controls(path: &str, body: &str) {
    let hidden = body
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'));
    assert_eq!(hidden, None, "{path}: {body}");
}

/// A page that shows the hostile names: escaped as sent, as text in the
/// browser.
fn shows_the_names_as_text(exp: &Exporter, path: &str) {
    let (body, text) = read_html(exp, path);
    assert!(body.contains(ESCAPED), "{path}: {body}");
    assert!(text.contains(SHOWN), "{path}: {text}");
}

#[test]
fn server_chosen_markup_is_text_on_every_page() {
    let (sim, _scenarios) = scenarios_simulator(
        "  - {name: markup, scenario: markup-names, page: 99, items: 6, page_size: 3}
  - {name: failing, scenario: markup-names, items: 6, page_size: 3}
  - {name: plain, scenario: healthy, items: 3}
  - {name: spare, scenario: healthy, items: 3}
",
    );
    let sd = Stub::start(|_| StubResponse::with(200, CONTENT_TYPE, "[]"));
    let dir = tempfile::tempdir().unwrap();
    let exp = Exporter::start(&config(dir.path(), &sim.url, &sd.url()));
    // Each page has its server text: a change, every section, a failure,
    // the reference's names, the stderr tail, the sources' detail.
    wait_page(
        &exp,
        "/targets/markup",
        &[
            "class=\"change\"",
            "Per protocol version",
            "Pagination conformance",
        ],
    );
    wait_page(&exp, "/targets/failing", &["Recent failures", "rpc_error"]);
    wait_page(
        &exp,
        "/targets/plain",
        &["Compared with references", ESCAPED],
    );
    wait_page(&exp, "/targets/stderr", &["stderr (last bytes"]);
    wait_page(&exp, "/", &["data-target=\"..\"", "Content-Type"]);

    for path in [
        "/targets/markup",
        "/targets/failing",
        "/targets/plain",
        "/targets/stderr",
    ] {
        shows_the_names_as_text(&exp, path);
    }
    the_front_page_escapes_sources_names_and_the_filter(&exp);
    dot_and_ampersand_names_link_to_their_own_pages(&exp);
    the_debug_probe_is_plain_text_with_controls_shown(&exp);
    // Not found names no name.
    let answer = fetch(&exp, "/targets/%3Cscript%3E");
    assert_eq!(answer.status, 404);
    assert!(!answer.text().contains("<script"), "{}", answer.text());
}

/// The sources' refresh detail (the Content-Type quoted), the discovered
/// names in attributes and links, and a filter query echoed in its input.
fn the_front_page_escapes_sources_names_and_the_filter(exp: &Exporter) {
    let (body, text) = read_html(exp, "/");
    assert!(
        body.contains("&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt; &amp; 'q'"),
        "{body}"
    );
    assert!(
        text.contains("<script>alert(\\\"x\\\")</script> & 'q'"),
        "{text}"
    );
    assert!(body.contains("data-target=\"a&amp;b\""), "{body}");
    assert!(body.contains("href=\"/targets/a%26b\""), "{body}");
    assert!(body.contains("href=\"/targets/?name=..\""), "{body}");

    let query = "/?q=%3Cscript%3E%22%26%27%07";
    let (body, _) = read_html(exp, query);
    assert!(
        body.contains("value=\"&lt;script&gt;&quot;&amp;'\\x07\""),
        "{body}"
    );
}

/// `..` is reached through the query link the pages give (and through a
/// path that kept its `%2E%2E`, as a client that does not normalise sends
/// it); `a&b` through its path.
fn dot_and_ampersand_names_link_to_their_own_pages(exp: &Exporter) {
    // A browser would make the front page of this path: over plain HTTP only.
    let kept = fetch(exp, "/targets/%2E%2E");
    assert_eq!(kept.status, 200, "{}", kept.text());
    assert!(kept.text().contains("<h1>..</h1>"), "{}", kept.text());
    let (body, text) = read_html(exp, "/targets/?name=..");
    assert!(body.contains("<h1>..</h1>"), "{body}");
    assert!(text.contains("discovered by files"), "{text}");
    assert!(
        !text.contains("Discovery sources"),
        "the front page: {text}"
    );
    let (body, text) = read_html(exp, "/targets/a%26b");
    assert!(body.contains("<h1>a&amp;b</h1>"), "{body}");
    assert!(text.contains("a&b"), "{text}");
}

/// `/probe?debug=true` is text, not HTML, with control characters shown.
fn the_debug_probe_is_plain_text_with_controls_shown(exp: &Exporter) {
    for target in ["markup", "failing"] {
        let path = format!("/probe?target={target}&debug=true");
        let answer = fetch(exp, &path);
        let body = answer.text();
        assert_eq!(answer.status, 200, "{path}: {body}");
        assert!(
            answer
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/plain")),
            "{path}: {:?}",
            answer.headers
        );
        assert!(!body.contains(HOSTILE), "{path}: {body}");
        assert_no_hidden_controls(&path, &body);
    }
    let body = fetch(exp, "/probe?target=failing&debug=true").text();
    assert!(body.contains("\\x07"), "{body}");
}
