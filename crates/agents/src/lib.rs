//! `agents`: this layer is being built; see docs/architecture.md for its responsibilities.
//!
//! ```
//! let layer = agents::LAYER;
//! assert_eq!(layer, "agents");
//! ```

pub mod capabilities;

/// The name of this layer.
pub const LAYER: &str = "agents";
