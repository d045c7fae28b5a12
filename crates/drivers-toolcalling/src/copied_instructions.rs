//! A reply that copies the model's instructions: its system prompt, the driver's tool-call
//! hint, or the tool preamble of its chat template. It is neither an answer nor a call: an
//! example call in the copy (the hint's `{"name": "read_file", ...}`) is text the model read,
//! like a call echoed from a tool result (`trust`). On the eval's development tasks d6 and
//! d16 (2026-12-04) the 1.5B model, after its call had run, wrote the hint and its template's
//! tool list four times in a row, each cut at the 512-token cap; the copied example call was
//! refused as a call among other text each time, until the error policy stopped the run past
//! the eval's 6-minute limit, with no answer saved. Asked again, the model copies again, so
//! the step does not ask: the reply is not an answer, and the run answers on stop.
//!
//! Except once, when the work is plainly not done ([`work_left_nudge`]): asked to change a
//! word in `a.txt` and `b.txt`, the 1.5B model edited `a.txt`, then copied its instructions;
//! stopped there, it answered "I did not receive a response from the tool" and `b.txt`
//! was never changed (a probe of issue 36's task kinds, 2026-12-07). Told which named file
//! no call has used, it is asked once more, with the copy left out.

use messages::{Messages, Role};

use agents_core::Tools;

use crate::files_left::FilesLeft;

/// How many leading characters of an instruction a reply must hold to copy it. Long enough
/// that an answer never holds them by chance ("You are a helpful assistant." is 28).
const COPIED_CHARS: usize = 40;

/// The tool preamble of the Qwen2.5 (and Hermes) chat templates, which the server puts in the
/// system prompt when a request offers tools: the model reads it, and copies it with the rest.
const TEMPLATE_PREAMBLES: [&str; 2] = [
    "You may call one or more functions to assist with the user query.",
    "You are provided with function signatures within <tools></tools> XML tags",
];

/// Whether `reply` copies an instruction the model was given: the first [`COPIED_CHARS`]
/// characters of a system or developer message of `system` or `input`, or of `hint`, or a
/// chat template's tool preamble.
pub(crate) fn copies_instructions(
    reply: &str,
    system: &Messages,
    input: &Messages,
    hint: Option<&str>,
) -> bool {
    if reply.len() < COPIED_CHARS {
        return false;
    }
    let copies = |instruction: &str| {
        let start = instruction.trim_start();
        start
            .char_indices()
            .nth(COPIED_CHARS)
            .is_some_and(|(end, _)| reply.contains(&start[..end]))
    };
    TEMPLATE_PREAMBLES
        .iter()
        .any(|preamble| reply.contains(preamble))
        || hint.is_some_and(copies)
        || system
            .iter()
            .chain(input.iter())
            .filter(|message| matches!(message.role(), Role::System | Role::Developer))
            .any(|message| copies(&message.text()))
}

/// What the model is asked after a reply that copied its instructions, when tools have run
/// for the request in `input` and it names files that no call of the execution has used
/// ([`FilesLeft`]): go on with them. `None` otherwise (the run answers on stop).
pub(crate) fn work_left_nudge(input: &Messages, tools: &Tools) -> Option<String> {
    FilesLeft::of(input, tools)
        .nudge("Your last reply repeated your instructions instead of going on with the request.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::Message;

    const HINT: &str = "To use a tool, make a tool call. If you cannot, reply with only one \
                        JSON object and nothing else, like {\"name\": \"read_file\", \
                        \"arguments\": {\"path\": \"notes.txt\"}}.";
    const PROMPT: &str = "You are a coding assistant working in a workspace of files, with \
                          tools to list, read, search, write and edit them.";

    fn system() -> Messages {
        Messages::new().appended(Message::system(PROMPT))
    }

    fn input() -> Messages {
        Messages::new().appended(Message::user("Rename draft.txt to final.txt."))
    }

    #[test]
    fn a_copy_of_the_hint_the_prompt_or_the_template_preamble_is_a_copy() {
        // development task d16's reply, after its move had run (cut at the cap)
        let d16 = format!(
            "{HINT}\n\n# Tools\n\nYou may call one or more functions to assist with the user \
             query.\n\nYou are provided with function signatures within <tools></tools> XML \
             tags:\n<tools>\n{{\"type\": \"function\", \"function\": {{\"name\": \"read_file\""
        );
        assert!(copies_instructions(&d16, &system(), &input(), Some(HINT)));
        // without our hint, the template's preamble alone
        assert!(copies_instructions(&d16, &system(), &input(), None));
        let prompt = format!("Sure. {PROMPT} I will help.");
        assert!(copies_instructions(&prompt, &system(), &input(), None));
        // a system message in the conversation counts too
        let inline = Messages::new().appended(Message::system(PROMPT));
        assert!(copies_instructions(
            &prompt,
            &Messages::new(),
            &inline,
            None
        ));
    }

    #[test]
    fn an_answer_is_no_copy() {
        for answer in [
            "The file `draft.txt` has been renamed to `final.txt`.",
            "You are a coding assistant.",
            "To use a tool, make a tool call.",
            "I used read_file with {\"path\": \"notes.txt\"}; it says hello.",
            "",
        ] {
            assert!(
                !copies_instructions(answer, &system(), &input(), Some(HINT)),
                "{answer}"
            );
        }
        // the request is no instruction: quoting it is not a copy of one
        let request = "Rename draft.txt to final.txt, as you asked: Rename draft.txt to final.txt.";
        assert!(!copies_instructions(
            request,
            &system(),
            &input(),
            Some(HINT)
        ));
    }
}
