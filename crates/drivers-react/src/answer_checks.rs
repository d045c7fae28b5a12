//! The questions the ReAct driver asks about a `final_answer` before it is the answer, each
//! kind at most once per step: a plan to use a tool instead of an answer; an answer to a
//! request for a change to files when every call that succeeded only read (or none ran); an
//! answer to a request to run something when every call only read (or none ran); an answer
//! to a request that names a file no call looked at. They are the tool-calling driver's
//! judgements (`drivers_toolcalling::{is_plan_reply, asks_for_a_change, asks_to_run,
//! nothing_changed_by, files_no_call_used}`), read from the execution's tool executions and
//! its request, since a ReAct trace holds no native calls. On the eval's development half the
//! 1.5B model's ReAct answers at 0186aee included each kind but the plan (seen on the held-out
//! half): the sum of the numbers in `a.txt` and `b.txt` answered after reading `a.txt` only,
//! "replace World with Rust" answered after a read, "Run the script greet.sh" answered after
//! reading it, the version of `package.json` answered after listing the folder (issue 36).
//! An answer that names the file holding some words, when no tool result holds them, is
//! asked to search or read the files, once (`drivers_toolcalling::terms_no_result_holds`):
//! asked which note mentions a zeppelin, the 1.5B model listed the folder and answered
//! `alpha.txt` at deb58ba (development task d3). An answer that says a file was changed when
//! no call that worked changed it is asked to make the change, once
//! (`drivers_toolcalling::files_claimed_changed`): asked to change a version in `VERSION`
//! and `about.txt`, the same model edited `VERSION`, read `about.txt` and answered that
//! `about.txt` had been changed (d22).
//! An answer that a directory listing in view contradicts (a count of a kind of file, the
//! largest file) is told the listing's line, once (`drivers_toolcalling::contradicted_listing`):
//! shown `In all: 5 files (3 .md files, ...)`, the same model answered "There are 5 Markdown
//! files" (d20); shown `[file] beta.log (1380 bytes, the largest)`, it named `alpha.log` (d19).
//! A yes or no that a setting line in view says the opposite of is told the line, once
//! (`drivers_toolcalling::contradicted_setting`: "Yes" beside `debug: false`, d18's kind);
//! one of the values several files set, given without its file when the request named
//! none, is asked for each file's value, once (`drivers_toolcalling::ambiguous_value`: two
//! config files' ports, d26's kind). Both are the tool-calling driver's questions too.
//! An answer that gives another setting's value for something no result names is told the
//! line, once (`drivers_toolcalling::borrowed_value`): asked for a database password that
//! `settings.ini` does not hold, the same model answered with the `user` (d27).
//! An answer that gives an email address or a number nothing in view holds is asked about
//! once (`drivers_toolcalling::unseen_values`).
//! Last, an answer to a request for arithmetic that gives a number no tool result shows,
//! without its calculation ("The total is 890."), is asked for the calculation, once
//! (`drivers_toolcalling::uncalculated_numbers`); and an answer whose own arithmetic is wrong
//! ("17 + 25 = 43") is told the value, once (`drivers_toolcalling::wrong_arithmetic`).

use agents_core::{AgentState, ToolExecution, Tools};
use drivers_toolcalling::{
    ambiguous_value, asks_for_a_change, asks_to_run, borrowed_value, contradicted_listing,
    contradicted_setting, files_claimed_changed, files_no_call_used, is_plan_reply,
    nothing_changed_by, one_of_several_files, operand_answer, terms_no_result_holds,
    uncalculated_numbers, unseen_values, wrong_arithmetic,
};
use messages::{Message, Messages, Role, ToolCall};

use crate::decision_error::DecisionError;
use crate::trace::{is_react_trace, observed_results};

/// What to do with a final answer.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// It is the answer.
    Accept,
    /// Send it back with this error's feedback, once: the reply to it is judged again.
    Ask(DecisionError),
    /// It is no answer: the step is an error step.
    Refuse(DecisionError),
}

/// A kind of question, asked at most once per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    Plan,
    NothingChanged,
    NothingRan,
    UnmadeChange,
    UnchangedFiles,
    UnusedFiles,
    UnseenTerms,
    Listing,
    Setting,
    Ambiguous,
    Borrowed,
    SeveralFiles,
    UnseenValues,
    Calculation,
    Arithmetic,
}

/// One step's judge of final answers: the execution it reads, and the questions asked.
pub(crate) struct AnswerChecks<'s> {
    state: &'s AgentState,
    asked: Vec<Question>,
}

impl<'s> AnswerChecks<'s> {
    /// The checks for a step of the execution `state` is running.
    pub(crate) fn for_step(state: &'s AgentState) -> Self {
        Self {
            state,
            asked: Vec::new(),
        }
    }

    /// What to do with `answer`, a `final_answer` of this step, given the agent's `tools`.
    /// A plan is asked about first; given again, it is no answer once a tool has run (the
    /// results are there to answer from), and the answer when none has (the person asked how
    /// something is done). Then a change not made, a run not made, files not looked at: given
    /// again, the answer stands (the change may rightly be impossible, the file not needed),
    /// except an answer that still says a file was changed that no call changed, or still
    /// gives what a listing in view says otherwise: those are no answer (the run answers on
    /// stop).
    pub(crate) fn judge(&mut self, answer: &str, tools: &Tools) -> Verdict {
        let executions = self.executions();
        let calls: Vec<&ToolCall> = executions
            .iter()
            .map(|execution| execution.call())
            .collect();
        let tools_ran = !calls.is_empty();
        if is_plan_reply(answer, tools) {
            let plan = DecisionError::PlanAsAnswer { tools_ran };
            return if self.first_time(Question::Plan) {
                Verdict::Ask(plan)
            } else if tools_ran {
                Verdict::Refuse(plan)
            } else {
                Verdict::Accept
            };
        }
        let Some(request) = self.request() else {
            return self.arithmetic(answer);
        };
        // A change that failed changed nothing (the tool-calling driver counts it as tried:
        // the 1.5B model's ReAct answer to "Add the line gamma to the end of list.txt" after
        // a refused `write_file` and a read claimed the line added, development task d14).
        let worked: Vec<&ToolExecution> = executions
            .iter()
            .copied()
            .filter(|execution| !execution.has_error())
            .collect();
        let succeeded = || worked.iter().map(|execution| execution.call());
        let changed_nothing = nothing_changed_by(succeeded(), tools);
        if asks_for_a_change(&request)
            && changed_nothing
            && self.first_time(Question::NothingChanged)
        {
            let change_failed = executions.iter().any(|execution| {
                execution.has_error() && !tools.effects(execution.call().name()).is_read_only()
            });
            return Verdict::Ask(DecisionError::NothingChanged {
                tools_ran,
                change_failed,
            });
        }
        // A run that failed still ran.
        if asks_to_run(&request)
            && nothing_changed_by(calls.iter().copied(), tools)
            && self.first_time(Question::NothingRan)
        {
            return Verdict::Ask(DecisionError::NothingRan { tools_ran });
        }
        // A file said changed that no call that worked changed, when another was (the 1.5B
        // model's d22 at deb58ba); with nothing changed at all, the question above is asked.
        if !changed_nothing {
            let unchanged = files_claimed_changed(answer, &request, succeeded(), tools);
            if !unchanged.is_empty() {
                let unmade = DecisionError::UnmadeChange { files: unchanged };
                // Given again it is no answer: it still tells the person a change was made
                // that no call made (d22 at b55f332: the same claim after its question). The
                // run answers on stop, told which changes were made.
                return if self.first_time(Question::UnmadeChange) {
                    Verdict::Ask(unmade)
                } else {
                    Verdict::Refuse(unmade)
                };
            }
        }
        // A file the request asks to change whose changes failed and that no call that
        // worked changed, when another was (d22 at ccd9c7d: `VERSION` edited, `about.txt`'s
        // write and edit failed, and the answer gave `about.txt`'s lines). A file no change
        // was tried on (the source of a copy) is not asked about. Given again, the answer
        // stands (the change may rightly be impossible).
        if asks_for_a_change(&request) && !changed_nothing {
            let changing = |failed: bool| {
                executions
                    .iter()
                    .filter(move |execution| execution.has_error() == failed)
                    .map(|execution| execution.call())
                    .filter(|call| !tools.effects(call.name()).is_read_only())
            };
            let mut files = files_no_call_used(&request, changing(false));
            // a file a failed change named: no file is left unnamed by those calls
            files.retain(|file| files_no_call_used(file, changing(true)).is_empty());
            if !files.is_empty() && self.first_time(Question::UnchangedFiles) {
                return Verdict::Ask(DecisionError::UnchangedFiles { files });
            }
        }
        let files = files_no_call_used(&request, calls.iter().copied());
        if !files.is_empty() && self.first_time(Question::UnusedFiles) {
            return Verdict::Ask(DecisionError::UnusedFiles { files });
        }
        // A count or a largest file that the listing in view gives otherwise (d20, d19).
        let results: Vec<String> = worked
            .iter()
            .map(|execution| execution.result_text())
            .collect();
        if let Some(found) = contradicted_listing(answer, results.iter().map(String::as_str)) {
            let contradiction = DecisionError::ContradictedListing {
                said: found.said,
                listed: found.listed,
            };
            // Given again it is no answer: the listing says otherwise in so many words (the
            // run answers on stop, where the listing is checked again).
            return if self.first_time(Question::Listing) {
                Verdict::Ask(contradiction)
            } else {
                Verdict::Refuse(contradiction)
            };
        }
        // A yes or no that a setting line in view says the opposite of (d18's kind).
        if let Some(found) = contradicted_setting(answer, results.iter().rev()) {
            if self.first_time(Question::Setting) {
                return Verdict::Ask(DecisionError::ContradictedSetting { line: found.line });
            }
        }
        // One of the values several files set, without its file, when the request named
        // none (d26's kind).
        let read = worked
            .iter()
            .map(|execution| (Some(execution.call()), execution.result_text()));
        if let Some(found) = ambiguous_value(answer, &request, read) {
            if self.first_time(Question::Ambiguous) {
                return Verdict::Ask(DecisionError::AmbiguousValue {
                    key: found.key,
                    values: found.values,
                });
            }
        }
        // One of several files of one name answered for, when the request named none.
        if let Some(found) = one_of_several_files(answer, results.iter().map(String::as_str)) {
            if self.first_time(Question::SeveralFiles) {
                return Verdict::Ask(DecisionError::OneOfSeveralFiles { files: found.files });
            }
        }
        // Another setting's value given for what no result names (d27).
        if let Some(found) = borrowed_value(answer, &request, results.iter().map(String::as_str)) {
            if self.first_time(Question::Borrowed) {
                return Verdict::Ask(DecisionError::BorrowedValue {
                    value: found.value,
                    asked: found.asked,
                    line: found.line,
                });
            }
        }
        // A file named as holding words no result shows: a guess from a listing, or none.
        if let Some(terms) = terms_no_result_holds(
            answer,
            &request,
            executions.iter().map(|execution| execution.result_text()),
        ) {
            if self.first_time(Question::UnseenTerms) {
                return Verdict::Ask(DecisionError::UnseenTerms { terms });
            }
        }
        // A value nothing shows: an address or a number no result, request or earlier
        // message holds (a probe of issue 36's task kinds, 2026-12-07).
        if tools_ran {
            let results = executions.iter().map(|execution| execution.result_text());
            let sources: Vec<String> = results.chain(self.messages()).collect();
            if let Some(values) = unseen_values(answer, &request, &sources) {
                if self.first_time(Question::UnseenValues) {
                    return Verdict::Ask(DecisionError::UnseenValues { values });
                }
            }
        }
        // Not after the step told the model a value (its arithmetic corrected).
        if !self.asked.contains(&Question::Arithmetic) {
            if let Some(numbers) =
                uncalculated_numbers(answer, &request, results.iter().map(String::as_str))
            {
                if self.first_time(Question::Calculation) {
                    return Verdict::Ask(DecisionError::UncalculatedNumbers { numbers });
                }
            }
            if let Some(found) =
                operand_answer(answer, &request, results.iter().map(String::as_str))
            {
                if self.first_time(Question::Calculation) {
                    return Verdict::Ask(DecisionError::OperandAnswer {
                        operation: found.operation,
                        numbers: found.numbers,
                    });
                }
            }
        }
        self.arithmetic(answer)
    }

    /// An answer whose arithmetic is wrong is asked about once, with the value; given again,
    /// it stands.
    fn arithmetic(&mut self, answer: &str) -> Verdict {
        match wrong_arithmetic(answer) {
            Some(found) if self.first_time(Question::Arithmetic) => {
                Verdict::Ask(DecisionError::WrongArithmetic {
                    written: found.written,
                    expression: found.expression,
                    value: found.value,
                })
            }
            _ => Verdict::Accept,
        }
    }

    /// Whether `question` has not been asked in this step; it counts as asked from now on.
    fn first_time(&mut self, question: Question) -> bool {
        let first = !self.asked.contains(&question);
        if first {
            self.asked.push(question);
        }
        first
    }

    /// The tool executions of the execution so far, in order.
    fn executions(&self) -> Vec<&'s ToolExecution> {
        self.state
            .steps()
            .flat_map(|step| step.tool_executions().iter())
            .collect()
    }

    /// The texts of the conversation's messages that are not ReAct trace (requests,
    /// answers).
    fn messages(&self) -> Vec<String> {
        self.state
            .messages_for_inference()
            .iter()
            .filter(|message| !is_react_trace(message))
            .map(|message| message.text())
            .collect()
    }

    /// The execution's request: the conversation's last user message that is not a ReAct
    /// observation.
    fn request(&self) -> Option<String> {
        self.state
            .messages_for_inference()
            .iter()
            .rev()
            .find(|message| message.role() == Role::User && !is_react_trace(message))
            .map(|message| message.text())
    }
}

/// Whether `answer`, asked for on a stop with `input`, gives what a listing among its
/// observations (or in its last message, the loop's page of results) says otherwise
/// (`drivers_toolcalling::contradicted_listing`).
pub(crate) fn contradicts_a_listing_on_stop(input: &Messages, answer: &str) -> bool {
    let texts: Vec<String> = observed_results(input)
        .chain(input.iter().last().map(Message::text))
        .collect();
    contradicted_listing(answer, texts.iter().map(String::as_str)).is_some()
}

/// Whether the request that `input`, a request to answer on a stop, answers names a file:
/// its last user message that is no observation, before the instruction to answer.
pub(crate) fn request_names_a_file(input: &Messages) -> bool {
    input
        .iter()
        .rev()
        .skip(1)
        .find(|message| message.role() == Role::User && !is_react_trace(message))
        .is_some_and(|request| !files_no_call_used(&request.text(), []).is_empty())
}

/// Whether `answer`, asked for on a stop with `input`, copies the error of a failed call
/// among its observations or its calls (`drivers_toolcalling::copies_an_error_on_stop`): at a230719 the
/// 1.5B model answered development task d22 on stop with "Observation: Error: old_string was
/// not found in `about.txt`; ...".
/// `earlier` are the execution's failed calls' texts (`PreviousCalls::errors`): the page of
/// results the loop asks from last holds no observation.
pub(crate) fn copies_an_error_on_stop(input: &Messages, answer: &str, earlier: &[String]) -> bool {
    let observed: Vec<String> = observed_results(input)
        .filter(|result| result.starts_with("Error: "))
        .collect();
    let errors: Vec<&str> = observed.iter().chain(earlier).map(String::as_str).collect();
    drivers_toolcalling::copies_an_error_on_stop(answer, &errors)
}
