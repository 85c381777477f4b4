//! Running the client under test once: its command line with `{url}` or
//! `{command}` filled in, a minimal environment (as stdio servers get) plus
//! `MCP_SERVER_URL` or `MCP_SERVER_COMMAND`, its own process group and the
//! process-tree tag; a deadline, or an earlier stop the harness asks for,
//! kills the whole tree. Only the tails of its stdout and stderr are kept.

use super::verdict::{ClientEnd, Exit, Stopped};
use mcp_wire::transport::process_tree;
use mcp_wire::transport::stdio::{command, StdioSpec};
use std::collections::BTreeMap;
use std::future::Future;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// The environment variable holding the server's URL (HTTP transports).
pub const URL_VAR: &str = "MCP_SERVER_URL";
/// The environment variable holding the server's argv as a JSON array (stdio).
pub const COMMAND_VAR: &str = "MCP_SERVER_COMMAND";
/// The environment variable naming the scenario being played.
pub const SCENARIO_VAR: &str = "MCP_CHECK_CLIENT_SCENARIO";

/// Bytes of the client's stdout kept (its last line may be a count).
const STDOUT_TAIL: usize = 64 * 1024;
/// Bytes of the client's stderr kept (shown when it fails).
pub const STDERR_TAIL: usize = 4 * 1024;

/// The client under test, as given after `--`.
#[derive(Debug, Clone)]
pub struct ClientCommand {
    pub argv: Vec<String>,
    /// Variables of our environment it gets besides PATH, HOME and LANG.
    pub env: BTreeMap<String, String>,
    pub inherit_env: bool,
}

/// Where the client finds its server this time.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Url(String),
    /// The command line that starts the server (stdio).
    Command(Vec<String>),
}

/// How one run of the client went.
#[derive(Debug, Clone)]
pub struct ClientRun {
    pub end: ClientEnd,
    pub stderr_tail: String,
}

/// Why the client could not be started at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {program:?}: {kind}")]
pub struct StartFailure {
    pub program: String,
    pub kind: std::io::ErrorKind,
}

/// The argument list with `{url}` and `{command}` filled in: a whole
/// argument `{command}` becomes the server's argv; inside a longer argument
/// it becomes the argv quoted for a POSIX shell.
pub fn fill(argv: &[String], endpoint: &Endpoint) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    for arg in argv {
        match endpoint {
            Endpoint::Command(server) if arg == "{command}" => out.extend(server.iter().cloned()),
            Endpoint::Command(server) => out.push(arg.replace("{command}", &shell_words(server))),
            Endpoint::Url(url) => out.push(arg.replace("{url}", url)),
        }
    }
    out
}

/// `argv` quoted for a POSIX shell.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run the client once: until it exits, `deadline` passes, or `stop`
/// resolves (the harness saw it flood); then its whole tree is killed.
pub async fn run(
    client: &ClientCommand,
    endpoint: &Endpoint,
    scenario: &str,
    deadline: Duration,
    stop: impl Future<Output = Stopped>,
) -> Result<ClientRun, StartFailure> {
    let argv = fill(&client.argv, endpoint);
    let Some((program, args)) = argv.split_first() else {
        return Err(StartFailure {
            program: String::new(),
            kind: std::io::ErrorKind::InvalidInput,
        });
    };
    let mut env = client.env.clone();
    match endpoint {
        Endpoint::Url(url) => env.insert(URL_VAR.into(), url.clone()),
        Endpoint::Command(server) => env.insert(
            COMMAND_VAR.into(),
            serde_json::to_string(server).unwrap_or_default(),
        ),
    };
    env.insert(SCENARIO_VAR.into(), scenario.into());
    let spec = StdioSpec {
        command: program.clone(),
        args: args.to_vec(),
        env,
        cwd: None,
        inherit_env: client.inherit_env,
        scrubber: Default::default(),
    };
    let tag = process_tree::new_tag();
    let mut cmd = command(&spec, &tag);
    cmd.stdin(Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        process_tree::release_tag(&tag);
        StartFailure {
            program: program.clone(),
            kind: e.kind(),
        }
    })?;
    let pid = child.id();
    if let Some(pid) = pid {
        process_tree::register_leader(pid);
    }
    let stdout = Tail::drain(child.stdout.take(), STDOUT_TAIL);
    let stderr = Tail::drain(child.stderr.take(), STDERR_TAIL);
    let exit = tokio::select! {
        status = child.wait() => exit_of(status.ok()),
        () = tokio::time::sleep(deadline) => Exit::Killed(Stopped::Deadline),
        why = stop => Exit::Killed(why),
    };
    let ended = Instant::now();
    kill_tree(&mut child, pid, &tag).await;
    let (stdout_tail, stderr_tail) = (stdout.finish().await, stderr.finish().await);
    Ok(ClientRun {
        end: ClientEnd {
            exit,
            printed: printed_count(&stdout_tail),
            elapsed: ended.saturating_duration_since(started),
            ended,
        },
        stderr_tail,
    })
}

fn exit_of(status: Option<std::process::ExitStatus>) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Code(-1),
        },
        None => Exit::Code(-1),
    }
}

/// Kill what is left of the client's tree (its group, then every process
/// carrying its tag) and reap it.
async fn kill_tree(child: &mut tokio::process::Child, pid: Option<u32>, tag: &str) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) takes no pointers; the negative pid is the group
        // our child leads (it was started with process_group(0)).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    if let Some(pid) = pid {
        process_tree::forget_leader(pid);
    }
    // One scan now; the rescans that catch a descendant caught mid-exec run
    // on a thread of their own, off the next scenario's clock.
    let tree = tag.to_string();
    let _ =
        tokio::task::spawn_blocking(move || process_tree::kill_tagged_in_background(tree)).await;
    process_tree::release_tag(tag);
}

/// The last bytes of a pipe, read in the background.
struct Tail {
    kept: Arc<Mutex<Vec<u8>>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl Tail {
    fn drain<R>(pipe: Option<R>, keep: usize) -> Tail
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let reader = pipe.map(|mut pipe| {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                    kept.extend_from_slice(&buf[..n]);
                    let over = kept.len().saturating_sub(keep);
                    kept.drain(..over);
                }
            })
        });
        Tail { kept, reader }
    }

    /// What was kept, once the pipe ended (or briefly after the tree died:
    /// a descendant that escaped may hold it open).
    async fn finish(mut self) -> String {
        if let Some(reader) = self.reader.take() {
            let abort = reader.abort_handle();
            if tokio::time::timeout(Duration::from_millis(300), reader)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&kept).into_owned()
    }
}

/// The count a client printed: its last non-empty stdout line, a whole
/// number alone or a JSON object with a `count` (or `items`) number, at the
/// top or under `listing`.
pub fn printed_count(stdout: &str) -> Option<u64> {
    let line = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    if let Ok(n) = line.parse::<u64>() {
        return Some(n);
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let at = |v: &serde_json::Value| {
        v.get("count")
            .or_else(|| v.get("items"))
            .and_then(serde_json::Value::as_u64)
    };
    at(&value).or_else(|| value.get("listing").and_then(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_url_and_command() {
        let argv: Vec<String> = ["client", "--url={url}", "{url}"]
            .map(String::from)
            .to_vec();
        let filled = fill(&argv, &Endpoint::Url("http://h/mcp".into()));
        assert_eq!(filled, ["client", "--url=http://h/mcp", "http://h/mcp"]);
        let server: Vec<String> = ["/bin/x", "check-client", "--relay", "/tmp/a b"]
            .map(String::from)
            .to_vec();
        let argv: Vec<String> = ["c", "{command}", "--cmd={command}"]
            .map(String::from)
            .to_vec();
        let filled = fill(&argv, &Endpoint::Command(server));
        assert_eq!(
            filled,
            [
                "c",
                "/bin/x",
                "check-client",
                "--relay",
                "/tmp/a b",
                "--cmd=/bin/x check-client --relay '/tmp/a b'"
            ]
        );
    }

    #[test]
    fn reads_the_count_a_client_prints() {
        assert_eq!(printed_count("log\n23\n\n"), Some(23));
        assert_eq!(
            printed_count(r#"{"client":"x","count":8,"names":[]}"#),
            Some(8)
        );
        assert_eq!(printed_count(r#"{"listing":{"items":14}}"#), Some(14));
        assert_eq!(printed_count("done"), None);
        assert_eq!(printed_count(""), None);
    }

    #[test]
    fn quotes_for_a_shell() {
        let argv: Vec<String> = ["a", "b c", "it's"].map(String::from).to_vec();
        assert_eq!(shell_words(&argv), r#"a 'b c' 'it'\''s'"#);
    }
}
