//! `agents_processing`: this layer is being built; see docs/architecture.md for its responsibilities.
//!
//! ```
//! let layer = agents_processing::LAYER;
//! assert_eq!(layer, "agents-processing");
//! ```

/// The name of this layer.
pub const LAYER: &str = "agents-processing";
