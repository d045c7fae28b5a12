//! Tool calls written as text: any text, no panic; recovered calls name a known tool and
//! carry an object of arguments. Whether the arguments fit the tool's schema is the executor's
//! to check (a reply cut off after the tool's name is a call with `{}`, which the executor
//! answers with "missing required parameter `city`").
#![no_main]

use agents_core::{Tool, ToolContext, ToolError, ToolOutput, Tools};
use drivers_toolcalling::{
    recover_announced_call, recover_tool_calls_from_content, recover_tool_calls_from_cut_reply,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

struct Weather;

#[async_trait::async_trait]
impl Tool for Weather {
    fn name(&self) -> &str {
        "get_weather"
    }
    fn description(&self) -> &str {
        "Weather for a city"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    }
    async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("sunny"))
    }
}

fuzz_target!(|text: &str| {
    let tools = Tools::new().with(Weather);
    if let Some(calls) = recover_tool_calls_from_content(text, &tools) {
        for call in calls {
            assert_eq!(call.name(), "get_weather");
            assert!(call.arguments().is_object());
        }
    }
    // A call announced in prose: a known tool, object arguments, a lead-in taken from the text.
    if let Some(found) = recover_announced_call(text, &tools, 1) {
        assert_eq!(found.call.name(), "get_weather");
        assert!(found.call.arguments().is_object());
        assert!(text.contains(found.lead_in.as_str()));
    }
    // Read as a reply cut at the token limit: the same promise for every runnable call.
    if let Some(calls) = recover_tool_calls_from_cut_reply(text, &tools, 1) {
        for found in calls.into_iter().filter(|c| c.is_runnable()) {
            assert_eq!(found.call.name(), "get_weather");
            assert!(found.call.arguments().is_object());
        }
    }
});
