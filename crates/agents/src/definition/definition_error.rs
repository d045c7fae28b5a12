//! `DefinitionError`: why an agent definition could not be read, naming the file and the field.

use std::path::PathBuf;

/// An agent definition that could not be read, parsed or found.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// The file could not be read.
    #[error("{}: cannot read the file: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid YAML, or not a mapping at the top level.
    #[error("{file}: {message}")]
    Syntax {
        /// The file (or the name given to a string source).
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A field is missing, unknown, of the wrong type or has an invalid value.
    #[error("{file}: `{field}`: {message}")]
    Field {
        /// The file (or the name given to a string source).
        file: String,
        /// The field's dotted path, e.g. `execution.max_steps`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// No definition with that id was loaded.
    #[error("no agent definition with id `{id}` (available: {})", if available.is_empty() { "none".to_owned() } else { available.join(", ") })]
    NotFound {
        /// The id asked for.
        id: String,
        /// The ids that are loaded.
        available: Vec<String>,
    },
}

impl DefinitionError {
    /// The dotted path of the offending field, when the error is about one field.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}
