//! Content parts as Anthropic content blocks (text, image, document) and back.

use messages::ContentPart;
use serde_json::{json, Value};

/// The block for one part; `None` for parts Anthropic cannot take (audio, empty text).
pub(crate) fn part_to_block(part: &ContentPart) -> Option<Value> {
    match part {
        ContentPart::Text { text } if text.is_empty() => None,
        ContentPart::Text { text } => Some(json!({"type": "text", "text": text})),
        ContentPart::ImageUrl { url, .. } => Some(json!({"type": "image", "source": source(url)})),
        ContentPart::File {
            file_data: Some(data),
            ..
        } => Some(json!({"type": "document", "source": source(data)})),
        ContentPart::File {
            file_id: Some(id), ..
        } => Some(json!({"type": "document", "source": {"type": "file", "file_id": id}})),
        ContentPart::File { .. } | ContentPart::Audio { .. } => {
            tracing::warn!("Anthropic does not accept this content part; it was left out");
            None
        }
    }
}

/// The part for a text, image or document block; `None` for other blocks.
pub(crate) fn block_to_part(block: &Value) -> Option<ContentPart> {
    let kind = block.get("type").and_then(Value::as_str)?;
    let source = block.get("source");
    let source_text = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str);
    let location = match source_text("type") {
        Some("base64") => format!(
            "data:{};base64,{}",
            source_text("media_type").unwrap_or("application/octet-stream"),
            source_text("data").unwrap_or_default()
        ),
        Some("url") => source_text("url").unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    match kind {
        "text" => Some(ContentPart::text(
            block
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        )),
        "image" => Some(ContentPart::image_url(location)),
        "document" if source_text("type") == Some("file") => Some(ContentPart::File {
            file_data: None,
            file_name: None,
            file_id: source_text("file_id").map(str::to_owned),
        }),
        "document" => Some(ContentPart::File {
            file_data: Some(location),
            file_name: None,
            file_id: None,
        }),
        _ => None,
    }
}

/// A `source` object: base64 for `data:` URIs, a URL otherwise.
fn source(location: &str) -> Value {
    let Some(rest) = location.strip_prefix("data:") else {
        return json!({"type": "url", "url": location});
    };
    let (meta, data) = rest.split_once(',').unwrap_or(("", rest));
    let media_type = meta.trim_end_matches(";base64");
    let media_type = if media_type.is_empty() {
        "application/octet-stream"
    } else {
        media_type
    };
    json!({"type": "base64", "media_type": media_type, "data": data})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_by_url_and_by_data_uri() {
        let url = ContentPart::image_url("https://example.com/cat.png");
        assert_eq!(
            part_to_block(&url),
            Some(
                json!({"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}})
            )
        );
        let inline = ContentPart::image_url("data:image/png;base64,iVBORw0KGgo=");
        let block = part_to_block(&inline).unwrap();
        assert_eq!(
            block,
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
        );
        assert_eq!(block_to_part(&block), Some(inline));
        assert_eq!(part_to_block(&ContentPart::audio("AAA", "wav")), None);
    }
}
