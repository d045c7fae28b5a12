//! [`ToolEffects`]: what a tool does to the world. (The same names as the core restructuring's
//! declaration, which replaces this file when it lands.)

use serde::{Deserialize, Serialize};

/// What running a tool does to the world outside the conversation.
///
/// ```
/// use agents_core::ToolEffects;
///
/// assert_eq!(ToolEffects::default(), ToolEffects::SideEffecting);
/// assert!(ToolEffects::Idempotent.is_retry_safe());
/// assert!(!ToolEffects::SideEffecting.is_retry_safe());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffects {
    /// Reads and changes nothing: running it again harms nothing.
    ReadOnly,
    /// Changes the world, but running it again with the same arguments (and the same
    /// [`idempotency key`](crate::ToolContext::idempotency_key)) changes nothing more.
    Idempotent,
    /// Changes the world, and each run may change it again. The default.
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
}
