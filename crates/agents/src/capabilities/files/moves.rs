//! `move_file`: rename or move a file or directory.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use rustix::fs::{AtFlags, FileType, RenameFlags};
use rustix::io::Errno;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::sandbox::RelativePath;
use super::{blocking, create_parents, open_dir, parse_arguments, relative, Sandbox};

/// `move_file{from, to}`: renames or moves the file or directory `from` to `to`, both below
/// the workspace root, creating `to`'s missing parent directories. It never replaces what is
/// at `to`: the model is told to choose another name or remove it first.
///
/// Both ends are resolved like every file tool's path: the parent directories are opened
/// beneath the root, and the rename happens between those descriptors by name
/// (`renameat2` with `RENAME_NOREPLACE`), so no symlink can lead either end out of the root.
/// A symlink at `from` is moved itself, never what it points to.
#[derive(Clone, Debug)]
pub struct MoveFileTool {
    sandbox: Sandbox,
}

/// Arguments of `move_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// The file or directory to move, relative to the workspace root.
    pub from: String,
    /// Its new path, relative to the workspace root.
    pub to: String,
}

impl MoveFileTool {
    /// `move_file` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[async_trait]
impl Tool for MoveFileTool {
    fn name(&self) -> &str {
        "move_file"
    }

    fn description(&self) -> &str {
        "Rename or move a file or directory in the workspace (parent directories of the new \
         path are created). It never replaces an existing file."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "move",
            "mv",
            "rename",
            "rename_file",
            "move_folder",
            "rename_folder",
            "move_directory",
            "rename_directory",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<MoveFileArgs>()
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // Run again, it fails: the file is no longer at `from`.
        agents_core::ToolEffects::SideEffecting
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: MoveFileArgs = parse_arguments(arguments)?;
        let sandbox = self.sandbox.clone();
        blocking(move || move_file(&sandbox, &args)).await
    }
}

/// Resolves both ends beneath the root and renames between their parents' descriptors.
fn move_file(sandbox: &Sandbox, args: &MoveFileArgs) -> Result<ToolOutput, ToolError> {
    let from = relative(sandbox, &args.from)?;
    let to = relative(sandbox, &args.to)?;
    let (from_shown, to_shown) = (sandbox.shown(&from), sandbox.shown(&to));
    let (Some(from_parent), Some(from_name)) = (from.parent(), from.last_part()) else {
        return Err(ToolError::invalid_arguments(
            "`from` is the workspace root, which cannot be moved",
        ));
    };
    let (Some(to_parent), Some(to_name)) = (to.parent(), to.last_part()) else {
        return Err(ToolError::invalid_arguments(format!(
            "`to` is the workspace root; give the new path of `{from_shown}`"
        )));
    };
    if from.to_path() == to.to_path() {
        return Err(ToolError::invalid_arguments(format!(
            "`from` and `to` are the same path (`{from_shown}`)"
        )));
    }
    let from_dir = open_parent(sandbox, &from_parent)?;
    let kind = match rustix::fs::statat(&from_dir, from_name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => FileType::from_raw_mode(stat.st_mode),
        Err(Errno::NOENT) => {
            return Err(ToolError::failed(format!(
                "cannot move `{from_shown}`: no such file or directory"
            )))
        }
        Err(errno) => {
            return Err(ToolError::failed(format!(
                "cannot move `{from_shown}`: {}",
                std::io::Error::from(errno)
            )))
        }
    };
    create_parents(sandbox, &to_parent, &to_shown, "move a file to")?;
    let to_dir = open_parent(sandbox, &to_parent)?;
    rename_no_replace(&from_dir, from_name, &to_dir, to_name).map_err(|errno| match errno {
        Errno::EXIST | Errno::NOTEMPTY => ToolError::failed(format!(
            "`{to_shown}` already exists; move_file never replaces a file: choose another \
             name, or remove `{to_shown}` first"
        )),
        Errno::INVAL => ToolError::invalid_arguments(format!(
            "cannot move the directory `{from_shown}` into itself (`{to_shown}`)"
        )),
        errno => ToolError::failed(format!(
            "cannot move `{from_shown}` to `{to_shown}`: {}",
            std::io::Error::from(errno)
        )),
    })?;
    let what = match kind {
        FileType::Directory => "directory",
        FileType::Symlink => "symlink",
        _ => "file",
    };
    Ok(ToolOutput::text(format!(
        "moved the {what} `{from_shown}` to `{to_shown}`"
    )))
}

/// The directory `parent` of an end of the move, opened beneath the root (a path through a
/// symlink out of the root is the sandbox's escape error, as for every file tool).
fn open_parent(sandbox: &Sandbox, parent: &RelativePath) -> Result<OwnedFd, ToolError> {
    open_dir(sandbox, parent, &sandbox.shown(parent), "move into")
}

/// `renameat2(.., RENAME_NOREPLACE)`; where the filesystem does not support the flag
/// (`EINVAL` without it being a move into itself), a check for an existing target and a plain
/// `renameat` (a target made between the two is replaced: the one race left, on such
/// filesystems only).
fn rename_no_replace(
    from_dir: &OwnedFd,
    from_name: &OsStr,
    to_dir: &OwnedFd,
    to_name: &OsStr,
) -> Result<(), Errno> {
    match rustix::fs::renameat_with(from_dir, from_name, to_dir, to_name, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS)
            if rustix::fs::statat(to_dir, to_name, AtFlags::SYMLINK_NOFOLLOW).is_err() =>
        {
            rustix::fs::renameat(from_dir, from_name, to_dir, to_name)
        }
        Err(Errno::INVAL | Errno::NOSYS) => Err(Errno::EXIST),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup() -> (tempfile::TempDir, MoveFileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = MoveFileTool::new(Sandbox::new(dir.path()).unwrap());
        (dir, tool)
    }

    async fn run(tool: &MoveFileTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn renames_and_moves_into_new_directories() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("draft.txt"), "The plan is ready.\n").unwrap();
        assert_eq!(
            run(&tool, json!({"from": "draft.txt", "to": "final.txt"}))
                .await
                .unwrap(),
            "moved the file `draft.txt` to `final.txt`"
        );
        assert!(!dir.path().join("draft.txt").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("final.txt")).unwrap(),
            "The plan is ready.\n"
        );
        assert_eq!(
            run(
                &tool,
                json!({"from": "final.txt", "to": "archive/2026/final.txt"})
            )
            .await
            .unwrap(),
            "moved the file `final.txt` to `archive/2026/final.txt`"
        );
        assert!(dir.path().join("archive/2026/final.txt").is_file());
        assert_eq!(
            run(&tool, json!({"from": "archive", "to": "old"}))
                .await
                .unwrap(),
            "moved the directory `archive` to `old`"
        );
        assert!(dir.path().join("old/2026/final.txt").is_file());
    }

    #[tokio::test]
    async fn never_replaces_and_says_what_is_wrong() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("b.txt"), "b").unwrap();
        assert_eq!(
            run(&tool, json!({"from": "a.txt", "to": "b.txt"}))
                .await
                .unwrap_err(),
            ToolError::failed(
                "`b.txt` already exists; move_file never replaces a file: choose another name, \
                 or remove `b.txt` first"
            )
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "b"
        );
        assert_eq!(
            run(&tool, json!({"from": "missing.txt", "to": "c.txt"}))
                .await
                .unwrap_err(),
            ToolError::failed("cannot move `missing.txt`: no such file or directory")
        );
        assert_eq!(
            run(&tool, json!({"from": "a.txt", "to": "a.txt"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("`from` and `to` are the same path (`a.txt`)")
        );
        assert_eq!(
            run(&tool, json!({"from": ".", "to": "x"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("`from` is the workspace root, which cannot be moved")
        );
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert_eq!(
            run(&tool, json!({"from": "d", "to": "d/inner"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("cannot move the directory `d` into itself (`d/inner`)")
        );
        assert!(run(&tool, json!({"from": "a.txt"})).await.is_err());
        assert_eq!(
            run(&tool, json!({"from": "a.txt", "to": "b.txt/a.txt"}))
                .await
                .unwrap_err(),
            ToolError::failed(
                "cannot move a file to `b.txt/a.txt`: `b.txt` is a file, not a folder, so \
                 nothing can be put inside it; use another path, or move or delete the file \
                 `b.txt` first"
            )
        );
        assert!(dir.path().join("a.txt").exists());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn neither_end_leaves_the_root() {
        let (dir, tool) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        std::fs::write(dir.path().join("mine.txt"), "mine").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
        for (from, to) in [
            ("../secret.txt", "stolen.txt"),
            ("mine.txt", "../mine.txt"),
            ("escape/secret.txt", "stolen.txt"),
            ("mine.txt", "escape/mine.txt"),
        ] {
            let error = run(&tool, json!({"from": from, "to": to}))
                .await
                .unwrap_err();
            assert!(
                error.to_string().contains("escapes the workspace root"),
                "{from} -> {to}: {error}"
            );
        }
        assert!(outside.path().join("secret.txt").exists());
        assert!(!outside.path().join("mine.txt").exists());
        assert!(dir.path().join("mine.txt").exists());
        // a symlink is moved itself: its target stays where it is
        assert_eq!(
            run(&tool, json!({"from": "escape", "to": "renamed"}))
                .await
                .unwrap(),
            "moved the symlink `escape` to `renamed`"
        );
        assert!(dir.path().join("renamed").is_symlink());
        assert!(outside.path().join("secret.txt").exists());
    }
}
