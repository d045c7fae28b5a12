//! A reply that describes how to use a tool instead of answering: "To add up the hours
//! column, you can use the `read_file` function ...". Small local models write it after the
//! tools ran (issue 36), and also when none has run, in place of the call (issue 32); kept as
//! the answer, the person gets a plan, not a result. The driver answers such a reply with one
//! nudge (`reply_nudge`).

use agents_core::Tools;
use messages::Messages;

use crate::latest_results::{request, text_of, without_last};
use crate::unread_file::names_a_file;
use crate::word_set::WordSet;

/// What the model is told after a reply that is a plan: once per step.
pub(crate) const PLAN_NUDGE: &str = "Your last reply described how to use a tool instead of \
answering. Do not describe tools or calls. Answer the user's question now, in plain text, \
using the tool results above; if a result you need is missing, call the tool.";

/// What the model is told after a reply that is a plan when no tool has run: once per step.
/// A person who asked how something is done gets the same answer again; one who asked for it
/// to be done gets the call.
pub(crate) const CALL_NUDGE: &str = "Your last reply described how a tool could be used, but \
no tool has run for this request. If the request needs a tool, do not describe the call: make \
it now. If the user only asked how something is done, give that answer again.";

/// Phrases that say what someone could do or will do, not what is. "you would call" and
/// the like: in the 32-turn conversation the 1.5B model answered five requests, after reading
/// a file, with "To change the workers from 4 to 6 in `src/utils.py`, you would call the
/// `edit_file` function with ..." (and "To read config.ini again, you would call the
/// `read_file` function ..."), each saved as the answer and copied by the next turn.
const INTENT: [&str; 23] = [
    "you can use",
    "you could use",
    "you need to use",
    "you would use",
    "you should use",
    "you have to use",
    "you can call",
    "you could call",
    "you would call",
    "you should call",
    "you need to call",
    "you would need to",
    "i'll ",
    "i will ",
    "i need to ",
    "we can use",
    "we need to ",
    "let's use",
    "let me use",
    "let me call",
    "here's how",
    "here is how",
    "the steps",
];

/// Every phrase of [`INTENT`] holds one of these words: most answers hold none of them, and
/// are let go after one pass over their bytes, without a lower-cased copy.
static INTENT_WORDS: WordSet<'static> =
    WordSet::new(&["use", "call", "how", "i'll", "i will", "need", "steps"]);

/// "you", in any case: every reply that sends the person off holds it.
pub(crate) static YOU: WordSet<'static> = WordSet::new(&["you"]);

/// Whether `content` is a plan to use one of `tools` or an announcement, not an answer:
/// - it names one of the tools (in backticks, or followed by "function", "tool" or
///   "command") and says what could be or will be done with it ("you can use", "I'll count
///   ... in the output of the `read_file` function", "here's how", ...); a reply that only
///   mentions a tool ("`read_file` shows the port is 8472") is an answer;
/// - or it ends announcing something it does not give: its last line ends with a colon
///   ("Here's the JSON call to read the files:", "Here's how you can do it:"). Small models
///   stop there, expecting the call or the result to follow; no answer ends that way.
///
/// The tool-calling driver asks the model again about such a reply (with text-call
/// recovery on); the ReAct driver asks about a `final_answer` that is one.
///
/// ```
/// use agents_core::{FunctionTool, Tools};
/// use drivers_toolcalling::is_plan_reply;
///
/// let tools = Tools::new().with(FunctionTool::new("read_file", "Reads a file.", |_: serde_json::Value| async {
///     Ok::<_, String>(String::new())
/// }));
/// assert!(is_plan_reply("To get the port, you can use the `read_file` function.", &tools));
/// assert!(is_plan_reply("I'll use the read_file tool to read config.ini.", &tools));
/// assert!(!is_plan_reply("`read_file` shows the port is 8472.", &tools));
/// ```
pub fn is_plan_reply(content: &str, tools: &Tools) -> bool {
    // The names are listed only for a reply that states an intent (every final answer is
    // judged: most say nothing of the kind, and pay for no list; issue 35).
    is_plan_reply_with(content, || tools.names())
}

/// [`is_plan_reply`] for a reply whose tools are known by name only: `tool_names`. The ReAct
/// driver judges its answer on stop so, from the tools its trace shows were called (the
/// request for it offers none).
///
/// ```
/// use drivers_toolcalling::is_plan_reply_naming;
///
/// assert!(is_plan_reply_naming("I'll use `write_file` on notes.txt.", &["write_file"]));
/// assert!(!is_plan_reply_naming("I'll use `write_file` on notes.txt.", &[]));
/// assert!(is_plan_reply_naming("Here is the call to make:", &[]));
/// ```
pub fn is_plan_reply_naming(content: &str, tool_names: &[&str]) -> bool {
    is_plan_reply_with(content, || tool_names)
}

/// [`is_plan_reply_naming`], the names asked for only when the reply states an intent.
fn is_plan_reply_with<'n, N: AsRef<[&'n str]>>(
    content: &str,
    tool_names: impl FnOnce() -> N,
) -> bool {
    if ends_announcing(content) {
        return true;
    }
    if !INTENT_WORDS.in_text(content) {
        return false;
    }
    let lower = content.to_lowercase().replace('\u{2019}', "'");
    if !INTENT.iter().any(|phrase| lower.contains(phrase)) {
        return false;
    }
    names_one_of(&lower, tool_names().as_ref()) || intends_a_command(&lower)
}

/// What the model is told after a reply that tells the person to read a file: once per step.
pub(crate) const READ_IT_NUDGE: &str = "Your last reply told the user to read a file instead of \
answering. You can read files yourself: if the file's content is not in the tool results above, \
call the tool that reads it now; then answer the user's question with what the file says.";

/// How a reply sends the person to do something themselves.
pub(crate) const SEND_OFF: [&str; 11] = [
    "you need to ",
    "you'll need to ",
    "you will need to ",
    "you would need to ",
    "you have to ",
    "you can ",
    "you could ",
    "you should ",
    "you must ",
    "you may ",
    "you might ",
];

/// What follows each send-off ([`SEND_OFF`]) in `lower` (lower-cased text), a leading
/// "first " left out: "you need to first read it" gives "read it". Each caller reads the
/// verb it looks for off the front.
pub(crate) fn after_send_offs(lower: &str) -> impl Iterator<Item = &str> {
    SEND_OFF.iter().flat_map(move |phrase| {
        lower.match_indices(phrase).map(move |(at, _)| {
            let rest = &lower[at + phrase.len()..];
            rest.strip_prefix("first ").unwrap_or(rest)
        })
    })
}

/// What the person is sent to do with a file, after [`SEND_OFF`].
const LOOK_VERBS: [&str; 12] = [
    "read ",
    "open ",
    "check ",
    "look at ",
    "look in ",
    "look into ",
    "refer to ",
    "consult ",
    "view ",
    "inspect ",
    "examine ",
    "see ",
];

/// Whether `content` is one sentence that sends the person to read a file instead of
/// answering: "To find the workers value, you need to read the `notes.md` file." In issue
/// 32's 32-turn conversation the 1.5B model answered "What pool_size does config.ini set?"
/// so after reading a file, and that reply, saved as the answer, was copied into three later
/// answers about other files. A file an agent can read is its to read. An answer that gives
/// the value and then says where to find it ("The port is 8472. You can check it in
/// config.ini.") is more than one sentence, and one that goes on after the file ("You can
/// check config.ini, which sets 8472.") does not end its sentence with the file's clause: both
/// are answers. Whether the request asked how or where is the caller's to judge.
pub(crate) fn points_to_a_file(content: &str) -> bool {
    let content = content.trim();
    if !YOU.in_text(content) {
        return false;
    }
    let lower = content.to_lowercase().replace('\u{2019}', "'");
    // One sentence: no sentence ends before its last character.
    let body = lower.trim_end_matches(['.', '!']);
    if body.contains('\n')
        || [". ", "! ", "? ", ": "]
            .iter()
            .any(|end| body.contains(end))
    {
        return false;
    }
    lower.match_indices("you").any(|(at, _)| {
        let word_start = lower[..at]
            .chars()
            .next_back()
            .is_none_or(|before| !before.is_alphanumeric());
        word_start
            && SEND_OFF
                .iter()
                .filter_map(|phrase| lower[at..].strip_prefix(phrase))
                .any(|rest| {
                    let rest = rest.strip_prefix("first ").unwrap_or(rest);
                    LOOK_VERBS
                        .iter()
                        .filter_map(|verb| rest.strip_prefix(verb))
                        // The file closes the sentence: nothing follows its clause.
                        .any(|object| !object.contains([',', ';']) && names_a_file(object))
                })
    })
}

/// Whether `content` is a how-to that sends the person to do with a tool what the agent
/// could do itself: it begins with a purpose ("To find ...") and its first sentence goes on
/// with a send-off ([`SEND_OFF`]: "you can", "you need to", ...) followed by the verb of one
/// of `tools` (the first word of its name: `search` for `search_files`, `read` for
/// `read_file`). In issue 32's 32-turn conversation (legacy mode, with the seventh file tool
/// in the request), the 1.5B model answered "When is the next release planned, according to
/// notes.md?" with "To find the next release planned, you can search for the line that
/// specifies the next release date in the notes.md file." and no call, and that reply, saved
/// as the answer, set the shape of every later answer but four. It names no tool, so
/// [`is_plan_reply`] let it pass. An answer that gives the value first ("The release is on
/// December 4. To move it, you can edit notes.md.") does not begin with the purpose, and one
/// that says what it did ("To find the port, I searched config.ini: 8472.") sends nobody
/// off. Whether the request asked how is the caller's to judge.
pub(crate) fn sends_off_to_a_tool(content: &str, tools: &Tools) -> bool {
    let content = content.trim_start();
    let purpose = content
        .get(..3)
        .is_some_and(|start| start.eq_ignore_ascii_case("to "));
    if !purpose || !YOU.in_text(content) {
        return false;
    }
    // Only the first sentence is read, so only it is lower-cased.
    let first_sentence = content
        .split([':', '\n', '!', '?'])
        .next()
        .and_then(|start| start.split(". ").next())
        .unwrap_or_default()
        .to_lowercase()
        .replace('\u{2019}', "'");
    let names = tools.names();
    let sent_to_a_tool = after_send_offs(&first_sentence).any(|rest| {
        let verb = rest
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default();
        !verb.is_empty()
            && names.iter().any(|name| {
                name.split(['_', '-'])
                    .next()
                    .is_some_and(|first| first.eq_ignore_ascii_case(verb))
            })
    });
    sent_to_a_tool
}

/// Whether `request` asks how something is done or where it is ("How do I run the tests?",
/// "Where is the port set?"): then a reply that sends the person to a file may be the answer.
/// "How many" and "how much" ask for a value.
/// Whether `reply`, asked for as the answer on stop with `input` (the conversation, then the
/// loop's instruction), is a plan to use one of the tools its calls used
/// ([`is_plan_reply_naming`]) for a request that does not ask how or where something is. The
/// request for it offers no tools, so the names are those of the calls it shows. In the eval
/// (development task d6, after the model copied its system prompt four times), the 1.5B
/// model's answer on stop was "To list the files in the fruits directory, you can use the
/// `list_dir` function.", saved as the answer where the listing had come back.
pub(crate) fn plan_on_stop(input: &Messages, reply: &str) -> bool {
    let seen = without_last(input);
    let mut called: Vec<&str> = Vec::new();
    for call in seen.iter().flat_map(|message| message.tool_calls()) {
        if !called.contains(&call.name()) {
            called.push(call.name());
        }
    }
    is_plan_reply_naming(reply, &called)
        && !request(&seen).is_some_and(|request| asks_how_or_where(&text_of(request)))
}

pub(crate) fn asks_how_or_where(request: &str) -> bool {
    static HOW_OR_WHERE: WordSet<'static> = WordSet::new(&[
        "how do",
        "how can",
        "how should",
        "how would",
        "how to",
        "where",
    ]);
    HOW_OR_WHERE.in_text(request)
}

/// Words for what the file tools act on, after an intent phrase: work announced on them is
/// not done.
const FILE_WORDS: [&str; 6] = [
    "file",
    "files",
    "directory",
    "directories",
    "folder",
    "folders",
];

/// How far after an intent phrase [`intends_a_command`] looks, in bytes.
const INTENT_REACH: usize = 48;

/// Whether an intent phrase of `lower` is followed closely, in the same clause, by
/// "command", "tool", "function" or "file": "you can use the following command:" and a shell
/// block, after the tools already did the work (the 1.5B model on development task d23),
/// names no tool of the agent but is still a how-to, not an answer; "I'll search through the
/// lines of each file. Here's the step-by-step process:", after only listing the folder, went
/// on with what each file holds, made up (development task d3): work announced is not done.
fn intends_a_command(lower: &str) -> bool {
    INTENT.iter().any(|phrase| {
        lower.match_indices(phrase).any(|(at, _)| {
            let start = at + phrase.len();
            let mut end = (start + INTENT_REACH).min(lower.len());
            while !lower.is_char_boundary(end) {
                end -= 1;
            }
            let after = &lower[start..end];
            // Within the same clause: "I'll remind you: the functions are ..." is not one.
            let clause = after
                .split(['.', ',', ';', ':', '!', '?', '\n'])
                .next()
                .unwrap_or_default();
            ["command", "tool", "function"]
                .iter()
                .any(|word| clause.contains(word))
                // "file" as a word: `write_file` names a tool, which the caller judges;
                // a folder is one too ("I'll need to create the `data` directory and add
                // `a.txt` and `b.txt` to it", saved as the answer of d10 at a230719)
                || clause
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|word| FILE_WORDS.contains(&word))
        })
    })
}

/// Whether the last line of `content` ends with a colon: it announces something (a call, a
/// result, a list) that is not there.
pub(crate) fn ends_announcing(content: &str) -> bool {
    content.trim_end().ends_with(':')
}

/// Whether `lower` (lower-cased text) names one of `tools`: in backticks, or followed by
/// "function", "tool" or "command".
pub(crate) fn names_a_tool(lower: &str, tools: &Tools) -> bool {
    names_one_of(lower, &tools.names())
}

/// Whether `lower` (lower-cased text) names one of the tools called `names` (see
/// [`names_a_tool`]).
fn names_one_of(lower: &str, names: &[&str]) -> bool {
    names.iter().any(|name| {
        let name = name.to_lowercase();
        lower.contains(&format!("`{name}`"))
            || [" function", " tool", " command"]
                .iter()
                .any(|word| lower.contains(&format!("{name}{word}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::FunctionTool;

    fn tools() -> Tools {
        Tools::new().with(FunctionTool::new(
            "read_file",
            "Reads a file.",
            |_: serde_json::Value| async move { Ok::<_, String>(String::new()) },
        ))
    }

    #[test]
    fn a_purpose_then_a_send_off_to_a_tool_verb_is_a_how_to() {
        let named = |names: &[&'static str]| {
            names.iter().fold(Tools::new(), |tools, name| {
                tools.with(FunctionTool::new(
                    *name,
                    "A tool.",
                    |_: serde_json::Value| async move { Ok::<_, String>(String::new()) },
                ))
            })
        };
        let tools = named(&["read_file", "search_files", "list_dir", "edit_file"]);
        for plan in [
            // Issue 32's 32-turn conversation, legacy mode, turns 3 and 4.
            "To find the next release planned, you can search for the line that specifies the \
             next release date in the notes.md file. Here's a sample JSON response for each \
             step:\n```\nTo find the next release planned, you can search for the line.\n```",
            "To find the customer who placed order 1042, you can search for the line that \
             contains the order number in the data/orders.csv file.",
            "to get the port you need to first read config.ini",
            "To see the Python files, you\u{2019}ll need to list the src directory.",
            "To change it, you can Edit the file: set workers = 6.",
        ] {
            assert!(sends_off_to_a_tool(plan, &tools), "{plan}");
        }
        for answer in [
            // The value first, then where to change it.
            "The release is planned for December 4. To move it, you can edit notes.md.",
            // What the agent did, in the first person.
            "To find the port, I searched config.ini: it is 8472.",
            // Turn 1 of the same conversation: a how-to, then the value found (an answer).
            "To find the port configured for the server, search for the line that contains \
             \"port\". In the provided output, the line is:\n```\nport = 8472\n```",
            // A send-off after the first sentence.
            "To be precise: the port is 8472. You can read config.ini to check.",
            // A verb no tool has.
            "To find it, you can ask the release owner, Dana.",
            "",
        ] {
            assert!(!sends_off_to_a_tool(answer, &tools), "{answer}");
        }
        // Without a tool of that verb, nothing is sent to a tool.
        assert!(!sends_off_to_a_tool(
            "To find it, you can search notes.md.",
            &named(&["read_file"])
        ));
    }

    #[test]
    fn a_plan_on_stop_names_a_tool_the_calls_used_for_a_request_to_do_it() {
        use messages::{Message, ToolCall};
        let input = |request: &str| -> Messages {
            let call = ToolCall::new("c1", "list_dir", serde_json::json!({"path": "fruits"}));
            vec![
                Message::user(request),
                Message::assistant_tool_calls([call]),
                Message::tool_result("c1", "list_dir", "[file] apple.txt (4 bytes)"),
                Message::user("Answer the request from the results above."),
            ]
            .into_iter()
            .collect()
        };
        let plan =
            "To list the files in the fruits directory, you can use the `list_dir` function.";
        let asked = input("List the files in the fruits directory.");
        assert!(plan_on_stop(&asked, plan));
        assert!(!plan_on_stop(
            &asked,
            "The fruits directory holds apple.txt (4 bytes)."
        ));
        // a person who asked how gets the how
        assert!(!plan_on_stop(
            &input("How do I list the files in the fruits directory?"),
            plan
        ));
    }

    #[test]
    fn plans_to_use_a_tool_are_plans() {
        for reply in [
            "To add up the hours column of `timesheet.csv`, you can use the `read_file` function to read it.",
            "To find the total, I'll use the read_file function on both files.",
            "Here's how you can do it: call `read_file` with the path.",
            "YOU CAN USE THE `READ_FILE` FUNCTION to read it.",
            // The 1.5B model's replies on the development half, saved as answers.
            "To answer this question, I'll count the number of lines containing the word \"error\" in the output of the `read_file` function.\n",
            "To determine if debug mode is enabled in `config.yaml`, you can search for the line containing the `debug` setting. Here's how you can do it:\n",
            "To answer this question, I need to look at the file `report.txt` in the workspace. Here's the result of the `read_file` function call:\n",
            "Here's the JSON call to read the files:",
            // Development task d23, after `write_file` made the file: a shell how-to.
            "To create a folder named reports containing a file summary.txt with the line: all good, you can use the following command:\n\n```sh\nmkdir -p reports\necho \"all good\" > reports/summary.txt\n```\n\nThis command creates the `reports` directory if it doesn't exist.",
            "I'll run the grep command on the log.",
            // Development task d3, after `list_dir` only: the search announced, then imagined.
            "To find files that mention \"zeppelin\", I'll search through the lines of each file. Here's the step-by-step process:\n\n1. **Search for \"zeppelin\" in each file**:\n   - alpha.txt: No match\n   - bravo.txt: No match\n\nTherefore, no file mentions a zeppelin.",
            // The 32-turn conversation at 52c145d, after `read_file` had run.
            "To read config.ini again, you would call the `read_file` function with the path to `config.ini`.",
            "To get the port, you should call the read_file tool with the path config.ini.",
            // Development task d10 at a230719, after `list_dir` of a missing folder failed.
            "The error message indicates that the `data` directory does not exist in the workspace. To find the sum of the numbers in `a.txt` and `b.txt`, I'll need to create the `data` directory and add `a.txt` and `b.txt` to it.",
            "I will make a new folder for the notes.",
        ] {
            assert!(is_plan_reply(reply, &tools()), "{reply}");
        }
    }

    #[test]
    fn answers_are_not_plans_even_when_they_name_a_tool() {
        for reply in [
            "The port is 8472.",
            "`read_file` shows the port is 8472.",
            "You can use port 8472 to connect.",
            "To connect, you can use the address in config.ini: 10.0.0.1.",
            "I'll note that the port is 8472.",
            "You can use port 8472 to connect; the command line flag is --port.",
            "I'll remind you: the functions are in src/lib.rs.",
            "The data directory holds a.txt and b.txt; their sum is 42.",
            "I'll say it plainly: the folder is empty.",
            "The port is 8472, as you would call it in the client.",
            "The files are: a.txt, b.txt.",
            "Note: the port is 8472.",
            "",
        ] {
            assert!(!is_plan_reply(reply, &tools()), "{reply}");
        }
    }

    #[test]
    fn a_sentence_sending_the_person_to_read_a_file_points_to_it() {
        for reply in [
            // The 32-turn conversation at 32bbf26 (turns 21, 24, 26, 27), after a file read.
            "To find the workers value, you need to read the `notes.md` file.",
            "You can open src/app.py to see it.",
            "To get the port, you\u{2019}ll need to check config.ini",
            "You should first look at logs/server.log!",
            "YOU CAN REFER TO README.md.",
        ] {
            assert!(points_to_a_file(reply), "{reply}");
        }
    }

    #[test]
    fn answers_saying_where_a_value_is_do_not_point_to_a_file() {
        for reply in [
            // The value, then where it is: two sentences.
            "The port is 8472. You can check it in config.ini.",
            "The port is 8472.\nYou can check it in config.ini.",
            // The sentence goes on after the file.
            "You can check config.ini, which sets the port to 8472.",
            "You can see in config.ini: the port is 8472.",
            // No file, or not a look.
            "You need to read the manual.",
            "To change the port, you need to edit config.ini.",
            "To connect, you can use the address in config.ini: 10.0.0.1.",
            "Bayou can read notes.md",
            "The port is 8472.",
            "",
        ] {
            assert!(!points_to_a_file(reply), "{reply}");
        }
    }
}
