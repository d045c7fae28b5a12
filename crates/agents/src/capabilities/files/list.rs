//! `list_dir`: the entries of a directory.

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use std::os::fd::OwnedFd;

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use super::sandbox::RelativePath;
use super::walk::walk_files;
use super::{
    blocking, closest_in, entry_size, io_error, is_sandbox_errno, nearest_existing, open_dir,
    parse_arguments, place_name, read_entries, relative, Access, Sandbox,
};

/// Entries shown at most; the rest are counted.
pub const MAX_ENTRIES: usize = 100;

/// Entries of a folder's subfolders counted at most for its tree line ([`tree_summary`]).
const MAX_TREE_ENTRIES: usize = 10_000;

/// `list_dir{path?}`: a directory's entries, directories first, each group sorted by name, as
/// `[dir] name/`, `[file] name (N bytes)` or `[link] name` lines (the one file larger than
/// all others says so: `[file] beta.log (1380 bytes, the largest)`), then a line that counts
/// them (`In all: 3 files (2 .md files, 1 .txt file) and 1 directory.`); when its
/// subfolders hold files, a line that counts those too (`With the files in its subfolders:
/// 6 files (5 .rs files, 1 .py file).`).
#[derive(Clone, Debug)]
pub struct ListDirTool {
    sandbox: Sandbox,
}

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

impl ListDirTool {
    /// `list_dir` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Dir,
    File(u64),
    Link,
}

#[async_trait]
impl Tool for ListDirTool {
    fn name(&self) -> &str {
        "list_dir"
    }

    fn description(&self) -> &str {
        "List the files and directories in a directory of the workspace (directories first)."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "ls",
            "list",
            "dir",
            "list_files",
            "list_directory",
            "list_folder",
            "list_directory_with_sizes",
            "directory_tree",
            "tree",
            "glob",
            "find_files",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<ListDirArgs>()
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: ListDirArgs = parse_arguments(arguments)?;
        let sandbox = self.sandbox.clone();
        blocking(move || list_dir(&sandbox, args.path.as_deref().unwrap_or("."))).await
    }
}

/// Opens the directory beneath the root and lists it through its descriptor; a folder that
/// is not there lists the nearest one above it ([`list_above`]) or is an error.
fn list_dir(sandbox: &Sandbox, path: &str) -> Result<ToolOutput, ToolError> {
    let path = relative(sandbox, path)?;
    let shown = sandbox.shown(&path);
    let text = match open_dir(sandbox, &path, &shown, "list") {
        Ok(dir) => listing(&dir, &shown)?.unwrap_or_else(|| format!("(`{shown}` is empty)")),
        Err(error) => match list_above(sandbox, &path) {
            Some(text) => format!("(no directory is named `{shown}`; {text}"),
            None => return Err(error),
        },
    };
    Ok(ToolOutput::text(text))
}

/// The listing of the nearest folder above `missing` that exists, after a note that names
/// it, for a folder that is not there (`ENOENT`), whose name has no extension and is close
/// to no name beside it (a typo's error says "did you mean `docs`?"), when that folder holds
/// something. Told "cannot list `data`: no such directory; the workspace's top folder holds
/// `a.txt`, `b.txt`", the 1.5B model planned to create `data` and answered that the two files
/// did not exist (development task d10); a listing that shows them is what it asked for.
/// `None` when the error should stand.
fn list_above(sandbox: &Sandbox, missing: &RelativePath) -> Option<String> {
    let name = missing.file_name()?;
    if name.contains('.') {
        return None;
    }
    match sandbox.open(missing, Access::Directory) {
        Err(error) if is_sandbox_errno(&error, Errno::NOENT) => {}
        _ => return None,
    }
    let parent = missing.parent()?;
    if !closest_in(sandbox, &parent, &name).is_empty() {
        return None;
    }
    let (folder, dir) = nearest_existing(sandbox, parent)?;
    let text = listing(&dir, &sandbox.shown(&folder)).ok()??;
    let place = place_name(sandbox, &folder);
    Some(format!("listed {place} instead)\n{text}"))
}

/// The listing of the open directory `dir`, shown as `shown`; `None` when it is empty.
fn listing(dir: &OwnedFd, shown: &str) -> Result<Option<String>, ToolError> {
    let mut entries = Vec::new();
    for entry in read_entries(dir).map_err(|e| io_error("list", shown, &e))? {
        let entry = entry.map_err(|e| io_error("list", shown, &e))?;
        let kind = match entry.kind {
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Link,
            _ => Kind::File(entry_size(dir, &entry.name)),
        };
        entries.push((kind, entry.name.to_string_lossy().into_owned()));
    }
    if entries.is_empty() {
        return Ok(None);
    }
    entries.sort_by(|(a, a_name), (b, b_name)| {
        let group = |k: &Kind| matches!(k, Kind::Dir).then_some(0).unwrap_or(1);
        group(a).cmp(&group(b)).then_with(|| a_name.cmp(b_name))
    });
    let total = entries.len();
    let has_directories = entries.iter().any(|(kind, _)| *kind == Kind::Dir);
    let summary = summary(&entries);
    let largest = largest_size(&entries);
    let mut lines: Vec<String> = entries
        .into_iter()
        .take(MAX_ENTRIES)
        .map(|(kind, name)| match kind {
            Kind::Dir => format!("[dir] {name}/"),
            Kind::File(size) if Some(size) == largest => {
                format!("[file] {name} ({size} bytes, the largest)")
            }
            Kind::File(size) => format!("[file] {name} ({size} bytes)"),
            Kind::Link => format!("[link] {name}"),
        })
        .collect();
    if total > MAX_ENTRIES {
        lines.push(format!("... and {} more entries", total - MAX_ENTRIES));
    }
    lines.push(summary);
    if has_directories {
        lines.extend(tree_summary(dir));
    }
    Ok(Some(lines.join("\n")))
}

/// The line that counts the files of the open directory `dir` and of every folder below it
/// (walked as `search_files` walks, skipping `.git`, `node_modules` and `target`; symlinks
/// are not files), by extension: `With the files in its subfolders: 6 files (5 .rs files, 1
/// .py file).` Asked "How many Rust source files (.rs) are under src, counting its
/// subfolders too?", the 1.5B model listed `src`, read its line `In all: 3 files (2 .rs
/// files, 1 .py file) and 1 directory.` and answered 3 (a probe of issue 36's task kinds,
/// 2026-12-07; five were there, three of them in `util/`): small models do not list each
/// folder and add. `None` when the subfolders hold no file, or past [`MAX_TREE_ENTRIES`]
/// entries (a count that stopped early would be wrong). Each entry's kind is the one its
/// directory entry gives (no `stat` per file).
fn tree_summary(dir: &OwnedFd) -> Option<String> {
    let base = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut kinds = FileKinds::default();
    let mut nested = false;
    let complete = walk_files(
        base,
        MAX_TREE_ENTRIES,
        &|| false,
        &mut |_, _, relative, _, kind| {
            if kind != FileType::Symlink && kind != FileType::Unknown {
                kinds.add(&relative);
                nested |= relative.contains('/');
            }
            true
        },
    );
    (complete == Some(true) && nested)
        .then(|| format!("With the files in its subfolders: {}.", kinds.text()))
}

/// Files counted by extension, for a listing's count lines: `6 files (3 .md files, 1 .json
/// file, 1 .txt file, 1 file without an extension)`.
#[derive(Default)]
struct FileKinds {
    files: usize,
    extensions: Vec<(Option<String>, usize)>,
}

impl FileKinds {
    /// Counts the file named `name` (a path's last part gives the extension).
    fn add(&mut self, name: &str) {
        self.files += 1;
        let extension = std::path::Path::new(name)
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase());
        match self.extensions.iter_mut().find(|(e, _)| *e == extension) {
            Some((_, count)) => *count += 1,
            None => self.extensions.push((extension, 1)),
        }
    }

    /// `6 files (3 .md files, ...)`: the commonest kind first, then by extension, files
    /// without one last.
    fn text(mut self) -> String {
        self.extensions.sort_by(|(a, a_count), (b, b_count)| {
            b_count
                .cmp(a_count)
                .then_with(|| a.is_none().cmp(&b.is_none()))
                .then_with(|| a.cmp(b))
        });
        let kinds: Vec<String> = self
            .extensions
            .iter()
            .map(|(extension, count)| match extension {
                Some(extension) => counted(
                    *count,
                    &format!(".{extension} file"),
                    &format!(".{extension} files"),
                ),
                None => counted(
                    *count,
                    "file without an extension",
                    "files without an extension",
                ),
            })
            .collect();
        format!(
            "{} ({})",
            counted(self.files, "file", "files"),
            kinds.join(", ")
        )
    }
}

/// The last line of a listing: how many files of each extension, directories and links it
/// holds, counted over every entry (also those past [`MAX_ENTRIES`]): `In all: 5 files (3
/// .md files, 1 .json file, 1 .txt file) and 1 directory.` A model asked how many files of a
/// kind a folder holds reads the count instead of counting lines, which small models get
/// wrong (issue 36, d20: the 1.5B model counted five Markdown files among five files of three
/// kinds; with this line it answered 3). Each count names its noun: given `5 files (3 .md, 1
/// .json, 1 .txt)`, the model answered 5 again.
fn summary(entries: &[(Kind, String)]) -> String {
    let mut kinds = FileKinds::default();
    let mut directories = 0;
    let mut links = 0;
    for (kind, name) in entries {
        match kind {
            Kind::Dir => directories += 1,
            Kind::Link => links += 1,
            Kind::File(_) => kinds.add(name),
        }
    }
    let mut parts = Vec::new();
    if kinds.files > 0 {
        parts.push(kinds.text());
    }
    if directories > 0 {
        parts.push(counted(directories, "directory", "directories"));
    }
    if links > 0 {
        parts.push(counted(links, "link", "links"));
    }
    let last = parts.pop().unwrap_or_default();
    if parts.is_empty() {
        format!("In all: {last}.")
    } else {
        format!("In all: {} and {last}.", parts.join(", "))
    }
}

/// The size of the one file of a listing larger than every other, if there is one: its line
/// says so (`[file] beta.log (1380 bytes, the largest)`). A model asked which file is the
/// largest reads it instead of comparing sizes, which small models get wrong (issue 36, d19:
/// the 1.5B model named the first file of the listing and quoted its size). On the file's own
/// line, not in the count line: a sentence naming the largest after the counts made the model
/// answer a count of files of one kind with the count of all files again (d20). `None` with
/// fewer than two files or a tie for the largest.
fn largest_size(entries: &[(Kind, String)]) -> Option<u64> {
    let mut sizes = entries.iter().filter_map(|(kind, _)| match kind {
        Kind::File(size) => Some(*size),
        _ => None,
    });
    let mut largest = sizes.next()?;
    let (mut tied, mut others) = (false, 0);
    for size in sizes {
        others += 1;
        if size > largest {
            (largest, tied) = (size, false);
        } else if size == largest {
            tied = true;
        }
    }
    (others > 0 && !tied).then_some(largest)
}

/// `count` with its noun: `1 file`, `3 files`.
fn counted(count: usize, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        count => format!("{count} {many}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn list(tool: &ListDirTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn lists_directories_first_then_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "12345").unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        std::fs::create_dir(dir.path().join("zeta")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        assert_eq!(
            list(&tool, json!({})).await.unwrap(),
            "[dir] src/\n[dir] zeta/\n[file] a.txt (0 bytes)\n[file] b.txt (5 bytes, the largest)\n\
             In all: 2 files (2 .txt files) and 2 directories.\n\
             With the files in its subfolders: 3 files (2 .txt files, 1 .rs file)."
        );
        assert_eq!(
            list(&tool, json!({"path": "src"})).await.unwrap(),
            "[file] lib.rs (0 bytes)\nIn all: 1 file (1 .rs file)."
        );
        assert_eq!(
            list(&tool, json!({"path": "zeta"})).await.unwrap(),
            "(`zeta` is empty)"
        );
    }

    #[tokio::test]
    async fn the_last_line_counts_the_files_of_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "intro.md",
            "setup.md",
            "faq.MD",
            "logo.txt",
            "conf.json",
            "Makefile",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("img")).unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        let output = list(&tool, json!({})).await.unwrap();
        assert_eq!(
            output.lines().last().unwrap(),
            "In all: 6 files (3 .md files, 1 .json file, 1 .txt file, 1 file without an \
             extension) and 1 directory."
        );
        std::fs::remove_dir(dir.path().join("img")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("intro.md", dir.path().join("readme")).unwrap();
        #[cfg(unix)]
        assert!(list(&tool, json!({})).await.unwrap().ends_with(
            "In all: 6 files (3 .md files, 1 .json file, 1 .txt file, 1 file without an \
             extension) and 1 link."
        ));
    }

    #[tokio::test]
    async fn a_folder_with_subfolders_counts_the_files_below_it_too() {
        let dir = tempfile::tempdir().unwrap();
        // a probe of issue 36's task kinds: five .rs files under src, three of them deeper
        for (path, text) in [
            ("src/main.rs", "fn main() {}"),
            ("src/lib.rs", ""),
            ("src/build.py", ""),
            ("src/util/text.rs", ""),
            ("src/util/num.rs", ""),
            ("src/util/deep/inner.rs", ""),
            ("src/node_modules/skipped.rs", ""),
            ("README.md", ""),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::os::unix::fs::symlink("main.rs", dir.path().join("src/util/link.rs")).unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        let src = list(&tool, json!({"path": "src"})).await.unwrap();
        assert!(
            src.ends_with(
                "In all: 3 files (2 .rs files, 1 .py file) and 2 directories.\n\
                 With the files in its subfolders: 6 files (5 .rs files, 1 .py file)."
            ),
            "{src}"
        );
        let top = list(&tool, json!({})).await.unwrap();
        assert!(
            top.ends_with(
                "With the files in its subfolders: 7 files (5 .rs files, 1 .md file, 1 .py \
                 file)."
            ),
            "{top}"
        );
        // only empty subfolders, or files at the top alone: no second line
        let flat = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(flat.path().join("empty/deeper")).unwrap();
        std::fs::write(flat.path().join("a.txt"), "").unwrap();
        let tool = ListDirTool::new(Sandbox::new(flat.path()).unwrap());
        assert_eq!(
            list(&tool, json!({})).await.unwrap(),
            "[dir] empty/\n[file] a.txt (0 bytes)\nIn all: 1 file (1 .txt file) and 1 directory."
        );
    }

    #[tokio::test]
    async fn the_largest_file_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        for (name, size) in [("alpha.log", 120), ("beta.log", 2048), ("gamma.log", 900)] {
            std::fs::write(dir.path().join(name), vec![b'x'; size]).unwrap();
        }
        std::fs::create_dir(dir.path().join("big")).unwrap();
        assert_eq!(
            list(&tool, json!({})).await.unwrap(),
            "[dir] big/\n[file] alpha.log (120 bytes)\n[file] beta.log (2048 bytes, the \
             largest)\n[file] gamma.log (900 bytes)\nIn all: 3 files (3 .log files) and 1 \
             directory."
        );
        // the first file may be the largest
        std::fs::write(dir.path().join("aaa.log"), vec![b'x'; 4096]).unwrap();
        assert!(list(&tool, json!({}))
            .await
            .unwrap()
            .contains("[file] aaa.log (4096 bytes, the largest)\n[file] alpha.log (120 bytes)\n"));
        std::fs::remove_file(dir.path().join("aaa.log")).unwrap();
        // a tie for the largest, files of one size, or one file: no file says so
        std::fs::write(dir.path().join("delta.log"), vec![b'x'; 2048]).unwrap();
        assert!(!list(&tool, json!({})).await.unwrap().contains("largest"));
        let same = tempfile::tempdir().unwrap();
        let tool = ListDirTool::new(Sandbox::new(same.path()).unwrap());
        for name in ["a.txt", "b.txt"] {
            std::fs::write(same.path().join(name), "same").unwrap();
        }
        assert!(!list(&tool, json!({})).await.unwrap().contains("largest"));
        std::fs::remove_file(same.path().join("b.txt")).unwrap();
        assert_eq!(
            list(&tool, json!({})).await.unwrap(),
            "[file] a.txt (4 bytes)\nIn all: 1 file (1 .txt file)."
        );
    }

    #[tokio::test]
    async fn caps_long_listings() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_ENTRIES + 5) {
            std::fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
        }
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        let output = list(&tool, json!({})).await.unwrap();
        assert_eq!(output.lines().count(), MAX_ENTRIES + 2);
        // the entries past the cap are counted
        assert!(output.ends_with("... and 5 more entries\nIn all: 105 files (105 .txt files)."));
    }

    #[tokio::test]
    async fn a_missing_folder_lists_the_nearest_folder_above_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "12").unwrap();
        std::fs::write(dir.path().join("b.txt"), "30").unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/guide.md"), "# Guide").unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        // the 1.5B model listed `data` for two files at the top (development task d10)
        assert_eq!(
            list(&tool, json!({"path": "data"})).await.unwrap(),
            "(no directory is named `data`; listed the workspace's top folder instead)\n\
             [dir] docs/\n[file] a.txt (2 bytes)\n[file] b.txt (2 bytes)\n\
             In all: 2 files (2 .txt files) and 1 directory.\n\
             With the files in its subfolders: 3 files (2 .txt files, 1 .md file)."
        );
        assert_eq!(
            list(&tool, json!({"path": "docs/old/raw"})).await.unwrap(),
            "(no directory is named `docs/old/raw`; listed `docs` instead)\n\
             [file] guide.md (7 bytes)\nIn all: 1 file (1 .md file)."
        );
        // a missing file, a typo of a folder beside it and a refused path stay errors
        assert_eq!(
            list(&tool, json!({"path": "c.txt"})).await.unwrap_err(),
            ToolError::failed(
                "cannot list `c.txt`: no such directory; did you mean `b.txt`, `a.txt`?"
            )
        );
        assert_eq!(
            list(&tool, json!({"path": "doc"})).await.unwrap_err(),
            ToolError::failed("cannot list `doc`: no such directory; did you mean `docs`?")
        );
        std::os::unix::fs::symlink("/tmp", dir.path().join("out")).unwrap();
        assert!(list(&tool, json!({"path": "out/nothing"})).await.is_err());
        // an empty folder above: the error, with nothing to say
        let empty = tempfile::tempdir().unwrap();
        let tool = ListDirTool::new(Sandbox::new(empty.path()).unwrap());
        assert_eq!(
            list(&tool, json!({"path": "data"})).await.unwrap_err(),
            ToolError::failed("cannot list `data`: no such directory")
        );
    }

    #[tokio::test]
    async fn refuses_files_missing_paths_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        assert_eq!(
            list(&tool, json!({"path": "a.txt"})).await.unwrap_err(),
            ToolError::failed("`a.txt` is a file, not a directory (use read_file to read it)")
        );
        assert_eq!(
            list(&tool, json!({"path": ".."})).await.unwrap_err(),
            ToolError::invalid_arguments("path `..` escapes the workspace root")
        );
    }
}
