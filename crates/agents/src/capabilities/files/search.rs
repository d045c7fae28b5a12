//! `search_files`: find files by name pattern.

use std::path::PathBuf;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{is_dir, parse_arguments, resolve, Sandbox};

/// Matches shown at most.
pub const MAX_MATCHES: usize = 100;
/// Directory entries visited at most (bounds the time spent on huge trees).
pub const MAX_VISITED: usize = 50_000;
/// Directories never searched.
const SKIPPED_DIRS: [&str; 3] = [".git", "node_modules", "target"];

/// `search_files{pattern, path?}`: files whose path matches `pattern`, case-insensitively.
///
/// A pattern with `*` or `?` is a glob: `*` matches within one path segment, `**` across
/// directories, `?` one character. A glob without `/` matches file names at any depth
/// (`*.rs`); with `/` it matches the path relative to the searched directory (`src/**/*.rs`).
/// A pattern without wildcards matches names containing it (`config` finds `app_config.yaml`).
/// Symlinks are not followed; `.git`, `node_modules` and `target` are skipped.
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
    /// Directory to search in, relative to the workspace root (default: the root).
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
         a file name such as config. Returns matching paths."
    }

    fn parameters(&self) -> Value {
        arguments_schema::<SearchFilesArgs>()
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: SearchFilesArgs = parse_arguments(arguments)?;
        let pattern = args.pattern.trim();
        if pattern.is_empty() {
            return Err(ToolError::invalid_arguments("pattern is empty"));
        }
        let base = resolve(&self.sandbox, args.path.as_deref().unwrap_or("."))?;
        if !is_dir(&base).await {
            return Err(ToolError::failed(format!(
                "cannot search `{}`: no such directory",
                self.sandbox.display(&base)
            )));
        }
        let matcher = Matcher::new(pattern);
        let (mut found, complete) = walk(&base, &matcher).await;
        if found.is_empty() {
            return Ok(ToolOutput::text(format!("(no files match `{pattern}`)")));
        }
        found.sort();
        let total = found.len();
        let mut lines: Vec<String> = found.into_iter().take(MAX_MATCHES).collect();
        if total > MAX_MATCHES || !complete {
            lines.push(format!(
                "... more files may match; showing {}. Use a narrower pattern or path.",
                total.min(MAX_MATCHES)
            ));
        }
        Ok(ToolOutput::text(lines.join("\n")))
    }
}

/// What a path must look like to match.
enum Matcher {
    /// A glob against the file name.
    Name(Vec<char>),
    /// A glob against the relative path.
    Path(Vec<char>),
    /// A substring of the file name.
    Contains(String),
}

impl Matcher {
    fn new(pattern: &str) -> Self {
        let lower = pattern.to_lowercase();
        let lower = lower.trim_start_matches("./");
        if !lower.contains(['*', '?']) {
            return Matcher::Contains(lower.to_owned());
        }
        if lower.contains('/') {
            Matcher::Path(lower.chars().collect())
        } else {
            Matcher::Name(lower.chars().collect())
        }
    }

    fn matches(&self, relative: &str, name: &str) -> bool {
        let relative = relative.to_lowercase();
        let name = name.to_lowercase();
        match self {
            Matcher::Name(glob) => glob_match(glob, &name.chars().collect::<Vec<_>>()),
            Matcher::Path(glob) => glob_match(glob, &relative.chars().collect::<Vec<_>>()),
            Matcher::Contains(part) => name.contains(part.as_str()),
        }
    }
}

/// Walks `base` breadth-first collecting matching file paths (relative, `/`-separated). The
/// flag is false when the walk stopped early.
async fn walk(base: &std::path::Path, matcher: &Matcher) -> (Vec<String>, bool) {
    let mut found = Vec::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(base.to_path_buf(), String::new())];
    let mut visited = 0;
    while let Some((dir, prefix)) = pending.pop() {
        let Ok(mut reader) = tokio::fs::read_dir(&dir).await else {
            continue;
        };
        while let Ok(Some(entry)) = reader.next_entry().await {
            visited += 1;
            if visited > MAX_VISITED || found.len() > MAX_MATCHES {
                return (found, false);
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            let Ok(file_type) = entry.file_type().await else {
                continue;
            };
            if file_type.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    pending.push((entry.path(), format!("{relative}/")));
                }
            } else if matcher.matches(&relative, &name) {
                found.push(relative);
            }
        }
    }
    (found, true)
}

/// Glob matching: `*` within a segment, `**` across segments (`**/` also matches nothing), `?`
/// one non-`/` character.
fn glob_match(pattern: &[char], text: &[char]) -> bool {
    match pattern {
        [] => text.is_empty(),
        ['*', '*', '/', rest @ ..] => {
            glob_match(rest, text)
                || text
                    .iter()
                    .enumerate()
                    .any(|(i, c)| *c == '/' && glob_match(rest, &text[i + 1..]))
        }
        ['*', '*', rest @ ..] => (0..=text.len()).any(|i| glob_match(rest, &text[i..])),
        ['*', rest @ ..] => {
            for i in 0..=text.len() {
                if glob_match(rest, &text[i..]) {
                    return true;
                }
                if text.get(i) == Some(&'/') {
                    return false;
                }
            }
            false
        }
        ['?', rest @ ..] => {
            matches!(text.first(), Some(c) if *c != '/') && glob_match(rest, &text[1..])
        }
        [c, rest @ ..] => text.first() == Some(c) && glob_match(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn glob(pattern: &str, text: &str) -> bool {
        glob_match(
            &pattern.chars().collect::<Vec<_>>(),
            &text.chars().collect::<Vec<_>>(),
        )
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
            "src/lib.rs\nsrc/tools/mod.rs\ntests/it.rs"
        );
    }

    #[tokio::test]
    async fn path_globs_and_sub_directories() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "src/**/*.rs"}))
                .await
                .unwrap(),
            "src/lib.rs\nsrc/tools/mod.rs"
        );
        assert_eq!(
            search(&dir, json!({"pattern": "*.rs", "path": "src/tools"}))
                .await
                .unwrap(),
            "mod.rs"
        );
    }

    #[tokio::test]
    async fn plain_words_match_part_of_a_name_case_insensitively() {
        let dir = tree();
        assert_eq!(
            search(&dir, json!({"pattern": "config"})).await.unwrap(),
            "src/tools/App_Config.yaml"
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
        assert_eq!(output, "(no files match `secret`)");
    }
}
