//! A tool call's signature: its name and canonical arguments, the identity of a call for the
//! repeated-call guard, the approval hash and the step journal.

use messages::ToolCall;
use serde_json::Value;

/// A call's signature: its tool name and its arguments as canonical JSON (object keys sorted,
/// at every depth), so the same call with its arguments in another order is the same call.
pub fn signature(call: &ToolCall) -> String {
    let mut text = String::with_capacity(64);
    text.push_str(call.name());
    text.push('\u{0}');
    canonical(call.arguments(), &mut text);
    text
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(key) {
                    canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
