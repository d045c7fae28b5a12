//! File tools confined to a workspace root: `read_file`, `write_file`, `edit_file`,
//! `append_file`, `move_file`, `list_dir` and `search_files`.

mod append;
mod edit;
mod list;
mod moves;
mod read;
mod sandbox;
mod search;
mod table;
mod walk;
mod write;

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;

use agents_core::tools::{ToolError, Tools};
use serde::de::DeserializeOwned;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;
use sandbox::{Access, RelativePath};
use serde_json::Value;

pub use append::AppendFileTool;
pub use edit::EditFileTool;
pub use list::ListDirTool;
pub use moves::MoveFileTool;
pub use read::ReadFileTool;
pub use sandbox::{Sandbox, SandboxError};
pub use search::SearchFilesTool;
pub use write::WriteFileTool;

/// Whether `tool` is named by `names`, a list of tool names for a policy (allow, deny,
/// approval): by its own name, or `append_file` by `write_file`'s. `append_file` came after
/// lists that deny `write_file` or require approval for it were written; writing at a
/// file's end is writing the file, so those lists keep meaning every way to write one.
///
/// ```
/// use agents::capabilities::files::names_tool;
///
/// assert!(names_tool(["write_file"], "append_file"));
/// assert!(names_tool(["append_file"], "append_file"));
/// assert!(!names_tool(["append_file"], "write_file"));
/// assert!(!names_tool(["edit_file"], "append_file"));
/// ```
pub fn names_tool<'a>(names: impl IntoIterator<Item = &'a str>, tool: &str) -> bool {
    names
        .into_iter()
        .any(|name| name == tool || (tool == "append_file" && name == "write_file"))
}

/// The file tools over one [`Sandbox`].
///
/// ```
/// use agents::capabilities::files::{FileTools, Sandbox};
///
/// let sandbox = Sandbox::new(std::env::temp_dir()).unwrap();
/// let tools = FileTools::new(sandbox).all();
/// assert_eq!(
///     tools.names(),
///     [
///         "read_file", "write_file", "edit_file", "append_file", "move_file", "list_dir",
///         "search_files"
///     ]
/// );
/// ```
#[derive(Clone, Debug)]
pub struct FileTools {
    sandbox: Sandbox,
}

impl FileTools {
    /// File tools working inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }

    /// The sandbox the tools work in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// `read_file`, `write_file`, `edit_file` and `append_file`.
    pub fn editing(&self) -> Tools {
        Tools::new()
            .with(ReadFileTool::new(self.sandbox.clone()))
            .with(WriteFileTool::new(self.sandbox.clone()))
            .with(EditFileTool::new(self.sandbox.clone()))
            .with(AppendFileTool::new(self.sandbox.clone()))
    }

    /// `read_file`, `list_dir` and `search_files` (nothing that writes).
    pub fn read_only(&self) -> Tools {
        Tools::new()
            .with(ReadFileTool::new(self.sandbox.clone()).beside_search())
            .with(ListDirTool::new(self.sandbox.clone()))
            .with(SearchFilesTool::new(self.sandbox.clone()))
    }

    /// All seven file tools: [`FileTools::editing`]'s, `move_file` and
    /// [`FileTools::read_only`]'s (its `read_file`, which points to `search_files`).
    pub fn all(&self) -> Tools {
        Tools::new()
            .with(ReadFileTool::new(self.sandbox.clone()).beside_search())
            .with(WriteFileTool::new(self.sandbox.clone()))
            .with(EditFileTool::new(self.sandbox.clone()))
            .with(AppendFileTool::new(self.sandbox.clone()))
            .with(MoveFileTool::new(self.sandbox.clone()))
            .with(ListDirTool::new(self.sandbox.clone()))
            .with(SearchFilesTool::new(self.sandbox.clone()))
    }
}

/// Deserializes a tool's arguments; a mismatch is an invalid-arguments error.
fn parse_arguments<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::invalid_arguments(e.to_string()))
}

/// `path` below the root of `sandbox`; an escape is an invalid-arguments error the model can fix.
fn relative(sandbox: &Sandbox, path: &str) -> Result<RelativePath, ToolError> {
    sandbox
        .relative(path)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))
}

/// The tool error for a failed [`Sandbox::open`] of `shown` while trying to `action` it.
fn open_error(action: &str, shown: &str, error: SandboxError) -> ToolError {
    match error {
        SandboxError::Escapes { .. } => ToolError::invalid_arguments(error.to_string()),
        SandboxError::Io { source, .. } if is_errno(&source, Errno::NXIO) => {
            not_regular(shown, "a FIFO, socket or device")
        }
        SandboxError::Io { source, .. } => io_error(action, shown, &source),
        SandboxError::InvalidRoot { .. } => ToolError::failed(error.to_string()),
    }
}

/// True when `error` is the system error `errno`.
fn is_errno(error: &std::io::Error, errno: Errno) -> bool {
    error.raw_os_error() == Some(errno.raw_os_error())
}

/// True when `error` is the sandbox's I/O error `errno`.
fn is_sandbox_errno(error: &SandboxError, errno: Errno) -> bool {
    matches!(error, SandboxError::Io { source, .. } if is_errno(source, errno))
}

/// A readable message for an I/O error on `path`.
fn io_error(action: &str, shown: &str, error: &std::io::Error) -> ToolError {
    let reason = match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    };
    ToolError::failed(format!("cannot {action} `{shown}`: {reason}"))
}

/// The error for a FIFO, socket or device: reading one could block forever.
fn not_regular(shown: &str, kind: &str) -> ToolError {
    ToolError::failed(format!(
        "`{shown}` is not a regular file (it is {kind}); the file tools only work on regular files"
    ))
}

/// Creates the missing parents of `path` beneath the root, then opens the file for writing
/// (created when missing, not truncated) with its size: what `write_file` and `append_file`
/// write through. The root and a directory are refused.
fn create_file(sandbox: &Sandbox, path: &RelativePath) -> Result<(File, u64), ToolError> {
    let shown = sandbox.shown(path);
    let directory =
        || ToolError::failed(format!("`{shown}` is a directory; give the path of a file"));
    if path.is_root() {
        return Err(directory());
    }
    if let Some(parent) = path.parent() {
        create_parents(sandbox, &parent, &shown, "write")?;
    }
    // the kind is checked on the descriptor before anything is written
    open_file(sandbox, path, Access::Create, "write", directory)
}

/// Creates the folder `parent` of `shown` and its missing parents, like `mkdir -p`. When a
/// part of the way is a file, the error names it ("`reports` is a file, not a folder"): the
/// system's "Not a directory" names neither the part nor what to do.
fn create_parents(
    sandbox: &Sandbox,
    parent: &RelativePath,
    shown: &str,
    action: &str,
) -> Result<(), ToolError> {
    match sandbox.create_dirs(parent) {
        Ok(()) => Ok(()),
        Err(error) if is_sandbox_errno(&error, Errno::NOTDIR) => {
            match first_file_on_the_way(sandbox, parent) {
                Some(file) => {
                    let file = sandbox.shown(&file);
                    Err(ToolError::failed(format!(
                        "cannot {action} `{shown}`: `{file}` is a file, not a folder, so \
                         nothing can be put inside it; use another path, or move or delete \
                         the file `{file}` first"
                    )))
                }
                None => Err(open_error("create the directories of", shown, error)),
            }
        }
        Err(error) => Err(open_error("create the directories of", shown, error)),
    }
}

/// The first part of the way to the folder `path` that exists and is not a folder.
fn first_file_on_the_way(sandbox: &Sandbox, path: &RelativePath) -> Option<RelativePath> {
    path.prefixes().find(|prefix| {
        matches!(
            sandbox.open(prefix, Access::Directory),
            Err(error) if is_sandbox_errno(&error, Errno::NOTDIR)
        )
    })
}

/// Opens `path` beneath the root for `access` and returns it with its size when it is a
/// regular file: a directory is `directory()`'s error, a FIFO, socket or device a clear
/// refusal (checked on the descriptor, not on a path), other failures say they could not
/// `action` it.
fn open_file(
    sandbox: &Sandbox,
    path: &RelativePath,
    access: Access,
    action: &str,
    directory: impl FnOnce() -> ToolError,
) -> Result<(File, u64), ToolError> {
    let shown = &sandbox.shown(path);
    let fd = match sandbox.open(path, access) {
        Ok(fd) => fd,
        Err(error) if is_sandbox_errno(&error, Errno::ISDIR) => return Err(directory()),
        Err(SandboxError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::failed(format!(
                "cannot {action} `{shown}`: no such file or directory{}",
                closest_hint(sandbox, path, Wanted::File)
            )))
        }
        Err(error) => return Err(open_error(action, shown, error)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_error("inspect", shown, &e.into()))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {
            let size = u64::try_from(stat.st_size).unwrap_or(0);
            Ok((File::from(fd), size))
        }
        FileType::Directory => Err(directory()),
        FileType::Fifo => Err(not_regular(shown, "a FIFO (named pipe)")),
        FileType::Socket => Err(not_regular(shown, "a socket")),
        FileType::CharacterDevice | FileType::BlockDevice => Err(not_regular(shown, "a device")),
        _ => Err(not_regular(shown, "not a plain file")),
    }
}

/// The content of `file`, refused past `limit` bytes (the file may grow after its size was
/// checked, so the read itself stops there).
fn read_at_most(file: &File, limit: u64, shown: &str) -> Result<Vec<u8>, ToolError> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", shown, &e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(shown, "read", bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// `bytes` as text (invalid UTF-8 replaced), or `None` for a binary file: one holding a NUL
/// byte, which no text file the tools show or search does.
fn as_text(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    (!bytes.contains(&0)).then(|| String::from_utf8_lossy(bytes))
}

/// The error for a file over a size limit.
fn too_large(shown: &str, action: &str, size: u64, limit: u64) -> ToolError {
    ToolError::failed(format!(
        "`{shown}` is too large to {action} ({size} bytes, the limit is {limit})"
    ))
}

/// Runs the blocking filesystem work `work` on tokio's blocking pool, so a slow disk or a
/// large directory never stalls the runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("the file operation did not finish: {e}")))?
}

/// Opens the directory `path` beneath the root for listing or searching (`action`).
fn open_dir(
    sandbox: &Sandbox,
    path: &RelativePath,
    shown: &str,
    action: &str,
) -> Result<OwnedFd, ToolError> {
    let no_such_directory = || {
        ToolError::failed(format!(
            "cannot {action} `{shown}`: no such directory{}",
            closest_hint(sandbox, path, Wanted::Directory)
        ))
    };
    match sandbox.open(path, Access::Directory) {
        Ok(fd) => Ok(fd),
        Err(SandboxError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Err(no_such_directory())
        }
        Err(error) if is_sandbox_errno(&error, Errno::NOTDIR) => {
            // the path exists but is no directory, or a part of it is a file
            if sandbox.open(path, Access::Read).is_ok() {
                Err(ToolError::failed(format!(
                    "`{shown}` is a file, not a directory (use read_file to read it)"
                )))
            } else {
                Err(no_such_directory())
            }
        }
        Err(error) => Err(open_error(action, shown, error)),
    }
}

/// How many entries of a directory [`closest_hint`] looks at, so a huge directory costs
/// bounded time.
const MAX_HINT_ENTRIES: usize = 10_000;

/// For a path that does not exist: `"; did you mean `notes.txt`?"` with up to three names in
/// its directory closest to the one asked for ([`agents_core::closest_names`]), so a small
/// model that misspells a file name can fix its call. For a file (`kind`) with nothing close
/// there, or whose directory does not exist (a model that puts `data/` before `a.txt`), the
/// files of that very name elsewhere below the root ([`files_named`]). With nothing
/// close and nothing of that name: what the nearest folder above it that exists holds
/// ([`what_is_there`]), so a model that guessed a folder (`data`, when the files are at the
/// root) learns where the files are. Empty when that folder is empty too.
fn closest_hint(sandbox: &Sandbox, path: &RelativePath, kind: Wanted) -> String {
    let (Some(parent), Some(wanted)) = (path.parent(), path.file_name()) else {
        return String::new();
    };
    let mut shown = closest_in(sandbox, &parent, &wanted);
    if shown.is_empty() && kind == Wanted::File {
        shown = files_named(sandbox, &wanted);
    }
    if shown.is_empty() {
        return what_is_there(sandbox, parent);
    }
    let shown: Vec<String> = shown.iter().map(|path| format!("`{path}`")).collect();
    format!("; did you mean {}?", shown.join(", "))
}

/// How many names of a folder [`what_is_there`] shows; the rest are counted.
const SHOWN_ENTRIES: usize = 12;

/// `"; the workspace's top folder holds `a.txt`, `docs/`"`: the entries (folders with a
/// trailing `/`, sorted, at most [`SHOWN_ENTRIES`], then how many more) of `folder` or of
/// the nearest folder above it that exists. Empty when that folder is empty or unreadable.
fn what_is_there(sandbox: &Sandbox, folder: RelativePath) -> String {
    let Some((folder, dir)) = nearest_existing(sandbox, folder) else {
        return String::new();
    };
    let Ok(entries) = read_entries(&dir) else {
        return String::new();
    };
    let mut names: Vec<String> = entries
        .take(MAX_HINT_ENTRIES)
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.name.to_string_lossy().into_owned();
            if entry.kind == FileType::Directory {
                format!("`{name}/`")
            } else {
                format!("`{name}`")
            }
        })
        .collect();
    if names.is_empty() {
        return String::new();
    }
    names.sort_unstable();
    let more = names.len().saturating_sub(SHOWN_ENTRIES);
    names.truncate(SHOWN_ENTRIES);
    let holder = place_name(sandbox, &folder);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("; {holder} holds {}{more}", names.join(", "))
}

/// `folder`, or the nearest folder above it that opens, with its descriptor: where a tool
/// that was given a folder that is not there looks instead (`list_dir`, `read_file`,
/// `search_files`, and the hint of a missing path's error). `None` when none opens (the
/// root itself cannot be opened).
fn nearest_existing(
    sandbox: &Sandbox,
    mut folder: RelativePath,
) -> Option<(RelativePath, OwnedFd)> {
    loop {
        match sandbox.open(&folder, Access::Directory) {
            Ok(dir) => return Some((folder, dir)),
            Err(_) => folder = folder.parent()?,
        }
    }
}

/// How a tool's note names `folder`: `the workspace's top folder` for the root, else its
/// path in backticks.
fn place_name(sandbox: &Sandbox, folder: &RelativePath) -> String {
    if folder.is_root() {
        "the workspace's top folder".to_owned()
    } else {
        format!("`{}`", sandbox.shown(folder))
    }
}

/// What a missing path was asked for as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    File,
    Directory,
}

/// The paths of up to three entries of `parent` whose names are closest to `wanted`.
fn closest_in(sandbox: &Sandbox, parent: &RelativePath, wanted: &str) -> Vec<String> {
    let (prefix, names) = entry_names(sandbox, parent, |_| true);
    agents_core::closest_names(wanted, names.iter().map(String::as_str), 3)
        .iter()
        .map(|name| format!("{prefix}{name}"))
        .collect()
}

/// The names of the entries of `parent` of a kind `keep` keeps, among its first
/// [`MAX_HINT_ENTRIES`], and the prefix that makes a name a path shown from the root
/// (`dir/`, nothing at the root). No names when the directory cannot be read.
fn entry_names(
    sandbox: &Sandbox,
    parent: &RelativePath,
    keep: impl Fn(FileType) -> bool,
) -> (String, Vec<String>) {
    let prefix = if parent.is_root() {
        String::new()
    } else {
        format!("{}/", sandbox.shown(parent))
    };
    let Ok(dir) = sandbox.open(parent, Access::Directory) else {
        return (prefix, Vec::new());
    };
    let Ok(entries) = read_entries(&dir) else {
        return (prefix, Vec::new());
    };
    let names = entries
        .take(MAX_HINT_ENTRIES)
        .filter_map(Result::ok)
        .filter(|entry| keep(entry.kind))
        .map(|entry| entry.name.to_string_lossy().into_owned())
        .collect();
    (prefix, names)
}

/// The paths of up to three files below the root named `wanted` (ASCII case ignored), the
/// shallowest first, from the first [`MAX_HINT_ENTRIES`] entries of a walk that skips what
/// `search_files` skips.
fn files_named(sandbox: &Sandbox, wanted: &str) -> Vec<String> {
    let Ok(root) = sandbox
        .relative(".")
        .and_then(|root| sandbox.open(&root, Access::Directory))
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    walk::walk_files(
        root,
        MAX_HINT_ENTRIES,
        &|| false,
        &mut |_, _, relative, name, _| {
            if name.eq_ignore_ascii_case(wanted) {
                found.push(relative);
            }
            true
        },
    );
    found.sort_by(|a, b| {
        let depth = |path: &str| path.matches('/').count();
        depth(a).cmp(&depth(b)).then_with(|| a.cmp(b))
    });
    found.truncate(3);
    found
}

/// One entry of a directory read through its descriptor.
struct Entry {
    name: std::ffi::OsString,
    /// What the entry is itself (a symlink is a symlink, not what it points to).
    kind: FileType,
}

/// The entries of the directory `dir` (without `.` and `..`), read lazily.
fn read_entries(
    dir: &OwnedFd,
) -> std::io::Result<impl Iterator<Item = std::io::Result<Entry>> + '_> {
    let entries = rustix::fs::Dir::read_from(dir)?;
    Ok(entries.filter_map(move |entry| {
        let entry = match entry {
            Ok(entry) => entry,
            Err(errno) => return Some(Err(errno.into())),
        };
        let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            return None;
        }
        // some filesystems do not say the kind in the entry: ask, without following a symlink
        let kind = match entry.file_type() {
            FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|stat| FileType::from_raw_mode(stat.st_mode))
                .unwrap_or(FileType::Unknown),
            kind => kind,
        };
        Some(Ok(Entry {
            name: name.to_owned(),
            kind,
        }))
    }))
}

/// The size in bytes of the entry `name` of `dir` (0 when it cannot be inspected).
fn entry_size(dir: &OwnedFd, name: &std::ffi::OsStr) -> u64 {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|stat| u64::try_from(stat.st_size).unwrap_or(0))
        .unwrap_or(0)
}
