//! `scripts/demo` as a newcomer runs it, with `CARGO_TARGET_DIR` pointing
//! somewhere else than `target/`: it finds the binary there, says where the
//! status page is only once the page answers, and stops with a clear
//! message when a port it needs is taken.
//!
//! To stay cheap the script does not build (`DEMO_BUILD=0`): the test's own
//! binary is put where a release build under that target directory lands.

use mcp_testkit::ports::free_port;
use mcp_testkit::process::Proc;
use mcp_testkit::{exporter_bin, http_get, repo_path, run};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

/// A target directory elsewhere holding `release/mcp-exporter`.
fn elsewhere_target_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let release = dir.path().join("release");
    std::fs::create_dir(&release).expect("mkdir release");
    std::os::unix::fs::symlink(exporter_bin(), release.join("mcp-exporter"))
        .expect("symlink the binary");
    dir
}

/// The demo with its target directory (and baselines) in `target_dir`.
fn demo_command(target_dir: &Path, sim_port: u16, listen: &str) -> Command {
    let mut command = Command::new(repo_path("scripts/demo"));
    command
        .env("CARGO_TARGET_DIR", target_dir)
        .env("DEMO_STATE_DIR", target_dir.join("state"))
        .env("DEMO_BUILD", "0")
        .env("DEMO_SIM_PORT", sim_port.to_string())
        .env("DEMO_TAP_PORT", free_port().to_string())
        .env("DEMO_LISTEN", listen);
    command
}

fn status_page_url(line: &str) -> Option<String> {
    let rest = &line[line.find("demo: status page ")? + "demo: status page ".len()..];
    Some(rest.split_whitespace().next()?.to_string())
}

#[test]
fn the_demo_serves_its_status_page_with_cargo_target_dir_elsewhere() {
    let target_dir = elsewhere_target_dir();
    let listen = format!("127.0.0.1:{}", free_port());
    let demo = Proc::try_spawn(
        "scripts/demo",
        demo_command(target_dir.path(), free_port(), &listen),
        status_page_url,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(demo.url, format!("http://{listen}/"));
    // Said once the page answers: no retry needed here.
    let (status, page) = http_get(&demo.url);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("gateway"), "{page}");
    // The simulated servers follow DEMO_SIM_PORT: targets get polled.
    mcp_testkit::wait_for(
        std::time::Duration::from_secs(60),
        "a verdict for healthy",
        || {
            let (_, body) = http_get(&format!("http://{listen}/api/targets"));
            let targets: serde_json::Value = serde_json::from_str(&body).ok()?;
            let healthy = targets
                .as_array()?
                .iter()
                .find(|t| t["name"] == "healthy")?;
            (healthy["verdict"]["level"] == "healthy").then_some(())
        },
    );
    // Baselines go where DEMO_STATE_DIR says, not into the repository.
    mcp_testkit::wait_for(
        std::time::Duration::from_secs(30),
        "baselines in DEMO_STATE_DIR",
        || target_dir.path().join("state").is_dir().then_some(()),
    );
}

#[test]
fn the_demo_stops_with_a_clear_message_when_a_port_is_taken() {
    let target_dir = elsewhere_target_dir();
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken_addr = taken.local_addr().expect("addr").to_string();
    let finished = run(
        demo_command(target_dir.path(), free_port(), &taken_addr),
        "scripts/demo",
    );
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    assert!(
        finished
            .stderr
            .contains(&format!("{taken_addr} is already in use")),
        "{}",
        finished.describe()
    );
    assert!(
        !finished.stderr.contains("status page"),
        "{}",
        finished.describe()
    );
}

#[test]
fn the_demo_says_where_it_looked_when_there_is_no_binary() {
    let empty = tempfile::tempdir().expect("temp dir");
    let finished = run(
        demo_command(
            empty.path(),
            free_port(),
            &format!("127.0.0.1:{}", free_port()),
        ),
        "scripts/demo",
    );
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    let expected = empty.path().join("release/mcp-exporter");
    assert!(
        finished
            .stderr
            .contains(&format!("no binary at {}", expected.display())),
        "{}",
        finished.describe()
    );
}
