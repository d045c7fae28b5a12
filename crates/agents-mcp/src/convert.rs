//! MCP `tools/call` results as text for the model.
//!
//! Works on the wire shape (`content[]`, `structuredContent`, `isError`), so it follows the
//! protocol rather than one SDK version's types.

use messages::ContentPart;
use serde_json::Value;

/// A converted result: the text the model sees, its images, whether the server flagged it as
/// an error, and the structured content if the server sent one.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertedResult {
    /// The text for the model (already capped).
    pub text: String,
    /// Images (`image` content, and embedded resources of an image type) as `data:` URI
    /// parts; providers that take images in tool results show them, the others get a line
    /// describing each.
    pub images: Vec<ContentPart>,
    /// The server set `isError`.
    pub is_error: bool,
    /// `structuredContent`, if any.
    pub structured: Option<Value>,
}

/// Converts a `tools/call` result to text, cut to `max_chars` characters with a note.
///
/// Text parts become their text; `structuredContent` (when there is no text saying the same)
/// becomes JSON text; images and embedded resources of an image type become image parts
/// ([`ConvertedResult::images`]); audio and other embedded blobs become a short description
/// (mime type and size); embedded text resources become their text; resource links become
/// their URI.
pub fn convert_result(result: &Value, max_chars: usize) -> ConvertedResult {
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let structured = result
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .cloned();
    let mut images = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    for part in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match image_part(part) {
            Some(image) => images.push(image),
            None => parts.push(describe_part(part)),
        }
    }
    if let Some(structured) = &structured {
        let json = structured.to_string();
        // Servers often send the same JSON as a text part for older clients: keep one copy.
        if !parts.iter().any(|p| same_json(p, structured)) {
            parts.push(json);
        }
    }
    let text = parts.join("\n");
    ConvertedResult {
        text: cap(text, max_chars),
        images,
        is_error,
        structured,
    }
}

/// An `image` part, or an embedded resource whose blob is an image, as a `data:` URI part.
fn image_part(part: &Value) -> Option<ContentPart> {
    let (mime, data) = match part.get("type").and_then(Value::as_str)? {
        "image" => (part.get("mimeType")?.as_str()?, part.get("data")?.as_str()?),
        "resource" => {
            let resource = part.get("resource")?;
            (
                resource.get("mimeType")?.as_str()?,
                resource.get("blob")?.as_str()?,
            )
        }
        _ => return None,
    };
    mime.starts_with("image/")
        .then(|| ContentPart::image_url(format!("data:{mime};base64,{data}")))
}

fn same_json(text: &str, value: &Value) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == value)
}

fn describe_part(part: &Value) -> String {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
    let str_field = |name: &str| part.get(name).and_then(Value::as_str);
    match kind {
        "text" => str_field("text").unwrap_or("").to_owned(),
        "image" | "audio" => format!(
            "[{kind}: {}, {} bytes; not shown to the model]",
            str_field("mimeType").unwrap_or("unknown type"),
            base64_len(str_field("data").unwrap_or(""))
        ),
        "resource" => describe_resource(part.get("resource").unwrap_or(&Value::Null)),
        "resource_link" => format!(
            "[resource link: {}{}]",
            str_field("uri").unwrap_or("?"),
            str_field("name")
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
        other => format!("[unsupported content of type `{other}`]"),
    }
}

fn describe_resource(resource: &Value) -> String {
    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return format!("[resource {uri}]\n{text}");
    }
    let mime = resource
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("unknown type");
    let size = base64_len(resource.get("blob").and_then(Value::as_str).unwrap_or(""));
    format!("[resource {uri}: {mime}, {size} bytes; not shown to the model]")
}

/// Decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// `text` cut to `max_chars` characters, with a note saying how many were left out.
pub fn cap(text: String, max_chars: usize) -> String {
    let Some((cut_at, _)) = text.char_indices().nth(max_chars) else {
        return text;
    };
    let total = text.chars().count();
    let mut capped = text;
    capped.truncate(cut_at);
    capped.push_str(&format!(
        "\n[MCP result cut: showing the first {max_chars} of {total} characters; {} left out]",
        total - max_chars
    ));
    capped
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn text_parts_are_joined_and_is_error_is_read() {
        let result = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": true});
        let converted = convert_result(&result, 100);
        assert_eq!(converted.text, "a\nb");
        assert!(converted.is_error);
    }

    #[test]
    fn structured_content_is_json_text_once() {
        let value = json!({"temperature": 22.5});
        let with_copy = json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value});
        assert_eq!(
            convert_result(&with_copy, 100).text,
            r#"{"temperature":22.5}"#
        );
        let alone = json!({"content": [], "structuredContent": value});
        let converted = convert_result(&alone, 100);
        assert_eq!(converted.text, r#"{"temperature":22.5}"#);
        assert_eq!(converted.structured, Some(value));
    }

    #[test]
    fn images_become_parts_and_other_binaries_short_descriptions() {
        let result = json!({"content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
            {"type": "resource", "resource": {"uri": "file:///d.gif", "blob": "R0lG", "mimeType": "image/gif"}},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///c", "name": "c"}
        ]});
        let converted = convert_result(&result, 1000);
        insta::assert_snapshot!(converted.text, @r"
        [resource file:///a.txt]
        hello
        [resource file:///b.bin: application/octet-stream, 3 bytes; not shown to the model]
        [audio: audio/wav, 3 bytes; not shown to the model]
        [resource link: file:///c (c)]
        ");
        assert_eq!(
            converted.images,
            [
                ContentPart::image_url("data:image/png;base64,iVBORw0KGgo="),
                ContentPart::image_url("data:image/gif;base64,R0lG"),
            ]
        );
    }

    #[test]
    fn long_results_are_cut_with_a_note() {
        let capped = cap("é".repeat(10), 4);
        assert_eq!(
            capped,
            "éééé\n[MCP result cut: showing the first 4 of 10 characters; 6 left out]"
        );
        assert_eq!(cap("short".to_owned(), 5), "short");
    }

    proptest! {
        #[test]
        fn capped_text_keeps_a_prefix_and_never_exceeds_the_bound_plus_note(text in ".{0,200}", max in 0usize..100) {
            let capped = cap(text.clone(), max);
            let kept: String = text.chars().take(max).collect();
            prop_assert!(capped.starts_with(&kept));
            if text.chars().count() <= max {
                prop_assert_eq!(capped, text);
            } else {
                prop_assert!(capped.contains("left out"));
            }
        }
    }
}
