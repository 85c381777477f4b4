//! `check-client --relay SOCKET`: the stdio server a client under test
//! starts. It only copies its stdin to the harness's Unix socket and the
//! socket to its stdout, byte for byte, and exits when either side ends:
//! the harness serves the scenario and watches on the other end.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

pub async fn main(socket: &Path) -> ExitCode {
    let stream = match tokio::net::UnixStream::connect(socket).await {
        Ok(s) => s,
        Err(e) => {
            crate::cli::print_stderr(&format!(
                "mcp-exporter check-client --relay: cannot reach the harness: {e}\n"
            ));
            return ExitCode::from(2);
        }
    };
    let (mut from_harness, mut to_harness) = stream.into_split();
    let upstream = async move {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut to_harness).await;
        // The client closed our stdin: the harness ends the server.
        let _ = to_harness.shutdown().await;
    };
    let downstream = async move {
        let mut stdout = tokio::io::stdout();
        let _ = tokio::io::copy(&mut from_harness, &mut stdout).await;
        let _ = stdout.flush().await;
    };
    tokio::pin!(downstream);
    // The server's side ending ends us; the client's ending waits (a
    // little) for what the server still has to say.
    tokio::select! {
        () = &mut downstream => {}
        () = upstream => {
            let _ = tokio::time::timeout(Duration::from_secs(5), downstream).await;
        }
    }
    // A read of our stdin may still be blocked on a thread the runtime
    // would wait for: leave at once.
    std::process::exit(0)
}
