//! Snapshots of a compiled agent context, in JSON and transcript form.

use messages::{CompileMessages, ContentPart, Message, MessageStore, SelectedSections, ToolCall};
use serde_json::json;

fn agent_store() -> MessageStore {
    MessageStore::new()
        .section("messages")
        .append(vec![
            Message::user("Plan a day in Paris."),
            Message::assistant("Start at the Louvre, then walk along the Seine."),
            Message::user(vec![
                ContentPart::text("And what about this place?"),
                ContentPart::image_url("https://example.com/orsay.jpg"),
            ]),
        ])
        .section("execution_buffer")
        .append(vec![
            Message::assistant_tool_calls([
                ToolCall::new("call_1", "get_weather", json!({"city": "Paris"})),
                ToolCall::new("call_2", "opening_hours", json!({"place": "Musée d'Orsay"})),
            ]),
            Message::tool_result("call_1", "get_weather", "22°C and sunny"),
            Message::tool_result("call_2", "opening_hours", "9:30-18:00, closed on Mondays"),
        ])
        .section("summary")
        .append(Message::system(
            "Summary: the user is visiting Paris for one day.",
        ))
        .section("buffer")
        .append(vec![
            Message::user("Hello!"),
            Message::assistant("Hi, how can I help?"),
        ])
        .with_parameter("locale", "en")
}

fn compiled() -> messages::Messages {
    SelectedSections::new(["summary", "buffer", "messages", "execution_buffer"])
        .compile(&agent_store())
}

#[test]
fn compiled_context_as_json() {
    insta::assert_json_snapshot!("compiled_context_json", compiled());
}

#[test]
fn compiled_context_as_transcript() {
    insta::assert_snapshot!("compiled_context_transcript", compiled().to_transcript());
}

#[test]
fn store_as_json() {
    insta::assert_json_snapshot!("agent_store_json", agent_store());
}
