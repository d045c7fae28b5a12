//! A JSON object written as chunks, with the bytes of some fields spliced in from elsewhere.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::array_out::unserializable;
use crate::error::InferenceError;

/// The value of one field, already written (e.g. the `messages` array as shared chunks).
pub(crate) struct Splice<'a> {
    /// The field's key.
    pub(crate) key: &'a str,
    /// Its value's bytes, in order.
    pub(crate) chunks: Vec<Bytes>,
}

/// Writes `object` as compact JSON, byte for byte what `serde_json::to_vec` writes, except
/// that the value of each field named in `splices` is the splice's chunks (whatever the map
/// holds there is a placeholder). The chunks are appended to `out` without copying.
pub(crate) fn write_object(
    object: &Map<String, Value>,
    splices: Vec<Splice<'_>>,
    out: &mut Vec<Bytes>,
) -> Result<(), InferenceError> {
    let mut splices: Vec<Option<Splice<'_>>> = splices.into_iter().map(Some).collect();
    let mut buffer = Vec::with_capacity(256);
    buffer.push(b'{');
    for (index, (key, value)) in object.iter().enumerate() {
        if index > 0 {
            buffer.push(b',');
        }
        serde_json::to_writer(&mut buffer, key).map_err(unserializable)?;
        buffer.push(b':');
        let spliced = splices
            .iter_mut()
            .find(|s| s.as_ref().is_some_and(|s| s.key == key))
            .and_then(Option::take);
        match spliced {
            Some(splice) => {
                out.push(Bytes::from(std::mem::take(&mut buffer)));
                out.extend(splice.chunks);
            }
            None => serde_json::to_writer(&mut buffer, value).map_err(unserializable)?,
        }
    }
    buffer.push(b'}');
    out.push(Bytes::from(buffer));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spliced_fields_read_as_if_written_in_place() {
        let full =
            json!({"model": "m", "messages": [{"a": 1}, {"b": "é\n"}], "tools": [], "x": 1.5});
        let mut object = full.as_object().unwrap().clone();
        object["messages"] = Value::Null;
        let mut chunks = Vec::new();
        let splice = Splice {
            key: "messages",
            chunks: vec![
                Bytes::from_static(b"["),
                Bytes::from(serde_json::to_vec(&full["messages"][0]).unwrap()),
                Bytes::from_static(b","),
                Bytes::from(serde_json::to_vec(&full["messages"][1]).unwrap()),
                Bytes::from_static(b"]"),
            ],
        };
        write_object(&object, vec![splice], &mut chunks).unwrap();
        assert_eq!(chunks.concat(), serde_json::to_vec(&full).unwrap());
    }
}
