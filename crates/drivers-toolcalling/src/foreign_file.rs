//! An answer about a file the request is not about (issue 32). In separated mode the
//! conversation shows the earlier requests' answers, and the 1.5B model, after reading the
//! file a new request names, answers with one of them: "How many orders in data/orders.csv
//! have the status refunded?" answered "The number of ERROR lines in `logs/server.log` is
//! 34." (turn 21 of the 32-turn conversation), and the next file question got the same. Such
//! a reply names a file that the request does not name and that nothing of the running
//! execution (its calls, its results) mentions: it answers an earlier request. It gets one
//! nudge that quotes the request; said again, it is not an answer.
//!
//! A request that names no file ("What number did you count earlier?") may rightly be
//! answered about a file an earlier turn read: it is never judged.

use messages::{Message, Messages, Role, ToolCall};

use crate::backticks::in_backticks;
use crate::latest_results::{execution_messages, request, text_of};
use crate::unread_file::{call_names_file, named_files};

/// How much of the request the nudge quotes, in bytes.
const MAX_QUOTED_REQUEST_BYTES: usize = 512;

/// The files `reply` names (each once, in order) that the latest request of `conversation`
/// does not name and that no call or result of its running execution mentions, when that
/// request names a file. A file counts as mentioned when its name (the part after the last
/// `/`) appears in the request or a result (any ASCII case), or a call's path argument ends
/// with it: a directory listing that shows `server.log` mentions `logs/server.log`.
pub(crate) fn foreign_files(reply: &str, conversation: &Messages) -> Vec<String> {
    let mut foreign: Vec<String> = Vec::new();
    // Most replies name no file: then nothing else is read.
    if named_files(reply).next().is_none() {
        return foreign;
    }
    let Some(request) = request(conversation).map(text_of) else {
        return foreign;
    };
    if named_files(&request).next().is_none() {
        return foreign;
    }
    let request = request.to_ascii_lowercase();
    let results: Vec<String> = execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .map(|message| message.text().to_ascii_lowercase())
        .collect();
    let calls: Vec<&ToolCall> = execution_messages(conversation)
        .flat_map(Message::tool_calls)
        .collect();
    for file in named_files(reply) {
        let name = file.rsplit('/').next().unwrap_or(file);
        let lower = name.to_ascii_lowercase();
        let mentioned = request.contains(&lower)
            || results.iter().any(|result| result.contains(&lower))
            || calls.iter().any(|call| call_names_file(call, name));
        if !mentioned && !foreign.iter().any(|known| known.eq_ignore_ascii_case(file)) {
            foreign.push(file.to_owned());
        }
    }
    foreign
}

/// What the model is told after a reply about `files` (see [`foreign_files`]): it quotes the
/// request.
pub(crate) fn foreign_files_nudge(files: &[String], conversation: &Messages) -> String {
    let named = in_backticks(files, ", ");
    let request = request(conversation).map(Message::text).unwrap_or_default();
    let request = request.trim();
    let quoted = &request[..request.floor_char_boundary(MAX_QUOTED_REQUEST_BYTES)];
    format!(
        "Your last reply is about {named}, which this request does not name and which nothing \
         your tools returned for it mentions: it answers an earlier request, not this one. \
         Answer this request from the tool results above (if they do not hold the answer, \
         call the tool it needs now). The request is: \"{quoted}\""
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An earlier turn about the log, then `request` with one `read_file` call of `path`
    /// that returned `result`.
    fn after_read(request: &str, path: &str, result: &str) -> Messages {
        let call = ToolCall::new("call_1", "read_file", json!({ "path": path }));
        Messages::new()
            .appended(Message::user(
                "How many lines in logs/server.log contain ERROR?",
            ))
            .appended(Message::assistant(
                "The number of ERROR lines in `logs/server.log` is 34.",
            ))
            .appended(Message::user(request))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, result))
    }

    #[test]
    fn an_answer_about_a_file_the_execution_never_touched_answers_another_request() {
        let conversation = after_read(
            "How many orders in data/orders.csv have the status refunded?",
            "data/orders.csv",
            "order,customer,status\n1042,Halvorsen Marine,refunded\n",
        );
        let reply = "The number of ERROR lines in `logs/server.log` is 34.";
        assert_eq!(foreign_files(reply, &conversation), ["logs/server.log"]);
        let nudge = foreign_files_nudge(&foreign_files(reply, &conversation), &conversation);
        assert!(nudge.contains("`logs/server.log`"), "{nudge}");
        assert!(
            nudge.ends_with("\"How many orders in data/orders.csv have the status refunded?\""),
            "{nudge}"
        );
    }

    #[test]
    fn files_the_request_calls_or_results_mention_are_not_foreign() {
        let conversation = after_read(
            "Which port does docs/deploy.md say the load balancer forwards to?",
            "docs/deploy.md",
            "The balancer forwards to 8472, the port set in CONFIG.INI.",
        );
        for reply in [
            // The request's own file, by its path or its name.
            "docs/deploy.md says 8472.",
            "deploy.md says 8472.",
            // A file the result mentions (any case).
            "8472, the port config.ini sets.",
            // No file at all.
            "The load balancer forwards to 8472.",
        ] {
            assert!(foreign_files(reply, &conversation).is_empty(), "{reply}");
        }
        // A file a call named, shown by its name only.
        let listed = after_read(
            "Which log under logs/ does notes.md say holds the errors?",
            "logs",
            "server.log\naccess.log\n",
        );
        assert!(foreign_files("logs/server.log holds the errors.", &listed).is_empty());
        let call = ToolCall::new("call_1", "read_file", json!({ "path": "logs/server.log" }));
        let read = Messages::new()
            .appended(Message::user("Does notes.md mention the log?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "Error: not found"));
        assert!(foreign_files("server.log was not found.", &read).is_empty());
    }

    #[test]
    fn a_request_that_names_no_file_may_be_answered_about_any() {
        let conversation = after_read(
            "Earlier you counted the ERROR lines. What number did you get?",
            "notes.md",
            "nothing here",
        );
        assert!(foreign_files(
            "The number of ERROR lines in `logs/server.log` is 34.",
            &conversation
        )
        .is_empty());
        // No request at all.
        assert!(foreign_files("See a.txt.", &Messages::new()).is_empty());
    }

    #[test]
    fn each_foreign_file_is_named_once() {
        let conversation = after_read("What does notes.md say?", "notes.md", "Release: May");
        assert_eq!(
            foreign_files(
                "a.txt and b.csv, and A.TXT again, then notes.md",
                &conversation
            ),
            ["a.txt", "b.csv"]
        );
    }
}
