//! `ArrayOut`: where a provider's message writer puts the elements of the `messages` array.

use serde_json::{json, Value};

use crate::error::InferenceError;

/// The `messages` array being written: as values ([`Vec<Value>`], for the public body
/// functions) or as compact JSON bytes ([`JsonBytes`], for the requests a provider sends).
/// Both give the same JSON.
pub(crate) trait ArrayOut {
    /// Appends an element; `first` when nothing was written to the array before it.
    fn element(&mut self, value: Value, first: bool) -> Result<(), InferenceError>;

    /// Opens an element `{"role": role, "content": [...]}` whose content the next
    /// [`group_item`](Self::group_item)s fill, until [`close_group`](Self::close_group).
    fn open_group(&mut self, role: &str, first: bool) -> Result<(), InferenceError>;

    /// Appends to the open group's content; `first` for its first item.
    fn group_item(&mut self, value: Value, first: bool) -> Result<(), InferenceError>;

    /// Closes the open group.
    fn close_group(&mut self) -> Result<(), InferenceError>;
}

impl ArrayOut for Vec<Value> {
    fn element(&mut self, value: Value, _first: bool) -> Result<(), InferenceError> {
        self.push(value);
        Ok(())
    }

    fn open_group(&mut self, role: &str, _first: bool) -> Result<(), InferenceError> {
        self.push(json!({"role": role, "content": []}));
        Ok(())
    }

    fn group_item(&mut self, value: Value, _first: bool) -> Result<(), InferenceError> {
        if let Some(Value::Array(items)) =
            self.last_mut().and_then(|group| group.get_mut("content"))
        {
            items.push(value);
        }
        Ok(())
    }

    fn close_group(&mut self) -> Result<(), InferenceError> {
        Ok(())
    }
}

/// Array elements as compact JSON, byte for byte what `serde_json::to_vec` writes for the
/// array holding them (without its brackets).
#[derive(Debug, Default)]
pub(crate) struct JsonBytes(pub(crate) Vec<u8>);

impl JsonBytes {
    fn separator(&mut self, first: bool) {
        if !first {
            self.0.push(b',');
        }
    }

    fn value(&mut self, value: &impl serde::Serialize) -> Result<(), InferenceError> {
        serde_json::to_writer(&mut self.0, value).map_err(unserializable)
    }
}

impl ArrayOut for JsonBytes {
    fn element(&mut self, value: Value, first: bool) -> Result<(), InferenceError> {
        self.separator(first);
        self.value(&value)
    }

    fn open_group(&mut self, role: &str, first: bool) -> Result<(), InferenceError> {
        self.separator(first);
        self.0.extend_from_slice(b"{\"role\":");
        self.value(&role)?;
        self.0.extend_from_slice(b",\"content\":[");
        Ok(())
    }

    fn group_item(&mut self, value: Value, first: bool) -> Result<(), InferenceError> {
        self.separator(first);
        self.value(&value)
    }

    fn close_group(&mut self) -> Result<(), InferenceError> {
        self.0.extend_from_slice(b"]}");
        Ok(())
    }
}

/// The error for a body `serde_json` cannot write (it cannot happen for JSON values written
/// to memory; kept typed rather than unwrapped).
pub(crate) fn unserializable(error: serde_json::Error) -> InferenceError {
    InferenceError::Configuration {
        message: format!("the request cannot be serialized: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_values_give_the_same_json() {
        fn write(out: &mut impl ArrayOut) {
            out.element(json!({"role": "user", "content": "hi"}), true)
                .unwrap();
            out.open_group("user", false).unwrap();
            out.group_item(json!({"type": "a"}), true).unwrap();
            out.group_item(json!({"type": "b"}), false).unwrap();
            out.close_group().unwrap();
            out.element(json!("x"), false).unwrap();
        }
        let mut values = Vec::new();
        write(&mut values);
        let mut bytes = JsonBytes::default();
        write(&mut bytes);
        let expected = serde_json::to_vec(&Value::Array(values)).unwrap();
        assert_eq!(
            [b"[".as_slice(), &bytes.0, b"]"].concat(),
            expected,
            "{}",
            String::from_utf8_lossy(&bytes.0)
        );
    }
}
