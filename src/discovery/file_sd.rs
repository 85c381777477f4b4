//! `file_sd`: Prometheus target-group files (JSON or YAML) matched by
//! patterns whose last path segment may hold one `*`. Re-read on a change
//! (a cheap stat of every matching file between refreshes) and every
//! `refresh_interval`.
//!
//! Files are read as regular files only, without ever blocking: opened
//! with `O_NONBLOCK` (a FIFO named `targets.json` cannot hold a refresh),
//! checked with `fstat` after opening (no FIFOs, devices or directories)
//! and read up to `max_file_bytes`. Symbolic links are followed, unlike
//! for the files we own: Kubernetes mounts a ConfigMap's files as links.

use super::budget::KeptBudget;
use super::entry::{admit_all, Candidate, SkipList};
use super::refresh::{Refresh, RefreshFailure};
use super::sd_format::{Format, FormatError, GroupReader};
use super::DiscoverySource;
use crate::config::{ProbeModule, SourceConfig};
use mcp_listing::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// Most files one pattern may match (a bound on a refresh's work).
const MAX_FILES: usize = 1000;

pub struct FileSd {
    source: Arc<SourceConfig>,
    module: ProbeModule,
    patterns: Vec<PathBuf>,
    max_file_bytes: u64,
    /// What the files looked like at the last refresh.
    stamps: Option<Vec<Stamp>>,
}

/// A matching file as `stat` sees it: a change of any part is a change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl FileSd {
    /// `source`, whose `file_sd` settings are `files` and `max_file_bytes`.
    pub fn new(
        source: Arc<SourceConfig>,
        module: ProbeModule,
        files: Vec<PathBuf>,
        max_file_bytes: u64,
    ) -> FileSd {
        FileSd {
            patterns: files,
            max_file_bytes,
            source,
            module,
            stamps: None,
        }
    }
}

impl DiscoverySource for FileSd {
    async fn refresh(&mut self) -> Refresh {
        let started = SystemTime::now();
        let patterns = self.patterns.clone();
        let cap = self.max_file_bytes;
        let max = self.source.max_targets;
        let read = tokio::task::spawn_blocking(move || {
            let stamps = stamps(&patterns);
            (stamps, read_all(&patterns, cap, max))
        })
        .await;
        let (stamps, read) = match read {
            Ok(done) => done,
            Err(e) => {
                return Refresh::failed(
                    RefreshFailure::Unreadable,
                    format!("the file reader stopped: {e}"),
                    started,
                )
            }
        };
        self.stamps = stamps.ok();
        match read {
            Ok((candidates, skipped)) => {
                let (entries, skipped) = admit_all(candidates, &self.module, skipped);
                Refresh::complete(entries, skipped, started)
            }
            Err((failure, detail)) => Refresh::failed(failure, detail, started),
        }
    }

    async fn changed(&mut self) -> bool {
        let patterns = self.patterns.clone();
        let now = tokio::task::spawn_blocking(move || stamps(&patterns).ok())
            .await
            .ok()
            .flatten();
        // A pattern that cannot be listed now counts as a change: the
        // refresh says why.
        now.is_none() || now != self.stamps
    }
}

/// Every file the patterns match, in order, each read and parsed: their
/// candidates, and the entries skipped while reading them.
fn read_all(
    patterns: &[PathBuf],
    cap: u64,
    max_targets: usize,
) -> Result<(Vec<Candidate>, SkipList), (RefreshFailure, String)> {
    // One budget for all the files of the source.
    let mut reader = GroupReader::new(max_targets, KeptBudget::default());
    for path in expand_all(patterns)? {
        let shown = path.display().to_string();
        let bytes = read_regular(&path, cap)?;
        match reader.read(&bytes, format_of(&path), &shown) {
            Ok(()) => {}
            Err(FormatError::Malformed(why)) => {
                return Err((
                    RefreshFailure::Error(ErrorKind::MalformedResult),
                    format!("{shown}: {why}"),
                ))
            }
            Err(FormatError::TooMany { .. }) => {
                return Err((
                    RefreshFailure::TooManyTargets,
                    format!(
                        "the files hold more than max_targets ({max_targets}) entries (at {shown})"
                    ),
                ))
            }
            Err(FormatError::OverBudget(e)) => {
                return Err((RefreshFailure::OverBudget, format!("{e} (at {shown})")))
            }
        }
    }
    Ok(reader.finish())
}

/// The files matching every pattern, sorted per pattern, each once.
fn expand_all(patterns: &[PathBuf]) -> Result<Vec<PathBuf>, (RefreshFailure, String)> {
    let mut out: Vec<PathBuf> = Vec::new();
    for pattern in patterns {
        for path in expand(pattern)? {
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The files one pattern names: itself when it has no `*`, else the
/// entries of its folder whose names match, sorted.
fn expand(pattern: &Path) -> Result<Vec<PathBuf>, (RefreshFailure, String)> {
    let Some(name) = pattern.file_name().and_then(|n| n.to_str()) else {
        return Err((
            RefreshFailure::Unreadable,
            format!("{}: not a file name", pattern.display()),
        ));
    };
    let Some((prefix, suffix)) = name.split_once('*') else {
        return Ok(vec![pattern.to_path_buf()]);
    };
    let dir = match pattern.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let listing = std::fs::read_dir(&dir).map_err(|e| {
        (
            RefreshFailure::Unreadable,
            format!("{}: {e}", dir.display()),
        )
    })?;
    let mut found = Vec::new();
    for entry in listing.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if file_name.len() >= prefix.len() + suffix.len()
            && file_name.starts_with(prefix)
            && file_name.ends_with(suffix)
        {
            found.push(entry.path());
            if found.len() > MAX_FILES {
                return Err((
                    RefreshFailure::Unreadable,
                    format!("{} matches more than {MAX_FILES} files", pattern.display()),
                ));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// `stat` of every matching file, for the cheap change check.
fn stamps(patterns: &[PathBuf]) -> Result<Vec<Stamp>, (RefreshFailure, String)> {
    use std::os::unix::fs::MetadataExt;
    expand_all(patterns).map(|paths| {
        paths
            .into_iter()
            .map(|path| {
                let meta = std::fs::metadata(&path).ok();
                Stamp {
                    len: meta.as_ref().map_or(0, |m| m.len()),
                    modified: meta.as_ref().and_then(|m| m.modified().ok()),
                    inode: meta.as_ref().map_or(0, |m| m.ino()),
                    path,
                }
            })
            .collect()
    })
}

/// The whole file, if it is a regular file of at most `cap` bytes
/// ([`crate::files::read_regular`], links followed).
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, (RefreshFailure, String)> {
    use crate::files::{Links, ReadFileError};
    let shown = path.display();
    crate::files::read_regular(path, cap, Links::Follow).map_err(|e| match e {
        ReadFileError::TooLarge { .. } => (
            RefreshFailure::Error(ErrorKind::ResponseTooLarge),
            format!("{shown}: larger than max_file_bytes ({cap} bytes)"),
        ),
        other => (RefreshFailure::Unreadable, format!("{shown}: {other}")),
    })
}

fn format_of(path: &Path) -> Format {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("yml" | "yaml") => Format::Yaml,
        _ => Format::Json,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_their_last_segment_only() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a.json", "b.json", "c.yaml", "tg_x.json"] {
            std::fs::write(dir.path().join(f), "[]").unwrap();
        }
        let names = |p: &str| -> Vec<String> {
            expand(&dir.path().join(p))
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names("*.json"), vec!["a.json", "b.json", "tg_x.json"]);
        assert_eq!(names("tg_*.json"), vec!["tg_x.json"]);
        assert_eq!(names("c.yaml"), vec!["c.yaml"]);
        assert_eq!(names("*.yml"), Vec::<String>::new());
    }

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        crate::files::make_fifo(&fifo);
        let (failure, why) = read_regular(&fifo, 100).unwrap_err();
        assert_eq!(failure, RefreshFailure::Unreadable);
        assert!(why.contains("not a regular file"), "{why}");
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(100 << 20).unwrap();
        let (failure, _) = read_regular(&big, 1 << 20).unwrap_err();
        assert_eq!(failure, RefreshFailure::Error(ErrorKind::ResponseTooLarge));
        let (failure, _) = read_regular(&dir.path().join("missing.json"), 10).unwrap_err();
        assert_eq!(failure, RefreshFailure::Unreadable);
        let link = dir.path().join("link.json");
        std::fs::write(dir.path().join("real.json"), "[]").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.json"), &link).unwrap();
        assert_eq!(read_regular(&link, 10).unwrap(), b"[]");
    }
}
