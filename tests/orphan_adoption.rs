//! Orphans of a stdio server's tree: adopted by the exporter (a child
//! subreaper), killed and reaped once their server is closed, spared while
//! it is open. Its own test binary: becoming a subreaper is process-wide.
#![cfg(target_os = "linux")]

use mcp_testkit::process::wait_for;
use mcp_wire::transport::process_tree::{
    become_subreaper, new_tag, orphans_killed, release_tag, sweep_at_exit, Sweeper, TREE_TAG_VAR,
};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Pids whose command line contains `marker`, with their parent pid and
/// whether they are zombies.
fn marked(marker: &str) -> Vec<(u32, u32, bool)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let rest = stat.rsplit_once(')').unwrap().1;
        let mut fields = rest.split_whitespace();
        let zombie = fields.next() == Some("Z");
        let parent = fields.next().unwrap().parse().unwrap();
        out.push((pid, parent, zombie));
    }
    out
}

/// Our zombie children (none may be left behind).
/// Live processes whose environment carries the tree tag `tag` (a zombie's
/// environment reads empty).
fn tagged(tag: &str) -> usize {
    let needle = format!("{TREE_TAG_VAR}={tag}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/environ")).ok())
        .filter(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        .count()
}

fn own_zombies() -> usize {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter(|stat| {
            let mut f = stat.rsplit_once(')').unwrap().1.split_whitespace();
            f.next() == Some("Z") && f.next() == Some(me.to_string().as_str())
        })
        .count()
}

/// A server's tree whose leader is gone: `sh` starts a `setsid` grandchild
/// (which runs `sleep` under a shell that shows `marker`) and exits.
fn orphan_tree(tag: &str, marker: &str) {
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("setsid sh -c 'sleep 3600; :' {marker} &"))
        .env(TREE_TAG_VAR, tag)
        // Not the harness's pipes: a surviving orphan would hold them.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// How long an orphan may take to start, be adopted or go.
const LIMIT: Duration = Duration::from_secs(20);

// One test: sweeps reap zombies of this whole process, so a second test
// running beside it could lose its own child's exit status.
#[test]
fn orphans_are_adopted_then_killed_and_reaped_once_their_server_closed() {
    become_subreaper().unwrap();
    let me = std::process::id();
    let open_server = new_tag();
    let closed_server = new_tag();
    release_tag(&closed_server);
    let (open_marker, closed_marker) = (format!("orphan-open-{me}"), format!("orphan-closed-{me}"));
    // A child this process started itself, untagged (a test's own server,
    // say): never killed by sweeps.
    let mut own = Command::new("sleep")
        .arg("3600")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    orphan_tree(&open_server, &open_marker);
    orphan_tree(&closed_server, &closed_marker);

    // Both setsid shells lost their parent: they are ours now, not init's.
    // Read in one pass per check: while a shell forks its `sleep`, a second
    // process briefly shows the marker, so a count and a later read of the
    // same list can disagree.
    let adopted = |marker: &str| matches!(marked(marker)[..], [(_, parent, false)] if parent == me);
    wait_for(
        LIMIT,
        "both orphans started and adopted by us, not init",
        || (adopted(&open_marker) && adopted(&closed_marker)).then_some(()),
    );

    // Sweeps kill the closed server's shell, then its sleep (orphaned in
    // turn), and reap both; the open server's tree is untouched.
    let mut sweeper = Sweeper::default();
    let mut killed = 0;
    wait_for(LIMIT, "closed server's orphans gone", || {
        killed += sweeper.sweep().killed;
        (marked(&closed_marker).is_empty() && own_zombies() == 0).then_some(())
    });
    assert!(killed >= 1);
    // What `mcp_exporter_stdio_orphans_killed_total` shows.
    assert_eq!(orphans_killed(), killed as u64);
    let open = marked(&open_marker);
    assert_eq!(open.len(), 1, "the open server's orphan was killed");
    assert!(!open[0].2);

    assert!(
        own.try_wait().unwrap().is_none(),
        "an untagged child was killed"
    );
    own.kill().unwrap();
    own.wait().unwrap();

    // Once that server closes too, its orphans go the same way.
    release_tag(&open_server);
    // The shell goes first; its sleep, orphaned in turn, on a later sweep:
    // wait for every process carrying either tag, not only the shells.
    wait_for(LIMIT, "open server's orphans gone after close", || {
        sweeper.sweep();
        (marked(&open_marker).is_empty()
            && tagged(&open_server) == 0
            && tagged(&closed_server) == 0
            && own_zombies() == 0)
            .then_some(())
    });
    // Nothing carrying either tag is left anywhere.
    for tag in [&open_server, &closed_server] {
        assert_eq!(tagged(tag), 0, "a process with tag {tag} survived");
    }

    // At exit, a server still open (its tag live) and its tree go too:
    // the exit sweep does not wait for a close that will never come.
    let at_exit = new_tag();
    let exit_marker = format!("orphan-at-exit-{me}");
    orphan_tree(&at_exit, &exit_marker);
    wait_for(LIMIT, "the last orphan started", || {
        (marked(&exit_marker).len() == 1).then_some(())
    });
    let before = orphans_killed();
    let swept = sweep_at_exit();
    assert!(swept >= 1, "nothing killed at exit");
    assert_eq!(orphans_killed(), before + swept as u64);
    wait_for(LIMIT, "the open server's tree gone at exit", || {
        sweeper.sweep();
        (marked(&exit_marker).iter().all(|(_, _, zombie)| *zombie) && own_zombies() == 0)
            .then_some(())
    });
    assert!(marked(&exit_marker).is_empty());
}
