//! `Content` and `ContentPart`: what a message says (text, images, files, audio).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::MessagesError;

/// One part of a message's content.
///
/// Serialized in the OpenAI chat shape: `{"type":"text","text":..}`,
/// `{"type":"image_url","image_url":{"url":..}}`, `{"type":"file","file":{..}}`,
/// `{"type":"input_audio","input_audio":{"data":..,"format":..}}`.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentPart {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image given by URL (http(s) or a `data:` URI).
    ImageUrl {
        /// The image URL.
        url: String,
        /// Optional detail hint (`low`, `high`, `auto`).
        detail: Option<String>,
    },
    /// A file, inline (`data:` URI) or by provider file id.
    File {
        /// Inline data as a `data:` URI.
        file_data: Option<String>,
        /// The file's name.
        file_name: Option<String>,
        /// A provider-side file id.
        file_id: Option<String>,
    },
    /// Audio input, base64 encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// Format such as `wav` or `mp3`.
        format: String,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// An image part from a URL.
    pub fn image_url(url: impl Into<String>) -> Self {
        ContentPart::ImageUrl {
            url: url.into(),
            detail: None,
        }
    }

    /// An inline file part.
    pub fn file(file_name: impl Into<String>, file_data: impl Into<String>) -> Self {
        ContentPart::File {
            file_data: Some(file_data.into()),
            file_name: Some(file_name.into()),
            file_id: None,
        }
    }

    /// An audio part.
    pub fn audio(data: impl Into<String>, format: impl Into<String>) -> Self {
        ContentPart::Audio {
            data: data.into(),
            format: format.into(),
        }
    }

    /// The text of a text part, `None` for other parts.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            _ => None,
        }
    }

    /// True for a text part with no text.
    pub fn is_empty(&self) -> bool {
        matches!(self, ContentPart::Text { text } if text.is_empty())
    }

    /// The part as a JSON value in the wire shape.
    pub fn to_value(&self) -> Value {
        match self {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::ImageUrl { url, detail } => {
                let mut image = Map::new();
                image.insert("url".into(), Value::String(url.clone()));
                if let Some(detail) = detail {
                    image.insert("detail".into(), Value::String(detail.clone()));
                }
                json!({"type": "image_url", "image_url": image})
            }
            ContentPart::File {
                file_data,
                file_name,
                file_id,
            } => {
                let mut file = Map::new();
                let fields = [
                    ("file_data", file_data),
                    ("file_name", file_name),
                    ("file_id", file_id),
                ];
                for (key, value) in fields {
                    if let Some(value) = value {
                        file.insert(key.into(), Value::String(value.clone()));
                    }
                }
                json!({"type": "file", "file": file})
            }
            ContentPart::Audio { data, format } => {
                json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
            }
        }
    }

    /// Reads a part from its wire shape. `type` defaults to `text`; the flat forms
    /// (`{"type":"image_url","url":..}`, `{"type":"file","file_data":..}`,
    /// `{"type":"input_audio","data":..,"format":..}`) are accepted too.
    ///
    /// # Errors
    /// [`MessagesError::InvalidContentPart`] for an unknown type or a missing field.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        let invalid = |reason: String| MessagesError::InvalidContentPart { reason };
        let object = match value {
            Value::String(text) => return Ok(ContentPart::text(text.clone())),
            Value::Object(object) => object,
            other => {
                return Err(invalid(format!(
                    "expected an object or a string, got {other}"
                )))
            }
        };
        let kind = object.get("type").and_then(Value::as_str).unwrap_or("text");
        let nested = |key: &str| object.get(key).and_then(Value::as_object);
        let field = |outer: Option<&Map<String, Value>>, key: &str| -> Option<String> {
            outer
                .and_then(|o| o.get(key))
                .or_else(|| object.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        match kind {
            "text" => match object.get("text") {
                Some(Value::String(text)) => Ok(ContentPart::text(text.clone())),
                None | Some(Value::Null) => Ok(ContentPart::text(String::new())),
                Some(other) => Err(invalid(format!(
                    "text part has a non-string `text`: {other}"
                ))),
            },
            "image_url" | "image" => {
                let url = match object.get("image_url") {
                    Some(Value::String(url)) => Some(url.clone()),
                    _ => field(nested("image_url"), "url"),
                };
                let url = url.ok_or_else(|| invalid("image_url part without a `url`".into()))?;
                Ok(ContentPart::ImageUrl {
                    url,
                    detail: field(nested("image_url"), "detail"),
                })
            }
            "file" => {
                let file = nested("file");
                let part = ContentPart::File {
                    file_data: field(file, "file_data"),
                    file_name: field(file, "file_name").or_else(|| field(file, "filename")),
                    file_id: field(file, "file_id"),
                };
                match &part {
                    ContentPart::File {
                        file_data: None,
                        file_id: None,
                        ..
                    } => Err(invalid("file part needs `file_data` or `file_id`".into())),
                    _ => Ok(part),
                }
            }
            "input_audio" | "audio" => {
                let audio = nested("input_audio");
                let data = field(audio, "data")
                    .ok_or_else(|| invalid("input_audio part without `data`".into()))?;
                let format = field(audio, "format")
                    .ok_or_else(|| invalid("input_audio part without `format`".into()))?;
                Ok(ContentPart::Audio { data, format })
            }
            other => Err(invalid(format!(
                "unknown content part type `{other}`: expected text, image_url, file or input_audio"
            ))),
        }
    }
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ContentPart::from_value(&value).map_err(serde::de::Error::custom)
    }
}

/// The content of a message: an ordered list of parts.
///
/// A content made of a single text part serializes as a plain string; anything else as a list of
/// parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Content {
    parts: Vec<ContentPart>,
}

impl Content {
    /// No content.
    pub fn empty() -> Self {
        Self::default()
    }

    /// A single text part (or nothing, for an empty string).
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            return Self::empty();
        }
        Self {
            parts: vec![ContentPart::Text { text }],
        }
    }

    /// Content made of the given parts.
    pub fn from_parts(parts: impl IntoIterator<Item = ContentPart>) -> Self {
        Self {
            parts: parts.into_iter().collect(),
        }
    }

    /// A copy with one more part.
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.parts.push(part);
        self
    }

    /// The parts in order.
    pub fn parts(&self) -> &[ContentPart] {
        &self.parts
    }

    /// True when there are no parts or every part is an empty text.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(ContentPart::is_empty)
    }

    /// True when some text part holds more than whitespace (no allocation, unlike checking
    /// `text_content().trim()`).
    pub fn has_text(&self) -> bool {
        self.parts
            .iter()
            .filter_map(ContentPart::as_text)
            .any(|text| !text.trim().is_empty())
    }

    /// True when the content is not a single plain text (several parts, or a non-text part).
    pub fn is_composite(&self) -> bool {
        self.parts.len() > 1 || self.parts.iter().any(|p| p.as_text().is_none())
    }

    /// The non-empty text parts joined with `\n`.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(ContentPart::as_text)
            .filter(|t| !t.is_empty())
            .collect();
        texts.join("\n")
    }

    /// The content as a JSON value: a string for plain text, a list of parts otherwise.
    pub fn to_value(&self) -> Value {
        if !self.is_composite() {
            return Value::String(self.text_content());
        }
        Value::Array(self.parts.iter().map(ContentPart::to_value).collect())
    }

    /// Reads content from a string, a list of parts (or strings), a single part object, or null.
    ///
    /// # Errors
    /// [`MessagesError::InvalidContentPart`] when a part cannot be read.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        match value {
            Value::Null => Ok(Self::empty()),
            Value::String(text) => Ok(Self::text(text.clone())),
            Value::Array(items) => items
                .iter()
                .map(ContentPart::from_value)
                .collect::<Result<Vec<_>, _>>()
                .map(Self::from_parts),
            Value::Object(_) => Ok(Self::from_parts([ContentPart::from_value(value)?])),
            other => Err(MessagesError::InvalidContentPart {
                reason: format!("content must be a string or a list of parts, got {other}"),
            }),
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&String> for Content {
    fn from(text: &String) -> Self {
        Content::text(text.clone())
    }
}

impl From<ContentPart> for Content {
    fn from(part: ContentPart) -> Self {
        Content::from_parts([part])
    }
}

impl From<Vec<ContentPart>> for Content {
    fn from(parts: Vec<ContentPart>) -> Self {
        Content::from_parts(parts)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Content::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_text_part_serializes_as_plain_string() {
        assert_eq!(Content::text("hi").to_value(), json!("hi"));
        let composite = Content::text("look").with_part(ContentPart::image_url("http://x/y.png"));
        assert_eq!(
            composite.to_value(),
            json!([{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"http://x/y.png"}}])
        );
    }

    #[test]
    fn reads_flat_and_nested_part_forms() {
        let flat = json!([
            {"type": "image_url", "url": "http://a"},
            {"type": "file", "file_data": "data:x", "filename": "a.txt"},
            {"type": "input_audio", "data": "AAA", "format": "wav"},
            {"text": "no type means text"}
        ]);
        let content = Content::from_value(&flat).unwrap();
        assert_eq!(
            content.parts(),
            &[
                ContentPart::image_url("http://a"),
                ContentPart::file("a.txt", "data:x"),
                ContentPart::audio("AAA", "wav"),
                ContentPart::text("no type means text"),
            ]
        );
    }

    #[test]
    fn rejects_unknown_part_types_and_missing_fields() {
        let err = Content::from_value(&json!([{"type": "video"}])).unwrap_err();
        assert!(err
            .to_string()
            .contains("unknown content part type `video`"));
        let err = Content::from_value(&json!([{"type": "image_url"}])).unwrap_err();
        assert!(err.to_string().contains("without a `url`"));
        assert!(Content::from_value(&json!(42)).is_err());
    }

    #[test]
    fn emptiness_and_text() {
        assert!(Content::text("").is_empty());
        assert!(Content::from_parts([ContentPart::text("")]).is_empty());
        let c = Content::from_parts([
            ContentPart::text("a"),
            ContentPart::text(""),
            ContentPart::text("b"),
        ]);
        assert_eq!(c.text_content(), "a\nb");
        assert!(c.is_composite());
    }
}
