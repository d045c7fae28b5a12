//! Proptest strategies for this crate's types, for reuse by the crates above
//! (enable the `testing` feature).

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::{
    Content, ContentPart, Message, MessageStore, Messages, Metadata, Role, Section, ToolCall,
};

/// Any role.
pub fn role() -> impl Strategy<Value = Role> {
    proptest::sample::select(Role::ALL.to_vec())
}

fn short_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _.,!?°é\n-]{0,24}"
}

fn identifier() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,10}"
}

/// A small JSON value (scalars, small arrays and objects).
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        short_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            vec((identifier(), inner), 0..3)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Metadata with a few entries (never using the reserved `tool_*` keys).
pub fn metadata() -> impl Strategy<Value = Metadata> {
    vec(("[a-z]{1,6}", json_value()), 0..3).prop_map(|entries| {
        entries
            .into_iter()
            .filter(|(k, _)| !k.starts_with("tool"))
            .collect()
    })
}

/// Any content part.
pub fn content_part() -> impl Strategy<Value = ContentPart> {
    prop_oneof![
        4 => "[a-z ]{1,20}".prop_map(ContentPart::text),
        1 => ("https://[a-z]{1,8}\\.png", option::of(prop_oneof![Just("low".to_owned()), Just("high".to_owned())]))
            .prop_map(|(url, detail)| ContentPart::ImageUrl { url, detail }),
        1 => ("[a-z]{1,8}\\.txt", "data:text/plain;base64,[A-Za-z0-9]{1,8}")
            .prop_map(|(name, data)| ContentPart::file(name, data)),
        1 => ("[A-Za-z0-9]{1,12}", prop_oneof![Just("wav".to_owned()), Just("mp3".to_owned())])
            .prop_map(|(data, format)| ContentPart::audio(data, format)),
    ]
}

/// Content: usually plain text, sometimes several parts.
pub fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        3 => short_text().prop_map(Content::text),
        1 => vec(content_part(), 2..4).prop_map(Content::from_parts),
    ]
}

/// A tool call with object arguments.
pub fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        "call_[a-z0-9]{1,6}",
        identifier(),
        vec((identifier(), json_value()), 0..3),
    )
        .prop_map(|(id, name, args)| {
            ToolCall::new(id, name, Value::Object(args.into_iter().collect()))
        })
}

/// Any well-formed message of any role.
pub fn message() -> impl Strategy<Value = Message> {
    let plain = (role(), content(), option::of(identifier()), metadata()).prop_map(
        |(role, content, name, metadata)| {
            let role = if role == Role::Tool { Role::User } else { role };
            let mut message = Message::new(role, content).with_metadata_map(metadata);
            if let Some(name) = name {
                message = message.with_name(name);
            }
            message
        },
    );
    let calls = (vec(tool_call(), 1..3), short_text())
        .prop_map(|(calls, text)| Message::assistant_tool_calls(calls).with_content(text));
    let result = ("call_[a-z0-9]{1,6}", identifier(), content())
        .prop_map(|(id, tool, content)| Message::tool_result(id, tool, content));
    prop_oneof![3 => plain, 1 => calls, 1 => result]
}

/// A list of messages.
pub fn messages(max: usize) -> impl Strategy<Value = Messages> {
    vec(message(), 0..max).prop_map(Messages::from)
}

/// A store with up to four uniquely named sections and a few parameters.
pub fn message_store() -> impl Strategy<Value = MessageStore> {
    let names = proptest::sample::subsequence(
        vec!["summary", "buffer", "messages", "execution_buffer", "notes"],
        0..5,
    );
    (names, vec(messages(5), 5), metadata()).prop_map(|(names, lists, parameters)| {
        let sections = names
            .into_iter()
            .zip(lists)
            .map(|(name, messages)| Section::new(name, messages));
        MessageStore::from_sections(sections)
            .unwrap_or_default()
            .with_parameters(parameters)
    })
}

/// A JSON object that is not a valid message (for negative tests).
pub fn invalid_message_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z]{3,8}"
            .prop_filter("not a role", |r| r.parse::<Role>().is_err())
            .prop_map(|role| json!({"role": role, "content": "x"})),
        Just(json!({"content": "no role"})),
        Just(
            json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}]})
        ),
        Just(json!({"role": "user", "content": [{"type": "hologram"}]})),
    ]
}
