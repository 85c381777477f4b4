//! Reading and writing files without trusting what is at the path.
//!
//! Whoever can write a directory we read can put a FIFO (an open that
//! blocks), a device (`/dev/zero`, read forever), a huge file or a symbolic
//! link where a file should be. Files are opened without blocking, checked
//! with `fstat` after opening (what was checked is what is read), read up
//! to a cap; the files we own (the state directory) are never followed
//! through a link and are written through unpredictable temporary names
//! created with `O_EXCL` (`tempfile`'s builder), readable by our user only.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// How a file we wanted could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadFileError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not a regular file")]
    NotRegular,
    #[error("larger than {cap} bytes")]
    TooLarge { cap: u64 },
}

/// Whether a symbolic link at the path is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Files someone else provides (Kubernetes mounts ConfigMap files as
    /// links).
    Follow,
    /// Files we own: a link there was planted.
    Refuse,
}

/// The whole of `path`, if it is a regular file of at most `cap` bytes.
/// Never blocks (a FIFO is refused at once) and never reads past the cap.
pub fn read_regular(path: &Path, cap: u64, links: Links) -> Result<Vec<u8>, ReadFileError> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadFileError::NotRegular);
    }
    if meta.len() > cap {
        return Err(ReadFileError::TooLarge { cap });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        // It grew while we read it.
        return Err(ReadFileError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Open `path` for appending, created readable by our user only (0600),
/// never through a symbolic link; `flags` are added to the open's.
pub fn open_append(path: &Path, flags: libc::c_int) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | flags)
        .open(path)
}

/// What the temporary files of [`write_atomic`] start and end with; a
/// crash leaves them behind, [`remove_stale_temps`] clears them.
const TEMP_PREFIX: &str = ".tmp-";
const TEMP_SUFFIX: &str = ".partial";
/// Random letters and digits in a temporary name (about 95 bits).
const TEMP_RANDOM_CHARS: usize = 16;

/// Create `dir` (and its parents) if missing; `dir` itself is made
/// readable by our user only (0700).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other("not a directory"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Replace `path` (in `dir`) with `bytes` atomically: a fresh temporary
/// file of an unpredictable name created with `O_EXCL` (so nothing planted
/// there, a link included, is followed or overwritten) and mode 0600,
/// fsync, rename over `path`, fsync the directory.
pub fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .rand_bytes(TEMP_RANDOM_CHARS)
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // On failure the temporary file is dropped, which removes it (ours:
    // created exclusively).
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Unlink the temporary files a crash left in `dir` (an unlink removes a
/// link, never its target). Returns how many were removed.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(TEMP_PREFIX) && n.ends_with(TEMP_SUFFIX))
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Move `path` out of the way as `NAME.WHY-N` (the first free N), so it is
/// neither read again nor overwritten. Returns the new name. The rename
/// moves a link or FIFO itself, never what it points at.
pub fn move_aside(path: &Path, why: &str) -> io::Result<PathBuf> {
    let base = format!("{}.{why}", path.display());
    for k in 0..1000u32 {
        let candidate = if k == 0 {
            PathBuf::from(&base)
        } else {
            PathBuf::from(format!("{base}.{k}"))
        };
        if std::fs::symlink_metadata(&candidate).is_ok() {
            continue;
        }
        std::fs::rename(path, &candidate)?;
        return Ok(candidate);
    }
    Err(io::Error::other("too many files kept aside already"))
}

/// Creates a named pipe at `path` (tests of readers that must refuse one).
#[cfg(test)]
pub(crate) fn make_fifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY (test only): mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        make_fifo(&fifo);
        assert!(matches!(
            read_regular(&fifo, 100, Links::Refuse),
            Err(ReadFileError::NotRegular)
        ));
        let zero = dir.path().join("zero.json");
        symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_regular(&zero, 100, Links::Refuse),
            Err(ReadFileError::Io(_))
        ));
        assert!(matches!(
            read_regular(&zero, 100, Links::Follow),
            Err(ReadFileError::NotRegular)
        ));
        let big = dir.path().join("big.json");
        File::create(&big).unwrap().set_len(1 << 30).unwrap();
        assert!(matches!(
            read_regular(&big, 1 << 20, Links::Refuse),
            Err(ReadFileError::TooLarge { .. })
        ));
        let ok = dir.path().join("ok.json");
        std::fs::write(&ok, "[]").unwrap();
        assert_eq!(read_regular(&ok, 10, Links::Refuse).unwrap(), b"[]");
    }

    #[test]
    fn writes_go_through_private_exclusive_temps_and_leave_links_alone() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state/baselines");
        private_dir(&state).unwrap();
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let foreign = dir.path().join("foreign");
        std::fs::write(&foreign, "keep me").unwrap();
        // A link planted at the name earlier versions used for their temp.
        let target = state.join("t.json");
        symlink(&foreign, state.join("t.json.tmp")).unwrap();
        write_atomic(&state, &target, b"{}").unwrap();
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep me");
        assert_eq!(std::fs::read(&target).unwrap(), b"{}");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A crash's leftover temp goes; the planted link's target stays.
        std::fs::write(state.join(".tmp-0123456789abcdef.partial"), "x").unwrap();
        symlink(&foreign, state.join(".tmp-link.partial")).unwrap();
        assert_eq!(remove_stale_temps(&state), 2);
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep me");
        let aside = move_aside(&state.join("t.json.tmp"), "bad").unwrap();
        assert!(std::fs::symlink_metadata(&aside).unwrap().is_symlink());
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep me");
    }
}
