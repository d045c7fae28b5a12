//! Saving and loading files that hold a conversation: written atomically and privately, read
//! with a size bound.
//!
//! ```
//! # fn main() -> Result<(), agents::fs::FileError> {
//! let dir = tempfile::tempdir().expect("a temporary directory");
//! let path = dir.path().join("conversation.json");
//! agents::fs::write_atomic(&path, b"{\"version\": 1}")?;
//! assert_eq!(agents::fs::read_to_string_bounded(&path, 1024)?, "{\"version\": 1}");
//! # Ok(()) }
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// How many temporary names [`write_atomic`] tries before it gives up (names left behind by
/// crashed writers are skipped, never overwritten).
const TEMP_NAME_ATTEMPTS: u32 = 64;

/// Why a file could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// Writing, syncing or renaming failed; the previous content of the file is unchanged.
    #[error(
        "cannot write `{path}` (its previous content is unchanged): check that the directory \
         exists, is writable and has space"
    )]
    Write {
        /// The file that was to be written.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// Opening or reading failed.
    #[error("cannot read `{path}`: check that it exists and is readable")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The path names a directory, FIFO, socket or device (reading a FIFO would block).
    #[error("`{path}` is not a regular file: pass the path of a file")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file is larger than the caller accepts.
    #[error(
        "`{path}` is larger than the limit of {limit} bytes: it was not loaded; use another \
         file or remove old content from it"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("`{path}` is not UTF-8 text")]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one, never a
/// part of it: the bytes go to a new temporary file in the same directory (mode 0600 on Unix),
/// which is synced to disk and renamed over `path`; then the directory is synced so the rename
/// itself survives a crash.
///
/// On Unix the file ends up readable and writable by its owner only, whatever the mode of the
/// file it replaces. A symbolic link at `path` is replaced by the file, not followed.
///
/// # Errors
///
/// [`FileError::Write`] when the temporary file cannot be created, written or synced, or the
/// rename fails (for example when `path` is a directory); the temporary file is removed.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FileError> {
    let path = path.as_ref();
    let failed = |source| FileError::Write {
        path: path.to_owned(),
        source,
    };
    let (dir, name) = split(path).map_err(failed)?;
    let (temp_path, mut temp) = create_temp(&dir, &name).map_err(failed)?;
    let written = temp
        .write_all(bytes)
        .and_then(|()| temp.sync_all())
        .and_then(|()| {
            drop(temp);
            std::fs::rename(&temp_path, path)
        });
    if let Err(error) = written {
        // The temporary file is ours; the target was never touched.
        let _ = std::fs::remove_file(&temp_path);
        return Err(failed(error));
    }
    sync_dir(&dir).map_err(failed)
}

/// Reads the text file at `path` if it is a regular file of at most `max_bytes` bytes.
///
/// # Errors
///
/// [`FileError::NotAFile`] for a directory, FIFO, socket or device (opened with `O_NONBLOCK`
/// and checked on the descriptor, so a FIFO never blocks the caller), [`FileError::TooLarge`] past `max_bytes` (also when
/// the file grows while it is read), [`FileError::NotText`] when it is not UTF-8, and
/// [`FileError::Read`] when it cannot be opened or read.
pub fn read_to_string_bounded(path: impl AsRef<Path>, max_bytes: u64) -> Result<String, FileError> {
    let path = path.as_ref();
    let failed = |source| FileError::Read {
        path: path.to_owned(),
        source,
    };
    let not_a_file = || FileError::NotAFile {
        path: path.to_owned(),
    };
    let too_large = || FileError::TooLarge {
        path: path.to_owned(),
        limit: max_bytes,
    };
    // Opened without blocking (a FIFO opened for reading would wait for a writer), then the
    // check is made on the descriptor (fstat): a path swapped for a FIFO between a check and
    // the open cannot make the read hang.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NONBLOCK.bits() as i32,
    );
    let file = options.open(path).map_err(failed)?;
    let metadata = file.metadata().map_err(failed)?;
    if !metadata.is_file() {
        return Err(not_a_file());
    }
    if metadata.len() > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| FileError::NotText {
        path: path.to_owned(),
    })
}

/// The directory holding `path` (`.` for a bare name) and the file's name.
fn split(path: &Path) -> io::Result<(PathBuf, std::ffi::OsString)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path does not end in a file name",
        )
    })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_owned()))
}

/// A new file `.NAME.PID.N.tmp` in `dir`, created exclusively (mode 0600 on Unix).
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last_error = None;
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.{attempt}.tmp", std::process::id()));
        let temp_path = dir.join(temp_name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&temp_path) {
            Ok(file) => return Ok((temp_path, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

/// Syncs the directory entry of a rename to disk (Unix; elsewhere the rename is all we can do).
fn sync_dir(dir: &Path) -> io::Result<()> {
    if !cfg!(unix) {
        return Ok(());
    }
    match File::open(dir).and_then(|dir| dir.sync_all()) {
        // Some file systems cannot sync a directory; the rename has happened all the same.
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_a_new_file_and_replaces_an_old_one_leaving_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        assert_eq!(entries(dir.path()), ["state.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private_even_when_it_replaces_a_world_readable_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory cannot be replaced by a file: the rename fails after the data was written.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside.txt"), "kept").unwrap();
        let error = write_atomic(&target, b"new").unwrap_err();
        assert!(matches!(error, FileError::Write { .. }), "{error:?}");
        assert!(error.to_string().starts_with(&format!(
            "cannot write `{}` (its previous content is unchanged)",
            target.display()
        )));
        assert_eq!(
            std::fs::read_to_string(target.join("inside.txt")).unwrap(),
            "kept"
        );
        assert_eq!(entries(dir.path()), ["taken"]);
    }

    #[test]
    fn a_missing_directory_is_a_write_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("state.json");
        let error = write_atomic(&path, b"x").unwrap_err();
        assert!(error.to_string().contains("missing"), "{error}");
        assert!(std::error::Error::source(&error).is_some());
    }

    #[test]
    fn stale_temporary_files_are_skipped_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir
            .path()
            .join(format!(".state.json.{}.0.tmp", std::process::id()));
        std::fs::write(&stale, "someone else's").unwrap();
        write_atomic(dir.path().join("state.json"), b"mine").unwrap();
        assert_eq!(std::fs::read_to_string(&stale).unwrap(), "someone else's");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn bounded_reads_refuse_large_files_directories_and_binary_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_to_string_bounded(&path, 10).unwrap(), "0123456789");
        assert!(matches!(
            read_to_string_bounded(&path, 9),
            Err(FileError::TooLarge { limit: 9, .. })
        ));
        assert!(matches!(
            read_to_string_bounded(dir.path(), 1 << 20),
            Err(FileError::NotAFile { .. })
        ));
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_to_string_bounded(&path, 10),
            Err(FileError::NotText { .. })
        ));
        assert!(matches!(
            read_to_string_bounded(dir.path().join("absent"), 10),
            Err(FileError::Read { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(
            read_to_string_bounded(&fifo, 10),
            Err(FileError::NotAFile { .. })
        ));
    }

    /// The path is swapped between a regular file and a FIFO while it is read: checking the
    /// path and then opening it let a FIFO slip in between and hang the read.
    #[cfg(unix)]
    #[test]
    fn a_path_swapped_for_a_fifo_mid_read_never_hangs() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let file = dir.path().join("file");
        let fifo = dir.path().join("fifo");
        std::fs::write(&file, "{}").unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (path, file, fifo) = (path.clone(), file.clone(), fifo.clone());
            std::thread::spawn(move || {
                // the path always exists: a file, then atomically a FIFO, and so on
                let staged = path.with_extension("staged");
                while !stop.load(Ordering::Relaxed) {
                    for source in [&file, &fifo] {
                        std::fs::hard_link(source, &staged).unwrap();
                        std::fs::rename(&staged, &path).unwrap();
                    }
                }
            })
        };
        let (done, finished) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            // the window between a check and an open is short: keep trying for two seconds
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(2) {
                let _ = read_to_string_bounded(&path, 10);
            }
            let _ = done.send(());
        });
        let outcome = finished.recv_timeout(std::time::Duration::from_secs(20));
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        if outcome.is_err() {
            // unblock the hung reader so the test process can end
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("a read hung on a FIFO swapped in after the check");
        }
        reader.join().unwrap();
    }
}
