//! `walk_files`: a depth-first walk of a directory tree below the workspace root, for
//! `search_files` and for the hint of a missing file's error.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::sync::Arc;

use rustix::fs::{FileType, Mode, OFlags};

use super::read_entries;

/// Directories never walked.
const SKIPPED_DIRS: [&str; 3] = [".git", "node_modules", "target"];

/// Walks the directory `base` depth-first and calls `visit(directory, entry name, relative
/// path, name, kind)` for each entry that is not a directory (`kind` as the directory entry
/// says it, without following a symlink), until it returns false. The result
/// is false when the walk stopped early (`visit`, or more than `max_visited` entries); `None` when
/// `cancelled` said so (checked before each entry).
///
/// Sub-directories are opened by name relative to their parent's descriptor with
/// `O_NOFOLLOW`, so the walk never leaves the tree, even if a directory is swapped for a
/// symlink while it runs.
pub(super) fn walk_files(
    base: OwnedFd,
    max_visited: usize,
    cancelled: &dyn Fn() -> bool,
    visit: &mut dyn FnMut(&OwnedFd, &OsStr, String, &str, FileType) -> bool,
) -> Option<bool> {
    let mut visited = 0;
    // directories still to read: the parent's descriptor, the name in it, the relative prefix
    let base = Arc::new(base);
    let mut pending: Vec<(Arc<OwnedFd>, Option<OsString>, String)> =
        vec![(base, None, String::new())];
    while let Some((parent, name, prefix)) = pending.pop() {
        let dir = match name {
            None => parent,
            Some(name) => match rustix::fs::openat(
                &*parent,
                name.as_os_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => Arc::new(fd),
                Err(_) => continue,
            },
        };
        let Ok(entries) = read_entries(&dir) else {
            continue;
        };
        for entry in entries {
            if cancelled() {
                return None;
            }
            let Ok(entry) = entry else {
                break;
            };
            visited += 1;
            if visited > max_visited {
                return Some(false);
            }
            let name = entry.name.to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            if entry.kind == FileType::Directory {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    pending.push((Arc::clone(&dir), Some(entry.name), format!("{relative}/")));
                }
            } else if !visit(&dir, &entry.name, relative, &name, entry.kind) {
                return Some(false);
            }
        }
    }
    Some(true)
}
