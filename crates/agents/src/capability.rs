//! `AgentCapability`: a bundle of tools, processors and criteria installed on a builder.

use crate::AgentBuilder;

/// Something an agent can be given in one call: tools, processors, criteria, hooks.
///
/// `install` receives the builder and returns it changed; it runs immediately when passed to
/// [`AgentBuilder::with_capability`], so a capability sees what was configured before it.
pub trait AgentCapability {
    /// A short name for errors and logs.
    fn name(&self) -> &str;

    /// Adds this capability to `builder`.
    fn install(&self, builder: AgentBuilder) -> AgentBuilder;
}
