//! The stdio tap in front of real server processes (the simulator over
//! stdio, and shells that misbehave): lines pass byte for byte and are
//! observed as messages; with merging a named client gets every page in
//! one line, or page 1 as the server wrote it when the walk is not
//! complete (the server cycling, or exiting mid-walk); the tap ends with
//! the server's exit status, also for a server that ignores stdin closing.

use mcp_tap::{
    run_stdio, Direction, MergeClients, MergeFallback, MergeOutcome, StdioTapSettings, TapEvent,
    TapStats,
};
use mcp_testkit::simulator::simulate_args;
use mcp_testkit::tap::Recorder;
use mcp_wire::transport::stdio::StdioSpec;
use serde_json::Value;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tokio::task::JoinHandle;

/// Bound on waiting for a line (a hang, not a measurement).
const WAIT: Duration = Duration::from_secs(60);

fn spec(command: &str, args: &[&str]) -> StdioSpec {
    StdioSpec {
        command: command.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: BTreeMap::new(),
        cwd: None,
        inherit_env: false,
        scrubber: Default::default(),
    }
}

/// The simulator paging 14 tools by 8 over stdio, with `flags`.
fn simulator(flags: &[&str]) -> StdioSpec {
    let mut flags = flags.to_vec();
    flags.extend_from_slice(&["--items", "14", "--page-size", "8"]);
    let args = simulate_args("stdio", &flags);
    spec(&mcp_testkit::exporter_bin().to_string_lossy(), &args)
}

type Writer = Pin<Box<dyn AsyncWrite + Send>>;
type Reader = Pin<Box<dyn AsyncRead + Send>>;

/// A stdio tap running `settings` (or, for comparison, the server alone),
/// and the client's end of its pipes.
struct Wrapped {
    to_tap: Writer,
    from_tap: Lines<BufReader<Reader>>,
    recorder: Arc<Recorder>,
    stats: Arc<TapStats>,
    done: JoinHandle<Option<ExitStatus>>,
}

impl Wrapped {
    fn start(settings: StdioTapSettings) -> Wrapped {
        let (client, tap) = tokio::io::duplex(1 << 20);
        let (tap_in, tap_out) = tokio::io::split(tap);
        let (from_tap, to_tap) = tokio::io::split(client);
        let recorder = Arc::new(Recorder::default());
        let stats = Arc::new(TapStats::default());
        let run = run_stdio(settings, recorder.clone(), stats.clone(), tap_in, tap_out);
        let done = tokio::spawn(async move { run.await.ok() });
        Wrapped {
            to_tap: Box::pin(to_tap),
            from_tap: BufReader::new(Box::pin(from_tap) as Reader).lines(),
            recorder,
            stats,
            done,
        }
    }

    /// The server alone, its pipes the client's.
    fn direct(server: &StdioSpec) -> Wrapped {
        let mut child = tokio::process::Command::new(&server.command)
            .args(&server.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the server");
        let (to, from) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        Wrapped {
            to_tap: Box::pin(to),
            from_tap: BufReader::new(Box::pin(from) as Reader).lines(),
            recorder: Arc::new(Recorder::default()),
            stats: Arc::new(TapStats::default()),
            done: tokio::spawn(async move { child.wait().await.ok() }),
        }
    }

    async fn send(&mut self, line: &str) {
        self.to_tap
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(WAIT, self.from_tap.next_line())
            .await
            .expect("a line in time")
            .expect("readable")
            .expect("a line, not the end")
    }

    async fn call(&mut self, line: &str) -> String {
        self.send(line).await;
        self.line().await
    }

    /// Close the client's side; the server's exit status.
    async fn finish(mut self) -> ExitStatus {
        self.to_tap.shutdown().await.unwrap();
        drop(self.to_tap);
        tokio::time::timeout(WAIT, self.done)
            .await
            .expect("the tap ends")
            .expect("no panic")
            .expect("the server ran and exited")
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desk-app","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn list(id: u32, cursor: Option<&str>) -> String {
    match cursor {
        Some(c) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"cursor":"{c}"}}}}"#
        ),
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#),
    }
}

fn tools(line: &str) -> (usize, Option<String>) {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let n = v["result"]["tools"].as_array().map_or(0, Vec::len);
    (n, v["result"]["nextCursor"].as_str().map(str::to_string))
}

/// What a session gets: initialize, then tools/list page by page.
async fn session(wrapped: &mut Wrapped) -> Vec<String> {
    let mut got = vec![wrapped.call(INIT).await];
    wrapped.send(INITIALIZED).await;
    let mut cursor = None;
    for id in 2..10 {
        let page = wrapped.call(&list(id, cursor.as_deref())).await;
        cursor = tools(&page).1;
        got.push(page);
        if cursor.is_none() {
            break;
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_pass_byte_for_byte_and_the_tap_ends_with_the_server() {
    let mut tapped = Wrapped::start(StdioTapSettings::new(simulator(&[])));
    let through = session(&mut tapped).await;
    let recorder = tapped.recorder.clone();
    let status = tapped.finish().await;
    assert!(status.success(), "{status:?}");
    // The same session with a server alike, without the tap: the same bytes.
    let mut direct = Wrapped::direct(&simulator(&[]));
    assert_eq!(session(&mut direct).await, through);
    assert!(direct.finish().await.success());
    assert_eq!(through.len(), 3, "initialize and two pages");
    let sent = recorder.texts(Direction::FromClient);
    assert_eq!(sent[0], INIT);
    assert_eq!(sent[1], INITIALIZED);
    let got = recorder.texts(Direction::FromUpstream);
    assert_eq!(got, through);
    recorder.wait("closed", |e| {
        e.iter().any(|e| matches!(e, TapEvent::Closed { .. }))
    });
}

fn merging(server: StdioSpec) -> StdioTapSettings {
    let mut settings = StdioTapSettings::new(server);
    settings.merge.clients = MergeClients::Named(vec!["desk-app".into()]);
    settings
}

fn merges(recorder: &Recorder) -> Vec<MergeOutcome> {
    recorder
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TapEvent::Merged { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_client_gets_the_whole_catalogue_in_one_line() {
    let mut wrapped = Wrapped::start(merging(simulator(&[])));
    wrapped.call(INIT).await;
    wrapped.send(INITIALIZED).await;
    let merged = wrapped.call(&list(2, None)).await;
    assert_eq!(tools(&merged), (14, None), "{merged}");
    let reused = wrapped.call(&list(3, None)).await;
    assert_eq!(tools(&reused), (14, None));
    assert_eq!(
        merges(&wrapped.recorder),
        [MergeOutcome::Merged, MergeOutcome::Reused]
    );
    // Any other request passes as it is.
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    assert!(wrapped.call(ping).await.contains(r#""id":4"#));
    assert!(wrapped.finish().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycling_or_crashing_server_leaves_page_1_as_it_wrote_it() {
    for (flags, reason, exit) in [
        (&["--scenario", "cycle"][..], "cursor_cycle", Some(0)),
        (
            &["--scenario", "crash", "--page", "2"][..],
            "transport_error",
            Some(3),
        ),
    ] {
        let mut direct = Wrapped::direct(&simulator(flags));
        direct.call(INIT).await;
        let page1 = direct.call(&list(2, None)).await;
        drop(direct);
        let mut wrapped = Wrapped::start(merging(simulator(flags)));
        wrapped.call(INIT).await;
        let got = wrapped.call(&list(2, None)).await;
        assert_eq!(got, page1, "{flags:?}");
        let told = merges(&wrapped.recorder);
        let [MergeOutcome::FirstPage(fallback @ MergeFallback::Walk(_))] = told[..] else {
            panic!("{told:?}");
        };
        assert_eq!(fallback.label(), reason, "{flags:?}");
        assert_eq!(wrapped.stats.merges(mcp_tap::MergeCount::Incomplete), 1);
        assert_eq!(wrapped.finish().await.code(), exit, "{flags:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_huge_lines_and_a_server_that_ignores_stdin_closing() {
    // Garbage, a 4 MiB line and no newline at the end: all passes as it was.
    let script = r#"printf 'not json\n'; head -c 4194304 /dev/zero | tr '\0' 'x'; printf '\n{"jsonrpc":"2.0","id":7}'"#;
    let mut wrapped = Wrapped::start(merging(spec("/bin/sh", &["-c", script])));
    assert_eq!(wrapped.line().await, "not json");
    assert_eq!(wrapped.line().await.len(), 4 * 1024 * 1024);
    assert_eq!(wrapped.line().await, r#"{"jsonrpc":"2.0","id":7}"#);
    assert!(wrapped.finish().await.success());

    // Ignores stdin closing and SIGTERM: SIGKILL after the grace.
    let mut settings = StdioTapSettings::new(spec("/bin/sh", &["-c", "trap '' TERM; sleep 60"]));
    settings.exit_grace = Duration::from_millis(300);
    let status = Wrapped::start(settings).finish().await;
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
}

/// First-page requests of `methods`, ids from `first_id`, as one write.
fn first_pages(methods: &[&str], first_id: u64) -> String {
    methods
        .iter()
        .zip(first_id..)
        .map(|(method, id)| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_merges_each_get_their_own_answers() {
    // Tools, prompts and resources first pages back to back, round after
    // round, reuse off: three walks over the one pipe at once each time.
    // Each walk's requests must carry ids no other walk uses (and none a
    // client uses), or one walk takes another's answer and the client gets
    // an answer it never asked for.
    let mut settings = merging(simulator(&[]));
    settings.merge.reuse_for = Duration::ZERO;
    let mut wrapped = Wrapped::start(settings);
    wrapped.call(INIT).await;
    wrapped.send(INITIALIZED).await;
    let kinds = [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
    ];
    let methods: Vec<&str> = kinds.iter().map(|(m, _)| *m).collect();
    for round in 0..5u64 {
        let first_id = 10 + round * 10;
        wrapped.send(&first_pages(&methods, first_id)).await;
        let mut got = BTreeMap::new();
        for _ in 0..kinds.len() {
            let line = wrapped.line().await;
            let answer: Value = serde_json::from_str(&line).unwrap();
            let id = answer["id"].as_u64();
            assert!(
                id.is_some_and(|id| (first_id..first_id + 3).contains(&id)),
                "round {round}: an answer never asked for: {line}"
            );
            got.insert(id, answer);
        }
        for ((_, key), id) in kinds.iter().zip(first_id..) {
            let result = &got[&Some(id)]["result"];
            let items = result[key].as_array().map_or(0, Vec::len);
            assert_eq!(items, 14, "round {round}, {key}: {result}");
            assert!(result.get("nextCursor").is_none(), "{result}");
        }
    }
    let told = merges(&wrapped.recorder);
    assert_eq!(told, [MergeOutcome::Merged; 15], "no fallback to page 1");
    assert!(wrapped.finish().await.success());
}

/// The stdio server of tests/stdio_notifying_server.py.
fn notifying_server() -> StdioSpec {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/stdio_notifying_server.py"
    );
    // The interpreter itself, not a shim that needs our environment.
    let found = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    let python = String::from_utf8(found.stdout).unwrap();
    spec(python.trim(), &["-u", script])
}

fn method_or_id(line: &str) -> String {
    let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    match message.get("method").and_then(Value::as_str) {
        Some(method) => {
            let data = message["params"]["data"].as_str().unwrap_or("");
            format!("{method} {data}").trim_end().to_string()
        }
        None => format!("answer {}", message["id"]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_server_says_during_a_walk_reaches_the_client_in_order() {
    // The server (4 tools by 2) writes a log message before every page-1
    // answer, a tools list_changed before the first page-1 answer (the walk
    // starts over) and another right after the first page-2 answer (the
    // walk is done: its answer must not be reused across that one).
    let mut wrapped = Wrapped::start(merging(notifying_server()));
    wrapped.call(INIT).await;
    wrapped.send(INITIALIZED).await;
    wrapped.send(&list(2, None)).await;
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(wrapped.line().await);
    }
    let said: Vec<String> = seen.iter().map(|l| method_or_id(l)).collect();
    assert_eq!(
        said[..3],
        [
            "notifications/message page 1 #1",
            "notifications/tools/list_changed",
            "notifications/message page 1 #2",
        ],
        "in the order the server wrote them: {said:?}"
    );
    // The last list_changed comes after the walk's last answer: before or
    // after the merged answer, both reach the client.
    let mut last_two = said[3..].to_vec();
    last_two.sort();
    assert_eq!(
        last_two,
        ["answer 2", "notifications/tools/list_changed"],
        "{said:?}"
    );
    let merged = seen.iter().find(|l| method_or_id(l) == "answer 2").unwrap();
    assert_eq!(tools(merged), (4, None), "{merged}");

    // A list_changed passed since that walk: walked again, not reused.
    wrapped.send(&list(3, None)).await;
    assert_eq!(
        method_or_id(&wrapped.line().await),
        "notifications/message page 1 #3"
    );
    assert_eq!(tools(&wrapped.line().await), (4, None));
    // Nothing passed since: reused.
    assert_eq!(tools(&wrapped.call(&list(4, None)).await), (4, None));
    assert_eq!(
        merges(&wrapped.recorder),
        [
            MergeOutcome::Merged,
            MergeOutcome::Merged,
            MergeOutcome::Reused
        ]
    );
    assert!(wrapped.finish().await.success());
}
