//! `Sandbox`: resolves the paths a model gives to files inside one workspace root.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

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
}

impl Sandbox {
    /// A sandbox rooted at `root` (which must be an existing directory).
    ///
    /// # Errors
    /// [`SandboxError::InvalidRoot`] when `root` cannot be canonicalized or is not a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let given = root.as_ref();
        let invalid = |source| SandboxError::InvalidRoot {
            root: given.to_path_buf(),
            source,
        };
        let root = std::fs::canonicalize(given).map_err(invalid)?;
        if !root.is_dir() {
            return Err(invalid(io::Error::other("not a directory")));
        }
        Ok(Self {
            root: Arc::new(root),
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute, symlink-free location of `path` (relative to the root, or absolute inside
    /// it). The file need not exist: the deepest existing ancestor is canonicalized and the rest
    /// appended.
    ///
    /// # Errors
    /// [`SandboxError::Escapes`] when the path leads outside the root, [`SandboxError::Io`]
    /// when an existing ancestor cannot be canonicalized.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, SandboxError> {
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
        if !normalized.starts_with(self.root.as_path()) {
            return Err(escapes());
        }
        let resolved =
            canonicalize_existing_prefix(&normalized).map_err(|source| SandboxError::Io {
                path: path.to_owned(),
                source,
            })?;
        if !resolved.starts_with(self.root.as_path()) {
            return Err(escapes());
        }
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

/// Canonicalizes the deepest existing ancestor of `path` and appends the missing rest.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut missing = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(mut canonical) => {
                canonical.extend(missing.iter().rev());
                return Ok(canonical);
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                let Some(name) = existing.file_name().map(ToOwned::to_owned) else {
                    return Err(error);
                };
                missing.push(name);
                if !existing.pop() {
                    return Err(error);
                }
            }
            Err(error) => return Err(error),
        }
    }
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
}
