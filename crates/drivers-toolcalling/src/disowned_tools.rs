//! A reply that says the agent cannot do what its tools just did: "I'm sorry, but I don't
//! have the ability to list files in a directory.", written after a `list_dir` call had run
//! and returned the listing (issue 36, development task d6, as the answer on stop). Every
//! call of the execution succeeded, so the claim is false, and the results hold what was
//! asked. After the tools ran, such a reply is asked about once; asked to answer on stop, it
//! is no answer (the loop asks once more from a page of the results alone).
//!
//! The same denial after a call to a tool the agent does not have is false too: asked to
//! create a folder with a file, the 1.5B model called `create_folder`, was told there is no
//! such tool and which tools there are (`write_file` creates the folders a path needs), and
//! answered "I cannot create a folder ... because I do not have the ability to interact with
//! the file system" (development task d23). When every failed call named a tool the agent
//! does not have, such a reply is asked about once, told to use the tools it has.

use agents_core::Tools;
use messages::{Message, Role};

use crate::latest_results::{every_result, text_of, TOOL_ERROR_PREFIX};
use crate::word_set::{has_curly_apostrophe, WordSet};

/// How a reply denies, in the first person, that the agent can reach files or run tools.
static DISOWNING_WORDS: WordSet<'static> = WordSet::new(&[
    "i don't have the ability",
    "i do not have the ability",
    "i don't have the capability",
    "i do not have the capability",
    "i don't have access",
    "i do not have access",
    "i don't have direct access",
    "i do not have direct access",
    "i cannot access",
    "i can't access",
    "i am unable to access",
    "i'm unable to access",
    "i am not able to access",
    "i'm not able to access",
    "i'm not able to directly",
    "i am not able to directly",
    "i cannot directly",
    "i can't directly",
    "as an ai",
]);

/// What the model is told after such a reply.
pub(crate) const DISOWNED_TOOLS_NUDGE: &str = "Your tool calls for this request ran and \
succeeded: their results are above. You can use the tools, and you already did. Answer the \
request from those results.";

/// What the model is told after such a reply when the calls that failed named tools the
/// agent does not have.
pub(crate) const DISOWNED_AFTER_UNKNOWN_TOOL_NUDGE: &str = "The tool you called does not \
exist, but you do have tools: the error above lists them. Do what the user asked with one of \
those tools: reply with only the tool call.";

/// Whether `reply` says, in the first person, that the agent cannot reach files or use tools
/// ("I don't have the ability to ...", "I cannot access ...", "As an AI ..."); a typographic
/// apostrophe reads as `'`.
pub(crate) fn disowns_the_tools(reply: &str) -> bool {
    if has_curly_apostrophe(reply) {
        DISOWNING_WORDS.in_text(&reply.replace('\u{2019}', "'"))
    } else {
        DISOWNING_WORDS.in_text(reply)
    }
}

/// Whether `execution` (an execution's messages, in any order) holds a tool result and none
/// of them is an error: then a reply that disowns the tools is false.
pub(crate) fn every_call_succeeded<'m>(execution: impl Iterator<Item = &'m Message>) -> bool {
    every_result(execution, false)
}

/// Whether `execution` (an execution's messages, in any order) holds a failed tool result
/// and every failed one is from a call of a tool not among `tools`: a denial of the tools is
/// then false, for the agent has tools the model did not call.
pub(crate) fn only_unknown_tools_failed<'m>(
    execution: impl Iterator<Item = &'m Message>,
    tools: &Tools,
) -> bool {
    let mut any = false;
    for message in execution.filter(|message| message.role() == Role::Tool) {
        if text_of(message).starts_with(TOOL_ERROR_PREFIX) {
            if message
                .tool_name()
                .is_none_or(|name| tools.get(name).is_some())
            {
                return false;
            }
            any = true;
        }
    }
    any && !tools.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    #[test]
    fn first_person_denials_of_the_tools_are_recognised() {
        for reply in [
            "I'm sorry, but I don't have the ability to list files in a directory.",
            "I do not have access to your file system.",
            "As an AI language model, I cannot read files.",
            "I\u{2019}m unable to access the fruits directory.",
            "I CANNOT ACCESS files.",
        ] {
            assert!(disowns_the_tools(reply), "{reply}");
        }
        for reply in [
            "The fruits directory holds apple.txt, banana.md and cherry.csv.",
            "I could not read data/a.txt: it does not exist.",
            "Only the admin group has access to the database.",
            "The file says guests cannot access the archive.",
        ] {
            assert!(!disowns_the_tools(reply), "{reply}");
        }
    }

    #[test]
    fn every_call_succeeded_needs_a_result_and_no_error() {
        let call = ToolCall::new("c1", "list_dir", json!({"path": "fruits"}));
        let ok = Message::tool_result_for(&call, "[file] apple.txt");
        let failed = Message::tool_result_for(&call, "Error: no such directory");
        let asked = Message::assistant_tool_calls([call.clone()]);
        assert!(every_call_succeeded([&asked, &ok].into_iter()));
        assert!(!every_call_succeeded([&asked, &ok, &failed].into_iter()));
        assert!(!every_call_succeeded([&asked].into_iter()));
    }

    #[test]
    fn only_unknown_tools_failed_needs_a_failure_of_a_tool_not_there() {
        let tools = Tools::new().with(crate::test_tools::weather_tool());
        let unknown = ToolCall::new("c1", "create_folder", json!({"path": "reports"}));
        let known = ToolCall::new("c2", "get_weather", json!({"city": "Paris"}));
        let no_such_tool = Message::tool_result_for(
            &unknown,
            "Error: There is no tool named `create_folder`. The tools are: `get_weather`",
        );
        let weather = Message::tool_result_for(&known, "Sunny in Paris");
        let weather_failed = Message::tool_result_for(&known, "Error: the service is down");
        assert!(only_unknown_tools_failed(
            [&no_such_tool].into_iter(),
            &tools
        ));
        assert!(only_unknown_tools_failed(
            [&no_such_tool, &weather].into_iter(),
            &tools
        ));
        // a failure of a tool the agent has may be what the reply says it is
        assert!(!only_unknown_tools_failed(
            [&no_such_tool, &weather_failed].into_iter(),
            &tools
        ));
        assert!(!only_unknown_tools_failed([&weather].into_iter(), &tools));
        assert!(!only_unknown_tools_failed(
            [&no_such_tool].into_iter(),
            &Tools::new()
        ));
    }
}
