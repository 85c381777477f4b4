//! Child processes with a deadline on everything a test waits for.
//!
//! Every child starts in a process group of its own, so whatever it starts
//! in turn goes when the test kills the group. The deadlines are about
//! hangs, not speed: a loaded 2-core machine takes many seconds just to
//! import a Python SDK, and no assertion ever depends on them.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to say where it listens.
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(90);
/// How long one command may run before it is killed and the test fails.
pub const RUN_DEADLINE: Duration = Duration::from_secs(150);
/// How long a command's process group may outlive it in
/// [`run_leaving_nothing`].
pub const GROUP_EXIT_DEADLINE: Duration = Duration::from_secs(10);

/// What a server's stderr says once it listens; the address follows.
/// (`mcp-exporter --log.format logfmt` writes it as a logfmt line.)
const LISTENING: [&str; 3] = [
    "msg=\"listening on\" url=",
    "listening on ",
    "Uvicorn running on ",
];

/// Sends `signal` to the process group `pgid` (a child started here).
pub fn kill_group(pgid: u32, signal: i32) {
    // SAFETY: kill(2) takes no pointers; a negative pid signals the process
    // group a child of this module created (process_group(0)).
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

/// Whether any process of the group `pgid` still exists.
pub fn group_alive(pgid: u32) -> bool {
    // SAFETY: as in kill_group; signal 0 only checks for existence.
    unsafe { libc::kill(-(pgid as i32), 0) == 0 }
}

/// Whether a process exists. Zombies count as dead: a reaped child has no
/// /proc entry, an unreaped one shows state Z.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Polls `f` every 100 ms until it returns Some, or panics naming `what`
/// once `limit` has passed (a bound on waiting, never a measurement).
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > limit {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// A long-running process (the exporter, a simulator, a gateway) in its own
/// process group, killed with the group on drop. Its stderr is kept in
/// memory (the first MiB) and its `listening on URL` line read.
pub struct Proc {
    child: Child,
    /// Where it listens, e.g. `http://127.0.0.1:43817` (no trailing slash).
    pub url: String,
    log: Arc<Mutex<String>>,
}

impl Proc {
    /// `mcp-exporter ARGS...`, once it says where it listens.
    pub fn start(args: &[&str]) -> Proc {
        Proc::start_with_env(args, &[])
    }

    /// [`Proc::start`] with extra environment variables.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut command = Command::new(crate::exporter_bin());
        command.args(args).envs(env.iter().copied());
        Proc::spawn(&format!("mcp-exporter {args:?}"), command)
    }

    /// `argv` (program first), once it says where it listens.
    pub fn start_argv(what: &str, argv: &[String], env: &[(&str, &str)]) -> Proc {
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).envs(env.iter().copied());
        Proc::spawn(what, command)
    }

    /// Starts `command` and waits until a stderr line says `listening on
    /// URL` (the exporter, the simulator, our peers) or `Uvicorn running on
    /// URL` (Python `mcp` 1.x); panics with its stderr if it never does.
    pub fn spawn(what: &str, command: Command) -> Proc {
        Proc::try_spawn(what, command, listening_url).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts `command` and waits until `url_in` finds where it listens in
    /// a line of its stderr. Err (after killing it) when it exits first or
    /// says nothing within [`STARTUP_DEADLINE`], with its stderr.
    pub fn try_spawn(
        what: &str,
        command: Command,
        url_in: fn(&str) -> Option<String>,
    ) -> Result<Proc, String> {
        let (child, log, url_rx) = spawn_kept(what, command, url_in);
        let why = match url_rx.recv_timeout(STARTUP_DEADLINE) {
            Ok(url) => return Ok(Proc { child, url, log }),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                format!("not listening after {STARTUP_DEADLINE:?}")
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                "closed stderr without saying where it listens".to_string()
            }
        };
        let mut child = child;
        kill_group(child.id(), libc::SIGKILL);
        let status = child.wait();
        // Not joined: an escaped grandchild could hold the pipe open. The
        // last lines usually follow within this pause.
        thread::sleep(Duration::from_millis(200));
        let log = log.lock().unwrap_or_else(|e| e.into_inner());
        Err(format!("{what}: {why} (exit: {status:?}); stderr:\n{log}"))
    }

    /// A process that listens nowhere (a client), started and not waited
    /// for; killed with its group on drop, its stderr kept. `url` is empty.
    pub fn background(what: &str, command: Command) -> Proc {
        let (child, log, _) = spawn_kept(what, command, |_| None);
        Proc {
            child,
            url: String::new(),
            log,
        }
    }

    /// Whether it has exited (and been reaped).
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Everything it wrote to stderr so far (the first MiB).
    pub fn stderr(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `url` followed by `path` (which starts with `/`).
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

/// The receiving end of where a child says it listens.
type UrlTold = mpsc::Receiver<String>;

/// `command` started in a process group of its own, stdin and stdout
/// closed, its stderr drained into a kept log (the first MiB) by a thread
/// that also sends the first address `url_in` finds there.
fn spawn_kept(
    what: &str,
    mut command: Command,
    url_in: fn(&str) -> Option<String>,
) -> (Child, Arc<Mutex<String>>, UrlTold) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stderr = child.stderr.take().expect("stderr is piped");
    let log = Arc::new(Mutex::new(String::new()));
    let (url_tx, url_rx) = mpsc::channel::<String>();
    let kept = log.clone();
    // Keeps draining after the address so the child never blocks on a
    // full pipe.
    thread::spawn(move || {
        let mut told = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !told {
                if let Some(url) = url_in(&line) {
                    let _ = url_tx.send(url);
                    told = true;
                }
            }
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() < 1 << 20 {
                kept.push_str(&line);
                kept.push('\n');
            }
        }
    });
    (child, log, url_rx)
}

impl Drop for Proc {
    fn drop(&mut self) {
        kill_group(self.child.id(), libc::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The address after `listening on ` or `Uvicorn running on `, without a
/// trailing slash.
pub fn listening_url(line: &str) -> Option<String> {
    LISTENING.iter().find_map(|marker| {
        let rest = &line[line.find(marker)? + marker.len()..];
        let url = rest.split_whitespace().next()?;
        Some(url.trim_end_matches('/').to_string())
    })
}

/// A finished command: its status and everything it wrote.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// stdout then stderr, for searching what a command printed anywhere.
    pub fn output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Status and output, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// `mcp-exporter ARGS...` run to completion (see [`run`]).
pub fn run_exporter(args: &[&str]) -> Finished {
    let mut command = Command::new(crate::exporter_bin());
    command.args(args);
    run(command, &format!("mcp-exporter {args:?}"))
}

/// Runs `command` (stdin empty) to completion in its own process group.
/// Past [`RUN_DEADLINE`] the group is killed and the test fails; what the
/// command leaves behind when it exits is the test's to judge.
pub fn run(mut command: Command, what: &str) -> Finished {
    command.stdin(Stdio::null());
    let child = spawn_piped(command, what);
    finish(child, what)
}

/// [`run`], then fails the test if any process of the command's group is
/// still alive [`GROUP_EXIT_DEADLINE`] after it exited (a stdio server it
/// did not reap, say); the leftovers are killed first.
pub fn run_leaving_nothing(mut command: Command, what: &str) -> Finished {
    command.stdin(Stdio::null());
    let child = spawn_piped(command, what);
    let pgid = child.id();
    let finished = finish(child, what);
    let since = Instant::now();
    while group_alive(pgid) && since.elapsed() < GROUP_EXIT_DEADLINE {
        thread::sleep(Duration::from_millis(20));
    }
    let leaked = group_alive(pgid);
    if leaked {
        kill_group(pgid, libc::SIGKILL);
    }
    assert!(
        !leaked,
        "{what}: left a process running {GROUP_EXIT_DEADLINE:?} after it exited\n{}",
        finished.describe()
    );
    finished
}

/// Forks the command and reports its `ru_maxrss` in the file named first.
/// A process exec'd straight from the test binary inherits the test
/// binary's own high-water mark (the kernel keeps the larger of the old and
/// new address space's at exec), so other tests' allocations would count;
/// a small interpreter forking it first leaves only its own few MiB.
const MEASURE: &str = r#"
import os, signal, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
"#;

/// `command` run under [`MEASURE`]: same program, arguments, environment
/// and directory.
fn measured(command: &Command, report: &std::path::Path) -> Command {
    let mut wrapped = Command::new("python3");
    wrapped
        .arg("-c")
        .arg(MEASURE)
        .arg(report)
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// [`run`], and the command's peak resident set size in KiB, as the
/// kernel counted it for that process (and the children it waited for):
/// `wait4`'s `ru_maxrss`, read by a small forking parent ([`MEASURE`]).
/// A measure of bytes kept, not of time.
// The child is reaped by wait4 below, which clippy cannot see.
#[allow(clippy::zombie_processes)]
pub fn run_measured(command: Command, what: &str) -> (Finished, u64) {
    use std::os::unix::process::ExitStatusExt;
    let report = tempfile::NamedTempFile::new().expect("a temporary file for the peak");
    let mut command = measured(&command, report.path());
    command.stdin(Stdio::null());
    let mut child = spawn_piped(command, what);
    let pid = child.id() as libc::pid_t;
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own child, writing only into the local.
        let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if got == pid {
            let finished = Finished {
                status: ExitStatus::from_raw(status),
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            };
            let peak = std::fs::read_to_string(report.path())
                .ok()
                .and_then(|text| text.trim().parse().ok())
                .unwrap_or_else(|| panic!("{what}: no peak measured\n{}", finished.describe()));
            return (finished, peak);
        }
        if started.elapsed() > RUN_DEADLINE {
            kill_group(pid as u32, libc::SIGKILL);
            let _ = child.wait();
            panic!("{what}: still running after {RUN_DEADLINE:?}; killed");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_piped(mut command: Command, what: &str) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"))
}

/// Waits for a child started in its own process group (`process_group(0)`)
/// to exit, reading its piped stdout and stderr; past [`RUN_DEADLINE`] its
/// group is killed and the test fails.
pub fn finish(mut child: Child, what: &str) -> Finished {
    let pgid = child.id();
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait on our own child") {
            break Some(status);
        }
        if started.elapsed() > RUN_DEADLINE {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let Some(status) = status else {
        kill_group(pgid, libc::SIGKILL);
        let _ = child.wait();
        panic!(
            "{what}: still running after {RUN_DEADLINE:?}; killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
            stdout.join().unwrap_or_default(),
            stderr.join().unwrap_or_default()
        );
    };
    Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn read_all(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}
