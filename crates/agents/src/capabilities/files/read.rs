//! `read_file`: a text file with line numbers.

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use rustix::fs::FileType;
use rustix::io::Errno;

use super::sandbox::RelativePath;
use super::table::table_summary;
use super::{
    as_text, blocking, closest_in, entry_names, files_named, is_sandbox_errno, nearest_existing,
    open_file, parse_arguments, place_name, read_at_most, relative, too_large, Access, Sandbox,
};

/// Lines returned when the model gives no `limit` (and the most it may ask for).
pub const MAX_LINES: usize = 2000;
/// Longer lines are cut and end with `...`.
pub const MAX_LINE_CHARS: usize = 2000;
/// Larger files are refused (read them in a shell, or split them).
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The most characters one call returns: the lines past it are left for the next call, with a
/// note giving the offset to read on from.
pub const MAX_OUTPUT_CHARS: usize = 100_000;
/// Room kept for the note after the lines when the agent's tool-output limit bounds a read.
const NOTE_ROOM: usize = 200;

/// `read_file{path, offset?, limit?}`: the file's lines numbered from 1 (`     1\tfirst line`),
/// starting at line `offset` (1-based), at most `limit` lines and `MAX_OUTPUT_CHARS`
/// characters. Binary files, directories, FIFOs, sockets and devices are refused; an empty file
/// reads as `(empty file)`. After the lines of a `.csv` or `.tsv` file comes a line with its
/// row count and each numeric column's sum, average, smallest and largest value, over the
/// whole file (`(4 rows below the header; column `amount`: sum 770, ...)`, see `table.rs`).
///
/// Under the agent's tool-output limit ([`ToolContext::output_limit`]) a read stops at the last
/// whole line that fits, with a note giving the offset to read on from (beside `search_files`,
/// also saying to search the file for the lines wanted), instead of being cut mid-line.
#[derive(Clone, Debug)]
pub struct ReadFileTool {
    sandbox: Sandbox,
    /// Whether `search_files` is offered beside it (its notes then point to it).
    beside_search: bool,
}

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The 1-based line number to start reading at (default 1).
    #[serde(default)]
    pub offset: Option<usize>,
    /// The maximum number of lines to return (default and maximum 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl ReadFileTool {
    /// `read_file` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self {
            sandbox,
            beside_search: false,
        }
    }

    /// This tool in a set that offers `search_files` too: a read cut short says to search.
    pub(super) fn beside_search(mut self) -> Self {
        self.beside_search = true;
        self
    }
}

#[async_trait]
impl Tool for ReadFileTool {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Read a text file from the workspace. Returns its lines prefixed with 1-based line \
         numbers. Use offset and limit to read a long file in parts."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "read",
            "cat",
            "head",
            "tail",
            "open_file",
            "view_file",
            "show_file",
            "get_file",
            "get_file_contents",
            "read_text_file",
            "read_multiple_files",
            "read_many_files",
            "file_read",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<ReadFileArgs>()
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ReadFileArgs = parse_arguments(arguments)?;
        let sandbox = self.sandbox.clone();
        let budget = Budget {
            chars: context
                .output_limit
                .map_or(MAX_OUTPUT_CHARS, |limit| {
                    limit.saturating_sub(NOTE_ROOM).max(1)
                })
                .min(MAX_OUTPUT_CHARS),
            search_hint: self.beside_search,
        };
        blocking(move || read_file(&sandbox, &args, budget)).await
    }
}

/// How much one read returns, and what its note advises when the file has more.
#[derive(Clone, Copy, Debug)]
struct Budget {
    /// The most characters of numbered lines.
    chars: usize,
    /// Whether the note suggests `search_files` when the characters ran out.
    search_hint: bool,
}

/// Opens the file beneath the root and numbers the requested lines. A file that is not there
/// may be read from elsewhere, after a note that says so ([`read_above`],
/// [`with_an_extension`], [`same_name_elsewhere`]); the output's value then names the files read
/// (`{"read": ["a.txt"]}`), for `write_file`, which counts them as read.
fn read_file(
    sandbox: &Sandbox,
    args: &ReadFileArgs,
    budget: Budget,
) -> Result<ToolOutput, ToolError> {
    let asked = relative(sandbox, &args.path)?;
    let error = match shown_lines(sandbox, &asked, args, budget, "") {
        Ok(text) => return Ok(ToolOutput::text(text)),
        Err(error) => error,
    };
    // Only a file that is not there is looked for elsewhere (a directory, a binary file or
    // a refused path keeps its error).
    let missing = matches!(
        sandbox.open(&asked, Access::Read),
        Err(ref error) if is_sandbox_errno(error, Errno::NOENT)
    );
    let found = missing
        .then(|| {
            read_above(sandbox, &asked)
                .or_else(|| with_an_extension(sandbox, &asked))
                .or_else(|| same_name_elsewhere(sandbox, &asked))
        })
        .flatten();
    let Some((files, note)) = found else {
        return Err(error);
    };
    let note = format!("{note}\n");
    let text = match files.as_slice() {
        [file] => shown_lines(sandbox, file, args, budget, &note),
        files => {
            // Each file's lines under its name, within an equal share of the budget.
            let share = Budget {
                chars: (budget.chars.saturating_sub(note.chars().count()) / files.len()).max(1),
                ..budget
            };
            files
                .iter()
                .map(|file| {
                    let header = format!("== {} ==\n", sandbox.shown(file));
                    shown_lines(sandbox, file, args, share, &header)
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|parts| format!("{note}{}", parts.join("\n")))
        }
    };
    // A file found elsewhere that cannot be read leaves the error of the one asked for.
    let Ok(text) = text else {
        return Err(error);
    };
    let read: Vec<Value> = files
        .iter()
        .map(|file| Value::String(sandbox.shown(file)))
        .collect();
    Ok(ToolOutput::text(text).with_value(serde_json::json!({ "read": read })))
}

/// `head`, then the lines of the file at `path` as `read_file` shows them (numbered, from
/// `args`'s offset, at most its limit and `budget`), then a table's summary, all within the
/// budget; or why it cannot be read.
fn shown_lines(
    sandbox: &Sandbox,
    path: &RelativePath,
    args: &ReadFileArgs,
    budget: Budget,
    head: &str,
) -> Result<String, ToolError> {
    let shown = sandbox.shown(path);
    let directory = || {
        ToolError::failed(format!(
            "`{shown}` is a directory, not a file (use list_dir to see its entries)"
        ))
    };
    let (file, size) = open_file(sandbox, path, Access::Read, "read", directory)?;
    if size > MAX_FILE_BYTES {
        return Err(too_large(&shown, "read", size, MAX_FILE_BYTES));
    }
    let bytes = read_at_most(&file, MAX_FILE_BYTES, &shown)?;
    let Some(text) = as_text(&bytes) else {
        return Err(ToolError::failed(format!(
            "`{shown}` is a binary file and cannot be shown as text"
        )));
    };
    if text.is_empty() {
        return Ok(format!("{head}(empty file)"));
    }
    let summary = table_summary(&shown, &text)
        .map(|summary| format!("\n{summary}"))
        .unwrap_or_default();
    let budget = Budget {
        chars: budget
            .chars
            .saturating_sub(head.chars().count() + summary.chars().count())
            .max(1),
        ..budget
    };
    let lines = number_lines(&text, args.offset, args.limit, budget)?;
    Ok(format!("{head}{lines}{summary}"))
}

/// For a file in a folder that is not there (`ENOENT`, not a refusal): the file of the same
/// name in the nearest folder above that exists, and the note that says it was read instead
/// (`(no directory is named `data`; read `a.txt` of the workspace's top folder instead)`).
/// `None` when the folder is there (the file alone is missing) or the folder above holds no
/// file of that name (the files of that name elsewhere are looked for then,
/// [`same_name_elsewhere`]).
///
/// After a listing of the top folder showed `a.txt` and `b.txt`, the 1.5B model read
/// `data/a.txt` (a folder it had made up), was told "did you mean `a.txt`?", and answered
/// with a plan (development task d10). A folder that does not exist names nothing else, so
/// the file's own name is the model's meaning; unlike `search_files`, which never answers a
/// missing file with other files' lines, this reads the same name, and says where.
fn read_above(sandbox: &Sandbox, missing: &RelativePath) -> Option<(Vec<RelativePath>, String)> {
    let name = missing.last_part()?;
    let folder = missing.parent()?;
    if folder.is_root() {
        return None;
    }
    match sandbox.open(&folder, Access::Directory) {
        Err(error) if is_sandbox_errno(&error, Errno::NOENT) => {}
        _ => return None,
    }
    let (above, _) = nearest_existing(sandbox, folder.parent()?)?;
    let place = place_name(sandbox, &above);
    let file = above.child(name);
    if sandbox.open(&file, Access::Read).is_err() {
        return None;
    }
    let note = format!(
        "(no directory is named `{}`; read `{}` of {place} instead)",
        sandbox.shown(&folder),
        sandbox.shown(&file)
    );
    Some((vec![file], note))
}

/// For a file that is not in its folder, which holds no name close to it (a typo's error
/// says "did you mean") or is not there (and no folder above holds the name,
/// [`read_above`]): the files of that name elsewhere below the root (up
/// to three, the shallowest first, as the error's hint finds them), and the note that says
/// they were read instead: `(no file is named `README.md` in the workspace's top folder;
/// read `api/README.md`, the one file of that name, instead)`, or, for several, `(... 2
/// files have that name, each shown below: `api/README.md`, `web/README.md`; the request
/// does not say which one it means)`.
///
/// Asked "What version does the README say?" with `api/README.md` and `web/README.md` and
/// none at the top, the 1.5B model read `README.md`, was told "did you mean
/// `api/README.md`, `web/README.md`?", and answered that the file did not exist after a
/// made-up listing (a probe of issue 36's task kinds, 2026-12-07). The files of that very
/// name are what the request names; when there are several, the person is to hear that.
fn same_name_elsewhere(
    sandbox: &Sandbox,
    missing: &RelativePath,
) -> Option<(Vec<RelativePath>, String)> {
    let name = missing.file_name()?;
    let folder = missing.parent()?;
    if !closest_in(sandbox, &folder, &name).is_empty() {
        return None;
    }
    let files: Vec<RelativePath> = files_named(sandbox, &name)
        .iter()
        .filter_map(|path| sandbox.relative(path).ok())
        .collect();
    let mut place = place_name(sandbox, &folder);
    if matches!(
        sandbox.open(&folder, Access::Directory),
        Err(ref error) if is_sandbox_errno(error, Errno::NOENT)
    ) {
        place.push_str(", a folder that is not there");
    }
    let note = read_instead_note(sandbox, &name, &place, &files, "")?;
    Some((files, note))
}

/// For a name without an extension that is not in its folder (`config`): the files of that
/// folder whose names are it with an extension (`config.dev.yaml`, `config.prod.yaml`; ASCII
/// case ignored), when there are one to three, in name order, and the note that says they
/// were read instead, as [`same_name_elsewhere`] words it (`... 2 files have that name with
/// an extension, each shown below: ...`).
///
/// Asked "What port does the config file set?" beside `config.dev.yaml` and
/// `config.prod.yaml`, the 1.5B model (ReAct driver) read `config`, was told "did you mean
/// `config.dev.yaml`, `config.prod.yaml`?", searched for `config`, and answered with a plan
/// four times (development task d26, 2026-12-07): a name without its extension means the
/// file that has one; when several do, the person is to hear that.
fn with_an_extension(
    sandbox: &Sandbox,
    missing: &RelativePath,
) -> Option<(Vec<RelativePath>, String)> {
    let name = missing.file_name()?;
    if name.contains('.') {
        return None;
    }
    let folder = missing.parent()?;
    let (_, names) = entry_names(sandbox, &folder, |kind| kind == FileType::RegularFile);
    let mut found: Vec<String> = names
        .into_iter()
        .filter(|entry| {
            entry.len() > name.len() + 1
                && entry.is_char_boundary(name.len())
                && entry[..name.len()].eq_ignore_ascii_case(&name)
                && entry.as_bytes()[name.len()] == b'.'
        })
        .collect();
    if found.len() > 3 {
        return None;
    }
    found.sort_unstable();
    let files: Vec<RelativePath> = found
        .iter()
        .map(|entry| folder.child(std::ffi::OsStr::new(entry)))
        .collect();
    let place = place_name(sandbox, &folder);
    let note = read_instead_note(sandbox, &name, &place, &files, " with an extension")?;
    Some((files, note))
}

/// The note before files read instead of `name`, which `place` does not hold: `(no file is
/// named `name` in place; read `file`, the one file of that name{qualifier}, instead)`, or
/// for several `(... N files have that name{qualifier}, each shown below: `a`, `b`; the
/// request does not say which one it means)`. The tool-calling driver reads the second
/// (`drivers_toolcalling::one_of_several_files`). `None` for no file.
fn read_instead_note(
    sandbox: &Sandbox,
    name: &str,
    place: &str,
    files: &[RelativePath],
    qualifier: &str,
) -> Option<String> {
    Some(match files {
        [] => return None,
        [file] => format!(
            "(no file is named `{name}` in {place}; read `{}`, the one file of that \
             name{qualifier}, instead)",
            sandbox.shown(file)
        ),
        files => format!(
            "(no file is named `{name}` in {place}; {} files have that name{qualifier}, each \
             shown below: {}; the request does not say which one it means)",
            files.len(),
            files
                .iter()
                .map(|file| format!("`{}`", sandbox.shown(file)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The largest file whose content a refused write or edit shows (as `read_file` would): a
/// list or a configuration file, not a data file.
pub(super) const SHOWN_BYTES: u64 = 2048;

/// The words of a refusal that showed the file's content (which then counts as read).
pub(super) const CONTENT_SHOWN: &str = "Here they are, as read_file shows them";

/// All of `text` as `read_file` shows it, for a refusal to show: a text of at most
/// [`SHOWN_BYTES`] without a NUL byte, whose numbered lines take at most `chars` characters.
pub(super) fn shown_whole(text: &str, chars: usize) -> Option<String> {
    let small = text.len() as u64 <= SHOWN_BYTES && !text.contains('\0');
    small
        .then(|| whole_numbered(text, chars))
        .flatten()
        .filter(|numbered| numbered.chars().count() <= chars)
}

/// All of `text` as `read_file` shows it (numbered lines), for a file small enough to show
/// whole; `None` for a longer one (more than [`MAX_LINES`] lines or `chars` characters).
pub(super) fn whole_numbered(text: &str, chars: usize) -> Option<String> {
    let budget = Budget {
        chars,
        search_hint: false,
    };
    let shown = number_lines(text, None, None, budget).ok()?;
    (shown.lines().count() == text.lines().count()).then_some(shown)
}

/// The numbered lines of `text` from `offset` (1-based), at most `limit` of them and
/// `budget.chars` characters.
fn number_lines(
    text: &str,
    offset: Option<usize>,
    limit: Option<usize>,
    budget: Budget,
) -> Result<String, ToolError> {
    let total = text.lines().count();
    let first = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(MAX_LINES).clamp(1, MAX_LINES);
    if first > total {
        return Err(ToolError::invalid_arguments(format!(
            "offset {first} is beyond the end of the file ({total} lines)"
        )));
    }
    let mut output = String::new();
    let mut chars = 0;
    let mut last = first - 1;
    let mut full = false;
    for (index, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let numbered = format!("{:>6}\t{}\n", index + 1, cut_line(line));
        let length = numbered.chars().count();
        // the first line is always shown (a numbered line is at most about 2,000 characters;
        // past a smaller budget the agent's output cap cuts it)
        if chars + length > budget.chars && last >= first {
            full = true;
            break;
        }
        chars += length;
        output.push_str(&numbered);
        last = index + 1;
    }
    if last < total {
        let cut = if full {
            format!("output limit of {} characters reached; ", budget.chars)
        } else {
            String::new()
        };
        let search = if full && budget.search_hint {
            ", or find the lines you need with search_files (a word as pattern, this file as path)"
        } else {
            ""
        };
        output.push_str(&format!(
            "... ({cut}{} more lines; read on with offset={}{search})\n",
            total - last,
            last + 1
        ));
    }
    Ok(output.trim_end_matches('\n').to_owned())
}

fn cut_line(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::files::ListDirTool;
    use serde_json::json;

    fn setup() -> (tempfile::TempDir, ReadFileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = ReadFileTool::new(Sandbox::new(dir.path()).unwrap());
        (dir, tool)
    }

    async fn read(tool: &ReadFileTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn numbers_lines_from_one() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\r\ngamma\n").unwrap();
        let output = read(&tool, json!({"path": "a.txt"})).await.unwrap();
        assert_eq!(output, "     1\talpha\n     2\tbeta\n     3\tgamma");
    }

    #[tokio::test]
    async fn reads_a_window_and_says_how_to_continue() {
        let (dir, tool) = setup();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), text).unwrap();
        let output = read(&tool, json!({"path": "a.txt", "offset": 4, "limit": 2}))
            .await
            .unwrap();
        assert_eq!(
            output,
            "     4\tline 4\n     5\tline 5\n... (5 more lines; read on with offset=6)"
        );
    }

    #[tokio::test]
    async fn an_offset_beyond_the_end_is_an_error() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let error = read(&tool, json!({"path": "a.txt", "offset": 3}))
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::invalid_arguments("offset 3 is beyond the end of the file (2 lines)")
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("a.txt"), "x".repeat(MAX_LINE_CHARS + 10)).unwrap();
        let output = read(&tool, json!({"path": "a.txt"})).await.unwrap();
        assert!(output.ends_with("x..."));
        assert_eq!(output.chars().count(), 7 + MAX_LINE_CHARS + 3);
    }

    #[tokio::test]
    async fn empty_binary_missing_and_directory_files() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        std::fs::write(dir.path().join("image.png"), [0x89, b'P', 0, 1, 2]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(
            read(&tool, json!({"path": "empty.txt"})).await.unwrap(),
            "(empty file)"
        );
        assert_eq!(
            read(&tool, json!({"path": "image.png"})).await.unwrap_err(),
            ToolError::failed("`image.png` is a binary file and cannot be shown as text")
        );
        assert_eq!(
            read(&tool, json!({"path": "sub"})).await.unwrap_err(),
            ToolError::failed("`sub` is a directory, not a file (use list_dir to see its entries)")
        );
        assert_eq!(
            read(&tool, json!({"path": "nope.txt"})).await.unwrap_err(),
            ToolError::failed(
                "cannot read `nope.txt`: no such file or directory; did you mean `empty.txt`?"
            )
        );
    }

    #[tokio::test]
    async fn a_missing_file_answers_with_the_closest_names_in_its_directory() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("notes.txt"), "n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "n").unwrap();
        std::fs::write(dir.path().join("inventory.csv"), "i").unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/guide.md"), "g").unwrap();
        assert_eq!(
            read(&tool, json!({"path": "nottes.txt"})).await.unwrap_err(),
            ToolError::failed(
                "cannot read `nottes.txt`: no such file or directory; did you mean `notes.txt`, `notes.md`?"
            )
        );
        assert_eq!(
            read(&tool, json!({"path": "docs/gide.md"})).await.unwrap_err(),
            ToolError::failed(
                "cannot read `docs/gide.md`: no such file or directory; did you mean `docs/guide.md`?"
            )
        );
        // nothing close: no guess, but what the folder holds
        assert_eq!(
            read(&tool, json!({"path": "launch_codes.bin"}))
                .await
                .unwrap_err(),
            ToolError::failed(
                "cannot read `launch_codes.bin`: no such file or directory; the workspace's top folder holds `docs/`, `inventory.csv`, `notes.md`, `notes.txt`"
            )
        );
        // a directory on the way that does not exist (the 1.5B model put `data/` before
        // files at the root, and every read failed): the file of that name in the nearest
        // folder above that exists is read, after a note that says so
        assert_eq!(
            read(&tool, json!({"path": "nowhere/notes.txt"}))
                .await
                .unwrap(),
            "(no directory is named `nowhere`; read `notes.txt` of the workspace's top folder \
             instead)\n     1\tn"
        );
        assert_eq!(
            read(&tool, json!({"path": "docs/old/v1/guide.md"}))
                .await
                .unwrap(),
            "(no directory is named `docs/old/v1`; read `docs/guide.md` of `docs` instead)\n     \
             1\tg"
        );
        // the folder is there and the file is not, nor a name close to it: the one file of
        // that name elsewhere is read, after a note (its value names it, for write_file)
        let output = tool
            .call(json!({"path": "docs/notes.txt"}), &ToolContext::default())
            .await
            .unwrap();
        assert_eq!(
            output.content(),
            "(no file is named `notes.txt` in `docs`; read `notes.txt`, the one file of that \
             name, instead)\n     1\tn"
        );
        assert_eq!(output.value(), Some(&json!({"read": ["notes.txt"]})));
        // several files of that name (ASCII case ignored), the shallowest first: each is shown
        // under its name, and the note says the request does not say which
        std::fs::create_dir_all(dir.path().join("b/deep")).unwrap();
        std::fs::write(dir.path().join("b/deep/Guide.md"), "G").unwrap();
        assert_eq!(
            read(&tool, json!({"path": "guide.md"})).await.unwrap(),
            "(no file is named `guide.md` in the workspace's top folder; 2 files have that \
             name, each shown below: `docs/guide.md`, `b/deep/Guide.md`; the request does not \
             say which one it means)\n== docs/guide.md ==\n     1\tg\n== b/deep/Guide.md ==\n     \
             1\tG"
        );
        // a name close to one in its folder: the error stands, with its guess
        assert_eq!(
            read(&tool, json!({"path": "docs/guid.md"})).await.unwrap_err(),
            ToolError::failed(
                "cannot read `docs/guid.md`: no such file or directory; did you mean `docs/guide.md`?"
            )
        );
        assert_eq!(
            read(&tool, json!({"path": "nowhere/absent.txt"}))
                .await
                .unwrap_err(),
            ToolError::failed(
                "cannot read `nowhere/absent.txt`: no such file or directory; the workspace's top folder holds `b/`, `docs/`, `inventory.csv`, `notes.md`, `notes.txt`"
            ),
            "a folder on the way missing: the nearest folder above that exists"
        );
        // a made-up folder and no file of that name above it: the files of that name
        // elsewhere are read
        assert_eq!(
            read(&tool, json!({"path": "made/up/guide.md"}))
                .await
                .unwrap(),
            "(no file is named `guide.md` in `made/up`, a folder that is not there; 2 files \
             have that name, each shown below: `docs/guide.md`, `b/deep/Guide.md`; the request \
             does not say which one it means)\n== docs/guide.md ==\n     1\tg\n== \
             b/deep/Guide.md ==\n     1\tG"
        );
        assert_eq!(
            read(&tool, json!({"path": "docs/old/absent.txt"}))
                .await
                .unwrap_err(),
            ToolError::failed(
                "cannot read `docs/old/absent.txt`: no such file or directory; `docs` holds `guide.md`"
            )
        );
        let list = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        let listed = list
            .call(json!({"path": "doc"}), &ToolContext::default())
            .await
            .unwrap_err();
        assert_eq!(
            listed,
            ToolError::failed("cannot list `doc`: no such directory; did you mean `docs`?")
        );
    }

    #[tokio::test]
    async fn a_name_without_its_extension_reads_the_files_that_have_one() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("config.dev.yaml"), "port: 8080\n").unwrap();
        std::fs::write(dir.path().join("config.prod.yaml"), "port: 443\n").unwrap();
        std::fs::write(dir.path().join("configure.sh"), "x\n").unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/README.md"), "hi\n").unwrap();
        std::fs::create_dir(dir.path().join("docs/notes.d")).unwrap();
        // two files: each under its name, and the note says the request does not say which
        let output = tool
            .call(json!({"path": "config"}), &ToolContext::default())
            .await
            .unwrap();
        assert_eq!(
            output.content(),
            "(no file is named `config` in the workspace's top folder; 2 files have that name \
             with an extension, each shown below: `config.dev.yaml`, `config.prod.yaml`; the \
             request does not say which one it means)\n== config.dev.yaml ==\n     1\tport: \
             8080\n== config.prod.yaml ==\n     1\tport: 443"
        );
        assert_eq!(
            output.value(),
            Some(&json!({"read": ["config.dev.yaml", "config.prod.yaml"]}))
        );
        // one file (ASCII case ignored), in a folder
        assert_eq!(
            read(&tool, json!({"path": "docs/readme"})).await.unwrap(),
            "(no file is named `readme` in `docs`; read `docs/README.md`, the one file of that \
             name with an extension, instead)\n     1\thi"
        );
        // a folder with an extension is no file; a name with an extension keeps its error
        let notes = read(&tool, json!({"path": "docs/notes"}))
            .await
            .unwrap_err();
        assert!(
            notes.to_string().starts_with("cannot read `docs/notes`"),
            "{notes}"
        );
        let yml = read(&tool, json!({"path": "config.yml"}))
            .await
            .unwrap_err();
        assert!(yml.to_string().contains("did you mean"), "{yml}");
        // more than three: the error, with its guesses
        for extension in ["a", "b"] {
            std::fs::write(dir.path().join(format!("config.{extension}")), "").unwrap();
        }
        let many = read(&tool, json!({"path": "config"})).await.unwrap_err();
        assert!(many.to_string().contains("did you mean"), "{many}");
    }

    #[tokio::test]
    async fn a_file_in_a_folder_that_leads_out_of_the_root_is_not_read_from_above() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside").unwrap();
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("secret.txt"), "inside").unwrap();
        std::fs::write(dir.path().join("plain"), "a file, not a folder").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        // through the symlink: refused, and no file of the root is read in its place
        let refused = read(&tool, json!({"path": "out/secret.txt"}))
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("escapes"), "{refused}");
        // a file where a folder was named: not a missing folder, the error stands
        assert!(read(&tool, json!({"path": "plain/secret.txt"}))
            .await
            .is_err());
        // no file of that name above: the error of the path asked for
        let absent = read(&tool, json!({"path": "nowhere/absent.txt"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            absent.contains("cannot read `nowhere/absent.txt`: no such file or directory"),
            "{absent}"
        );
    }

    #[tokio::test]
    async fn paths_outside_the_root_are_refused() {
        let (_dir, tool) = setup();
        assert_eq!(
            read(&tool, json!({"path": "../../etc/passwd"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("path `../../etc/passwd` escapes the workspace root")
        );
        assert_eq!(
            read(&tool, json!({"path": "/etc/passwd"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("path `/etc/passwd` escapes the workspace root")
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_out_of_the_root_is_refused() {
        let (dir, tool) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("innocent.txt"),
        )
        .unwrap();
        assert_eq!(
            read(&tool, json!({"path": "innocent.txt"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("path `innocent.txt` escapes the workspace root")
        );
    }

    #[tokio::test]
    async fn under_the_agents_output_limit_a_read_ends_on_a_whole_line_and_says_how_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        // a log of 600 lines of 45 characters: 31,800 characters once numbered
        let text: String = (1..=600)
            .map(|i| {
                format!(
                    "2026-11-29 10:{:02}:{:02} INFO request {i:>5} served\n",
                    i / 60,
                    i % 60
                )
            })
            .collect();
        std::fs::write(dir.path().join("server.log"), text).unwrap();
        let context = ToolContext::default().with_output_limit(Some(8_192));
        let read_with = |tool: std::sync::Arc<dyn Tool>| {
            let context = context.clone();
            async move {
                tool.call(json!({"path": "server.log"}), &context)
                    .await
                    .unwrap()
                    .content()
                    .to_owned()
            }
        };
        let all = crate::capabilities::files::FileTools::new(sandbox.clone()).all();
        let output = read_with(all.get("read_file").unwrap().clone()).await;
        // 8,192 - 200 characters of lines: 150 numbered lines of 53, each whole
        assert!(output.chars().count() <= 8_192, "{}", output.len());
        assert!(output.contains("   150\t2026-11-29 10:02:30 INFO request   150 served\n"));
        assert!(!output.contains("   151\t"));
        assert!(output.ends_with(
            "... (output limit of 7992 characters reached; 450 more lines; read on with \
             offset=151, or find the lines you need with search_files (a word as pattern, this \
             file as path))"
        ));
        // alone (no search_files beside it), the note gives the offset only
        let alone = read_with(std::sync::Arc::new(ReadFileTool::new(sandbox))).await;
        assert!(alone.ends_with(
            "... (output limit of 7992 characters reached; 450 more lines; read on with offset=151)"
        ));
    }

    #[tokio::test]
    async fn a_table_ends_with_its_rows_and_column_sums_over_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let tool = ReadFileTool::new(sandbox);
        std::fs::write(
            dir.path().join("sales.csv"),
            "region,amount\nnorth,120\nsouth,340\neast,215\nwest,95\n",
        )
        .unwrap();
        assert_eq!(
            read(&tool, json!({"path": "sales.csv"})).await.unwrap(),
            "     1\tregion,amount\n     2\tnorth,120\n     3\tsouth,340\n     4\teast,215\n     \
             5\twest,95\n(4 rows below the header; column `amount`: sum 770, average 192.5, \
             smallest 95, largest 340)"
        );
        // 240 rows read under the agent's output limit: the lines stop early, the summary
        // counts every row, and the whole reply stays within the limit
        let rows: String = (1..=240)
            .map(|i| format!("2026-01-{:02},order {i},{i}.50\n", i % 28 + 1))
            .collect();
        std::fs::write(
            dir.path().join("orders.csv"),
            format!("date,note,total\n{rows}"),
        )
        .unwrap();
        let context = ToolContext::default().with_output_limit(Some(2_000));
        let output = tool
            .call(json!({"path": "orders.csv"}), &context)
            .await
            .unwrap()
            .content()
            .to_owned();
        assert!(
            output.chars().count() <= 2_000,
            "{}",
            output.chars().count()
        );
        assert!(
            output.contains("more lines; read on with offset="),
            "{output}"
        );
        assert!(
            output.ends_with(
                "(240 rows below the header; column `total`: sum 29040, average 121, smallest \
                 1.5, largest 240.5)"
            ),
            "{output}"
        );
    }

    #[tokio::test]
    async fn output_stops_at_the_character_limit_and_says_where_to_go_on() {
        let (dir, tool) = setup();
        let line = "y".repeat(1000);
        let text: String = (0..200).map(|_| format!("{line}\n")).collect();
        std::fs::write(dir.path().join("wide.txt"), text).unwrap();
        let output = read(&tool, json!({"path": "wide.txt"})).await.unwrap();
        // each numbered line is 6 + 1 + 1000 + 1 characters: 99 fit in 100,000
        assert!(output.chars().count() <= MAX_OUTPUT_CHARS + 100);
        assert!(output.contains(&format!("    99\t{line}\n")));
        assert!(!output.contains("   100\t"));
        assert!(output.ends_with(
            "... (output limit of 100000 characters reached; 101 more lines; read on with offset=100)"
        ));
        let rest = read(&tool, json!({"path": "wide.txt", "offset": 100}))
            .await
            .unwrap();
        assert!(rest.starts_with(&format!("   100\t{line}")));
    }

    #[tokio::test]
    async fn files_over_the_size_limit_are_refused() {
        let (dir, tool) = setup();
        let file = std::fs::File::create(dir.path().join("huge.log")).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert_eq!(
            read(&tool, json!({"path": "huge.log"})).await.unwrap_err(),
            ToolError::failed(format!(
                "`huge.log` is too large to read ({} bytes, the limit is {MAX_FILE_BYTES})",
                MAX_FILE_BYTES + 1
            ))
        );
    }
}
