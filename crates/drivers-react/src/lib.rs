//! `drivers_react`: this layer is being built; see docs/architecture.md for its responsibilities.
//!
//! ```
//! let layer = drivers_react::LAYER;
//! assert_eq!(layer, "drivers-react");
//! ```

/// The name of this layer.
pub const LAYER: &str = "drivers-react";
