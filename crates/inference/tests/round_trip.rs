//! Property tests: our messages -> provider JSON -> our messages keeps roles, text, tool calls
//! and ids.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use inference::providers::{anthropic, openai};
use messages::{testing, Message, Role};
use proptest::prelude::*;

/// What a provider must preserve of a message.
fn essence(message: &Message) -> (Role, String, Vec<messages::ToolCall>, Option<String>) {
    (
        message.role(),
        message.text(),
        message.tool_calls().to_vec(),
        message.tool_call_id().map(str::to_owned),
    )
}

proptest! {
    #[test]
    fn openai_messages_round_trip(message in testing::message()) {
        let wire = openai::message_to_openai(&message);
        let back = openai::message_from_openai(&wire).unwrap();
        // A tool message may only hold text in this format: its text comes back, followed by
        // a line describing each image or file it carried (never silently dropped).
        let mut expected = essence(&message);
        if message.role() == Role::Tool {
            let extra = message.content().parts().iter().filter(|p| p.as_text().is_none()).count();
            prop_assert_eq!(back.text().matches("; not shown to the model]").count(), extra);
            prop_assert!(back.text().starts_with(&expected.1));
            expected.1 = back.text();
        }
        prop_assert_eq!(essence(&back), expected);
        prop_assert_eq!(back.name(), message.name().filter(|_| message.role() != Role::Tool));
    }

    #[test]
    fn anthropic_conversations_round_trip(conversation in testing::messages(8)) {
        let (system, wire) = anthropic::messages_to_anthropic(conversation.iter());
        let back = anthropic::messages_from_anthropic(system.as_deref(), &wire).unwrap();

        let system_texts: Vec<String> = conversation
            .iter()
            .filter(|m| m.role().is_system())
            .map(Message::text)
            .filter(|t| !t.is_empty())
            .collect();
        let expected_system = (!system_texts.is_empty()).then(|| system_texts.join("\n\n"));
        prop_assert_eq!(system, expected_system.clone());

        let rest: Vec<_> = conversation.iter().filter(|m| !m.role().is_system()).map(essence).collect();
        let skip = usize::from(expected_system.is_some());
        let back_rest: Vec<_> = back.iter().skip(skip).map(essence).collect();
        prop_assert_eq!(back_rest, rest);

        // Tool results never stand alone: each run of them is one user message.
        for pair in wire.windows(2) {
            let only_results = |v: &serde_json::Value| v["content"].as_array().is_some_and(|blocks| {
                !blocks.is_empty() && blocks.iter().all(|b| b["type"] == "tool_result")
            });
            prop_assert!(!(only_results(&pair[0]) && only_results(&pair[1])));
        }
    }
}
