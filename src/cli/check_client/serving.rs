//! What both serving modes share: when an app's listing counts as
//! abandoned, and the report file each grade is appended to.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

/// A listing whose cursor does not come back within this is abandoned (an
/// app that reads page 1 and keeps its session is graded this soon).
pub const ABANDON_AFTER: Duration = Duration::from_secs(5);

/// Append one line to the report file (created private), once.
pub fn append(path: &Path, line: &str) {
    let opened = crate::files::open_append(path, libc::O_CLOEXEC);
    let written = opened.and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        crate::cli::print_stderr(&format!(
            "mcp-exporter check-client: cannot append to {}: {e}\n",
            path.display()
        ));
    }
}
