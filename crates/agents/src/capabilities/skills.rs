//! Skills: folders of instructions (`<dir>/<skill>/SKILL.md` with YAML front matter) that the
//! model loads on demand with the `load_skill` tool; [`UseSkills`] installs the tool and shows
//! the list of skills to the model.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agents_core::DEFAULT_SECTION;
use agents_core::{AgentError, AgentState, Next, Tool, ToolContext, ToolError, ToolOutput};
use agents_processing::StateProcessor;
use async_trait::async_trait;
use messages::{Message, Messages};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// Metadata key marking the system message that lists the skills.
pub const SKILLS_LIST_KEY: &str = "skills_list";

/// The folders whose files are listed as a skill's resources.
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];

/// The most characters `load_skill` returns for one skill; a longer body is cut with a note
/// saying how much was left out and where to read the rest.
pub const MAX_SKILL_CHARS: usize = 100_000;
/// Larger `SKILL.md` files are refused when the library is loaded.
pub const MAX_SKILL_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Resources listed at most by `load_skill` (the rest are counted).
const MAX_LISTED_RESOURCES: usize = 200;
/// Resource files collected at most per skill, and the deepest folder level searched: a huge
/// or deeply nested resource folder cannot make loading the library slow.
const MAX_RESOURCES: usize = 1000;
const MAX_RESOURCE_DEPTH: usize = 16;

/// One skill: a name, a one-line description, the instructions and the files that come with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// The name the model loads it by (front matter `name`, else the folder's name).
    pub name: String,
    /// When to use it (front matter `description`).
    pub description: String,
    /// The instructions: `SKILL.md` after the front matter, trimmed.
    pub body: String,
    /// Files under `scripts/`, `references/` and `assets/`, relative to the skill's folder.
    pub resources: Vec<String>,
    /// The skill's folder.
    pub path: PathBuf,
}

/// A skill folder that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `SKILL.md` is larger than [`MAX_SKILL_FILE_BYTES`].
    #[error("{}: larger than the limit of {limit} bytes; shorten the skill or move material into references/", path.display())]
    TooLarge {
        /// The `SKILL.md` file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// `SKILL.md`'s front matter is not valid.
    #[error("{}: invalid front matter: {message}", path.display())]
    FrontMatter {
        /// The `SKILL.md` file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The skills found in a directory, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct SkillLibrary {
    skills: Vec<Skill>,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
}

impl SkillLibrary {
    /// Reads every `<dir>/<folder>/SKILL.md`. A missing `dir` gives an empty library.
    ///
    /// # Errors
    /// [`SkillError::Io`] when `dir` or a skill cannot be read, [`SkillError::FrontMatter`]
    /// when a `SKILL.md` front matter is malformed (both name the file).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, SkillError> {
        let dir = dir.as_ref();
        if !dir.exists() {
            return Ok(Self::default());
        }
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SkillError::Io { path, source }
        };
        let mut skills = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let folder = entry.map_err(io(dir))?.path();
            let file = folder.join("SKILL.md");
            if folder.is_dir() && file.is_file() {
                skills.push(read_skill(&folder, &file)?);
            }
        }
        // two folders naming the same skill: the first folder (by path) wins
        skills.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
        skills.dedup_by(|later, earlier| later.name == earlier.name);
        Ok(Self { skills })
    }

    /// A library of the given skills.
    pub fn from_skills(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut skills: Vec<Skill> = skills.into_iter().collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        Self { skills }
    }

    /// The skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// All skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// `true` when there are no skills.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// One `- [name]: description` line per skill, or `(no skills available)`.
    pub fn list_text(&self) -> String {
        if self.skills.is_empty() {
            return "(no skills available)".to_owned();
        }
        self.skills
            .iter()
            .map(|s| format!("- [{}]: {}", s.name, s.description))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Skill {
    /// The text `load_skill` returns: the body wrapped in `<skill name="...">`, with the
    /// resources listed. At most [`MAX_SKILL_CHARS`] characters (about): a longer body is cut
    /// at a line end with a note saying how much was left out and where the rest is, and at
    /// most 200 resources are listed.
    pub fn render(&self) -> String {
        let open = format!("<skill name=\"{}\">\n", self.name);
        let mut resources = String::new();
        if !self.resources.is_empty() {
            resources.push_str("\n\n## Available Resources\n");
            let mut lines: Vec<String> = self
                .resources
                .iter()
                .take(MAX_LISTED_RESOURCES)
                .map(|r| format!("- {r}"))
                .collect();
            if self.resources.len() > MAX_LISTED_RESOURCES {
                lines.push(format!(
                    "- ... and {} more files in the skill's folder",
                    self.resources.len() - MAX_LISTED_RESOURCES
                ));
            }
            resources.push_str(&lines.join("\n"));
        }
        let close = "\n</skill>";
        let budget = MAX_SKILL_CHARS.saturating_sub(
            open.chars().count() + resources.chars().count() + close.len() + CUT_NOTE_CHARS,
        );
        format!("{open}{}{resources}{close}", self.body_within(budget))
    }

    /// The body, cut at a line end to at most `budget` characters with a note when longer.
    fn body_within(&self, budget: usize) -> std::borrow::Cow<'_, str> {
        let total = self.body.chars().count();
        if total <= budget {
            return std::borrow::Cow::Borrowed(&self.body);
        }
        let end = self
            .body
            .char_indices()
            .nth(budget)
            .map_or(self.body.len(), |(index, _)| index);
        // cut after the last whole line that fits (or mid-line when one line is that long)
        let end = self.body[..end]
            .rfind('\n')
            .map_or(end, |newline| newline + 1);
        let kept = &self.body[..end];
        let next_line = kept.matches('\n').count() + 1;
        std::borrow::Cow::Owned(format!(
            "{kept}\n... ({} of the instructions' {total} characters left out: the skill is \
             longer than {MAX_SKILL_CHARS} characters. The rest starts at line {next_line} of \
             the instructions in `{}` (after the front matter); read it with read_file and \
             offset/limit if that file is in the workspace.)",
            total - kept.chars().count(),
            self.path.join("SKILL.md").display()
        ))
    }
}

/// Room kept for the note of a cut body (its text plus a long path).
const CUT_NOTE_CHARS: usize = 600;

fn read_skill(folder: &Path, file: &Path) -> Result<Skill, SkillError> {
    let io = |source| SkillError::Io {
        path: file.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_SKILL_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(io)?;
    if text.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Err(SkillError::TooLarge {
            path: file.to_path_buf(),
            limit: MAX_SKILL_FILE_BYTES,
        });
    }
    let (front, body) = split_front_matter(&text);
    let front: FrontMatter = match front {
        Some(yaml) if !yaml.trim().is_empty() => {
            serde_yaml::from_str(yaml).map_err(|e| SkillError::FrontMatter {
                path: file.to_path_buf(),
                message: e.to_string(),
            })?
        }
        _ => FrontMatter {
            name: None,
            description: None,
        },
    };
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = front
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or(folder_name);
    let mut resources = Vec::new();
    for dir in RESOURCE_DIRS {
        collect_files(folder, &folder.join(dir), 0, &mut resources);
    }
    resources.sort();
    Ok(Skill {
        name,
        description: front.description.unwrap_or_default().trim().to_owned(),
        body: body.trim().to_owned(),
        resources,
        path: folder.to_path_buf(),
    })
}

/// `(front matter, body)`; no front matter when the file does not start with `---`.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    for marker in ["\n---\n", "\n---\r\n"] {
        if let Some(end) = rest.find(marker) {
            return (Some(&rest[..end]), &rest[end + marker.len()..]);
        }
    }
    match rest.strip_suffix("\n---") {
        Some(front) => (Some(front), ""),
        None => (None, text),
    }
}

/// Adds the files under `dir` to `out`, relative to `root`. Symlinked directories are not
/// entered (a link to `.` or a parent would loop), and the search stops at
/// [`MAX_RESOURCES`] files or [`MAX_RESOURCE_DEPTH`] levels.
fn collect_files(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_RESOURCE_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if out.len() >= MAX_RESOURCES {
            return;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_files(root, &path, depth + 1, out);
        } else if kind.is_symlink() && path.is_dir() {
            tracing::debug!(path = %path.display(), "skill resources: not entering a symlinked directory");
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The `load_skill{skill_name?, list_skills?}` tool.
#[derive(Clone, Debug)]
pub struct LoadSkillTool {
    library: Arc<SkillLibrary>,
}

impl LoadSkillTool {
    /// A tool over `library`.
    pub fn new(library: impl Into<Arc<SkillLibrary>>) -> Self {
        Self {
            library: library.into(),
        }
    }
}

#[async_trait]
impl Tool for LoadSkillTool {
    fn name(&self) -> &str {
        "load_skill"
    }

    fn description(&self) -> &str {
        "Load a skill's instructions by name. Without a name (or with list_skills), list the available skills."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill_name": {"type": "string", "description": "The skill to load"},
                "list_skills": {"type": "boolean", "description": "List the skills instead"}
            }
        })
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
        let name = match arguments.get("skill_name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.trim()).filter(|n| !n.is_empty()),
            Some(other) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`skill_name` must be a string, found {other}"
                )))
            }
        };
        let list = arguments.get("list_skills").and_then(Value::as_bool) == Some(true);
        let Some(name) = name.filter(|_| !list) else {
            return Ok(ToolOutput::text(format!(
                "Available skills:\n{}",
                self.library.list_text()
            )));
        };
        match self.library.get(name) {
            Some(skill) => Ok(ToolOutput::text(skill.render())),
            None => Err(ToolError::failed(format!(
                "Skill '{name}' not found.\n\nAvailable skills:\n{}",
                self.library.list_text()
            ))),
        }
    }
}

/// Before each step, adds a system message listing the skills to the request prefix (the
/// cached context), after the system prompt. The list is configuration, not conversation: it
/// is never written into the state, so a restored conversation sees the library as it is now,
/// and the request prefix stays the same from step to step (prompt caches keep it). A list an
/// older version wrote into `messages` (marked [`SKILLS_LIST_KEY`]) is taken out.
#[derive(Clone, Debug)]
pub struct ShowSkillsList {
    library: Arc<SkillLibrary>,
}

impl ShowSkillsList {
    /// Shows the skills of `library`.
    pub fn new(library: impl Into<Arc<SkillLibrary>>) -> Self {
        Self {
            library: library.into(),
        }
    }

    /// The system message's text.
    pub fn text(&self) -> String {
        format!(
            "<skills>\nAvailable skills:\n{}\n</skills>\nUse load_skill to load a skill's instructions when a task needs them.",
            self.library.list_text()
        )
    }
}

#[async_trait]
impl StateProcessor for ShowSkillsList {
    fn can_process(&self, _state: &AgentState) -> bool {
        !self.library.is_empty()
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let messages = state.messages();
        let state = if messages
            .iter()
            .any(|m| m.metadata().get(SKILLS_LIST_KEY).is_some())
        {
            let kept: Messages = messages
                .iter()
                .filter(|m| m.metadata().get(SKILLS_LIST_KEY).is_none())
                .cloned()
                .collect();
            let store = state.store().section(DEFAULT_SECTION).set(kept);
            state.with_store(store)
        } else {
            state
        };
        let list = Message::system(self.text()).with_metadata(SKILLS_LIST_KEY, true);
        let mut context = next.cached_context().clone();
        context.messages = context.messages.concat(&Messages::from(vec![list]));
        next.with_cached_context(Arc::new(context)).run(state).await
    }
}

/// Gives the agent the `load_skill` tool over the skills in `dir` and shows their names and
/// descriptions to the model.
#[derive(Clone, Debug)]
pub struct UseSkills {
    source: SkillSource,
}

#[derive(Clone, Debug)]
enum SkillSource {
    Dir(PathBuf),
    Library(Arc<SkillLibrary>),
}

impl UseSkills {
    /// Skills from `<dir>/*/SKILL.md` (read when the capability is installed).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            source: SkillSource::Dir(dir.into()),
        }
    }

    /// Skills from a library already loaded.
    pub fn from_library(library: SkillLibrary) -> Self {
        Self {
            source: SkillSource::Library(Arc::new(library)),
        }
    }
}

impl AgentCapability for UseSkills {
    fn name(&self) -> &str {
        "skills"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        let library = match &self.source {
            SkillSource::Library(library) => Arc::clone(library),
            SkillSource::Dir(dir) => match SkillLibrary::load(dir) {
                Ok(library) => Arc::new(library),
                Err(error) => return builder.with_capability_error(self.name(), error.to_string()),
            },
        };
        builder
            .with_tool(LoadSkillTool::new(Arc::clone(&library)))
            .with_processor(ShowSkillsList::new(library))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(dir: &Path, name: &str, body: &str) -> PathBuf {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: test\n---\n{body}",),
        )
        .unwrap();
        folder
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_in_resources_end() {
        let dir = tempfile::tempdir().unwrap();
        let folder = write_skill(dir.path(), "looping", "Do things.");
        std::fs::create_dir_all(folder.join("scripts/nested")).unwrap();
        std::fs::write(folder.join("scripts/nested/run.sh"), "echo").unwrap();
        std::os::unix::fs::symlink(".", folder.join("scripts/self")).unwrap();
        std::os::unix::fs::symlink("..", folder.join("scripts/nested/up")).unwrap();
        std::os::unix::fs::symlink("nested/run.sh", folder.join("scripts/run-link.sh")).unwrap();
        let library = SkillLibrary::load(dir.path()).unwrap();
        assert_eq!(
            library.skills()[0].resources,
            ["scripts/nested/run.sh", "scripts/run-link.sh"]
        );
    }

    #[test]
    fn a_long_skill_is_cut_with_a_note_on_where_the_rest_is() {
        let line = "z".repeat(99);
        let body: String = (0..3000).map(|_| format!("{line}\n")).collect();
        let skill = Skill {
            name: "long".to_owned(),
            description: String::new(),
            body: body.trim().to_owned(),
            resources: (0..500).map(|i| format!("references/{i}.md")).collect(),
            path: PathBuf::from("/skills/long"),
        };
        let text = skill.render();
        assert!(text.chars().count() <= MAX_SKILL_CHARS, "{}", text.len());
        assert!(text.starts_with("<skill name=\"long\">\nzzz"));
        assert!(text.ends_with("- ... and 300 more files in the skill's folder\n</skill>"));
        let kept_lines = text.matches(&format!("{line}\n")).count();
        let note = format!(
            "the skill is longer than {MAX_SKILL_CHARS} characters. The rest starts at line {} \
             of the instructions in `/skills/long/SKILL.md`",
            kept_lines + 1
        );
        assert!(text.contains(&note), "{}", &text[text.len() - 30_000..]);
        let left_out = 3000 * 100 - 1 - kept_lines * 100;
        assert!(text.contains(&format!(
            "({left_out} of the instructions' 299999 characters left out"
        )));
    }

    #[test]
    fn a_short_skill_is_rendered_whole() {
        let skill = Skill {
            name: "short".to_owned(),
            description: String::new(),
            body: "Step 1.\nStep 2.".to_owned(),
            resources: vec!["scripts/a.sh".to_owned()],
            path: PathBuf::from("/skills/short"),
        };
        assert_eq!(
            skill.render(),
            "<skill name=\"short\">\nStep 1.\nStep 2.\n\n## Available Resources\n- scripts/a.sh\n</skill>"
        );
    }

    #[test]
    fn a_huge_skill_file_is_refused_when_loading() {
        let dir = tempfile::tempdir().unwrap();
        let body = "x".repeat(MAX_SKILL_FILE_BYTES as usize);
        write_skill(dir.path(), "huge", &body);
        let error = SkillLibrary::load(dir.path()).unwrap_err();
        assert!(matches!(error, SkillError::TooLarge { .. }), "{error}");
        assert!(error
            .to_string()
            .ends_with("SKILL.md: larger than the limit of 4194304 bytes; shorten the skill or move material into references/"));
    }
}
