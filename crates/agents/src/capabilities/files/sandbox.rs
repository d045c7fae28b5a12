//! `Sandbox`: opens the files a model names beneath one workspace root, so that no path and no
//! symlink (dangling, relative, absolute, or swapped in while the tool runs) reaches outside it.
//!
//! Every file tool opens its file through [`Sandbox::open`] and then works on the descriptor;
//! no tool checks a path and later uses it again. Resolution starts at a descriptor of the root
//! held since [`Sandbox::new`]:
//! - on Linux with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: the kernel refuses any
//!   step out of the root, atomically;
//! - where `openat2` is missing (`ENOSYS`, older kernels, some seccomp filters), on other Unixes,
//!   and for absolute symlinks that point back into the root (which `RESOLVE_BENEATH` refuses),
//!   by walking the path one component at a time with `O_NOFOLLOW`: each component is opened
//!   relative to the descriptor of the directory before it, symlinks are read and their
//!   targets walked the same way, and `..` returns to a descriptor already held (never a `..`
//!   lookup on disk), so a directory swapped for a symlink mid-walk makes the open fail
//!   instead of following it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use thiserror::Error;

/// Why a path was refused.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// The root directory does not exist or is not a directory.
    #[error("workspace root `{root}` is not a usable directory: {source}")]
    InvalidRoot {
        /// The root as given.
        root: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The path leads outside the root (through `..`, an absolute path or a symlink).
    #[error("path `{path}` escapes the workspace root")]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// The filesystem could not be inspected.
    #[error("cannot resolve path `{path}`: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

/// A workspace root directory. Every path the tools receive is resolved against it, and any
/// path that would lead outside it is refused: `..` components, absolute paths elsewhere and
/// symlinks pointing out of the root. Cheap to clone.
///
/// The root is opened once, by [`Sandbox::new`]; files are then opened beneath that
/// descriptor (see `docs/security.md`, "File sandbox", for what this guarantees).
///
/// ```
/// use agents::capabilities::files::Sandbox;
///
/// let dir = std::env::temp_dir();
/// let sandbox = Sandbox::new(&dir).unwrap();
/// assert!(sandbox.resolve("notes/today.md").unwrap().starts_with(sandbox.root()));
/// assert_eq!(
///     sandbox.resolve("../etc/passwd").unwrap_err().to_string(),
///     "path `../etc/passwd` escapes the workspace root"
/// );
/// ```
#[derive(Clone, Debug)]
pub struct Sandbox {
    root: Arc<PathBuf>,
    root_dir: Arc<OwnedFd>,
}

/// A path below the root: plain names only (no `.`, `..` or root), as the model gave it after
/// lexical normalization. Empty for the root itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RelativePath {
    parts: Vec<OsString>,
    /// The path as the model gave it, for errors.
    given: String,
}

/// What [`Sandbox::open`] opens the final component for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    /// Reading a file (or anything, to inspect it with `fstat`).
    Read,
    /// Reading and writing an existing file.
    ReadWrite,
    /// Writing a file, created when missing (not truncated: the caller checks the kind first).
    Create,
    /// Listing a directory.
    Directory,
}

/// Symlinks followed at most while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;
/// `openat2` attempts when the kernel reports a concurrent rename (`EAGAIN`).
const OPENAT2_ATTEMPTS: usize = 3;

impl Sandbox {
    /// A sandbox rooted at `root` (which must be an existing directory).
    ///
    /// # Errors
    /// [`SandboxError::InvalidRoot`] when `root` cannot be canonicalized, is not a directory or
    /// cannot be opened.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let given = root.as_ref();
        let invalid = |source| SandboxError::InvalidRoot {
            root: given.to_path_buf(),
            source,
        };
        let root = std::fs::canonicalize(given).map_err(invalid)?;
        let root_dir = rustix::fs::open(
            &root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| invalid(errno.into()))?;
        Ok(Self {
            root: Arc::new(root),
            root_dir: Arc::new(root_dir),
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute, symlink-free location of `path` (relative to the root, or absolute inside
    /// it), resolved beneath the root as the tools resolve it. The file need not exist: the
    /// existing part is resolved and the rest appended. For inspection and messages only: the
    /// tools never open the returned path (it may change before anyone uses it).
    ///
    /// # Errors
    /// [`SandboxError::Escapes`] when the path leads outside the root, [`SandboxError::Io`]
    /// when an existing part cannot be inspected.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, SandboxError> {
        let relative = self.relative(path)?;
        let located = walk(self.root_dir.as_fd(), &self.root, &relative, Goal::Locate)
            .map_err(|denied| denied.into_error(path))?;
        let mut resolved = self.root.to_path_buf();
        resolved.extend(located.parts);
        Ok(resolved)
    }

    /// `path` relative to the root, with `/` separators, for messages (`.` for the root).
    pub fn display(&self, path: &Path) -> String {
        let relative = path.strip_prefix(self.root.as_path()).unwrap_or(path);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }

    /// `path` (relative to the root, or absolute inside it) with `.` and `..` removed
    /// lexically. Nothing is looked up on disk.
    ///
    /// # Errors
    /// [`SandboxError::Escapes`] when the path is absolute outside the root or `..` climbs
    /// above it.
    pub(super) fn relative(&self, path: &str) -> Result<RelativePath, SandboxError> {
        let escapes = || SandboxError::Escapes {
            path: path.to_owned(),
        };
        let requested = Path::new(path.trim());
        let joined = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            self.root.join(requested)
        };
        let normalized = normalize(&joined).ok_or_else(escapes)?;
        let below = normalized
            .strip_prefix(self.root.as_path())
            .map_err(|_| escapes())?;
        Ok(RelativePath {
            parts: below
                .components()
                .map(|c| c.as_os_str().to_owned())
                .collect(),
            given: path.to_owned(),
        })
    }

    /// The path as the model named it, relative to the root, for messages (`.` for the root).
    pub(super) fn shown(&self, relative: &RelativePath) -> String {
        self.display(&relative.to_path())
    }

    /// Opens `relative` beneath the root for `access`, following symlinks only while they
    /// stay inside the root. The descriptor is close-on-exec and non-blocking (so a FIFO or
    /// device opens without waiting; callers check the kind with `fstat` before reading).
    ///
    /// # Errors
    /// [`SandboxError::Escapes`] when the path or a symlink on it leads outside the root,
    /// [`SandboxError::Io`] with the system's error otherwise (`NotFound`, `EISDIR`, ...).
    pub(super) fn open(
        &self,
        relative: &RelativePath,
        access: Access,
    ) -> Result<OwnedFd, SandboxError> {
        let flags = access.flags();
        // openat2 refuses a mode without O_CREAT
        let mode = if access == Access::Create {
            Mode::from_raw_mode(0o666)
        } else {
            Mode::empty()
        };
        match openat2_beneath(self.root_dir.as_fd(), relative, flags, mode) {
            Beneath::Opened(fd) => return Ok(fd),
            Beneath::Failed(errno) => {
                return Err(Denied::Io(errno.into()).into_error(&relative.given))
            }
            Beneath::Walk => {}
        }
        walk(
            self.root_dir.as_fd(),
            &self.root,
            relative,
            Goal::Open { flags, mode },
        )
        .and_then(|walked| walked.fd.ok_or(Denied::Io(Errno::NOENT.into())))
        .map_err(|denied| denied.into_error(&relative.given))
    }

    /// Creates the directory `relative` and its missing parents beneath the root, like
    /// `mkdir -p`. Each directory is made with `mkdirat` in a descriptor already resolved
    /// beneath the root, so no symlink can redirect it.
    ///
    /// # Errors
    /// As [`Sandbox::open`]; also when a directory cannot be created.
    pub(super) fn create_dirs(&self, relative: &RelativePath) -> Result<(), SandboxError> {
        let root = RelativePath {
            parts: Vec::new(),
            given: relative.given.clone(),
        };
        let mut parent = self.open(&root, Access::Directory)?;
        for prefix in relative.prefixes() {
            parent = match self.open(&prefix, Access::Directory) {
                Ok(fd) => fd,
                Err(SandboxError::Io { source, .. })
                    if source.kind() == io::ErrorKind::NotFound =>
                {
                    let name = prefix.last_part().unwrap_or_default();
                    match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => {
                            return Err(Denied::Io(errno.into()).into_error(&relative.given))
                        }
                    }
                    self.open(&prefix, Access::Directory)?
                }
                Err(error) => return Err(error),
            };
        }
        Ok(())
    }
}

impl RelativePath {
    /// Whether `other` names the same path below the root, however each was written
    /// (`list.txt` and `./list.txt` do).
    pub(super) fn same_path(&self, other: &RelativePath) -> bool {
        self.parts == other.parts
    }

    /// The path relative to the root (empty for the root).
    pub(super) fn to_path(&self) -> PathBuf {
        self.parts.iter().collect()
    }

    /// `true` for the root itself.
    pub(super) fn is_root(&self) -> bool {
        self.parts.is_empty()
    }

    /// The last part of the path (`None` for the root), lossily as text.
    pub(super) fn file_name(&self) -> Option<String> {
        self.parts
            .last()
            .map(|part| part.to_string_lossy().into_owned())
    }

    /// The last part of the path as given (`None` for the root).
    pub(super) fn last_part(&self) -> Option<&std::ffi::OsStr> {
        self.parts.last().map(OsString::as_os_str)
    }

    /// The paths leading to this one, shortest first, this one last (none for the root):
    /// `a`, `a/b`, `a/b/c` for `a/b/c`.
    pub(super) fn prefixes(&self) -> impl Iterator<Item = RelativePath> + '_ {
        (1..=self.parts.len()).map(|depth| RelativePath {
            parts: self.parts[..depth].to_vec(),
            given: self.given.clone(),
        })
    }

    /// The path of `name` inside this directory.
    pub(super) fn child(&self, name: &std::ffi::OsStr) -> RelativePath {
        let mut parts = self.parts.clone();
        parts.push(name.to_owned());
        RelativePath {
            parts,
            given: self.given.clone(),
        }
    }

    /// The directory holding this path (`None` for the root).
    pub(super) fn parent(&self) -> Option<RelativePath> {
        let (_, parent) = self.parts.split_last()?;
        Some(RelativePath {
            parts: parent.to_vec(),
            given: self.given.clone(),
        })
    }
}

impl Access {
    fn flags(self) -> OFlags {
        let common = OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
        common
            | match self {
                Access::Read => OFlags::RDONLY,
                Access::ReadWrite => OFlags::RDWR,
                Access::Create => OFlags::WRONLY | OFlags::CREATE,
                Access::Directory => OFlags::RDONLY | OFlags::DIRECTORY,
            }
    }
}

/// Why the walk refused a path (the caller adds the path as the model gave it).
#[derive(Debug)]
enum Denied {
    Escapes,
    Io(io::Error),
}

impl Denied {
    fn into_error(self, path: &str) -> SandboxError {
        match self {
            Denied::Escapes => SandboxError::Escapes {
                path: path.to_owned(),
            },
            Denied::Io(source) => SandboxError::Io {
                path: path.to_owned(),
                source,
            },
        }
    }
}

/// What `openat2` made of a path.
enum Beneath {
    Opened(OwnedFd),
    /// A final answer (`ENOENT`, `EACCES`, ...).
    Failed(Errno),
    /// Not available, or refused something the walk decides on (an absolute symlink, which
    /// may point back into the root, or a step outside, which the walk reports as such).
    Walk,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn openat2_beneath(
    root: BorrowedFd<'_>,
    relative: &RelativePath,
    flags: OFlags,
    mode: Mode,
) -> Beneath {
    use rustix::fs::ResolveFlags;
    let path = if relative.is_root() {
        PathBuf::from(".")
    } else {
        relative.to_path()
    };
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    for _ in 0..OPENAT2_ATTEMPTS {
        match rustix::fs::openat2(root, &path, flags, mode, resolve) {
            Ok(fd) => return Beneath::Opened(fd),
            // a rename raced with the lookup: the kernel asks to try again
            Err(Errno::AGAIN) => continue,
            // no openat2 (before Linux 5.6, or a seccomp filter that hides it), or a symlink
            // the kernel will not follow beneath the root: the walk decides
            Err(Errno::NOSYS | Errno::PERM | Errno::XDEV | Errno::LOOP) => return Beneath::Walk,
            Err(errno) => return Beneath::Failed(errno),
        }
    }
    Beneath::Walk
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn openat2_beneath(_: BorrowedFd<'_>, _: &RelativePath, _: OFlags, _: Mode) -> Beneath {
    Beneath::Walk
}

/// What [`walk`] does with the last component.
#[derive(Clone, Copy)]
enum Goal {
    /// Open it with these flags (plus `O_NOFOLLOW`; a symlink is read and followed).
    Open { flags: OFlags, mode: Mode },
    /// Find where it is: resolve the symlinks on the existing part, append the missing rest.
    Locate,
}

/// Where a walk ended.
struct Walked {
    /// The opened file ([`Goal::Open`] only).
    fd: Option<OwnedFd>,
    /// The symlink-free path below the root.
    parts: Vec<OsString>,
}

/// Resolves `relative` beneath `root` one component at a time (see the module doc).
fn walk(
    root: BorrowedFd<'_>,
    root_path: &Path,
    relative: &RelativePath,
    goal: Goal,
) -> Result<Walked, Denied> {
    // the components still to walk, the next one last
    let mut pending: Vec<OsString> = relative.parts.iter().rev().cloned().collect();
    // the directories walked below the root, with their names
    let mut dirs: Vec<(OwnedFd, OsString)> = Vec::new();
    let mut symlinks = 0;
    while let Some(part) = pending.pop() {
        if part == "." {
            continue;
        }
        if part == ".." {
            dirs.pop().ok_or(Denied::Escapes)?;
            continue;
        }
        let dir = dirs.last().map_or(root, |(fd, _)| fd.as_fd());
        let last = pending.is_empty();
        let flags = match goal {
            Goal::Open { flags, .. } if last => flags | OFlags::NOFOLLOW,
            _ => OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        };
        let mode = match goal {
            Goal::Open { mode, .. } if last => mode,
            _ => Mode::empty(),
        };
        match rustix::fs::openat(dir, part.as_os_str(), flags, mode) {
            Ok(fd) if last && matches!(goal, Goal::Open { .. }) => {
                let mut parts = names(&dirs);
                parts.push(part);
                return Ok(Walked {
                    fd: Some(fd),
                    parts,
                });
            }
            Ok(fd) => dirs.push((fd, part)),
            Err(errno) => {
                // a symlink (O_NOFOLLOW refused it) is read and its target walked in its place
                let Ok(target) = rustix::fs::readlinkat(dir, part.as_os_str(), Vec::new()) else {
                    return match (goal, errno) {
                        (Goal::Locate, Errno::NOENT | Errno::NOTDIR) => {
                            let mut parts = names(&dirs);
                            parts.push(part);
                            append_lexically(&mut parts, pending)?;
                            Ok(Walked { fd: None, parts })
                        }
                        _ => Err(Denied::Io(errno.into())),
                    };
                };
                symlinks += 1;
                if symlinks > MAX_SYMLINKS {
                    return Err(Denied::Io(Errno::LOOP.into()));
                }
                let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
                let target = if target.is_absolute() {
                    // an absolute symlink may point back into the root: walk on from the root
                    // descriptor (the root's path is only compared, never opened)
                    let inside = target
                        .strip_prefix(root_path)
                        .map_err(|_| Denied::Escapes)?;
                    dirs.clear();
                    inside.to_path_buf()
                } else {
                    target
                };
                pending.extend(target.components().rev().filter_map(|c| match c {
                    Component::Normal(_) | Component::CurDir | Component::ParentDir => {
                        Some(c.as_os_str().to_owned())
                    }
                    Component::RootDir | Component::Prefix(_) => None,
                }));
            }
        }
    }
    let parts = names(&dirs);
    match goal {
        Goal::Locate => Ok(Walked { fd: None, parts }),
        // the path named a directory (or the root): open it as asked
        Goal::Open { flags, mode } => {
            let dir = dirs.last().map_or(root, |(fd, _)| fd.as_fd());
            let fd = rustix::fs::openat(dir, ".", flags & !OFlags::CREATE, mode)
                .map_err(|errno| Denied::Io(errno.into()))?;
            Ok(Walked {
                fd: Some(fd),
                parts,
            })
        }
    }
}

fn names(dirs: &[(OwnedFd, OsString)]) -> Vec<OsString> {
    dirs.iter().map(|(_, name)| name.clone()).collect()
}

/// Appends the components still pending (next one last) to `parts`, resolving `..` lexically.
fn append_lexically(parts: &mut Vec<OsString>, mut pending: Vec<OsString>) -> Result<(), Denied> {
    while let Some(part) = pending.pop() {
        if part == ".." {
            parts.pop().ok_or(Denied::Escapes)?;
        } else if part != "." {
            parts.push(part);
        }
    }
    Ok(())
}

/// Removes `.` and resolves `..` lexically; `None` when `..` climbs above the filesystem root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => normalized.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normalized.pop() {
                    return None;
                }
            }
            Component::Normal(part) => normalized.push(part),
        }
    }
    Some(normalized)
}
#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> (tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        (dir, sandbox)
    }

    #[test]
    fn relative_paths_resolve_inside_the_root() {
        let (_dir, sandbox) = sandbox();
        assert_eq!(
            sandbox.resolve("a/b.txt").unwrap(),
            sandbox.root().join("a/b.txt")
        );
        assert_eq!(sandbox.resolve(".").unwrap(), sandbox.root());
        assert_eq!(sandbox.resolve("").unwrap(), sandbox.root());
        assert_eq!(
            sandbox.resolve("a/../b.txt").unwrap(),
            sandbox.root().join("b.txt")
        );
    }

    #[test]
    fn dot_dot_escapes_are_refused() {
        let (_dir, sandbox) = sandbox();
        for path in [
            "../x",
            "a/../../x",
            "../../../../../../../../etc/passwd",
            "..",
        ] {
            let error = sandbox.resolve(path).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("path `{path}` escapes the workspace root")
            );
        }
    }

    #[test]
    fn absolute_paths_must_be_inside_the_root() {
        let (_dir, sandbox) = sandbox();
        assert!(matches!(
            sandbox.resolve("/etc/passwd"),
            Err(SandboxError::Escapes { .. })
        ));
        let inside = sandbox.root().join("file.txt");
        assert_eq!(sandbox.resolve(inside.to_str().unwrap()).unwrap(), inside);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_pointing_outside_are_refused() {
        let (_dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path(), sandbox.root().join("link")).unwrap();
        for path in ["link", "link/secret.txt", "link/new/file.txt"] {
            assert!(
                matches!(sandbox.resolve(path), Err(SandboxError::Escapes { .. })),
                "{path}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_the_root_are_followed() {
        let (_dir, sandbox) = sandbox();
        std::fs::create_dir(sandbox.root().join("real")).unwrap();
        std::os::unix::fs::symlink(sandbox.root().join("real"), sandbox.root().join("alias"))
            .unwrap();
        assert_eq!(
            sandbox.resolve("alias/x.txt").unwrap(),
            sandbox.root().join("real/x.txt")
        );
    }

    #[test]
    fn a_missing_root_is_an_error() {
        let error = Sandbox::new("/definitely/not/here").unwrap_err();
        assert!(matches!(error, SandboxError::InvalidRoot { .. }));
    }

    #[test]
    fn display_is_relative_to_the_root() {
        let (_dir, sandbox) = sandbox();
        assert_eq!(sandbox.display(&sandbox.root().join("a/b.txt")), "a/b.txt");
        assert_eq!(sandbox.display(sandbox.root()), ".");
    }

    /// Opens `path` the way the fallback does (no openat2), as `access`.
    fn walk_open(sandbox: &Sandbox, path: &str, access: Access) -> Result<OwnedFd, SandboxError> {
        let relative = sandbox.relative(path)?;
        let mode = Mode::from_raw_mode(0o644);
        walk(
            sandbox.root_dir.as_fd(),
            sandbox.root(),
            &relative,
            Goal::Open {
                flags: access.flags(),
                mode,
            },
        )
        .map(|walked| walked.fd.unwrap())
        .map_err(|denied| denied.into_error(path))
    }

    #[test]
    fn the_walk_refuses_every_way_out() {
        let (dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink(outside.path(), root.join("absolute")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("new.txt"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("..", root.join("up")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("../../x", root.join("sub/two-up")).unwrap();
        for (path, access) in [
            ("absolute/secret.txt", Access::Read),
            ("absolute", Access::Directory),
            ("dangling", Access::Create),
            ("up/x.txt", Access::Create),
            ("sub/two-up", Access::Create),
            ("../x", Access::Read),
        ] {
            let error = walk_open(&sandbox, path, access).unwrap_err();
            assert!(
                matches!(error, SandboxError::Escapes { .. }),
                "{path}: {error}"
            );
        }
        assert!(!outside.path().join("new.txt").exists());
    }

    #[test]
    fn the_walk_follows_symlinks_that_stay_inside() {
        let (dir, sandbox) = sandbox();
        let root = dir.path();
        std::fs::create_dir_all(root.join("real/deep")).unwrap();
        std::fs::write(root.join("real/deep/f.txt"), "inside").unwrap();
        std::os::unix::fs::symlink(sandbox.root().join("real"), root.join("absolute")).unwrap();
        std::os::unix::fs::symlink("real/deep/../deep", root.join("relative")).unwrap();
        std::os::unix::fs::symlink("real/deep/new.txt", root.join("dangling")).unwrap();
        for path in [
            "absolute/deep/f.txt",
            "relative/f.txt",
            "absolute/../relative/f.txt",
        ] {
            let fd = walk_open(&sandbox, path, Access::Read).unwrap();
            let text = std::io::read_to_string(std::fs::File::from(fd)).unwrap();
            assert_eq!(text, "inside", "{path}");
        }
        walk_open(&sandbox, "dangling", Access::Create).unwrap();
        assert!(root.join("real/deep/new.txt").is_file());
        walk_open(&sandbox, "absolute", Access::Directory).unwrap();
    }

    #[test]
    fn symlink_loops_end_with_an_error() {
        let (dir, sandbox) = sandbox();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
        for error in [
            sandbox
                .open(&sandbox.relative("a").unwrap(), Access::Read)
                .unwrap_err(),
            walk_open(&sandbox, "a", Access::Read).unwrap_err(),
            sandbox.resolve("a/x").unwrap_err(),
        ] {
            let SandboxError::Io { source, .. } = error else {
                panic!("{error}");
            };
            assert_eq!(source.raw_os_error(), Some(Errno::LOOP.raw_os_error()));
        }
        // a long but finite chain of `self` is fine
        let path = format!("{}x.txt", "self/".repeat(30));
        assert_eq!(
            sandbox.resolve(&path).unwrap(),
            sandbox.root().join("x.txt")
        );
    }

    #[test]
    fn resolve_refuses_a_dangling_symlink_out_of_the_root() {
        let (dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("new.txt"), dir.path().join("link"))
            .unwrap();
        std::os::unix::fs::symlink("missing/file.txt", dir.path().join("inside")).unwrap();
        assert!(matches!(
            sandbox.resolve("link"),
            Err(SandboxError::Escapes { .. })
        ));
        assert_eq!(
            sandbox.resolve("inside").unwrap(),
            sandbox.root().join("missing/file.txt")
        );
    }

    #[test]
    fn create_dirs_makes_the_missing_parents_only_inside() {
        let (dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("new"), dir.path().join("out")).unwrap();
        sandbox
            .create_dirs(&sandbox.relative("a/b/c").unwrap())
            .unwrap();
        assert!(dir.path().join("a/b/c").is_dir());
        let error = sandbox
            .create_dirs(&sandbox.relative("out/x").unwrap())
            .unwrap_err();
        assert!(matches!(error, SandboxError::Escapes { .. }), "{error}");
        assert!(!outside.path().join("new").exists());
    }

    /// The fallback alone keeps a write inside while a directory on its path is swapped for a
    /// symlink out of the root, over and over.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_walk_is_not_fooled_by_a_swapped_directory() {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use std::sync::atomic::{AtomicBool, Ordering};
        let (dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("decoy")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (a, b) = (dir.path().join("work"), dir.path().join("decoy"));
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                }
            })
        };
        let mut opened = 0;
        for i in 0..3000 {
            if walk_open(&sandbox, &format!("work/f{i}.txt"), Access::Create).is_ok() {
                opened += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(opened > 0);
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
