//! [`ToolEffects`]: what a tool does to the world, declared once by every tool.
//!
//! The loop reads it where running a call twice, or running a call nobody meant to run, would
//! matter: a call written as text in a model's prose runs only when its tool is read-only; a
//! call interrupted by a crash runs again only when its tool is read-only or idempotent; a
//! repeated read-only call is answered with its earlier result. MCP servers say the same thing
//! with the `readOnlyHint` and `idempotentHint` annotations ([`ToolEffects::from_hints`],
//! [`ToolEffects::read_only_hint`], [`ToolEffects::idempotent_hint`]).

use serde::{Deserialize, Serialize};

/// What running a tool does to the world outside the conversation.
///
/// ```
/// use agents_core::ToolEffects;
///
/// assert_eq!(ToolEffects::default(), ToolEffects::SideEffecting);
/// assert!(ToolEffects::ReadOnly.is_retry_safe());
/// assert!(ToolEffects::Idempotent.is_retry_safe());
/// assert!(!ToolEffects::SideEffecting.is_retry_safe());
/// // MCP annotations: read-only wins; idempotent only counts for a tool that writes.
/// assert_eq!(ToolEffects::from_hints(Some(true), None), ToolEffects::ReadOnly);
/// assert_eq!(ToolEffects::from_hints(Some(false), Some(true)), ToolEffects::Idempotent);
/// assert_eq!(ToolEffects::from_hints(None, None), ToolEffects::SideEffecting);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffects {
    /// Reads and changes nothing (`read_file`, `list_dir`, a search): running it again, or
    /// running it when nobody meant to, harms nothing.
    ReadOnly,
    /// Changes the world, but running it again with the same arguments changes nothing more
    /// (writing a whole file with given contents; an API call carrying an idempotency key).
    Idempotent,
    /// Changes the world, and each run may change it again (`bash`, appending, sending a
    /// message). The default: a tool that says nothing is treated as the most dangerous kind.
    #[default]
    SideEffecting,
}

impl ToolEffects {
    /// Whether the tool changes nothing.
    pub fn is_read_only(self) -> bool {
        self == ToolEffects::ReadOnly
    }

    /// Whether running a call again (after a crash left it unfinished) is harmless: read-only
    /// or idempotent.
    pub fn is_retry_safe(self) -> bool {
        matches!(self, ToolEffects::ReadOnly | ToolEffects::Idempotent)
    }

    /// The effects MCP's tool annotations describe: `readOnlyHint: true` is read-only;
    /// otherwise `idempotentHint: true` is idempotent; anything else (absent hints included,
    /// as the MCP specification says) has side effects.
    pub fn from_hints(read_only: Option<bool>, idempotent: Option<bool>) -> Self {
        match (read_only, idempotent) {
            (Some(true), _) => ToolEffects::ReadOnly,
            (_, Some(true)) => ToolEffects::Idempotent,
            _ => ToolEffects::SideEffecting,
        }
    }

    /// MCP's `readOnlyHint` for these effects.
    pub fn read_only_hint(self) -> bool {
        self.is_read_only()
    }

    /// MCP's `idempotentHint` for these effects (a read-only tool is idempotent too).
    pub fn idempotent_hint(self) -> bool {
        self.is_retry_safe()
    }
}

impl std::fmt::Display for ToolEffects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolEffects::ReadOnly => "read-only",
            ToolEffects::Idempotent => "idempotent",
            ToolEffects::SideEffecting => "side-effecting",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_round_trip_through_the_effects() {
        for effects in [
            ToolEffects::ReadOnly,
            ToolEffects::Idempotent,
            ToolEffects::SideEffecting,
        ] {
            let back = ToolEffects::from_hints(
                Some(effects.read_only_hint()),
                Some(effects.idempotent_hint()),
            );
            assert_eq!(back, effects);
        }
    }

    #[test]
    fn the_serialized_names_are_snake_case() {
        assert_eq!(
            serde_json::to_string(&ToolEffects::SideEffecting).ok(),
            Some("\"side_effecting\"".to_owned())
        );
    }
}
