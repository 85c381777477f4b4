//! The private file of `--serve stdio`: which scenario the next launch
//! plays and the grades so far. An app may launch its servers at once, so
//! every read-modify-write holds an exclusive lock (a `.lock` file beside
//! it); writes go through an unpredictable `O_EXCL` temporary file and a
//! rename (files.rs); a file that cannot be read is moved aside, never
//! trusted.

use super::scenarios::ClientScenario;
use crate::files::{self, Links};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Largest state file read.
const MAX_STATE_BYTES: u64 = 1 << 20;
/// Grades kept (the oldest go first).
const MAX_GRADES: usize = 500;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct State {
    /// The scenarios played, in order (a run with another list starts over).
    pub scenarios: Vec<String>,
    /// Index of the scenario the next launch plays.
    pub next: usize,
    /// 1 for the first pass over the scenarios, then 2, …
    pub round: u32,
    /// Launches so far.
    pub launches: u64,
    pub grades: Vec<SavedGrade>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SavedGrade {
    pub launch: u64,
    pub round: u32,
    pub scenario: String,
    pub status: String,
    pub message: String,
    pub list_requests: u64,
    pub seconds: f64,
}

/// What one launch plays.
#[derive(Debug, Clone, Copy)]
pub struct Claim {
    pub launch: u64,
    pub round: u32,
    pub scenario: ClientScenario,
    /// Its 1-based place in the list, and the list's length.
    pub place: usize,
    pub of: usize,
}

/// The state file at `path`, locked for one read-modify-write.
struct Locked {
    path: PathBuf,
    dir: PathBuf,
    _lock: File,
}

impl Locked {
    fn open(path: &Path) -> io::Result<Locked> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        files::private_dir(&dir)?;
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(PathBuf::from(lock_path))?;
        use std::os::fd::AsRawFd;
        // SAFETY: flock(2) on a descriptor we own; no pointers.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Locked {
            path: path.to_path_buf(),
            dir,
            _lock: lock,
        })
    }

    fn load(&self) -> State {
        match files::read_regular(&self.path, MAX_STATE_BYTES, Links::Refuse) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                let _ = files::move_aside(&self.path, "unreadable");
                State::default()
            }),
            Err(files::ReadFileError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
                State::default()
            }
            Err(_) => {
                let _ = files::move_aside(&self.path, "unreadable");
                State::default()
            }
        }
    }

    fn save(&self, state: &State) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(state).map_err(io::Error::other)?;
        files::write_atomic(&self.dir, &self.path, &bytes)
    }
}

/// Take the next scenario of `scenarios` for one launch, and write down
/// that it is ungraded until [`record`] says otherwise.
pub fn claim(path: &Path, scenarios: &[ClientScenario]) -> io::Result<Claim> {
    let file = Locked::open(path)?;
    let mut state = file.load();
    let labels: Vec<String> = scenarios.iter().map(|s| s.label().to_string()).collect();
    if state.scenarios != labels || state.round == 0 {
        state = State {
            scenarios: labels,
            round: 1,
            ..State::default()
        };
    }
    let place = state.next.min(scenarios.len().saturating_sub(1));
    let scenario = *scenarios
        .get(place)
        .ok_or_else(|| io::Error::other("no scenario to play"))?;
    state.launches += 1;
    let claim = Claim {
        launch: state.launches,
        round: state.round,
        scenario,
        place: place + 1,
        of: scenarios.len(),
    };
    state.next = place + 1;
    if state.next >= scenarios.len() {
        state.next = 0;
        state.round += 1;
    }
    push(
        &mut state,
        SavedGrade {
            launch: claim.launch,
            round: claim.round,
            scenario: scenario.label().to_string(),
            status: "n/a".into(),
            message: "not graded: the launch ended before its grade was written".into(),
            list_requests: 0,
            seconds: 0.0,
        },
    );
    file.save(&state)?;
    Ok(claim)
}

/// Write one launch's grade in place of its placeholder.
pub fn record(path: &Path, grade: SavedGrade) -> io::Result<()> {
    let file = Locked::open(path)?;
    let mut state = file.load();
    match state.grades.iter_mut().find(|g| g.launch == grade.launch) {
        Some(slot) => *slot = grade,
        None => push(&mut state, grade),
    }
    file.save(&state)
}

/// The grades so far.
pub fn read(path: &Path) -> io::Result<State> {
    Ok(Locked::open(path)?.load())
}

fn push(state: &mut State, grade: SavedGrade) {
    if state.grades.len() >= MAX_GRADES {
        state.grades.remove(0);
    }
    state.grades.push(grade);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_take_the_scenarios_in_turn_and_keep_their_grades() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state").join("check-client.json");
        let list = [ClientScenario::Walk, ClientScenario::Cycle];
        let first = claim(&path, &list).expect("claim");
        let second = claim(&path, &list).expect("claim");
        let third = claim(&path, &list).expect("claim");
        assert_eq!((first.scenario, first.round), (ClientScenario::Walk, 1));
        assert_eq!((second.scenario, second.place), (ClientScenario::Cycle, 2));
        assert_eq!((third.scenario, third.round), (ClientScenario::Walk, 2));
        let graded = SavedGrade {
            launch: second.launch,
            round: 1,
            scenario: "cycle".into(),
            status: "fail".into(),
            message: "stopped".into(),
            list_requests: 3,
            seconds: 0.5,
        };
        record(&path, graded.clone()).expect("record");
        let state = read(&path).expect("read");
        assert_eq!(state.grades.len(), 3);
        assert_eq!(state.grades[1], graded);
        assert_eq!(state.grades[0].status, "n/a");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o077, 0, "private: {mode:o}");
    }

    #[test]
    fn a_file_that_is_not_ours_is_moved_aside() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.json");
        std::fs::write(&path, b"not json").expect("write");
        let claimed = claim(&path, &[ClientScenario::Walk]).expect("claim");
        assert_eq!(claimed.launch, 1);
        let aside = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("unreadable"));
        assert!(aside);
    }
}
