//! The ReAct system prompt: the protocol, the decision shapes and the tool catalogue.

use inference::ToolSchema;

/// The system prompt that teaches the model the ReAct protocol for the given tools.
///
/// It explains the Thought/Action/Observation loop, the two JSON decision shapes, how earlier
/// actions and observations appear in the conversation, and lists every tool with its
/// description and the JSON Schema of its arguments.
///
/// ```
/// use drivers_react::react_prompt;
/// use inference::ToolSchema;
/// use serde_json::json;
///
/// let prompt = react_prompt(&[ToolSchema::new("add", "Adds two numbers.", json!({"type": "object"}))]);
/// assert!(prompt.contains("\"type\": \"call_tool\""));
/// assert!(prompt.contains("### add\nAdds two numbers."));
/// ```
pub fn react_prompt(tools: &[ToolSchema]) -> String {
    let mut prompt = String::from(PROTOCOL);
    prompt.push_str("\n## Tools\n\n");
    if tools.is_empty() {
        prompt.push_str(
            "No tools are available in this conversation. Always answer with type \"final_answer\".\n",
        );
        return prompt;
    }
    for tool in tools {
        let schema = serde_json::to_string(&tool.parameters).unwrap_or_else(|_| "{}".to_owned());
        prompt.push_str(&format!(
            "### {}\n{}\nArguments (JSON Schema): {}\n\n",
            tool.name,
            tool.description.trim(),
            schema
        ));
    }
    prompt.truncate(prompt.trim_end().len());
    prompt.push('\n');
    prompt
}

/// The protocol part of the prompt, independent of the tools.
const PROTOCOL: &str = r#"You solve the user's task step by step. In each step you think briefly, then either use one tool or give your final answer. After every tool use you are shown what the tool returned, and you decide the next step.

## How to reply

Every reply is exactly one JSON object and nothing else: no text before or after it. It takes one of two forms.

To use a tool:
{"thought": "why this tool helps now, in a sentence or two", "type": "call_tool", "tool": "<tool name>", "args": {"<argument>": "<value>"}}

To finish:
{"thought": "why the task is done", "type": "final_answer", "answer": "<the complete answer for the user>"}

## Rules

- Use only the tools listed below, by their exact names.
- `args` is a JSON object whose keys are the tool's arguments; include every required argument and give each the type its schema asks for.
- One tool per reply. Wait for its result before deciding what to do next.
- Do not invent tool results and do not work out by yourself what a tool can compute: call the tool.
- Answer with "final_answer" only when you have what you need; the answer must stand on its own.
- Your earlier steps appear in the conversation as notes of the form "Thought: ... / Action: <tool> / Action Input: <arguments>", and each tool result as a message starting with "Observation:". Keep replying in the JSON form above, never in that note form.
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_every_tool_with_its_schema_in_order() {
        let prompt = react_prompt(&[
            ToolSchema::new("add", "Adds.", json!({"type": "object", "required": ["a"]})),
            ToolSchema::new("search", " Searches. ", json!({})),
        ]);
        let add = prompt.find(
            "### add\nAdds.\nArguments (JSON Schema): {\"type\":\"object\",\"required\":[\"a\"]}",
        );
        let search = prompt.find("### search\nSearches.\nArguments (JSON Schema): {}");
        assert!(
            add.is_some() && search.is_some() && add < search,
            "{prompt}"
        );
        assert!(prompt.ends_with("{}\n"));
    }

    #[test]
    fn without_tools_the_model_is_told_to_answer() {
        let prompt = react_prompt(&[]);
        assert!(prompt.contains("No tools are available"));
        assert!(!prompt.contains("###"));
    }
}
