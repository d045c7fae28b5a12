//! The eval's tasks: one YAML file per task under `xtask/eval/dev/` (the development half) and
//! `xtask/eval/heldout/` (the held-out half), and the check that the held-out half is the one
//! committed on its own (its SHA-256, recorded in `xtask/eval/heldout.sha256`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::eval::checks::Check;

/// Which half of the task set a task belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Half {
    /// Looked at while changing prompts and the loop.
    Dev,
    /// Only run to report; never edited after its own commit.
    Heldout,
}

impl Half {
    pub const ALL: [Half; 2] = [Half::Dev, Half::Heldout];

    /// The folder under `xtask/eval/` and the name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Half::Dev => "dev",
            Half::Heldout => "heldout",
        }
    }

    /// The first letter of every task id of the half.
    fn id_prefix(self) -> char {
        match self {
            Half::Dev => 'd',
            Half::Heldout => 'h',
        }
    }
}

/// A file the task's workspace starts with: its text, or a line repeated (for size tasks).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Fixture {
    Text(String),
    Repeat { repeat: String, times: usize },
}

impl Fixture {
    /// Fixtures stay small: a task is about the agent, not about the disk.
    const MAX_BYTES: usize = 1 << 20;

    pub fn contents(&self) -> String {
        match self {
            Fixture::Text(text) => text.clone(),
            Fixture::Repeat { repeat, times } => repeat.repeat(*times),
        }
    }

    fn len(&self) -> usize {
        match self {
            Fixture::Text(text) => text.len(),
            Fixture::Repeat { repeat, times } => repeat.len().saturating_mul(*times),
        }
    }
}

/// One task: the workspace's files, the user's turn(s), and the checks (all must pass) of the
/// last answer and of the workspace afterwards.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// `d<N>` in the dev half, `h<N>` in the held-out half.
    pub id: String,
    /// What sort of task it is; every kind with two tasks has one in each half.
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub files: BTreeMap<String, Fixture>,
    /// One `agents run` per turn, the conversation carried between them in a `--state` file.
    pub turns: Vec<String>,
    /// Written `- answer: {...}`, `- says_missing` (a map with one key, or a plain name).
    #[serde(with = "serde_yaml::with::singleton_map_recursive")]
    pub checks: Vec<Check>,
    #[serde(skip_deserializing, default = "default_half")]
    pub half: Half,
}

fn default_half() -> Half {
    Half::Dev
}

impl Task {
    /// The number in the id, for sorting `d2` before `d10`.
    fn number(&self) -> u32 {
        self.id[1..].parse().unwrap_or(u32::MAX)
    }

    /// Writes the task's files under `workspace`.
    pub fn create_files(&self, workspace: &Path) -> Result<(), String> {
        for (path, fixture) in &self.files {
            let file = workspace.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            std::fs::write(&file, fixture.contents())
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        Ok(())
    }

    fn validate(&self, half: Half, file: &Path) -> Result<(), String> {
        let shown = file.display();
        let prefix = half.id_prefix();
        if !self.id.starts_with(prefix) || self.id[1..].parse::<u32>().is_err() {
            return Err(format!(
                "{shown}: the id `{}` must be `{prefix}` and a number in the {} half",
                self.id,
                half.name()
            ));
        }
        if self.turns.is_empty() || self.turns.iter().any(|t| t.trim().is_empty()) {
            return Err(format!("{shown}: every task needs non-empty turns"));
        }
        if self.checks.is_empty() {
            return Err(format!("{shown}: a task without checks cannot fail"));
        }
        for check in &self.checks {
            check.validate().map_err(|e| format!("{shown}: {e}"))?;
        }
        for (path, fixture) in &self.files {
            let relative = Path::new(path);
            let plain = relative
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
            if path.is_empty() || !plain {
                return Err(format!(
                    "{shown}: the file `{path}` must be a relative path without `..`"
                ));
            }
            if fixture.len() > Fixture::MAX_BYTES {
                return Err(format!("{shown}: the file `{path}` is over 1 MiB"));
            }
        }
        Ok(())
    }
}

/// `xtask/eval`, where the task files live.
pub fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("eval")
}

/// The YAML files of one half, sorted by name.
fn half_files(dir: &Path, half: Half) -> Result<Vec<PathBuf>, String> {
    let folder = dir.join(half.name());
    let entries =
        std::fs::read_dir(&folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every task of both halves, dev first, each half in id order. Ids are unique.
pub fn load_tasks(dir: &Path) -> Result<Vec<Task>, String> {
    let mut tasks = Vec::new();
    for half in Half::ALL {
        let mut these = Vec::new();
        for file in half_files(dir, half)? {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let mut task: Task = serde_yaml::from_str(&text)
                .map_err(|e| format!("{}: not a task: {e}", file.display()))?;
            task.half = half;
            task.validate(half, &file)?;
            these.push(task);
        }
        these.sort_by_key(Task::number);
        tasks.extend(these);
    }
    let mut seen = BTreeSet::new();
    if let Some(twice) = tasks.iter().find(|t| !seen.insert(t.id.clone())) {
        return Err(format!("two tasks have the id `{}`", twice.id));
    }
    Ok(tasks)
}

/// SHA-256 (hex) over the held-out half: for each of its YAML files in name order, the file
/// name, a NUL, the length in decimal, a NUL and the bytes.
pub fn heldout_digest(dir: &Path) -> Result<String, String> {
    let mut hasher = Sha256::new();
    for file in half_files(dir, Half::Heldout)? {
        let bytes =
            std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(bytes.len().to_string().as_bytes());
        hasher.update([0]);
        hasher.update(&bytes);
    }
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_files_load_and_every_kind_with_two_tasks_is_in_both_halves() {
        let tasks = load_tasks(&eval_dir()).unwrap();
        let dev = tasks.iter().filter(|t| t.half == Half::Dev).count();
        let heldout = tasks.len() - dev;
        assert!(tasks.len() >= 40, "{} tasks", tasks.len());
        assert!(dev >= 20 && heldout >= 20, "{dev} dev, {heldout} held-out");
        let mut kinds: BTreeMap<&str, BTreeSet<Half>> = BTreeMap::new();
        for task in &tasks {
            kinds.entry(&task.kind).or_default().insert(task.half);
        }
        assert!(kinds.len() >= 20, "{} kinds", kinds.len());
        for (kind, halves) in &kinds {
            let count = tasks.iter().filter(|t| t.kind == *kind).count();
            assert!(
                count < 2 || halves.len() == 2,
                "the kind `{kind}` has {count} tasks, all in one half"
            );
        }
        assert!(tasks.iter().any(|t| t.turns.len() > 1), "a multi-turn task");
    }

    #[test]
    fn doing_nothing_or_not_knowing_solves_no_task() {
        for task in load_tasks(&eval_dir()).unwrap() {
            let workspace = tempfile::tempdir().unwrap();
            task.create_files(workspace.path()).unwrap();
            for answer in [None, Some("I don't know."), Some("Done.")] {
                let solved = task
                    .checks
                    .iter()
                    .all(|c| c.passes(answer, None, workspace.path()));
                assert!(!solved, "{} is solved by {answer:?} and no change", task.id);
            }
        }
    }
}
