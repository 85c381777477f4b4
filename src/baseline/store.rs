//! Baselines in memory, persisted per target as JSON in the state
//! directory with an atomic replace (temp file, fsync, rename, fsync dir).
//! The directory is ours and private (0700, files 0600); what is found in
//! it is read as a regular file only, never through a link, up to
//! [`MAX_STATE_FILE_BYTES`] (`crate::files`), and anything else is moved
//! aside with its reason.

use super::names::NameList;
use crate::files::{self, Links, ReadFileError};
use mcp_listing::fingerprint::ItemFingerprint;
use mcp_listing::Kind;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("state directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("baseline file {path}: {source}")]
    Decode {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// Not a file we can use (a link, FIFO or device, larger than the cap,
    /// not our JSON): moved aside, never read again nor overwritten.
    #[error("baseline file {path}: {why}; moved aside as {kept_as} (its target starts without a baseline)")]
    Unusable {
        path: PathBuf,
        why: String,
        kept_as: String,
    },
    /// Written by another (likely newer) exporter. Kept aside under
    /// `kept_as`, never read as ours and never overwritten.
    #[error("baseline file {path} has format version {version}, this exporter reads {FORMAT_VERSION}; kept aside as {kept_as} (its target starts without a baseline)")]
    UnknownVersion {
        path: PathBuf,
        version: u64,
        kept_as: String,
    },
    #[error("baseline file {path} has format version {version}, this exporter reads {FORMAT_VERSION}, and it could not be kept aside: {source}; the target's baselines are not persisted until it is moved")]
    UnknownVersionStuck {
        path: PathBuf,
        version: u64,
        source: std::io::Error,
    },
}

/// Only the format version, read before the rest: a file of another
/// version may not have our shape at all.
#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

/// One kind's last complete listing, in memory: each name once.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "KindBaselineFile")]
struct KindBaseline {
    names: NameList,
    /// When these names were stored; an identical later listing does not
    /// restamp (or rewrite) them.
    observed_unix_seconds: f64,
    /// Per item, what callers depend on as short hashes (item-content
    /// drift): `fingerprints[i]` is `names[i]`'s, so no name is kept twice.
    /// Empty when none were kept (files written before drift was kept).
    fingerprints: Vec<Option<ItemFingerprint>>,
}

/// [`KindBaseline`] as the file holds it: fingerprints keyed by name.
#[derive(Deserialize)]
struct KindBaselineFile {
    names: Vec<String>,
    observed_unix_seconds: f64,
    #[serde(default)]
    fingerprints: BTreeMap<String, ItemFingerprint>,
}

impl From<KindBaselineFile> for KindBaseline {
    fn from(f: KindBaselineFile) -> KindBaseline {
        let names = f.names.iter().map(String::as_str).collect();
        KindBaseline::new(names, f.observed_unix_seconds, f.fingerprints)
    }
}

impl KindBaseline {
    /// Fingerprints of names not in `names` are left out.
    fn new(
        names: NameList,
        observed_unix_seconds: f64,
        mut by_name: BTreeMap<String, ItemFingerprint>,
    ) -> KindBaseline {
        let fingerprints = if by_name.is_empty() {
            Vec::new()
        } else {
            names.iter().map(|n| by_name.remove(n)).collect()
        };
        KindBaseline {
            names,
            observed_unix_seconds,
            fingerprints,
        }
    }

    fn fingerprint(&self, name: &str) -> Option<&ItemFingerprint> {
        let i = self.names.position(name)?;
        self.fingerprints.get(i)?.as_ref()
    }

    /// Whether `names` and `by_name` are what this baseline holds.
    fn holds(&self, names: &[String], by_name: &BTreeMap<String, ItemFingerprint>) -> bool {
        self.names.holds(names)
            && by_name.len() == self.fingerprints.iter().flatten().count()
            && by_name.iter().all(|(n, f)| self.fingerprint(n) == Some(f))
    }
}

/// Written as the file has always held it: fingerprints a map by name.
impl Serialize for KindBaseline {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct ByName<'a>(&'a KindBaseline);
        impl Serialize for ByName<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(
                    self.0
                        .names
                        .iter()
                        .zip(&self.0.fingerprints)
                        .filter_map(|(n, f)| f.as_ref().map(|f| (n, f))),
                )
            }
        }
        let with_prints = self.fingerprints.iter().any(Option::is_some);
        let mut st = s.serialize_struct("KindBaseline", 2 + usize::from(with_prints))?;
        st.serialize_field("names", &self.names)?;
        st.serialize_field("observed_unix_seconds", &self.observed_unix_seconds)?;
        if with_prints {
            st.serialize_field("fingerprints", &ByName(self))?;
        }
        st.end()
    }
}

/// One kind's item fingerprints in a baseline, looked up by name.
#[derive(Debug, Clone, Copy)]
pub struct BaselinePrints<'a>(&'a KindBaseline);

impl<'a> BaselinePrints<'a> {
    pub fn get(&self, name: &str) -> Option<&'a ItemFingerprint> {
        self.0.fingerprint(name)
    }
}

/// A file as read (its `version` was checked by [`VersionOnly`] first).
#[derive(Debug, Deserialize)]
struct TargetFile {
    target: String,
    kinds: BTreeMap<Kind, KindBaseline>,
}

/// [`TargetFile`] as written: borrowed, so writing copies no names.
#[derive(Serialize)]
struct TargetFileRef<'a> {
    version: u32,
    target: &'a str,
    kinds: BTreeMap<Kind, &'a KindBaseline>,
}

const FORMAT_VERSION: u32 = 1;

/// Largest baseline file read: 4 kinds × 100,000 names of at most 256
/// bytes (`mcp_listing::text::MAX_NAME_BYTES`) with their fingerprints fit
/// well within it; anything larger was not written by us.
pub const MAX_STATE_FILE_BYTES: u64 = 256 << 20;

/// Key of one baseline: the target's name and the kind.
pub type BaselineKey = (String, Kind);

/// Every target's last complete names per kind.
#[derive(Debug, Default)]
pub struct BaselineStore {
    dir: Option<PathBuf>,
    baselines: HashMap<BaselineKey, KindBaseline>,
    /// Files of an unknown version that could not be moved aside: never
    /// replaced by a write of ours.
    stuck: Vec<PathBuf>,
    /// Targets with baselines that are not polled now, and since when
    /// (Unix seconds): kept for the retention, then dropped.
    departed: HashMap<String, f64>,
    /// Temporary files of interrupted writes that opening removed.
    stale_temps_removed: usize,
}

impl BaselineStore {
    /// Where baseline files are kept (none: in memory only).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Temporary files an earlier run left behind, removed by `open`.
    pub fn stale_temps_removed(&self) -> usize {
        self.stale_temps_removed
    }

    /// Load every baseline file under `dir/baselines` (none without a dir).
    /// Unreadable files are reported and skipped, never fatal.
    pub fn open(dir: Option<&Path>) -> (BaselineStore, Vec<BaselineError>) {
        let mut store = BaselineStore {
            dir: dir.map(|d| d.join("baselines")),
            baselines: HashMap::new(),
            stuck: Vec::new(),
            departed: HashMap::new(),
            stale_temps_removed: 0,
        };
        let mut problems = Vec::new();
        let Some(dir) = store.dir.clone() else {
            return (store, problems);
        };
        if let Err(source) = files::private_dir(&dir) {
            problems.push(BaselineError::Io { path: dir, source });
            return (store, problems);
        }
        store.stale_temps_removed = files::remove_stale_temps(&dir);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(source) => {
                problems.push(BaselineError::Io { path: dir, source });
                return (store, problems);
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            match read_file(&path) {
                Ok(file) => {
                    for (kind, b) in file.kinds {
                        store.baselines.insert((file.target.clone(), kind), b);
                    }
                }
                Err(Unreadable::Other(BaselineError::UnknownVersion { path, version, .. })) => {
                    match files::move_aside(&path, &format!("unknown-version-{version}")) {
                        Ok(kept_as) => problems.push(BaselineError::UnknownVersion {
                            path,
                            version,
                            kept_as: kept_as.display().to_string(),
                        }),
                        Err(source) => {
                            store.stuck.push(path.clone());
                            problems.push(BaselineError::UnknownVersionStuck {
                                path,
                                version,
                                source,
                            });
                        }
                    }
                }
                Err(Unreadable::Unusable(why)) => problems.push(unusable(path, why)),
                Err(Unreadable::Other(e)) => problems.push(e),
            }
        }
        (store, problems)
    }

    pub fn names(&self, target: &str, kind: Kind) -> Option<&NameList> {
        self.baselines
            .get(&(target.to_string(), kind))
            .map(|b| &b.names)
    }

    /// Replace a baseline in memory: `names` with their fingerprints
    /// (possibly none).
    pub fn set(
        &mut self,
        target: &str,
        kind: Kind,
        names: &[String],
        fingerprints: BTreeMap<String, ItemFingerprint>,
        unix_seconds: f64,
    ) {
        let names = names.iter().map(String::as_str).collect();
        self.baselines.insert(
            (target.to_string(), kind),
            KindBaseline::new(names, unix_seconds, fingerprints),
        );
    }

    /// The item fingerprints of a baseline (none found when none were kept).
    pub fn fingerprints(&self, target: &str, kind: Kind) -> Option<BaselinePrints<'_>> {
        self.baselines
            .get(&(target.to_string(), kind))
            .map(BaselinePrints)
    }

    /// Whether `names` and `fingerprints` are what the baseline holds
    /// already: then there is nothing to store or write.
    pub fn holds(
        &self,
        target: &str,
        kind: Kind,
        names: &[String],
        fingerprints: &BTreeMap<String, ItemFingerprint>,
    ) -> bool {
        self.baselines
            .get(&(target.to_string(), kind))
            .is_some_and(|b| b.holds(names, fingerprints))
    }

    /// Note which targets are polled now (`active`). The baselines of one
    /// that is not are kept for `retention` after it left — a target that
    /// flaps out of a discovery list and back does not report its whole
    /// catalogue as new — then dropped, in memory and on disk. Baselines
    /// read at start for targets no longer configured count as left at the
    /// first call. Returns the targets whose baselines were dropped.
    pub fn track_presence(
        &mut self,
        active: &HashSet<&str>,
        now_unix_seconds: f64,
        retention: Duration,
    ) -> Vec<String> {
        let held: HashSet<&str> = self.baselines.keys().map(|(t, _)| t.as_str()).collect();
        self.departed
            .retain(|t, _| held.contains(t.as_str()) && !active.contains(t.as_str()));
        let mut expired = Vec::new();
        for target in held {
            if active.contains(target) {
                continue;
            }
            let left = *self
                .departed
                .entry(target.to_string())
                .or_insert(now_unix_seconds);
            if now_unix_seconds - left >= retention.as_secs_f64() {
                expired.push(target.to_string());
            }
        }
        for target in &expired {
            self.departed.remove(target);
            self.baselines.retain(|(t, _), _| t != target);
            if let Some(dir) = &self.dir {
                let path = dir.join(file_name(target));
                if !self.stuck.contains(&path) {
                    // Gone already is as good as removed.
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        expired
    }

    /// Write one target's baselines atomically.
    pub fn persist(&self, target: &str) -> Result<(), BaselineError> {
        match self.encode(target)? {
            Some(write) => write.run(),
            None => Ok(()),
        }
    }

    /// One target's baselines as the file to write (none without a state
    /// directory). Encoding needs the store; writing does not, so callers
    /// holding the store's lock can write after releasing it.
    pub fn encode(&self, target: &str) -> Result<Option<PendingWrite>, BaselineError> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        // Looked up per kind: scanning every target's baselines here cost
        // O(targets) per poll.
        let kinds: BTreeMap<Kind, &KindBaseline> = Kind::ALL
            .iter()
            .filter_map(|&k| self.baselines.get(&(target.to_string(), k)).map(|b| (k, b)))
            .collect();
        let file = TargetFileRef {
            version: FORMAT_VERSION,
            target,
            kinds,
        };
        let path = dir.join(file_name(target));
        if self.stuck.contains(&path) {
            return Err(BaselineError::Io {
                path,
                source: std::io::Error::other(
                    "holds a baseline of an unknown format version; not overwritten",
                ),
            });
        }
        let bytes = serde_json::to_vec(&file).map_err(|source| BaselineError::Decode {
            path: path.clone(),
            source,
        })?;
        Ok(Some(PendingWrite {
            dir: dir.clone(),
            path,
            bytes,
        }))
    }
}

/// An encoded baseline file, written atomically by [`PendingWrite::run`].
#[derive(Debug)]
pub struct PendingWrite {
    dir: PathBuf,
    path: PathBuf,
    bytes: Vec<u8>,
}

impl PendingWrite {
    pub fn run(self) -> Result<(), BaselineError> {
        write_atomic(&self.dir, &self.path, &self.bytes)
    }
}

/// Target names are label-safe, but keep file names boring anyway.
fn file_name(target: &str) -> String {
    let safe: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = mcp_listing::cursor::short_hash(target);
    format!("{safe}-{hash}.json")
}

/// Why a file in the state directory was not loaded.
enum Unreadable {
    /// Never usable as it is: move it aside (the reason, for the log).
    Unusable(String),
    /// Reported and left where it is (unreadable for now, or of another
    /// format version: that one is kept aside by the caller).
    Other(BaselineError),
}

/// The parser of a state file's bytes: its version first, then our shape.
/// Errors are what the file is, never a panic (fuzzed: fuzz/ `state_file`).
pub fn parse_state_file(bytes: &[u8]) -> Result<(String, usize), String> {
    let file = decode(Path::new("-"), bytes).map_err(|e| match e {
        Unreadable::Unusable(why) => why,
        Unreadable::Other(e) => e.to_string(),
    })?;
    let names = file.kinds.values().map(|b| b.names.len()).sum();
    Ok((file.target, names))
}

fn read_file(path: &Path) -> Result<TargetFile, Unreadable> {
    let bytes = match files::read_regular(path, MAX_STATE_FILE_BYTES, Links::Refuse) {
        Ok(bytes) => bytes,
        Err(ReadFileError::Io(e)) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Unreadable::Unusable("a symbolic link".into()))
        }
        Err(ReadFileError::Io(source)) => {
            return Err(Unreadable::Other(BaselineError::Io {
                path: path.to_path_buf(),
                source,
            }))
        }
        Err(e) => return Err(Unreadable::Unusable(e.to_string())),
    };
    decode(path, &bytes)
}

fn decode(path: &Path, bytes: &[u8]) -> Result<TargetFile, Unreadable> {
    let not_ours = |e: serde_json::Error| Unreadable::Unusable(format!("not a baseline file: {e}"));
    let version = serde_json::from_slice::<VersionOnly>(bytes)
        .map_err(not_ours)?
        .version;
    if version != u64::from(FORMAT_VERSION) {
        return Err(Unreadable::Other(BaselineError::UnknownVersion {
            path: path.to_path_buf(),
            version,
            kept_as: String::new(),
        }));
    }
    serde_json::from_slice(bytes).map_err(not_ours)
}

/// Move an unusable file aside and say so; if even that fails, say why.
fn unusable(path: PathBuf, why: String) -> BaselineError {
    match files::move_aside(&path, "unusable") {
        Ok(kept_as) => BaselineError::Unusable {
            path,
            why,
            kept_as: kept_as.display().to_string(),
        },
        Err(source) => BaselineError::Io {
            path,
            source: std::io::Error::other(format!("{why}; could not be moved aside: {source}")),
        },
    }
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), BaselineError> {
    files::write_atomic(dir, path, bytes).map_err(|source| BaselineError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, problems) = BaselineStore::open(Some(dir.path()));
        assert!(problems.is_empty());
        store.set(
            "gw:1",
            Kind::Tools,
            &["a".into(), "b".into()],
            BTreeMap::new(),
            1.0,
        );
        store.set("gw:1", Kind::Prompts, &["p".into()], BTreeMap::new(), 1.0);
        store.set("other", Kind::Tools, &["x".into()], BTreeMap::new(), 1.0);
        store.persist("gw:1").unwrap();
        let (again, problems) = BaselineStore::open(Some(dir.path()));
        assert!(problems.is_empty());
        assert_eq!(again.names("gw:1", Kind::Tools).unwrap(), ["a", "b"]);
        assert_eq!(again.names("gw:1", Kind::Prompts).unwrap(), ["p"]);
        // Not persisted.
        assert!(again.names("other", Kind::Tools).is_none());
    }

    #[test]
    fn a_departed_targets_baselines_are_kept_for_the_retention_only() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = BaselineStore::open(Some(dir.path()));
        let day = Duration::from_secs(86_400);
        store.set("flappy", Kind::Tools, &["a".into()], BTreeMap::new(), 1.0);
        store.set("gone", Kind::Tools, &["b".into()], BTreeMap::new(), 1.0);
        store.persist("gone").unwrap();
        let both = HashSet::from(["flappy", "gone"]);
        assert!(store.track_presence(&both, 1000.0, day).is_empty());
        // Both leave; flappy comes back within the day and keeps its names.
        assert!(store
            .track_presence(&HashSet::new(), 2000.0, day)
            .is_empty());
        let flappy = HashSet::from(["flappy"]);
        assert!(store.track_presence(&flappy, 3000.0, day).is_empty());
        assert_eq!(store.names("flappy", Kind::Tools).unwrap(), ["a"]);
        // A day after it left, gone's baselines go, in memory and on disk.
        let dropped = store.track_presence(&flappy, 2000.0 + 86_400.0, day);
        assert_eq!(dropped, vec!["gone".to_string()]);
        assert!(store.names("gone", Kind::Tools).is_none());
        assert!(!dir
            .path()
            .join("baselines")
            .join(file_name("gone"))
            .exists());
        assert_eq!(store.names("flappy", Kind::Tools).unwrap(), ["a"]);
    }

    #[test]
    fn an_unknown_version_is_reported_kept_aside_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let baselines = dir.path().join("baselines");
        std::fs::create_dir_all(&baselines).unwrap();
        let name = file_name("gw");
        let future = br#"{"version": 7, "target": "gw", "shape": "other"}"#;
        std::fs::write(baselines.join(&name), future).unwrap();
        let (mut store, problems) = BaselineStore::open(Some(dir.path()));
        assert_eq!(problems.len(), 1, "{problems:?}");
        let shown = problems[0].to_string();
        assert!(shown.contains("format version 7"), "{shown}");
        let kept = baselines.join(format!("{name}.unknown-version-7"));
        assert_eq!(std::fs::read(&kept).unwrap(), future);
        // Our next write goes to the usual name; the kept file is untouched.
        store.set("gw", Kind::Tools, &["a".into()], BTreeMap::new(), 1.0);
        store.persist("gw").unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), future);
        let (again, problems) = BaselineStore::open(Some(dir.path()));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(again.names("gw", Kind::Tools).unwrap(), ["a"]);
    }

    #[test]
    fn a_corrupt_file_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("baselines")).unwrap();
        std::fs::write(dir.path().join("baselines/x.json"), b"{nope").unwrap();
        let (store, problems) = BaselineStore::open(Some(dir.path()));
        assert_eq!(problems.len(), 1);
        assert!(store.names("x", Kind::Tools).is_none());
        assert!(dir.path().join("baselines/x.json.unusable").exists());
    }

    #[test]
    fn links_fifos_and_huge_files_are_moved_aside_unread() {
        let dir = tempfile::tempdir().unwrap();
        let baselines = dir.path().join("baselines");
        std::fs::create_dir_all(&baselines).unwrap();
        let foreign = dir.path().join("foreign");
        std::fs::write(&foreign, br#"{"version":1,"target":"f","kinds":{}}"#).unwrap();
        std::os::unix::fs::symlink(&foreign, baselines.join("link.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", baselines.join("zero.json")).unwrap();
        crate::files::make_fifo(&baselines.join("fifo.json"));
        std::fs::File::create(baselines.join("huge.json"))
            .unwrap()
            .set_len(MAX_STATE_FILE_BYTES + 1)
            .unwrap();
        let (store, problems) = BaselineStore::open(Some(dir.path()));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems
            .iter()
            .all(|p| matches!(p, BaselineError::Unusable { .. })));
        assert!(store.names("f", Kind::Tools).is_none());
        for name in ["link", "zero", "fifo", "huge"] {
            assert!(!baselines.join(format!("{name}.json")).exists(), "{name}");
        }
        let kept = std::fs::read(&foreign).unwrap();
        assert_eq!(kept, br#"{"version":1,"target":"f","kinds":{}}"#);
    }
}
