//! A reply that repeats an earlier answer of the conversation, given to a different request,
//! is asked about once (issue 32). In the long-conversation benchmark the 1.5B model answers
//! from the conversation's earlier answers instead of the request: in separated mode "In
//! config.ini, change workers from 4 to 6." got "The default port configured for the server is
//! 8472.", a line of the answer before it, and in legacy mode six turns in a row got turn 6's
//! "The port you found in `config.ini` earlier was `8472`". Such a reply gets one nudge, which
//! quotes the latest request. The model's reply to it counts only if it makes a call or is not
//! a repeat itself: a follow-up may rightly repeat an earlier answer ("What was the port you
//! found earlier?"), and asked about it, the 1.5B model replied with another earlier answer,
//! a wrong one, which then became every later answer. The nudge's text and the check are
//! here, the decision in `reply_nudge`.
//!
//! A copy of an answer the loop made when an earlier request stopped unfinished (marked
//! [`INCOMPLETE_KEY`]) is never an answer: in separated mode the synthesized "I'm sorry, but I
//! cannot answer your question as I do not have the information you need to provide." of one
//! stopped turn became the answer of eight later turns, four of them after their tool had run
//! (docs/long-horizon.md, session 20). Such a copy is asked about once, with those answers
//! left out of the request that asks ([`without_stop_answers`]), and a copy that follows its
//! nudge is not saved. A reply that opens with a stop answer's first sentence is such a copy
//! too: in the next run the stopped turn's "I'm sorry, but I don't have enough information to
//! answer your question. The text you provided does not contain any information about the
//! port number ..." came back as the opening of seven later answers, each about another file.
//! And so is a reply that shares [`COPIED_RUN_WORDS`] words in a row with a stop answer: with
//! the opening refused, the run after it (session 22) answered "I apologize, but I don't have
//! enough information to answer your question. The text you provided does not contain any
//! information about the port number for the server configuration." to eight later requests:
//! one word changed, the rest the stop answer's.

use std::collections::HashSet;
use std::sync::OnceLock;

use agents_core::INCOMPLETE_KEY;
use messages::{Message, Messages, Role};

use crate::reply_prefix::compared_prefix;

/// What the model is told after a reply that repeats an earlier answer, before the latest
/// request is quoted.
const REPEATED_ANSWER_NUDGE: &str = "Your reply repeats what you answered to an earlier, \
different request of this conversation. Answer the latest request: if it needs a tool, call \
the tool now; if your reply does answer it, send your reply again. The latest request is: ";

/// How much of the latest request the nudge quotes.
const MAX_QUOTED_REQUEST_BYTES: usize = 1024;

/// The shortest repeat that counts, in bytes of normalized text (about five words): a short
/// answer ("8472", "yes") is often rightly the same for two requests.
const MIN_REPEAT_BYTES: usize = 24;

/// How many words in a row a reply must share with an answer made on a stop to be a copy of
/// it: a sentence's worth ("but I don't have enough information to answer your question" is
/// eleven). A reply that rightly restates a fact of such an answer ("The port is 8472.")
/// shares fewer.
const COPIED_RUN_WORDS: usize = 8;

/// How many earlier answers are compared, newest first.
const EARLIER_ANSWERS: usize = 16;

/// How many messages back the earlier answers are looked for: the cost of a step stays
/// bounded however long the history is.
const LOOK_BACK_MESSAGES: usize = 256;

/// The earlier answers of a conversation that were given to requests other than its latest
/// one, looked for the first time a reply could repeat one: a reply shorter than
/// [`MIN_REPEAT_BYTES`] (most tool-step replies, and every short answer) never reads the
/// history.
#[derive(Debug, Default)]
pub(crate) struct EarlierAnswers {
    found: OnceLock<Found>,
}

/// The earlier answers, normalized (lower case, words separated by one space, punctuation
/// dropped) and padded with a space on each side (so a match is whole words), and the latest
/// request as written.
#[derive(Debug, Default)]
struct Found {
    answers: Vec<String>,
    /// Those of `answers` the loop made on a stop (see [`is_stop_answer`]).
    stop_answers: Vec<StopAnswer>,
    /// Every run of [`COPIED_RUN_WORDS`] words of `stop_answers`, normalized.
    stop_runs: HashSet<String>,
    request: String,
}

impl EarlierAnswers {
    /// What the model is told after a repeat: the nudge and the latest request of
    /// `conversation`, quoted.
    pub(crate) fn nudge(&self, conversation: &Messages) -> String {
        let request = self.found(conversation).request.trim();
        let quoted = &request[..request.floor_char_boundary(MAX_QUOTED_REQUEST_BYTES)];
        format!("{REPEATED_ANSWER_NUDGE}\"{quoted}\"")
    }

    /// Whether `reply` repeats one of the earlier answers of `conversation`: the same text, a
    /// part of one at least [`MIN_REPEAT_BYTES`] long, or one of them whole (as long) inside
    /// the reply, compared word by word after normalizing.
    pub(crate) fn repeated_by(&self, conversation: &Messages, reply: &str) -> bool {
        if too_short_to_repeat(reply) {
            return false;
        }
        let reply = normalized(compared_prefix(reply));
        // Both sides of a repeat are at least this long: a shorter reply is not one, and the
        // history need not be read.
        if reply.len() < MIN_REPEAT_BYTES {
            return false;
        }
        let answers = &self.found(conversation).answers;
        if answers.is_empty() {
            return false;
        }
        repeats_one_of(answers, &reply)
    }

    /// Whether `reply` repeats (as [`EarlierAnswers::repeated_by`] judges) one of the answers
    /// of `conversation` that the loop made when an earlier request stopped unfinished, opens
    /// with the first sentence of one (at least [`MIN_REPEAT_BYTES`] normalized), or shares
    /// [`COPIED_RUN_WORDS`] words in a row with one.
    pub(crate) fn copies_a_stop_answer(&self, conversation: &Messages, reply: &str) -> bool {
        if too_short_to_repeat(reply) {
            return false;
        }
        let reply = compared_prefix(reply);
        let normalized_reply = normalized(reply);
        if normalized_reply.len() < MIN_REPEAT_BYTES {
            return false;
        }
        let found = self.found(conversation);
        if found.stop_answers.is_empty() {
            return false;
        }
        let opening = normalized(first_sentence(reply));
        found.stop_answers.iter().any(|stop| {
            (opening.len() >= MIN_REPEAT_BYTES && opening == stop.opening)
                || repeats_one_of(std::slice::from_ref(&stop.whole), &normalized_reply)
        }) || word_runs(&normalized_reply).any(|run| found.stop_runs.contains(run))
    }

    fn found(&self, conversation: &Messages) -> &Found {
        self.found.get_or_init(|| Found::of(conversation))
    }
}

/// Whether `reply` is shorter than [`MIN_REPEAT_BYTES`] once normalized, known without
/// normalizing it: normalizing ASCII text never lengthens it ("42", "Yes, it is off." are let
/// go at once). Other text may grow when lower-cased, and is normalized to be sure.
fn too_short_to_repeat(reply: &str) -> bool {
    reply.len() < MIN_REPEAT_BYTES && reply.is_ascii()
}

/// Whether `reply` (normalized, at least [`MIN_REPEAT_BYTES`] long) is inside one of
/// `answers` (normalized and padded), or holds one of them whole.
fn repeats_one_of(answers: &[String], reply: &str) -> bool {
    if answers.is_empty() {
        return false;
    }
    let padded_reply = format!(" {reply} ");
    answers.iter().any(|answer| {
        answer.len() >= MIN_REPEAT_BYTES + 2
            && (answer.contains(&padded_reply) || padded_reply.contains(answer.as_str()))
    })
}

/// An answer made on a stop, as a reply is compared with it: whole (normalized and padded, as
/// in `Found::answers`) and its first sentence (normalized).
#[derive(Debug)]
struct StopAnswer {
    whole: String,
    opening: String,
}

/// The first sentence of `text`, without its closing mark: up to the first `.`, `!` or `?`
/// followed by white space, or to the end of the first line, whichever comes first (a `.`
/// inside a number or a file name does not end it).
fn first_sentence(text: &str) -> &str {
    let text = text.trim_start();
    let line = text.lines().next().unwrap_or_default();
    let end = line
        .char_indices()
        .zip(line.chars().skip(1))
        .find(|((_, c), next)| matches!(c, '.' | '!' | '?') && next.is_whitespace())
        .map_or(line.len(), |((at, _), _)| at);
    line[..end].trim_end_matches(['.', '!', '?'])
}

/// Whether `message` is an answer the loop appended because its execution stopped without
/// one (the answer on stop: synthesized or a notice).
fn is_stop_answer(message: &Message) -> bool {
    message.role() == Role::Assistant
        && message.tool_calls().is_empty()
        && message.metadata().get(INCOMPLETE_KEY) == Some(&serde_json::Value::Bool(true))
}

/// `conversation` without the answers the loop made on a stop: the request that asks about a
/// copy of one does not show the model what it copied.
pub(crate) fn without_stop_answers(conversation: &Messages) -> Messages {
    if !conversation.iter().any(is_stop_answer) {
        return conversation.clone();
    }
    conversation.filter(|message| !is_stop_answer(message))
}

impl Found {
    /// The answers of `conversation` before its latest user message (the request): assistant
    /// messages with text and no tool calls, newest first, each unless the user message it
    /// answered is the same request again.
    fn of(conversation: &Messages) -> Self {
        let mut messages = conversation.iter().rev().take(LOOK_BACK_MESSAGES);
        let Some(request) = messages.by_ref().find(|m| m.role() == Role::User) else {
            return Self::default();
        };
        let written = request.text();
        let request = normalized(&written);
        let mut answers = Vec::new();
        let mut stop_answers = Vec::new();
        // The answers seen since the last user message, waiting to learn what they answered,
        // each with its first sentence when the loop made it on a stop.
        let mut pending: Vec<(String, Option<String>)> = Vec::new();
        for message in messages {
            match message.role() {
                Role::Assistant if message.tool_calls().is_empty() => {
                    let text = message.text();
                    let answer = normalized(&text);
                    if !answer.is_empty() {
                        let opening = is_stop_answer(message)
                            .then(|| normalized(first_sentence(compared_prefix(&text))));
                        pending.push((format!(" {answer} "), opening));
                    }
                }
                Role::User => {
                    if normalized(&message.text()) != request {
                        for (answer, opening) in pending.drain(..) {
                            if let Some(opening) = opening {
                                stop_answers.push(StopAnswer {
                                    whole: answer.clone(),
                                    opening,
                                });
                            }
                            answers.push(answer);
                        }
                    }
                    pending.clear();
                    if answers.len() >= EARLIER_ANSWERS {
                        break;
                    }
                }
                _ => {}
            }
        }
        answers.truncate(EARLIER_ANSWERS);
        stop_answers.truncate(EARLIER_ANSWERS);
        let stop_runs = stop_answers
            .iter()
            .flat_map(|stop| word_runs(stop.whole.trim()).map(str::to_owned))
            .collect();
        Self {
            answers,
            stop_answers,
            stop_runs,
            request: written,
        }
    }
}

/// Every run of [`COPIED_RUN_WORDS`] consecutive words of `normalized` text (words separated
/// by one space), as slices of it, in order; none when it has fewer words.
fn word_runs(normalized: &str) -> impl Iterator<Item = &str> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(normalized.match_indices(' ').map(|(at, _)| at + 1))
        .collect();
    let ends: Vec<usize> = normalized
        .match_indices(' ')
        .map(|(at, _)| at)
        .chain(std::iter::once(normalized.len()))
        .collect();
    let runs = if normalized.is_empty() {
        0
    } else {
        (starts.len() + 1).saturating_sub(COPIED_RUN_WORDS)
    };
    (0..runs).map(move |first| &normalized[starts[first]..ends[first + COPIED_RUN_WORDS - 1]])
}

/// `text` in lower case, its words (letters, digits, `_`, `.` inside a number or a file name)
/// separated by one space.
pub(crate) fn normalized(text: &str) -> String {
    if text.is_ascii() {
        return normalized_ascii(text);
    }
    normalized_unicode(text)
}

/// [`normalized`] for ASCII text: ASCII tests for letters and digits and one lower-casing of
/// the whole result, where a Unicode test and a lower-cased copy per character cost about 70
/// instructions a byte on every reply judged (most replies are ASCII).
fn normalized_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let words = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|word| word.trim_matches('.'))
        .filter(|word| !word.is_empty());
    for word in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.make_ascii_lowercase();
    out
}

/// [`normalized`] for any text.
fn normalized_unicode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|word| word.trim_matches('.'))
        .filter(|word| !word.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.is_ascii() {
            // The common case, without a char-by-char Unicode lower-casing.
            let start = out.len();
            out.push_str(word);
            out[start..].make_ascii_lowercase();
        } else {
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::{Message, ToolCall};
    use serde_json::json;

    const PORT_ANSWER: &str = "To find the default port, I will look for the line that mentions \
        \"default port\". The relevant line is: \"The default port configured for the server is \
        8472.\" Therefore, the default port is 8472.";

    /// A conversation and its earlier answers, as a step's nudges hold them.
    struct Earlier {
        conversation: Messages,
        answers: EarlierAnswers,
    }

    impl Earlier {
        fn of(conversation: &Messages) -> Self {
            Self {
                conversation: conversation.clone(),
                answers: EarlierAnswers::default(),
            }
        }

        fn repeated_by(&self, reply: &str) -> bool {
            self.answers.repeated_by(&self.conversation, reply)
        }

        fn nudge(&self) -> String {
            self.answers.nudge(&self.conversation)
        }
    }

    fn conversation(turns: &[(&str, &str)], request: &str) -> Messages {
        let mut messages = Messages::new().appended(Message::system("You are helpful."));
        for (question, answer) in turns {
            messages = messages
                .appended(Message::user(*question))
                .appended(Message::assistant(*answer));
        }
        messages.appended(Message::user(request))
    }

    #[test]
    fn a_first_sentence_ends_at_a_stop_followed_by_space_or_at_the_line_end() {
        assert_eq!(
            first_sentence("  The version is 3.0.3. It is pinned."),
            "The version is 3.0.3"
        );
        assert_eq!(first_sentence("Is it on? No."), "Is it on");
        assert_eq!(first_sentence("Done!\nMore."), "Done");
        assert_eq!(
            first_sentence("no stop at all\nsecond line"),
            "no stop at all"
        );
        assert_eq!(first_sentence("ends at app.py"), "ends at app.py");
        assert_eq!(first_sentence(""), "");
    }

    #[test]
    fn a_reply_opening_with_a_stop_answers_first_sentence_copies_it() {
        // Session 21's separated run: turn 12's stop answer came back as the opening of seven
        // later answers, each about another file.
        let opening = "I'm sorry, but I don't have enough information to answer your question.";
        let stopped = Message::assistant(format!(
            "{opening} The text you provided does not contain any information about the port."
        ))
        .with_metadata(INCOMPLETE_KEY, true);
        let conversation = Messages::new()
            .appended(Message::user("In config.ini, change workers from 4 to 6."))
            .appended(stopped)
            .appended(Message::user("What does RELEASE.txt contain?"));
        let earlier = Earlier::of(&conversation);
        let copy = format!(
            "{opening} The text you provided does not contain any information about RELEASE.txt."
        );
        assert!(earlier.answers.copies_a_stop_answer(&conversation, &copy));
        assert!(
            !earlier.repeated_by(&copy),
            "not a repeat of the whole answer"
        );
        // The same opening after an ordinary answer is no copy of a stop answer; a reply
        // sharing only a short opening ("The port is 8472.") is none either.
        let ordinary = Messages::new()
            .appended(Message::user("What is the admin password?"))
            .appended(Message::assistant(format!("{opening} Nothing names one.")))
            .appended(Message::user("And the database password?"));
        assert!(!EarlierAnswers::default().copies_a_stop_answer(&ordinary, &copy));
        let short = Messages::new()
            .appended(Message::user("Which port?"))
            .appended(
                Message::assistant("The port is 8472. I could not check the rest.")
                    .with_metadata(INCOMPLETE_KEY, true),
            )
            .appended(Message::user("Which port does deploy.md name?"));
        assert!(!EarlierAnswers::default()
            .copies_a_stop_answer(&short, "The port is 8472. It forwards to the service."));
    }

    #[test]
    fn a_reply_sharing_eight_words_in_a_row_with_a_stop_answer_copies_it() {
        // Session 22's separated run: with the opening refused, eight later answers changed
        // its first words and kept the rest.
        let stopped = Message::assistant(
            "I'm sorry, but I don't have enough information to answer your question. The text \
             you provided does not contain any information about the port number for the \
             server configuration.",
        )
        .with_metadata(INCOMPLETE_KEY, true);
        let conversation = Messages::new()
            .appended(Message::user("In config.ini, change workers from 4 to 6."))
            .appended(stopped)
            .appended(Message::user(
                "Read config.ini again: what is the workers value now?",
            ));
        let answers = EarlierAnswers::default();
        for copy in [
            "I apologize, but I don't have enough information to answer your question. The \
             text you provided does not contain any information about the port number for the \
             server configuration.",
            "I apologize, but I don't have enough information to answer your question. The \
             file holds no workers line.",
            "Sadly the text you provided does not contain any information about workers.",
        ] {
            assert!(answers.copies_a_stop_answer(&conversation, copy), "{copy}");
        }
        // Seven words in a row, or the same words in another order, are no copy.
        for answer in [
            "The workers value now is 6: I don't have enough information about threads.",
            "The workers value is 6, and the text of config.ini names the port 8472.",
        ] {
            assert!(
                !answers.copies_a_stop_answer(&conversation, answer),
                "{answer}"
            );
        }
    }

    #[test]
    fn word_runs_are_every_eight_consecutive_words() {
        let runs: Vec<&str> = word_runs("a b c d e f g h i j").collect();
        assert_eq!(
            runs,
            ["a b c d e f g h", "b c d e f g h i", "c d e f g h i j"]
        );
        assert_eq!(word_runs("a b c d e f g").count(), 0);
        assert_eq!(word_runs("").count(), 0);
        assert_eq!(
            word_runs("a b c d e f g h").collect::<Vec<_>>(),
            ["a b c d e f g h"]
        );
    }

    #[test]
    fn an_earlier_answer_or_a_line_of_it_given_to_another_request_is_a_repeat() {
        // Issue 32's separated run, turns 11 to 13 (1.5B model).
        let earlier = Earlier::of(&conversation(
            &[(
                "What default port does parse_port in src/utils.py fall back to?",
                PORT_ANSWER,
            )],
            "In config.ini, change workers from 4 to 6.",
        ));
        assert!(earlier.repeated_by("The default port configured for the server is 8472."));
        assert!(earlier.repeated_by(PORT_ANSWER));
        assert!(earlier
            .nudge()
            .ends_with("The latest request is: \"In config.ini, change workers from 4 to 6.\""));
        // An earlier answer whole inside a longer reply.
        let earlier = Earlier::of(&conversation(
            &[
                ("Which port?", PORT_ANSWER),
                (
                    "In config.ini, change workers from 4 to 6.",
                    "The default port configured for the server is 8472.",
                ),
            ],
            "How many workers did you just set in config.ini?",
        ));
        assert!(earlier.repeated_by(
            "To find the number of workers, I will look for the line that mentions \"workers\". \
             The relevant line is: \"The default port configured for the server is 8472.\""
        ));
    }

    #[test]
    fn new_answers_short_answers_and_the_same_request_again_are_not_repeats() {
        let earlier = Earlier::of(&conversation(
            &[
                ("Which port does config.ini set?", "The port is 8472."),
                (
                    "Which host?",
                    "The host configured in config.ini is build.internal.",
                ),
            ],
            "How many workers does config.ini set?",
        ));
        assert!(!earlier.repeated_by("config.ini sets 4 workers."));
        // Short answers may rightly be the same for two requests.
        assert!(!earlier.repeated_by("The port is 8472."));
        // A word of an earlier answer is not a repeat: "build.internal" is, "internal" alone
        // inside it is not.
        assert!(!earlier.repeated_by("The value is internal to the configured build."));
        // The user asking the same again gets the same answer.
        let again = Earlier::of(&conversation(
            &[(
                "Which host?",
                "The host configured in config.ini is build.internal.",
            )],
            "Which host?",
        ));
        assert!(!again.repeated_by("The host configured in config.ini is build.internal."));
        // A first request has nothing to repeat.
        assert!(!Earlier::of(&conversation(&[], "Hi")).repeated_by(PORT_ANSWER));
    }

    #[test]
    fn calls_and_their_results_are_not_answers_and_the_running_execution_is_not_earlier() {
        let call = ToolCall::new("call_1", "read_file", json!({"path": "config.ini"}));
        let text = "The port configured in config.ini is 8472 for the server.";
        let conversation = Messages::new()
            .appended(Message::user("Which port?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, text))
            .appended(Message::user("Which host?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, text));
        // Repeating a tool result is reading it, not repeating an answer.
        assert!(!Earlier::of(&conversation).repeated_by(text));
    }

    #[test]
    fn the_look_back_is_bounded() {
        let mut turns = Vec::new();
        for n in 0..200 {
            turns.push((
                format!("question {n}"),
                format!("the answer number {n} is long enough"),
            ));
        }
        let borrowed: Vec<(&str, &str)> = turns
            .iter()
            .map(|(q, a)| (q.as_str(), a.as_str()))
            .collect();
        let earlier = Earlier::of(&conversation(&borrowed, "a new question"));
        assert_eq!(
            earlier.answers.found(&earlier.conversation).answers.len(),
            EARLIER_ANSWERS
        );
        assert!(earlier.repeated_by("the answer number 199 is long enough"));
        assert!(!earlier.repeated_by("the answer number 3 is long enough"));
    }

    #[test]
    fn a_reply_too_short_to_be_a_repeat_does_not_read_the_history() {
        let earlier = Earlier::of(&conversation(
            &[("Which port?", PORT_ANSWER)],
            "Did the tool run?",
        ));
        assert!(!earlier.repeated_by("The tool said ok."));
        assert!(
            earlier.answers.found.get().is_none(),
            "a 16-byte reply looked the earlier answers up"
        );
        assert!(earlier.repeated_by(PORT_ANSWER));
        assert!(earlier.answers.found.get().is_some());
    }

    proptest::proptest! {
        #[test]
        fn ascii_text_is_normalized_byte_by_byte_as_char_by_char(
            text in "[a-zA-Z0-9_. ,!?'()\n-]{0,60}",
        ) {
            proptest::prop_assert_eq!(normalized_ascii(&text), normalized_unicode(&text));
            proptest::prop_assert!(normalized(&text).len() <= text.len());
        }
    }

    #[test]
    fn normalizing_ascii_and_other_text_lowers_case_alike() {
        assert_eq!(normalized("The PORT is 8472."), "the port is 8472");
        assert_eq!(normalized("Ünïcode ÄND ascii"), "ünïcode änd ascii");
        assert_eq!(
            normalized("..config.INI, (notes.md)!"),
            "config.ini notes.md"
        );
    }
}
