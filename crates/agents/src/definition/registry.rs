//! `AgentDefinitionRegistry`: definitions by id, loaded from files and directories.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{AgentDefinition, DefinitionError};

/// Agent definitions by id, with the errors of the files that could not be loaded.
///
/// Loading never stops at a bad file: its error is kept (see [`Self::errors`]) and the other
/// files still load. A definition whose id is already registered replaces the earlier one, so
/// load general directories first and specific ones last.
#[derive(Debug, Default)]
pub struct AgentDefinitionRegistry {
    definitions: BTreeMap<String, (AgentDefinition, Option<PathBuf>)>,
    errors: Vec<DefinitionError>,
}

impl AgentDefinitionRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a definition, replacing one with the same id.
    pub fn register(&mut self, definition: AgentDefinition) -> &mut Self {
        self.definitions
            .insert(definition.id.clone(), (definition, None));
        self
    }

    /// Loads one file; a failure is recorded in [`Self::errors`] and also returned.
    ///
    /// # Errors
    /// The file's [`DefinitionError`], as kept in [`Self::errors`].
    pub fn load_file(
        &mut self,
        path: impl AsRef<Path>,
    ) -> Result<&AgentDefinition, &DefinitionError> {
        let path = path.as_ref();
        match AgentDefinition::from_file(path) {
            Ok(definition) => {
                let id = definition.id.clone();
                if let Some((_, Some(previous))) = self.definitions.get(&id) {
                    tracing::debug!(%id, previous = %previous.display(), now = %path.display(), "agent definition overridden");
                }
                let entry = (definition, Some(path.to_path_buf()));
                let slot = match self.definitions.entry(id) {
                    Entry::Occupied(mut occupied) => {
                        occupied.insert(entry);
                        occupied.into_mut()
                    }
                    Entry::Vacant(vacant) => vacant.insert(entry),
                };
                Ok(&slot.0)
            }
            Err(error) => {
                let index = self.errors.len();
                self.errors.push(error);
                Err(&self.errors[index])
            }
        }
    }

    /// Loads every `*.yml` and `*.yaml` file directly in `dir`, in file-name order. Returns how
    /// many definitions loaded; failures are kept in [`Self::errors`].
    ///
    /// # Errors
    /// [`DefinitionError::Io`] when the directory itself cannot be read.
    pub fn load_directory(&mut self, dir: impl AsRef<Path>) -> Result<usize, DefinitionError> {
        let dir = dir.as_ref();
        let io = |source| DefinitionError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let yaml = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e == "yml" || e == "yaml");
            if yaml && path.is_file() {
                files.push(path);
            }
        }
        files.sort();
        let mut loaded = 0;
        for file in files {
            if self.load_file(&file).is_ok() {
                loaded += 1;
            }
        }
        Ok(loaded)
    }

    /// Loads several directories or files in order; later ones override earlier ones by id.
    /// Paths that do not exist are skipped.
    ///
    /// # Errors
    /// [`DefinitionError::Io`] when an existing directory cannot be read.
    pub fn load_paths<P: AsRef<Path>>(
        &mut self,
        paths: impl IntoIterator<Item = P>,
    ) -> Result<usize, DefinitionError> {
        let mut loaded = 0;
        for path in paths {
            let path = path.as_ref();
            if path.is_dir() {
                loaded += self.load_directory(path)?;
            } else if path.is_file() && self.load_file(path).is_ok() {
                loaded += 1;
            }
        }
        Ok(loaded)
    }

    /// The definition with this id.
    ///
    /// # Errors
    /// [`DefinitionError::NotFound`] listing the ids that are loaded.
    pub fn get(&self, id: &str) -> Result<&AgentDefinition, DefinitionError> {
        self.definitions
            .get(id)
            .map(|(definition, _)| definition)
            .ok_or_else(|| DefinitionError::NotFound {
                id: id.to_owned(),
                available: self.names(),
            })
    }

    /// The file a definition was loaded from (`None` for registered ones or unknown ids).
    pub fn source_of(&self, id: &str) -> Option<&Path> {
        self.definitions
            .get(id)
            .and_then(|(_, path)| path.as_deref())
    }

    /// Whether a definition with this id is loaded.
    pub fn has(&self, id: &str) -> bool {
        self.definitions.contains_key(id)
    }

    /// The ids, sorted.
    pub fn names(&self) -> Vec<String> {
        self.definitions.keys().cloned().collect()
    }

    /// All definitions, sorted by id.
    pub fn all(&self) -> impl Iterator<Item = &AgentDefinition> {
        self.definitions.values().map(|(definition, _)| definition)
    }

    /// The errors of the files that failed to load, in load order.
    pub fn errors(&self) -> &[DefinitionError] {
        &self.errors
    }

    /// The number of definitions.
    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    /// `true` when nothing is loaded.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }
}
