//! `drivers_toolcalling`: this layer is being built; see docs/architecture.md for its responsibilities.
//!
//! ```
//! let layer = drivers_toolcalling::LAYER;
//! assert_eq!(layer, "drivers-toolcalling");
//! ```

/// The name of this layer.
pub const LAYER: &str = "drivers-toolcalling";
