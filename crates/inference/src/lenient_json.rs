//! Finding JSON in text a model wrote: inside code fences, next to prose, with trailing commas.
//!
//! Small local models rarely answer with bare JSON. They wrap it in a ```` ```json ```` fence,
//! put a sentence before or after it, or leave a trailing comma. [`json_values`] finds every
//! JSON object or array in such text, most likely candidates first, so that callers can pick
//! the first one that has the shape they expect.

use serde_json::Value;

/// Every JSON object or array found in `text`, in order of preference:
///
/// 1. the contents of code fences (```` ``` ```` or ```` ```json ````), in order;
/// 2. the whole text, when it is JSON;
/// 3. objects and arrays embedded in the text, outermost first, left to right.
///
/// Trailing commas (`{"a": 1,}`) are tolerated. Scalars (`"text"`, `42`) are ignored.
/// Duplicates are returned once.
///
/// ```
/// use inference::lenient_json::json_values;
/// use serde_json::json;
///
/// let text = "Sure! ```json\n{\"city\": \"Paris\",}\n``` Anything else?";
/// assert_eq!(json_values(text), vec![json!({"city": "Paris"})]);
/// ```
pub fn json_values(text: &str) -> Vec<Value> {
    let mut found: Vec<Value> = Vec::new();
    let mut push = |value: Value| {
        if (value.is_object() || value.is_array()) && !found.contains(&value) {
            found.push(value);
        }
    };
    for block in fenced_blocks(text) {
        if let Some(value) = parse_lenient(block) {
            push(value);
        } else {
            for value in embedded_values(block) {
                push(value);
            }
        }
    }
    if let Some(value) = parse_lenient(text) {
        push(value);
    }
    for value in embedded_values(text) {
        push(value);
    }
    found
}

/// Parses `text` as JSON, retrying once with trailing commas removed.
///
/// ```
/// use inference::lenient_json::parse_lenient;
/// use serde_json::json;
///
/// assert_eq!(parse_lenient("[1, 2,]"), Some(json!([1, 2])));
/// assert_eq!(parse_lenient("not json"), None);
/// ```
pub fn parse_lenient(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Some(value);
    }
    serde_json::from_str(&without_trailing_commas(trimmed)).ok()
}

/// The contents of the code fences in `text` (language tag line removed). An unclosed fence
/// runs to the end of the text.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // The info string (e.g. `json`) runs to the end of the line.
        let body_start = match after.find('\n') {
            Some(newline) if !after[..newline].contains('{') && !after[..newline].contains('[') => {
                newline + 1
            }
            _ => 0,
        };
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                blocks.push(&body[..end]);
                rest = &body[end + 3..];
            }
            None => {
                blocks.push(body);
                break;
            }
        }
    }
    blocks
}

/// Objects and arrays embedded in `text`, outermost first, left to right.
fn embedded_values(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'{' || bytes[index] == b'[' {
            if let Some(end) = balanced_end(text, index) {
                if let Some(value) = parse_lenient(&text[index..end]) {
                    values.push(value);
                    index = end;
                    continue;
                }
            }
        }
        index += 1;
    }
    values
}

/// The byte index just past the bracket that closes the one at `start`, honouring strings.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (offset, byte) in text.as_bytes()[start..].iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                if stack.pop() != Some(*byte) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(start + offset + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with every comma that is followed only by whitespace and a closing bracket removed
/// (outside strings).
fn without_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn bare_json_is_found() {
        assert_eq!(json_values(r#"{"a": 1}"#), vec![json!({"a": 1})]);
    }

    #[test]
    fn fenced_json_with_language_tag_is_found() {
        let text = "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nDone.";
        assert_eq!(json_values(text), vec![json!({"a": [1, 2]})]);
    }

    #[test]
    fn fence_without_language_tag_and_unclosed_fence() {
        assert_eq!(json_values("```\n{\"a\": 1}\n```"), vec![json!({"a": 1})]);
        assert_eq!(json_values("```json\n{\"a\": 1}"), vec![json!({"a": 1})]);
        assert_eq!(json_values("```{\"a\": 1}```"), vec![json!({"a": 1})]);
    }

    #[test]
    fn prose_around_an_object_is_ignored() {
        let text =
            r#"I will call the tool. {"name": "x", "arguments": {"q": "a } b"}} Hope that helps."#;
        assert_eq!(
            json_values(text),
            vec![json!({"name": "x", "arguments": {"q": "a } b"}})]
        );
    }

    #[test]
    fn trailing_commas_are_tolerated_but_not_inside_strings() {
        assert_eq!(
            parse_lenient(r#"{"a": [1, 2,], "b": ",}",}"#),
            Some(json!({"a": [1, 2], "b": ",}"}))
        );
    }

    #[test]
    fn several_objects_are_returned_left_to_right() {
        let text = r#"first {"a": 1} then {"b": 2}"#;
        assert_eq!(json_values(text), vec![json!({"a": 1}), json!({"b": 2})]);
    }

    #[test]
    fn broken_outer_object_still_yields_inner_ones() {
        let text = r#"{"broken": {"ok": true} oops"#;
        assert_eq!(json_values(text), vec![json!({"ok": true})]);
    }

    #[test]
    fn no_json_gives_nothing() {
        assert!(json_values("The weather is nice, no braces here.").is_empty());
        assert!(json_values("a { b").is_empty());
        assert!(json_values("\"just a string\"").is_empty());
        assert!(json_values("").is_empty());
    }

    proptest! {
        #[test]
        fn any_object_survives_prose_and_fences(
            key in "[a-z]{1,8}",
            value in "[a-zA-Z0-9 {}\\[\\],:]{0,20}",
            before in "[a-zA-Z .!?]{0,30}",
            after in "[a-zA-Z .!?]{0,30}",
            fenced in any::<bool>(),
        ) {
            let object = json!({ key: value });
            let body = object.to_string();
            let text = if fenced {
                format!("{before}\n```json\n{body}\n```\n{after}")
            } else {
                format!("{before} {body} {after}")
            };
            let found = json_values(&text);
            prop_assert_eq!(found.first(), Some(&object));
        }
    }
}
