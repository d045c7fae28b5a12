//! `search_files`: find files by name pattern, or lines by the text they hold.

use std::cell::Cell;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::OwnedFd;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use globset::{GlobBuilder, GlobMatcher};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use super::read::{whole_numbered, MAX_FILE_BYTES};
use super::sandbox::RelativePath;
use super::walk::walk_files;
use super::{
    as_text, blocking, entry_names, is_sandbox_errno, nearest_existing, open_dir, open_file,
    parse_arguments, place_name, read_at_most, relative, too_large, Access, Sandbox,
};

/// Matches shown at most.
pub const MAX_MATCHES: usize = 100;

/// The fewest characters of a word of a pattern looked up on its own (see `pattern_words`):
/// shorter ones (`on`, `is`, `id`) are in too many lines to tell anything.
const MIN_FALLBACK_WORD_CHARS: usize = 4;
/// Directory entries visited at most (bounds the time spent on huge trees).
pub const MAX_VISITED: usize = 50_000;
/// Longer patterns are refused (a glob is compiled to a regular expression; no real search
/// needs more).
pub const MAX_PATTERN_CHARS: usize = 500;
/// Files larger than this are skipped when a directory's files are searched for a text.
pub const MAX_SEARCHED_FILE_BYTES: u64 = 1024 * 1024;
/// The most bytes one search for a text in a directory reads, all files together.
pub const MAX_SEARCHED_BYTES: usize = 16 * 1024 * 1024;
/// A matching line longer than this is cut and ends with `...`.
const MAX_SHOWN_LINE_CHARS: usize = 200;

/// `search_files{pattern, path?}`: files whose path matches `pattern`, case-insensitively.
///
/// A pattern with `*` or `?` is a glob: `*` matches within one path segment, `**` across
/// directories, `?` one character, `[abc]` one of a set and `{a,b}` either alternative.
/// Matching takes time linear in the path's length, patterns are at most
/// `MAX_PATTERN_CHARS` long, and the walk runs off the async runtime, stopping when the run
/// is cancelled or the call times out. A glob without `/` matches file names at any depth
/// (`*.rs`); with `/` it matches the path relative to the searched directory (`src/**/*.rs`).
/// A pattern without wildcards matches names containing it (`config` finds `app_config.yaml`).
/// Symlinks are not followed; `.git`, `node_modules` and `target` are skipped.
///
/// Small models take a tool named `search_files` for grep: they call it with a word to find
/// in the files (`{"pattern": "error", "path": "app.log"}`), so it finds lines too. With a
/// file as `path`, it returns the file's lines that contain `pattern` (case-insensitively),
/// numbered; when no line contains the whole pattern, the lines of its longest word (four
/// characters or more, `_` splitting words) that some line holds are returned instead, after
/// a note that says so (`debug_mode: true` finds `2: debug: false`). A pattern without
/// wildcards that no file name holds is looked up inside the
/// files: the lines that contain it, as `path:line: text`, from text files of at most
/// `MAX_SEARCHED_FILE_BYTES`, `MAX_SEARCHED_BYTES` read in all, at most `MAX_MATCHES` lines.
/// So is the longest word of a glob that matches no file name (`parse_config.*.rs` looks up
/// `parse_config`), when it has one of six characters or more besides the extension. A
/// pattern that is the whole name of the one file found (`team.md`), a text file of at most
/// 2 KiB, shows that file's lines too, as `read_file` would: a model that looks a file up
/// by its name wants what it holds.
#[derive(Clone, Debug)]
pub struct SearchFilesTool {
    sandbox: Sandbox,
}

/// Arguments of `search_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesArgs {
    /// A glob (`*.rs`, `src/**/test_*.py`) or a part of a file name (`config`).
    pub pattern: String,
    /// Directory to search in, or a file to search the lines of (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

impl SearchFilesTool {
    /// `search_files` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[async_trait]
impl Tool for SearchFilesTool {
    fn name(&self) -> &str {
        "search_files"
    }

    fn description(&self) -> &str {
        "Find files in the workspace by name: a glob such as *.rs or src/**/*.py, or a part of \
         a file name such as config. Returns matching paths. A word that no file name holds is \
         looked up inside the files: returns the lines that contain it. With a file as path, \
         returns that file's lines that contain the pattern."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "grep",
            "rg",
            "ripgrep",
            "search",
            "find",
            "find_in_files",
            "search_file",
            "search_file_content",
            "search_text",
            "search_content",
            "search_code",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<SearchFilesArgs>()
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: SearchFilesArgs = parse_arguments(arguments)?;
        let pattern = args.pattern.trim().to_owned();
        let matcher = Matcher::new(&pattern)?;
        let sandbox = self.sandbox.clone();
        // the walk stops between entries when the run is cancelled or this call is dropped
        // (the executor's timeout drops it): the guard cancels the token the walk watches
        let stop = context.cancellation.child_token();
        let _stop_when_dropped = stop.clone().drop_guard();
        blocking(move || {
            let base = relative(&sandbox, args.path.as_deref().unwrap_or("."))?;
            let shown = sandbox.shown(&base);
            let cancelled = || stop.is_cancelled();
            if args.path.is_some() {
                match open_if_file(&sandbox, &base) {
                    Ok(Some(file)) => {
                        return file_lines(file, &shown, &pattern).map(ToolOutput::text);
                    }
                    Ok(None) => {}
                    Err(error) => {
                        let files = files_named_after(&sandbox, &base);
                        if !files.is_empty() {
                            return Ok(ToolOutput::text(lines_of_files_named_after(
                                &sandbox, &shown, &files, &pattern,
                            )));
                        }
                        // A folder that is not there: the matches in the nearest one above
                        // it, when there are some.
                        return match search_above(&sandbox, &base, &matcher, &pattern, &cancelled) {
                            Some(text) => Ok(ToolOutput::text(format!(
                                "(no file or directory is named `{shown}`; {text}"
                            ))),
                            None => Err(error),
                        };
                    }
                }
            }
            let dir = open_dir(&sandbox, &base, &shown, "search")?;
            search_folder(&sandbox, &base, dir, &matcher, &pattern, &cancelled)
                .map(|(text, _)| ToolOutput::text(text))
        })
        .await
    }
}

/// What a search below the nearest folder above `missing` (a path without an extension that
/// is not there) that exists finds ([`search_folder`]), after a note that names that folder, when it finds
/// something: small models guess a folder (`search_files` of `server.toml` in `config`, where
/// the file is at the top: the 1.5B model answered that `server.toml` does not exist, in a
/// probe of issue 36's task kinds, 2026-12-07). `None` when nothing is found there (the
/// error stands) or the search was cancelled.
fn search_above(
    sandbox: &Sandbox,
    missing: &RelativePath,
    matcher: &Matcher,
    pattern: &str,
    cancelled: &dyn Fn() -> bool,
) -> Option<String> {
    // A missing file is not looked for elsewhere: lines of other files would answer for it.
    // Nor is a path that is there but refused (a symlink out of the workspace).
    if missing.file_name()?.contains('.') {
        return None;
    }
    match sandbox.open(missing, Access::Directory) {
        Err(error) if is_sandbox_errno(&error, Errno::NOENT) => {}
        _ => return None,
    }
    let (folder, dir) = nearest_existing(sandbox, missing.parent()?)?;
    let (text, found) = search_folder(sandbox, &folder, dir, matcher, pattern, cancelled).ok()?;
    if !found {
        return None;
    }
    let place = place_name(sandbox, &folder);
    Some(format!("searched {place} instead)\n{text}"))
}

/// The tool's text for a search below the folder `base`, opened as `dir`, and whether it
/// found anything: the files whose names match ([`found_report`]); when none does, the
/// lines that hold a plain pattern, or the longest word of a glob ([`word_of_glob`]).
fn search_folder(
    sandbox: &Sandbox,
    base: &RelativePath,
    dir: OwnedFd,
    matcher: &Matcher,
    pattern: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<(String, bool), ToolError> {
    let shown = sandbox.shown(base);
    let stopped = || ToolError::failed(format!("the search for `{pattern}` was cancelled"));
    let (found, complete) = walk(dir, matcher, cancelled).ok_or_else(stopped)?;
    if found.is_empty() {
        if let Matcher::Contains(needle) = matcher {
            let dir = open_dir(sandbox, base, &shown, "search")?;
            let (lines, complete) = lines_below(dir, needle, cancelled).ok_or_else(stopped)?;
            let any = !lines.is_empty();
            return Ok((lines_report(pattern, lines, complete), any));
        }
        if let Some(word) = word_of_glob(pattern) {
            let dir = open_dir(sandbox, base, &shown, "search")?;
            let needle = word.to_lowercase();
            let (lines, complete) = lines_below(dir, &needle, cancelled).ok_or_else(stopped)?;
            if !lines.is_empty() {
                return Ok((glob_lines_report(pattern, word, lines, complete), true));
            }
        }
        return Ok((report(pattern, found, complete), false));
    }
    let text = found_report(sandbox, &shown, matcher, pattern, found, complete);
    Ok((text, true))
}

/// The tool's text for the files `found` below `shown` ([`report`]), with the lines of the
/// one file found when the pattern is its whole name ([`lines_of_file_named`]).
fn found_report(
    sandbox: &Sandbox,
    shown: &str,
    matcher: &Matcher,
    pattern: &str,
    found: Vec<String>,
    complete: bool,
) -> String {
    let whole = match (matcher, found.as_slice()) {
        (Matcher::Contains(needle), [only]) if complete => {
            lines_of_file_named(sandbox, shown, only, needle)
        }
        _ => None,
    };
    let mut text = report(pattern, found, complete);
    if let Some(lines) = whole {
        text.push('\n');
        text.push_str(&lines);
    }
    text
}

/// The most bytes of a file a search by its name shows whole (see [`lines_of_file_named`]).
const MAX_SHOWN_WHOLE_BYTES: u64 = 2048;

/// The lines of `found` (the one file a search below `shown` found, its path relative to
/// there), as `read_file` shows them, when its name is the pattern `name` (lower case) and it
/// is a small text file (at most [`MAX_SHOWN_WHOLE_BYTES`]). A model that searches for a
/// file by its whole name wants what it holds: asked for the support desk's address in
/// `team.md`, the 1.5B model searched `team.md`, was shown the name, and answered with an
/// address it made up (a probe of issue 36's task kinds, 2026-12-07). `None` otherwise.
fn lines_of_file_named(sandbox: &Sandbox, shown: &str, found: &str, name: &str) -> Option<String> {
    let file_name = found.rsplit('/').next()?;
    if file_name.to_lowercase() != name {
        return None;
    }
    let path = if shown == "." {
        found.to_owned()
    } else {
        format!("{shown}/{found}")
    };
    let relative = sandbox.relative(&path).ok()?;
    let (file, size) = open_if_file(sandbox, &relative).ok()??;
    if size > MAX_SHOWN_WHOLE_BYTES {
        return None;
    }
    let bytes = read_at_most(&file, MAX_SHOWN_WHOLE_BYTES, &path).ok()?;
    let text = as_text(&bytes)?;
    let lines = whole_numbered(&text, MAX_SHOWN_WHOLE_BYTES as usize)?;
    Some(format!("`{path}` holds, as read_file shows it:\n{lines}"))
}

/// The most files [`files_named_after`] returns.
const MAX_FILES_NAMED_AFTER: usize = 10;

/// The files beside `path`, which names no file or directory, whose names begin with its
/// name and a dot (`config` is the start of `config.dev.yaml` and `config.prod.yaml`), sorted,
/// at most [`MAX_FILES_NAMED_AFTER`] (of the first entries a hint reads). Asked "What port
/// does the config file set?" where two files begin with `config.`, the 1.5B model searched
/// `config`, was told it does not exist with both names suggested, and searched only the
/// first (issue 36, d26): the lines of both tell it the request is ambiguous.
fn files_named_after(sandbox: &Sandbox, path: &RelativePath) -> Vec<RelativePath> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    if name.is_empty() || name.starts_with('.') {
        return Vec::new();
    }
    let (prefix, mut names) = entry_names(sandbox, &parent, |kind| kind == FileType::RegularFile);
    let stem = format!("{name}.");
    names.retain(|entry| entry.len() > stem.len() && entry.starts_with(&stem));
    names.sort();
    names
        .iter()
        .take(MAX_FILES_NAMED_AFTER)
        .filter_map(|name| sandbox.relative(&format!("{prefix}{name}")).ok())
        .collect()
}

/// The tool's text for a search of the lines of `files`, named after `shown`, which does not
/// exist: a note that says so, then each file's lines as a search of it alone gives them (or
/// why it could not be searched).
fn lines_of_files_named_after(
    sandbox: &Sandbox,
    shown: &str,
    files: &[RelativePath],
    pattern: &str,
) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|file| format!("`{}`", sandbox.shown(file)))
        .collect();
    let (count, files_word) = match files.len() {
        1 => ("the file".to_owned(), "name begins"),
        n => (format!("the {n} files"), "names begin"),
    };
    let mut text = format!(
        "(no file or directory is named `{shown}`; searched {count} whose {files_word} with \
         `{shown}.`: {})",
        names.join(", ")
    );
    for file in files {
        let file_shown = sandbox.shown(file);
        let lines = match open_if_file(sandbox, file) {
            Ok(Some(opened)) => file_lines(opened, &file_shown, pattern),
            Ok(None) => continue,
            Err(error) => Err(error),
        };
        text.push('\n');
        match lines {
            Ok(lines) => text.push_str(&lines),
            Err(error) => text.push_str(&format!("({error})")),
        }
    }
    text
}

/// `path` opened when it is a file (with its size); `None` when it is a directory. Other
/// failures (it does not exist, it is a FIFO) are the errors `read_file` gives.
fn open_if_file(sandbox: &Sandbox, path: &RelativePath) -> Result<Option<(File, u64)>, ToolError> {
    let directory = Cell::new(false);
    let is_directory = || {
        directory.set(true);
        ToolError::failed("a directory")
    };
    match open_file(sandbox, path, Access::Read, "search", is_directory) {
        Ok(file) => Ok(Some(file)),
        Err(_) if directory.get() => Ok(None),
        Err(error) => Err(error),
    }
}

/// The tool's text for a search of the file `shown` for lines that contain `pattern`.
fn file_lines((file, size): (File, u64), shown: &str, pattern: &str) -> Result<String, ToolError> {
    if size > MAX_FILE_BYTES {
        return Err(too_large(shown, "search", size, MAX_FILE_BYTES));
    }
    let bytes = read_at_most(&file, MAX_FILE_BYTES, shown)?;
    let Some(text) = as_text(&bytes) else {
        return Err(ToolError::failed(format!(
            "`{shown}` is a binary file; its lines cannot be searched as text"
        )));
    };
    let (count, found) = numbered_matches(&text, &pattern.to_lowercase());
    if count > 0 {
        return Ok(found_lines(
            count,
            &found,
            &format!("of `{shown}` "),
            pattern,
        ));
    }
    // The pattern as a whole is not there: the lines of its longest word that is (small
    // models search for what they expect, `debug_mode: true`, where the file says `debug:
    // false`).
    let mut words: Vec<&str> = pattern_words(pattern).collect();
    words.sort_by_key(|word| std::cmp::Reverse(word.len()));
    for word in words {
        let (count, found) = numbered_matches(&text, &word.to_lowercase());
        if count > 0 {
            return Ok(format!(
                "(no line of `{shown}` contains `{pattern}`) {}",
                found_lines(count, &found, "", word)
            ));
        }
    }
    Ok(format!(
        "(no line of `{shown}` contains `{pattern}`; read_file shows the whole file)"
    ))
}

/// How many lines of `text` contain `needle` (lower case), and the first [`MAX_MATCHES`] of
/// them as `number: line`.
fn numbered_matches(text: &str, needle: &str) -> (usize, Vec<String>) {
    // every match is counted, the first MAX_MATCHES kept
    let mut count = 0;
    let mut found = Vec::new();
    for (number, line) in matching_lines(text, needle) {
        count += 1;
        if found.len() < MAX_MATCHES {
            found.push(format!("{number}: {}", shortened(line)));
        }
    }
    (count, found)
}

/// `3 lines {of} contain `pattern`:` and the lines found, with a note when more were counted
/// than shown.
fn found_lines(count: usize, found: &[String], of: &str, pattern: &str) -> String {
    let (lines, contain) = if count == 1 {
        ("line", "contains")
    } else {
        ("lines", "contain")
    };
    let mut text = format!(
        "{count} {lines} {of}{contain} `{pattern}`:\n{}",
        found.join("\n")
    );
    if count > MAX_MATCHES {
        text.push_str(&format!("\n... showing the first {MAX_MATCHES}."));
    }
    text
}

/// The words of a search pattern of several words that are looked up on their own when the
/// whole pattern is in no line of a file: runs of letters and digits (`_` splits them, as in
/// `debug_mode`) of at least [`MIN_FALLBACK_WORD_CHARS`] characters, not all digits; none for
/// a pattern of one word.
fn pattern_words(pattern: &str) -> impl Iterator<Item = &str> {
    let words: Vec<&str> = pattern
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let several = words.len() > 1;
    words.into_iter().filter(move |word| {
        several
            && word.chars().count() >= MIN_FALLBACK_WORD_CHARS
            && !word.chars().all(|c| c.is_ascii_digit())
    })
}

/// The lines of `text` that contain `needle` (lower case), case-insensitively, numbered from
/// 1.
fn matching_lines<'t>(
    text: &'t str,
    needle: &'t str,
) -> impl Iterator<Item = (usize, &'t str)> + 't {
    text.lines()
        .enumerate()
        .filter(move |(_, line)| line.to_lowercase().contains(needle))
        .map(|(index, line)| (index + 1, line))
}

/// `line` cut at [`MAX_SHOWN_LINE_CHARS`] characters, with `...` when cut.
fn shortened(line: &str) -> String {
    match line.char_indices().nth(MAX_SHOWN_LINE_CHARS) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line.to_owned(),
    }
}

/// The tool's text when no file name holds `pattern` and its lines were searched instead.
fn lines_report(pattern: &str, lines: Vec<String>, complete: bool) -> String {
    if lines.is_empty() {
        return format!("(no file names or lines contain `{pattern}`)");
    }
    let mut text = format!(
        "No file names contain `{pattern}`. Lines that contain it:\n{}",
        lines.join("\n")
    );
    if !complete {
        text.push_str("\n... more lines may match. Use a narrower path.");
    }
    text
}

/// The tool's text: how many files match, then the matches sorted; at most [`MAX_MATCHES`],
/// with a note in place of the count when there may be more.
fn report(pattern: &str, mut found: Vec<String>, complete: bool) -> String {
    if found.is_empty() {
        return format!("(no files match `{pattern}`)");
    }
    found.sort();
    let total = found.len();
    let whole = total <= MAX_MATCHES && complete;
    let mut lines: Vec<String> = Vec::with_capacity(total.min(MAX_MATCHES) + 1);
    if whole {
        // the count, so that a model asked how many need not count the lines itself
        lines.push(match total {
            1 => format!("1 file matches `{pattern}`:"),
            total => format!("{total} files match `{pattern}`:"),
        });
    }
    lines.extend(found.into_iter().take(MAX_MATCHES));
    if !whole {
        lines.push(format!(
            "... more files may match; showing {}. Use a narrower pattern or path.",
            total.min(MAX_MATCHES)
        ));
    }
    lines.join("\n")
}

/// The word of a glob that matched no file name, to look up inside the files: the longest
/// run of letters, digits, `_` and `-` of its last path segment, of at least
/// [`MIN_GLOB_WORD_CHARS`] characters, leaving out a trailing extension (`rs` of `*.rs`).
/// Small models write a glob or a regular expression for the text they look for: asked where
/// `parse_config` is defined, the 1.5B model searched `parse_config.*.rs` and, told no file
/// matched, answered that the function is defined nowhere (issue 36, development task d17).
/// `None` for a glob of names only (`*.py`, `test_*.rs` has `test_`, too short).
fn word_of_glob(pattern: &str) -> Option<&str> {
    let segment = pattern.rsplit('/').next().unwrap_or(pattern);
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let stem = match segment.rsplit_once('.') {
        Some((stem, extension)) if !extension.is_empty() && extension.chars().all(is_word) => stem,
        _ => segment,
    };
    stem.split(|c: char| !is_word(c))
        .map(|word| word.trim_matches('-'))
        .filter(|word| word.chars().count() >= MIN_GLOB_WORD_CHARS)
        .max_by_key(|word| word.len())
}

/// The shortest word [`word_of_glob`] looks up.
const MIN_GLOB_WORD_CHARS: usize = 6;

/// The tool's text when the glob `pattern` matched no file and the lines holding its `word`
/// were found instead.
fn glob_lines_report(pattern: &str, word: &str, lines: Vec<String>, complete: bool) -> String {
    let mut text = format!(
        "No files match `{pattern}` (a glob of file names). Lines that contain `{word}`:\n{}",
        lines.join("\n")
    );
    if !complete {
        text.push_str("\n... more lines may match. Use a narrower path.");
    }
    text
}

/// What a path must look like to match.
enum Matcher {
    /// A glob against the file name.
    Name(GlobMatcher),
    /// A glob against the relative path.
    Path(GlobMatcher),
    /// A substring of the file name (lowercase).
    Contains(String),
}

impl Matcher {
    /// The matcher for `pattern` (trimmed).
    ///
    /// # Errors
    /// An invalid-arguments error for an empty, too long or malformed pattern.
    fn new(pattern: &str) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Err(ToolError::invalid_arguments("pattern is empty"));
        }
        let length = pattern.chars().count();
        if length > MAX_PATTERN_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "pattern is {length} characters long, over the limit of {MAX_PATTERN_CHARS}; \
                 use a shorter glob or a part of a file name"
            )));
        }
        let pattern = pattern.trim_start_matches("./");
        if !pattern.contains(['*', '?']) {
            return Ok(Matcher::Contains(pattern.to_lowercase()));
        }
        let glob = compile_glob(pattern)?;
        Ok(if pattern.contains('/') {
            Matcher::Path(glob)
        } else {
            Matcher::Name(glob)
        })
    }

    fn matches(&self, relative: &str, name: &str) -> bool {
        match self {
            Matcher::Name(glob) => glob.is_match(name),
            Matcher::Path(glob) => glob.is_match(relative),
            Matcher::Contains(part) => name.to_lowercase().contains(part.as_str()),
        }
    }
}

/// The case-insensitive matcher of the glob `pattern`. globset compiles it to a regular
/// expression matched in time linear in the path's length (no backtracking); `*` and `?` stop
/// at `/`, `**` crosses directories.
fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let glob = GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::invalid_arguments(format!(
                "pattern `{pattern}` is not a valid glob: {}",
                e.kind()
            ))
        })?;
    Ok(glob.compile_matcher())
}

/// Walks the directory `base` depth-first collecting matching file paths (relative,
/// `/`-separated). The flag is false when the walk stopped early at a limit; `None` when
/// `cancelled` said so (checked before each entry).
fn walk(
    base: OwnedFd,
    matcher: &Matcher,
    cancelled: &dyn Fn() -> bool,
) -> Option<(Vec<String>, bool)> {
    let mut found = Vec::new();
    let complete = walk_files(
        base,
        MAX_VISITED,
        cancelled,
        &mut |_, _, relative, name, _| {
            if found.len() > MAX_MATCHES {
                return false;
            }
            if matcher.matches(&relative, name) {
                found.push(relative);
            }
            true
        },
    )?;
    Some((found, complete))
}

/// The lines of the text files below `base` that contain `needle` (lower case), as
/// `path:line: text`: at most [`MAX_MATCHES`], from files of at most
/// [`MAX_SEARCHED_FILE_BYTES`], [`MAX_SEARCHED_BYTES`] read in all. The flag is false when a
/// limit stopped the search; `None` when `cancelled` said so.
fn lines_below(
    base: OwnedFd,
    needle: &str,
    cancelled: &dyn Fn() -> bool,
) -> Option<(Vec<String>, bool)> {
    let mut found = Vec::new();
    let mut read = 0;
    let complete = walk_files(
        base,
        MAX_VISITED,
        cancelled,
        &mut |dir, entry, relative, _, _| {
            if found.len() >= MAX_MATCHES || read >= MAX_SEARCHED_BYTES {
                return false;
            }
            let Some(text) = text_at(dir, entry) else {
                return true;
            };
            read += text.len();
            for (number, line) in matching_lines(&text, needle) {
                if found.len() == MAX_MATCHES {
                    return false;
                }
                found.push(format!("{relative}:{number}: {}", shortened(line)));
            }
            true
        },
    )?;
    Some((found, complete))
}

/// The text of the regular file `name` in `dir` when it is at most
/// [`MAX_SEARCHED_FILE_BYTES`] and not binary. Opened without following a symlink and without
/// blocking (a FIFO put in its place is refused by its type, never read).
fn text_at(dir: &OwnedFd, name: &OsStr) -> Option<String> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    let size = u64::try_from(stat.st_size).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
        || size > MAX_SEARCHED_FILE_BYTES
    {
        return None;
    }
    let bytes = read_at_most(&File::from(fd), MAX_SEARCHED_FILE_BYTES, "").ok()?;
    as_text(&bytes).map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::super::Access;
    use super::*;
    use serde_json::json;

    fn glob(pattern: &str, text: &str) -> bool {
        compile_glob(pattern).unwrap().is_match(text)
    }

    #[test]
    fn glob_semantics() {
        assert!(glob("*.rs", "main.rs"));
        assert!(!glob("*.rs", "src/main.rs"));
        assert!(glob("src/**/*.rs", "src/main.rs"));
        assert!(glob("src/**/*.rs", "src/a/b/main.rs"));
        assert!(!glob("src/**/*.rs", "tests/main.rs"));
        assert!(glob("**/mod.rs", "mod.rs"));
        assert!(glob("**", "a/b/c"));
        assert!(glob("file?.txt", "file1.txt"));
        assert!(!glob("file?.txt", "file12.txt"));
        assert!(!glob("a?b", "a/b"));
    }

    async fn search(dir: &tempfile::TempDir, arguments: Value) -> Result<String, ToolError> {
        let tool = SearchFilesTool::new(Sandbox::new(dir.path()).unwrap());
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "Cargo.toml",
            "src/lib.rs",
            "src/tools/mod.rs",
            "src/tools/App_Config.yaml",
            "tests/it.rs",
            "target/debug/build.rs",
            ".git/config",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    #[tokio::test]
    async fn name_globs_match_at_any_depth() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "*.rs"})).await.unwrap(),
            "3 files match `*.rs`:\nsrc/lib.rs\nsrc/tools/mod.rs\ntests/it.rs"
        );
    }

    #[tokio::test]
    async fn path_globs_and_sub_directories() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "src/**/*.rs"}))
                .await
                .unwrap(),
            "2 files match `src/**/*.rs`:\nsrc/lib.rs\nsrc/tools/mod.rs"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*.rs", "path": "src/tools"}))
                .await
                .unwrap(),
            "1 file matches `*.rs`:\nmod.rs"
        );
    }

    #[tokio::test]
    async fn a_search_for_a_small_file_by_its_whole_name_shows_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(
            dir.path().join("docs/team.md"),
            "# Team\nSupport desk: help@acme.io\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("big.md"), "line\n".repeat(1000)).unwrap();
        std::fs::write(dir.path().join("teams.txt"), "x\n").unwrap();
        let lines =
            "`docs/team.md` holds, as read_file shows it:\n     1\t# Team\n     2\tSupport \
                     desk: help@acme.io";
        assert_eq!(
            search(&dir, json!({"pattern": "TEAM.md", "path": "."}))
                .await
                .unwrap(),
            format!("1 file matches `TEAM.md`:\ndocs/team.md\n{lines}")
        );
        assert_eq!(
            search(&dir, json!({"pattern": "team.md", "path": "docs"}))
                .await
                .unwrap(),
            format!("1 file matches `team.md`:\nteam.md\n{lines}")
        );
        // part of a name, a glob, several files, or a file too large to show whole: names only
        for (pattern, shown) in [
            ("team", "2 files match `team`:\ndocs/team.md\nteams.txt"),
            ("*.txt", "1 file matches `*.txt`:\nteams.txt"),
            ("big.md", "1 file matches `big.md`:\nbig.md"),
        ] {
            assert_eq!(
                search(&dir, json!({"pattern": pattern})).await.unwrap(),
                shown
            );
        }
    }

    #[tokio::test]
    async fn a_folder_that_is_not_there_is_searched_from_the_nearest_one_above() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("server.toml"), "timeout_seconds = 45\n").unwrap();
        std::fs::write(dir.path().join("src/main.py"), "print(1)\n").unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "server.toml", "path": "config"}))
                .await
                .unwrap(),
            "(no file or directory is named `config`; searched the workspace's top folder \
             instead)\n1 file matches `server.toml`:\nserver.toml\n`server.toml` holds, as \
             read_file shows it:\n     1\ttimeout_seconds = 45"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*.py", "path": "src/app/deep"}))
                .await
                .unwrap(),
            "(no file or directory is named `src/app/deep`; searched `src` instead)\n1 file \
             matches `*.py`:\nmain.py"
        );
        // nothing matches above either: the error stands
        let error = search(&dir, json!({"pattern": "*.rs", "path": "config"}))
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("cannot search `config`"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn plain_words_match_part_of_a_name_case_insensitively() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "config"})).await.unwrap(),
            "1 file matches `config`:\nsrc/tools/App_Config.yaml"
        );
    }

    #[tokio::test]
    async fn no_match_and_bad_paths() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "*.py"})).await.unwrap(),
            "(no files match `*.py`)"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*", "path": "../"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("path `../` escapes the workspace root")
        );
        assert_eq!(
            search(&dir, json!({"pattern": " "})).await.unwrap_err(),
            ToolError::invalid_arguments("pattern is empty")
        );
    }

    #[tokio::test]
    async fn results_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_MATCHES + 20) {
            std::fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
        }
        let output = search(&dir, json!({"pattern": "*.txt"})).await.unwrap();
        assert_eq!(output.lines().count(), MAX_MATCHES + 1);
        assert!(output.ends_with("Use a narrower pattern or path."));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn does_not_follow_symlinks_out_of_the_root() {
        let dir = tree();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
        let output = search(&dir, json!({"pattern": "secret"})).await.unwrap();
        assert_eq!(output, "(no file names or lines contain `secret`)");
    }

    /// 27 characters that made the old backtracking matcher run for minutes on a long name.
    const PATHOLOGICAL: &str = "a*a*a*a*a*a*a*a*a*a*a*a*a*b";

    #[tokio::test]
    async fn a_pathological_glob_is_matched_correctly() {
        let dir = tempfile::tempdir().unwrap();
        let name = "a".repeat(100);
        std::fs::write(dir.path().join(&name), "").unwrap();
        std::fs::write(dir.path().join(format!("{name}b")), "").unwrap();
        assert_eq!(PATHOLOGICAL.len(), 27);
        assert_eq!(
            search(&dir, json!({"pattern": PATHOLOGICAL}))
                .await
                .unwrap(),
            format!("1 file matches `{PATHOLOGICAL}`:\n{name}b")
        );
        assert!(!glob(PATHOLOGICAL, &name));
    }

    #[tokio::test]
    async fn huge_and_malformed_patterns_are_clear_errors() {
        let dir = tree();
        let stars = "*".repeat(100_000);
        assert_eq!(
            search(&dir, json!({"pattern": stars})).await.unwrap_err(),
            ToolError::invalid_arguments(
                "pattern is 100000 characters long, over the limit of 500; use a shorter glob \
                 or a part of a file name"
            )
        );
        // the longest pattern allowed still works
        let longest = "*".repeat(MAX_PATTERN_CHARS - 3) + ".rs";
        assert_eq!(
            search(&dir, json!({"pattern": longest.clone()}))
                .await
                .unwrap(),
            format!("3 files match `{longest}`:\nsrc/lib.rs\nsrc/tools/mod.rs\ntests/it.rs")
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*[a"})).await.unwrap_err(),
            ToolError::invalid_arguments(
                "pattern `*[a` is not a valid glob: unclosed character class; missing ']'"
            )
        );
    }

    #[tokio::test]
    async fn a_cancelled_run_stops_the_search() {
        let dir = tree();
        let tool = SearchFilesTool::new(Sandbox::new(dir.path()).unwrap());
        let context = ToolContext::default();
        context.cancellation.cancel();
        let error = tool
            .call(json!({"pattern": "*.rs"}), &context)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed("the search for `*.rs` was cancelled")
        );
    }

    #[test]
    fn the_walk_stops_when_told_to() {
        let dir = tree();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let base = sandbox
            .open(&sandbox.relative(".").unwrap(), Access::Directory)
            .unwrap();
        let matcher = Matcher::new("*").unwrap();
        let checks = std::cell::Cell::new(0);
        let stop_after_three = || {
            checks.set(checks.get() + 1);
            checks.get() > 3
        };
        assert!(walk(base, &matcher, &stop_after_three).is_none());
        assert_eq!(checks.get(), 4);
    }

    /// Issue 36, development task d18: asked "Is debug mode enabled in config.yaml?", the
    /// 1.5B model searched the file for `debug_mode: true`, was told no line holds it, and
    /// answered that the file "does not contain the string" (or quoted the pattern as the
    /// file's line). The lines of the pattern's longest word that the file holds come back.
    #[tokio::test]
    async fn a_pattern_no_line_holds_gives_the_lines_of_its_longest_word() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.yaml"),
            "app: shop\ndebug: false\nlog_level: info\nmode: live\ncache: true\n",
        )
        .unwrap();
        assert_eq!(
            search(
                &dir,
                json!({"pattern": "debug_mode: true", "path": "config.yaml"})
            )
            .await
            .unwrap(),
            "(no line of `config.yaml` contains `debug_mode: true`) 1 line contains `debug`:\n\
             2: debug: false"
        );
        // the longest word first; one found is enough
        assert_eq!(
            search(
                &dir,
                json!({"pattern": "cache mode", "path": "config.yaml"})
            )
            .await
            .unwrap(),
            "(no line of `config.yaml` contains `cache mode`) 1 line contains `cache`:\n\
             5: cache: true"
        );
        // short words and numbers are not looked up alone, nor is a pattern of one word
        for pattern in ["is on", "port 8080", "verbose"] {
            assert_eq!(
                search(&dir, json!({"pattern": pattern, "path": "config.yaml"}))
                    .await
                    .unwrap(),
                format!(
                    "(no line of `config.yaml` contains `{pattern}`; read_file shows the whole \
                     file)"
                )
            );
        }
        // no word found either
        assert_eq!(
            search(
                &dir,
                json!({"pattern": "verbose_output", "path": "config.yaml"})
            )
            .await
            .unwrap(),
            "(no line of `config.yaml` contains `verbose_output`; read_file shows the whole file)"
        );
    }

    /// Issue 36, development task d26: "What port does the config file set?" with
    /// `config.dev.yaml` and `config.prod.yaml`; the 1.5B model searched `config` for `port`.
    #[tokio::test]
    async fn a_path_that_begins_the_names_of_files_searches_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.dev.yaml"),
            "port: 8080\nhost: dev\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("config.prod.yaml"), "port: 9090\n").unwrap();
        std::fs::write(dir.path().join("configure.sh"), "port=1\n").unwrap();
        std::fs::create_dir(dir.path().join("config.d")).unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "port", "path": "config"}))
                .await
                .unwrap(),
            "(no file or directory is named `config`; searched the 2 files whose names begin \
             with `config.`: `config.dev.yaml`, `config.prod.yaml`)\n\
             1 line of `config.dev.yaml` contains `port`:\n1: port: 8080\n\
             1 line of `config.prod.yaml` contains `port`:\n1: port: 9090"
        );
        // in a folder, one file, one without the line
        std::fs::create_dir(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/app.ini"), "name = shop\n").unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "port", "path": "etc/app"}))
                .await
                .unwrap(),
            "(no file or directory is named `etc/app`; searched the file whose name begins with \
             `etc/app.`: `etc/app.ini`)\n\
             (no line of `etc/app.ini` contains `port`; read_file shows the whole file)"
        );
        // no file begins with the name: the top folder is searched instead, and when it
        // holds nothing either, the error, with its hint
        let above = search(&dir, json!({"pattern": "port", "path": "settings"}))
            .await
            .unwrap();
        assert!(
            above.starts_with(
                "(no file or directory is named `settings`; searched the workspace's top \
                 folder instead)\nNo file names contain `port`. Lines that contain it:\n"
            ) && above.contains("config.dev.yaml:1: port: 8080"),
            "{above}"
        );
        let missing = search(&dir, json!({"pattern": "timeout", "path": "settings"}))
            .await
            .unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("cannot search `settings`: no such file"),
            "{missing}"
        );
        // a path out of the workspace is refused before anything is looked up
        assert!(
            search(&dir, json!({"pattern": "port", "path": "../config"}))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_file_as_path_gives_its_lines_that_contain_the_pattern() {
        // The 1.5B model's first call on the eval's d11 ("How many lines of app.log contain
        // the word error?"), refused before as "a file, not a directory".
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("app.log"),
            "start service\nerror: disk full\nretry write\nERROR: disk full\nok\n\
             error: timeout\nstop service\n",
        )
        .unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "error", "path": "app.log"}))
                .await
                .unwrap(),
            "3 lines of `app.log` contain `error`:\n2: error: disk full\n4: ERROR: disk full\n\
             6: error: timeout"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "debug_mode", "path": "app.log"}))
                .await
                .unwrap(),
            "(no line of `app.log` contains `debug_mode`; read_file shows the whole file)"
        );
        std::fs::write(dir.path().join("blob.bin"), b"error\0").unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "error", "path": "blob.bin"}))
                .await
                .unwrap_err(),
            ToolError::failed("`blob.bin` is a binary file; its lines cannot be searched as text")
        );
        let missing = search(&dir, json!({"pattern": "error", "path": "nope.log"}))
            .await
            .unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("cannot search `nope.log`: no such file"),
            "{missing}"
        );
    }

    #[tokio::test]
    async fn a_word_no_file_name_holds_is_looked_up_in_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/main.rs"),
            "fn main() {\n    parse_config();\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("src/config.rs"),
            "pub struct Settings;\n\npub fn parse_config() -> Settings {\n    Settings\n}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("src/data.bin"), b"parse_config\0").unwrap();
        let output = search(&dir, json!({"pattern": "parse_config"}))
            .await
            .unwrap();
        let mut lines: Vec<&str> = output.lines().collect();
        assert_eq!(
            lines.remove(0),
            "No file names contain `parse_config`. Lines that contain it:"
        );
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "src/config.rs:3: pub fn parse_config() -> Settings {",
                "src/main.rs:2:     parse_config();"
            ]
        );
        // a name match is what it was; a glob of names only is never looked up in the files
        assert_eq!(
            search(&dir, json!({"pattern": "config"})).await.unwrap(),
            "1 file matches `config`:\nsrc/config.rs"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*.py"})).await.unwrap(),
            "(no files match `*.py`)"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "zeppelin"})).await.unwrap(),
            "(no file names or lines contain `zeppelin`)"
        );
    }

    #[tokio::test]
    async fn a_glob_that_matches_no_name_has_its_word_looked_up_in_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/config.rs"),
            "pub fn parse_config() -> Settings {\n    Settings\n}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("src/util.rs"), "pub fn helper() {}\n").unwrap();
        // the 1.5B model's glob, and a regular expression written as one
        for pattern in [
            "parse_config.*.rs",
            ".*parse_config.*",
            "src/**/parse_config*.rs",
        ] {
            assert_eq!(
                search(&dir, json!({"pattern": pattern})).await.unwrap(),
                format!(
                    "No files match `{pattern}` (a glob of file names). Lines that contain \
                     `parse_config`:\nsrc/config.rs:1: pub fn parse_config() -> Settings {{"
                ),
            );
        }
        // a glob that matches a name is what it was; one of names only, or whose word no
        // line holds, says that no file matches
        assert_eq!(
            search(&dir, json!({"pattern": "conf*.rs"})).await.unwrap(),
            "1 file matches `conf*.rs`:\nsrc/config.rs"
        );
        for pattern in ["*.py", "test_*.rs", "zeppelin*.txt"] {
            assert_eq!(
                search(&dir, json!({"pattern": pattern})).await.unwrap(),
                format!("(no files match `{pattern}`)")
            );
        }
    }

    #[test]
    fn the_word_of_a_glob_is_its_longest_run_of_name_characters_but_the_extension() {
        assert_eq!(word_of_glob("parse_config.*.rs"), Some("parse_config"));
        assert_eq!(word_of_glob("**/*handler*"), Some("handler"));
        assert_eq!(word_of_glob("src/**/*.rs"), None);
        assert_eq!(word_of_glob("*.markdown"), None);
        assert_eq!(word_of_glob("test_*.py"), None);
        assert_eq!(word_of_glob("[abc]*?"), None);
        assert_eq!(word_of_glob("*-----*"), None);
    }

    #[tokio::test]
    async fn a_search_of_the_lines_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("many.txt"), "hit\n".repeat(MAX_MATCHES * 3)).unwrap();
        let long = "x".repeat(5000) + "hit";
        std::fs::write(dir.path().join("long.txt"), &long).unwrap();
        let big = "hit\n".repeat(usize::try_from(MAX_SEARCHED_FILE_BYTES).unwrap());
        std::fs::write(dir.path().join("big.txt"), big).unwrap();
        let output = search(&dir, json!({"pattern": "hit"})).await.unwrap();
        assert_eq!(output.lines().count(), MAX_MATCHES + 2, "{output}");
        assert!(output.ends_with("... more lines may match. Use a narrower path."));
        assert!(
            !output.contains("big.txt"),
            "a file over the limit is skipped"
        );
        let file = search(&dir, json!({"pattern": "hit", "path": "long.txt"}))
            .await
            .unwrap();
        assert_eq!(
            file,
            format!(
                "1 line of `long.txt` contains `hit`:\n1: {}...",
                "x".repeat(200)
            )
        );
        let many = search(&dir, json!({"pattern": "HIT", "path": "many.txt"}))
            .await
            .unwrap();
        assert!(many.starts_with("300 lines of `many.txt` contain `HIT`:\n1: hit\n"));
        assert_eq!(many.lines().count(), MAX_MATCHES + 2);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_search_of_the_lines_does_not_follow_symlinks_or_open_fifos() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "the password").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("secret.txt"),
        )
        .unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("pipe"),
            Mode::RUSR | Mode::WUSR,
        )
        .unwrap();
        assert_eq!(
            search(&dir, json!({"pattern": "password"})).await.unwrap(),
            "(no file names or lines contain `password`)"
        );
    }

    #[test]
    fn braces_and_classes_are_globs_too() {
        assert!(glob("*.{rs,toml}", "Cargo.toml"));
        assert!(glob("file[0-9].txt", "file7.txt"));
        assert!(!glob("file[0-9].txt", "fileA.txt"));
        assert!(glob("SRC/*.RS", "src/main.rs"));
    }
}
