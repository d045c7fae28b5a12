//! The text of a caught panic (a tool's or a hook's), for the tool error the model reads.

use std::any::Any;

/// The message a panic was raised with, or a placeholder for a payload that is not text.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}
