//! Which nudge a reply gets. A reply without a native call that is not an answer (a plan to
//! use a tool, a narration of a tool's use that gives nothing it found, a copied tool error,
//! a reply made only of the request's words, or an answer about a named file no call used,
//! after the tools ran; a call or a change claimed that no tool made, or an answer about a
//! named file, given when no tool has run) is answered in the same step with one short user
//! message saying what is wrong, and the model's reply to it takes its place (for the
//! unread-file nudge only if that reply holds a call).
//! After the tools ran, an answer that repeats what the model wrote before any tool had
//! returned is asked about once too, without that text in view (`predicted_answer`); given
//! again, it is not an answer.
//! A reply that repeats, word for word, a reply of the execution whose call ran is asked
//! about once too, without showing the copy back (`repeated_reply`); a reply to that which
//! repeats again is dropped.
//! A call the model wrote among other text, which is not run for that reason (`trust`), is
//! asked about once too: sent alone, it runs; the tool error the call gets otherwise says the
//! same, but the 1.5B model answered that error by repeating its reply word for word, and a
//! user message by sending the call alone.
//! A reply that repeats an earlier answer of the conversation, given to a different request,
//! is asked about once in either case (`repeated_answer`); the reply to it counts only if it
//! makes a call or is not a repeat itself.
//! Each kind is given at most once per step. A plan,
//! a copied error, a tool error's advice passed on to the person, an answer about a file the
//! request is not about (`foreign_file`), or a claimed call or
//! first-person change the calls do not show, that still
//! follows is not an answer ([`Nudges::not_an_answer`]): the step records an error and the run
//! answers on stop. Only with text-call recovery on: the small
//! local models that write such replies.

use std::borrow::Cow;
use std::sync::OnceLock;

use agents_core::{PreviousCalls, Tools};
use inference::{FinishReason, InferenceResponse};
use messages::{Message, Messages};

use crate::ambiguous_value::{ambiguous_in_view, AmbiguousValue};
use crate::backticks::{in_backticks, in_backticks_and};
use crate::borrowed_value::{borrowed_value, BorrowedValue};
use crate::change_request::{
    asks_for_a_change, asks_to_run, calls_that_worked, no_change_succeeded, nothing_changed_by,
    nothing_changed_yet, CHANGE_PLAN_NUDGE, NOT_RUN_NO_BASH_NUDGE, NOT_RUN_NUDGE, NO_CHANGE_NUDGE,
    ONLY_READ_NUDGE,
};
use crate::claimed_call::{
    claim_beyond_calls, claims_unmade_call, has_claim_word, UnmadeClaim, CLAIM_NUDGE,
};
use crate::claimed_change::files_claimed_changed;
use crate::contradicted_listing::{
    contradicted_listing, may_contradict_a_listing, ListingContradiction,
};
use crate::contradicted_setting::{contradicted_in_view, ContradictedSetting};
use crate::copied_error::{
    copies_a_tool_error, relays_error_advice, tool_errors, COPIED_ERROR_NUDGE, RELAYED_ADVICE_NUDGE,
};
use crate::disowned_tools::{
    disowns_the_tools, every_call_succeeded, only_unknown_tools_failed,
    DISOWNED_AFTER_UNKNOWN_TOOL_NUDGE, DISOWNED_TOOLS_NUDGE,
};
use crate::echoed_request::{echoes_request, ECHO_NUDGE, MAX_ECHO_BYTES};
use crate::failed_calls::{
    errors_suggest_a_requested_file, every_call_failed, every_call_on_a_requested_file_failed,
    failed_calls_nudge, ignores_the_failures, requested_files_shown, shown_files_nudge,
    some_call_failed,
};
use crate::files_left::FilesLeft;
use crate::foreign_file::{foreign_files, foreign_files_nudge};
use crate::forged_evidence::forged_evidence;
use crate::latest_results::{execution_messages, request, text_of, worked_result_texts};
use crate::misquoted_result::{misquotes_a_result, MISQUOTED_RESULT_NUDGE};
use crate::narration::{narrates_without_results, ResultWords, NARRATION_NUDGE};
use crate::plan_reply::{
    asks_how_or_where, is_plan_reply, points_to_a_file, sends_off_to_a_tool, CALL_NUDGE,
    PLAN_NUDGE, READ_IT_NUDGE,
};
use crate::plan_steps::next_step_after_called;
use crate::predicted_answer::{predicted_answer, without_guesses, PREDICTED_ANSWER_NUDGE};
use crate::recover::is_tool_call_text;
use crate::repeated_answer::{without_stop_answers, EarlierAnswers};
use crate::repeated_reply::{repeated_reply, repeated_reply_nudge};
use crate::setting_line::results_may_set;
use crate::several_files::{one_of_several_files, SeveralFiles};
use crate::trust::{holds_a_call_in_prose, runs_as_calls};
use crate::unread_file::{names_a_file, unread_files, unread_files_nudge, UNREAD_FILE_NUDGE};
use crate::unseen_term::{unseen_terms, unseen_terms_nudge};
use crate::unseen_value::{files_not_read, unseen_values_in, unseen_values_nudge};
use crate::unshown_calculation::{unshown_calculation, Uncalculated};
use crate::wrong_arithmetic::{wrong_arithmetic, WrongArithmetic};

/// What the model is told after a reply that wrote a call among other text, which did not
/// run for that reason.
pub(crate) const CALL_IN_PROSE_NUDGE: &str = "The tool call in your last reply did not run: it \
was written among other text, and a call runs only when the reply is the call alone. If you \
meant to call the tool, reply now with only the JSON object of the call, nothing before or \
after it. If you were only explaining or quoting it, answer in plain text without the call.";

/// A kind of reply that is not an answer, and the nudge it gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nudge {
    /// A plan to use a tool after the tools ran: answer from their results (issue 36).
    PlanAfterResults,
    /// A tool's error copied as the reply after the tools ran: answer in your own words
    /// (issue 36).
    CopiedError,
    /// A reply that tells which tool was used, and nothing it returned, after the tools ran:
    /// answer with the facts (issue 36).
    Narration,
    /// A call or a change claimed when no tool has run (issue 32).
    Claim,
    /// After the tools ran, a call of a tool the execution did not call, or a change when
    /// every tool called only reads (issue 32).
    ClaimBeyondCalls,
    /// A plan to use a tool when no tool has run: make the call, or repeat a how-to answer
    /// (issue 32).
    PlanWithoutCall,
    /// An answer to a request that names a file when no tool has run (issue 32), or, after
    /// the tools ran, that names a file no call looked at (issue 36): look at the file.
    UnreadFile,
    /// A call written among other text, not run for that reason: send it alone if it was
    /// meant (issue 36).
    CallInProse,
    /// A reply that repeats an earlier answer of the conversation, given to a different
    /// request: answer the latest request (issue 32).
    RepeatedAnswer,
    /// A reply made only of the request's words, after the tools ran: answer it (issue 36).
    EchoedRequest,
    /// A reply that repeats, word for word, a reply of this execution whose call ran: answer
    /// from its result, or do the plan's next step (issue 36).
    RepeatedReply,
    /// A reply that copies an answer the loop made when an earlier request stopped
    /// unfinished: answer the latest request, asked without those answers (issue 32).
    CopiedStopAnswer,
    /// A reply to a request for a change when no tool that changes anything has run: make
    /// the change (issue 32).
    ChangeNotMade,
    /// A reply that tells the person to do what a tool's error told the model to do: follow
    /// the advice (issue 32).
    RelayedAdvice,
    /// After the tools ran, a reply about a file that a request naming files does not name
    /// and nothing of the execution mentions: answer this request (issue 32).
    ForeignFile,
    /// After the tools ran, an answer that repeats what the model wrote before any tool had
    /// returned: answer from the results (issue 36).
    PredictedAnswer,
    /// After every call of the execution failed, an answer that says nothing of a failure:
    /// call again as the errors say, or say what could not be done (issue 36).
    AnswerAfterFailures,
    /// After every call of the execution failed, a reply that gives up on a file the
    /// request names that an error shows is there: call again with its path (issue 36).
    GaveUpOnShownFile,
    /// After every call of the execution succeeded, a reply that says the agent cannot use
    /// tools or reach files: answer from the results (issue 36).
    DisownedTools,
    /// After the tools ran, a reply that quotes as a tool's output lines no result holds:
    /// answer from what the results say (issue 36).
    MisquotedResult,
    /// A reply that writes an expression and a result that is not its value ("120 + 340 +
    /// 215 + 95 = 890"): told the value, answer again (issue 36).
    WrongArithmetic,
    /// After the tools ran, a yes or no that a setting in a result contradicts ("Yes, debug
    /// mode is enabled" beside `debug: false`): told the line, answer again (issue 36).
    ContradictedSetting,
    /// After the tools ran, an answer that a directory listing in view contradicts (5
    /// Markdown files beside `3 .md files`, the largest file not the one marked so): told the
    /// line, answer again (issue 36).
    ContradictedListing,
    /// After the tools ran, an answer that gives another setting's value for something no
    /// result names ("The database password is admin." beside `user = admin`): told the
    /// line, answer from the results or say it is not there (issue 36).
    BorrowedValue,
    /// After the tools ran, an answer that names the file holding what the request asks
    /// about when no result holds those words (a guess from a listing): look inside the files
    /// (issue 36).
    UnseenTerm,
    /// After the tools ran, an answer that gives one of the different values several files
    /// set, without its file: say each file's value, or ask which is meant (issue 36).
    AmbiguousValue,
    /// After the tools ran, an answer for one of several files a read showed for one name
    /// the request gave: answer for each, or ask which is meant (issue 36).
    OneOfSeveralFiles,
    /// After the tools ran, an answer to a request for arithmetic that gives a number no
    /// result shows and no calculation: write the calculation out (issue 36).
    UnshownCalculation,
    /// After the tools ran, an answer that gives an email address or a number nothing in
    /// view holds: give only values the results show (issue 36).
    UnseenValue,
}

impl Nudge {
    /// The journal key of the reply to this nudge: one per kind, so a step interrupted after
    /// two nudges replays both replies.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Nudge::PlanAfterResults => "reply_after_plan",
            Nudge::CopiedError => "reply_after_copied_error",
            Nudge::Narration => "reply_after_narration",
            Nudge::Claim => "reply_after_claim",
            Nudge::ClaimBeyondCalls => "reply_after_claim_beyond_calls",
            Nudge::PlanWithoutCall => "reply_after_plan_without_call",
            Nudge::UnreadFile => "reply_after_unread_file",
            Nudge::CallInProse => "reply_after_call_in_prose",
            Nudge::RepeatedAnswer => "reply_after_repeated_answer",
            Nudge::EchoedRequest => "reply_after_echoed_request",
            Nudge::RepeatedReply => "reply_after_repeated_reply",
            Nudge::CopiedStopAnswer => "reply_after_copied_stop_answer",
            Nudge::ChangeNotMade => "reply_after_change_not_made",
            Nudge::RelayedAdvice => "reply_after_relayed_advice",
            Nudge::ForeignFile => "reply_after_foreign_file",
            Nudge::PredictedAnswer => "reply_after_predicted_answer",
            Nudge::AnswerAfterFailures => "reply_after_answer_after_failures",
            Nudge::GaveUpOnShownFile => "reply_after_gave_up_on_shown_file",
            Nudge::DisownedTools => "reply_after_disowned_tools",
            Nudge::MisquotedResult => "reply_after_misquoted_result",
            Nudge::WrongArithmetic => "reply_after_wrong_arithmetic",
            Nudge::ContradictedSetting => "reply_after_contradicted_setting",
            Nudge::ContradictedListing => "reply_after_contradicted_listing",
            Nudge::BorrowedValue => "reply_after_borrowed_value",
            Nudge::UnseenTerm => "reply_after_unseen_term",
            Nudge::AmbiguousValue => "reply_after_ambiguous_value",
            Nudge::OneOfSeveralFiles => "reply_after_one_of_several_files",
            Nudge::UnshownCalculation => "reply_after_unshown_calculation",
            Nudge::UnseenValue => "reply_after_unseen_value",
        }
    }

    /// Why, for the log.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Nudge::PlanAfterResults => "the model described how to use a tool instead of answering",
            Nudge::CopiedError => "the model copied a tool's error instead of answering",
            Nudge::Narration => "the model said which tool it used, not what it found",
            Nudge::Claim => "the model claimed a call or a change no tool made",
            Nudge::ClaimBeyondCalls => "the model claimed a call or a change its calls do not show",
            Nudge::PlanWithoutCall => "the model described a call instead of making it",
            Nudge::UnreadFile => "the model answered about a file without looking at it",
            Nudge::CallInProse => "the model wrote a call among other text, where it does not run",
            Nudge::RepeatedAnswer => "the model repeated its answer to an earlier request",
            Nudge::EchoedRequest => "the model repeated the request instead of answering it",
            Nudge::RepeatedReply => "the model repeated a reply whose call already ran",
            Nudge::CopiedStopAnswer => {
                "the model copied the answer of an earlier request that stopped unfinished"
            }
            Nudge::ChangeNotMade => {
                "the model answered a request for a change (or to run something) without making it"
            }
            Nudge::RelayedAdvice => "the model passed a tool error's advice on to the user",
            Nudge::ForeignFile => "the model answered about a file this request is not about",
            Nudge::PredictedAnswer => {
                "the model answered with what it wrote before any tool had returned"
            }
            Nudge::AnswerAfterFailures => {
                "the model answered as if a call had worked, after every call failed"
            }
            Nudge::GaveUpOnShownFile => {
                "the model gave up on a file an error showed is in the workspace"
            }
            Nudge::DisownedTools => "the model said it cannot use the tools it has",
            Nudge::MisquotedResult => "the model quoted as a tool's output lines no result holds",
            Nudge::WrongArithmetic => "the model's arithmetic is wrong",
            Nudge::ContradictedSetting => {
                "the model's yes or no contradicts a setting it was shown"
            }
            Nudge::ContradictedListing => "the model's answer contradicts a listing it was shown",
            Nudge::BorrowedValue => {
                "the model gave another setting's value for something no result names"
            }
            Nudge::UnseenTerm => "the model named a file as holding words no result holds",
            Nudge::AmbiguousValue => "the model gave one of several files' values without its file",
            Nudge::OneOfSeveralFiles => {
                "the model answered for one of several files of the name it was given"
            }
            Nudge::UnshownCalculation => {
                "the model gave a computed number no result shows, without the calculation"
            }
            Nudge::UnseenValue => "the model gave a value nothing it was shown holds",
        }
    }

    fn bit(self) -> u32 {
        match self {
            Nudge::PlanAfterResults => 1,
            Nudge::Claim => 2,
            Nudge::PlanWithoutCall => 4,
            Nudge::UnreadFile => 8,
            Nudge::CopiedError => 16,
            Nudge::CallInProse => 32,
            Nudge::Narration => 64,
            Nudge::RepeatedAnswer => 128,
            Nudge::EchoedRequest => 256,
            Nudge::RepeatedReply => 512,
            Nudge::CopiedStopAnswer => 1024,
            Nudge::ClaimBeyondCalls => 2048,
            Nudge::ChangeNotMade => 4096,
            Nudge::RelayedAdvice => 8192,
            Nudge::ForeignFile => 16384,
            Nudge::PredictedAnswer => 32768,
            Nudge::AnswerAfterFailures => 65536,
            Nudge::DisownedTools => 131_072,
            Nudge::MisquotedResult => 262_144,
            Nudge::WrongArithmetic => 524_288,
            Nudge::ContradictedSetting => 1_048_576,
            Nudge::UnseenTerm => 2_097_152,
            Nudge::AmbiguousValue => 4_194_304,
            Nudge::UnshownCalculation => 8_388_608,
            Nudge::ContradictedListing => 16_777_216,
            Nudge::BorrowedValue => 33_554_432,
            Nudge::GaveUpOnShownFile => 67_108_864,
            Nudge::UnseenValue => 134_217_728,
            Nudge::OneOfSeveralFiles => 268_435_456,
        }
    }

    /// Whether the request that asks again shows the reply being asked about before the
    /// nudge. A repeated reply, a copied stop answer and a predicted answer are left out: each
    /// copy the model sees makes the next likelier (`repeated_reply`, `repeated_answer`,
    /// `predicted_answer`); so is a number given without its calculation (the nudge names
    /// it): shown its reply, the 1.5B model gave it again word for word (d15, 2026-12-06);
    /// and so is a value nothing shows (the nudge names it; shown the reply, the same model
    /// gave the made-up address again, in a probe of 2026-12-07); and so is an answer for one
    /// of several files (the nudge names them all; shown its reply, the same model gave it
    /// again, in a probe of 2026-12-07).
    pub(crate) fn shows_reply(self) -> bool {
        !matches!(
            self,
            Nudge::RepeatedReply
                | Nudge::CopiedStopAnswer
                | Nudge::PredictedAnswer
                | Nudge::UnshownCalculation
                | Nudge::UnseenValue
                | Nudge::OneOfSeveralFiles
        )
    }

    /// The conversation the request that asks again starts from: `input`, without the
    /// answers made on a stop after a copy of one (see `repeated_answer`), without the text
    /// written before the first result after a predicted answer (see `predicted_answer`).
    pub(crate) fn asked_from(self, input: &Messages) -> Messages {
        match self {
            Nudge::CopiedStopAnswer => without_stop_answers(input),
            Nudge::PredictedAnswer => without_guesses(input),
            _ => input.clone(),
        }
    }
}

/// What the model is told after a reply a check of the results asked about, should what
/// it found be missing (it never is: it is kept when the reply is judged).
const REREAD_RESULTS_NUDGE: &str =
    "Read the tool results above again and answer from what they say.";

/// The nudges one step gives: what it knows of the execution, and the kinds given so far.
#[derive(Debug, Default)]
pub(crate) struct Nudges {
    tools_ran: bool,
    request_names_a_file: bool,
    /// The failed tool results the model was sent, as words, read on first need.
    tool_errors: OnceLock<Vec<Vec<String>>>,
    /// What the tools returned, read on first need (a reply that tells a tool's use).
    results: OnceLock<ResultWords>,
    /// Whether a result of the execution may set a value (see `results_may_set`), read on
    /// first need: without one, the checks against settings read nothing.
    results_may_set: OnceLock<bool>,
    /// The files the request names that no call of the execution named, read on first
    /// need (an answer after the tools ran).
    unread_files: OnceLock<Vec<String>>,
    /// The reply of the execution the last reply asked about repeated, and its call's tool:
    /// found when the reply was judged, quoted by its nudge.
    repeated: Option<(String, String)>,
    /// What the last reply claimed beyond the execution's calls: found when the reply was
    /// judged, named by its nudge.
    claimed: Option<UnmadeClaim>,
    /// The wrong arithmetic of the last reply: found when the reply was judged, corrected by
    /// its nudge.
    miscalculated: Option<WrongArithmetic>,
    /// The setting line the last reply's yes or no contradicts: found when the reply was
    /// judged, quoted by its nudge.
    contradicted: Option<ContradictedSetting>,
    /// The listing line the last reply contradicts: found when the reply was judged, quoted
    /// by its nudge.
    listed: Option<ListingContradiction>,
    /// The value the last reply gave for something no result names: found when the reply
    /// was judged, named by its nudge.
    borrowed: Option<BorrowedValue>,
    /// The words the request asks about that no result holds, when the last reply named a
    /// file as holding them: found when the reply was judged, named by its nudge.
    unseen: Option<Vec<String>>,
    /// The setting several files set differently, when the last reply gave one of its
    /// values without its file: found when the reply was judged, named by its nudge.
    ambiguous: Option<AmbiguousValue>,
    /// The files a read showed for a name several files have, when the last reply answered
    /// for one of them only: found when the reply was judged, named by its nudge.
    several: Option<SeveralFiles>,
    /// What the last reply gave without a calculation (numbers no result shows, or only the
    /// operands): found when the reply was judged, named by its nudge.
    uncalculated: Option<Uncalculated>,
    /// The requested files an error showed are there, when the last reply gave up on them:
    /// found when the reply was judged, named by its nudge.
    shown_files: Vec<String>,
    /// The values nothing in view holds that the last reply gave: found when the reply was
    /// judged, named by its nudge.
    unseen_values: Vec<String>,
    /// What the model was sent: a call that repeats it is never asked about.
    conversation: Messages,
    /// The conversation's answers to earlier, different requests, looked up the first
    /// time a reply could repeat one.
    earlier_answers: EarlierAnswers,
    /// The execution's calls so far: a call in prose that repeats one that already succeeded
    /// (see `trust::done_already`) is not asked about.
    previous: PreviousCalls,
    given: u32,
}

impl Nudges {
    /// For a step of an execution in which a tool has run or not, whose conversation for
    /// the model is `input` (its last user message is the request when no tool has run).
    pub(crate) fn for_step(tools_ran: bool, input: &Messages) -> Self {
        let request_names_a_file =
            !tools_ran && request(input).is_some_and(|request| names_a_file(&text_of(request)));
        Self {
            tools_ran,
            request_names_a_file,
            tool_errors: OnceLock::new(),
            results: OnceLock::new(),
            results_may_set: OnceLock::new(),
            unread_files: OnceLock::new(),
            repeated: None,
            claimed: None,
            miscalculated: None,
            contradicted: None,
            listed: None,
            borrowed: None,
            unseen: None,
            ambiguous: None,
            several: None,
            uncalculated: None,
            shown_files: Vec::new(),
            unseen_values: Vec::new(),
            conversation: input.clone(),
            earlier_answers: EarlierAnswers::default(),
            previous: PreviousCalls::default(),
            given: 0,
        }
    }

    /// These nudges, knowing the execution's calls so far.
    pub(crate) fn with_previous(self, previous: PreviousCalls) -> Self {
        Self { previous, ..self }
    }

    /// The kind of non-answer `content` (a reply without native calls, after its nudges) still
    /// is: a copy of an answer made on a stop; when the tools ran, also a plan to use a tool,
    /// a copied tool error or its advice passed on to the person, or a reply about a file the
    /// request is not about; and, once the step asked about a claim, a claim of a call or a
    /// change in the first person that the execution's calls still do not show, and once it
    /// asked about a predicted answer, that answer again; once it quoted a listing's line
    /// that the reply contradicts, a reply that still does. Such a reply
    /// is not saved as the answer; the step records an error and the run answers on stop.
    pub(crate) fn not_an_answer(&self, content: &str, tools: &Tools) -> Option<Nudge> {
        // A step that gave no nudge has its reply judged already: `next_for_content` found
        // nothing to ask about it, and it asks about everything judged here (a copied stop
        // answer first, then, when the tools ran, `asked_again_for`; a claim only counts once
        // asked about). Judging it again would find nothing, at the cost of every check.
        if self.given == 0 {
            return None;
        }
        self.asked_again_for(content, tools)
            .or_else(|| self.still_claims(content, tools))
            .or_else(|| self.still_predicted(content))
            .or_else(|| self.still_ignores_failures(content))
            .or_else(|| self.still_misquotes(content))
            .or_else(|| self.still_contradicts_a_listing(content))
            .or_else(|| self.still_plans(content, tools))
    }

    /// Whether `content` still gives what a listing in view says otherwise, once the step
    /// asked about it: the line was quoted to it. Not saved, the run answers on stop, where
    /// the listing is checked again.
    fn still_contradicts_a_listing(&self, content: &str) -> Option<Nudge> {
        (self.gave(Nudge::ContradictedListing) && self.contradicted_listing(content).is_some())
            .then_some(Nudge::ContradictedListing)
    }

    /// Whether `content` is still a plan after the step asked about one before any tool ran,
    /// for a request that does not ask how or where: its nudge said to make the call, or to
    /// give a how-to answer again only when the user asked how. In issue 32's 32-turn
    /// conversation (digest mode, 2026-12-03) the 1.5B model answered "List the Python files
    /// in the src directory." with "To list the Python files in the src directory, you can
    /// use the `list_dir` function with the path `src`.", twice; saved as the answer, it was
    /// then the answer of every later turn but one.
    fn still_plans(&self, content: &str, tools: &Tools) -> Option<Nudge> {
        (!self.tools_ran
            && self.gave(Nudge::PlanWithoutCall)
            && !is_tool_call_text(content)
            && self.is_plan(content, tools)
            && !self.request_is(asks_how_or_where))
        .then_some(Nudge::PlanWithoutCall)
    }

    /// Whether `content` still repeats what the execution wrote before any tool had
    /// returned, once the step asked about it: asked without its plan in view, the 1.5B model
    /// gave the plan's made-up sum again in the next step (d10). Not saved, the run answers on
    /// stop from a page of the request and what the calls returned, where no guess is in view.
    fn still_predicted(&self, content: &str) -> Option<Nudge> {
        (self.gave(Nudge::PredictedAnswer) && predicted_answer(&self.conversation, content))
            .then_some(Nudge::PredictedAnswer)
    }

    /// Whether `content` still quotes as a tool's output lines no result holds, once the step
    /// asked about it: told so, the 1.5B model gave the same made-up quote again (d18). Not
    /// saved, the run answers on stop.
    fn still_misquotes(&self, content: &str) -> Option<Nudge> {
        (self.gave(Nudge::MisquotedResult) && misquotes_a_result(content, &self.conversation))
            .then_some(Nudge::MisquotedResult)
    }

    /// Whether `content` still answers as if a call had worked after the step asked about it,
    /// every call of the execution having failed: told so, with the paths the errors
    /// suggested, the 1.5B model gave the same made-up sum again (d10). Not saved, the run
    /// answers on stop from what the calls returned: their errors.
    fn still_ignores_failures(&self, content: &str) -> Option<Nudge> {
        (self.gave(Nudge::AnswerAfterFailures) && self.ignores_failed_calls(content))
            .then_some(Nudge::AnswerAfterFailures)
    }

    /// Whether every call of the execution failed (or every call on the files the request
    /// names, when others worked), the request names a file or speaks of one an error
    /// suggested, and `content` speaks of no failure (see `failed_calls`). A request that
    /// names no file may need no tool: a question answered rightly after a call that failed;
    /// but when an error answered "did you mean `config.dev.yaml`?", the model was looking
    /// for a file that exists (asked "What port does the config file set?", the 1.5B model
    /// searched `config`, was told of two such files, and answered 8080, a port neither
    /// holds: development task d26).
    fn ignores_failed_calls(&self, content: &str) -> bool {
        // (Most answers follow calls that all worked: then neither holds, and the request is
        // not read.)
        (every_call_failed(&self.conversation)
            || (some_call_failed(&self.conversation)
                && self.request_is(|request| {
                    every_call_on_a_requested_file_failed(&self.conversation, request)
                })))
            && ignores_the_failures(content)
            && self.request_is(|request| {
                names_a_file(request)
                    || errors_suggest_a_requested_file(&self.conversation, request)
            })
    }

    /// The kind of claim `content` still makes after the step asked about one: a call of a
    /// tool the execution did not call, or a change in the first person when every tool it
    /// called only reads (or none ran). Issue 32's 32-turn conversation: asked about "I called
    /// the `edit_file` function ..." (only `read_file` had run), the 1.5B model said it again,
    /// and the untouched file was reported changed; a `search_files` call that never ran,
    /// saved as an answer, was copied into four later ones. A change told of in the passive
    /// ("was added") is judged only of a file the request asks to change and no call changed
    /// (`claimed_change`): elsewhere a file may say that.
    fn still_claims(&self, content: &str, tools: &Tools) -> Option<Nudge> {
        let kind = if self.tools_ran {
            Nudge::ClaimBeyondCalls
        } else {
            Nudge::Claim
        };
        // (A call written as text holds `{`, which `claim_beyond_calls` leaves to recovery.)
        let claims = if self.tools_ran {
            self.unmade_claim(content, tools).is_some()
        } else {
            claim_beyond_calls(content, tools, || called_in_execution(&self.conversation)).is_some()
        };
        (self.gave(kind) && claims).then_some(kind)
    }

    /// What `content`, written after the tools ran, claims beyond the execution's calls: a
    /// call of a tool not called or a change when only reads ran ([`claim_beyond_calls`]), or
    /// a change to a file the request asks to change that no call that worked changed, when
    /// another did change something ([`files_claimed_changed`]: the ReAct 1.5B model's d22;
    /// with no change made at all, the request is asked for it: `ChangeNotMade`).
    fn unmade_claim(&self, content: &str, tools: &Tools) -> Option<UnmadeClaim> {
        claim_beyond_calls(content, tools, || called_in_execution(&self.conversation)).or_else(
            || {
                // Most answers hold no change verb: nothing to gather then.
                if !has_claim_word(content) {
                    return None;
                }
                let request = text_of(request(&self.conversation)?);
                let worked = calls_that_worked(&self.conversation);
                if nothing_changed_by(worked.iter().copied(), tools) {
                    return None;
                }
                let files = files_claimed_changed(content, &request, worked, tools);
                (!files.is_empty()).then_some(UnmadeClaim::ChangeTo(files))
            },
        )
    }

    /// The kind of non-answer `content` is that the step asks about again when it follows
    /// its own nudge: see [`Nudges::not_an_answer`], without the claims.
    fn asked_again_for(&self, content: &str, tools: &Tools) -> Option<Nudge> {
        if is_tool_call_text(content) {
            return None;
        }
        if self.copies_a_stop_answer(content) {
            // Whether or not a tool ran: a copy of an unfinished request's answer answers
            // nothing.
            return Some(Nudge::CopiedStopAnswer);
        }
        if !self.tools_ran {
            return None;
        }
        if self.is_plan(content, tools) {
            Some(Nudge::PlanAfterResults)
        } else if copies_a_tool_error(content, || self.tool_errors()) {
            Some(Nudge::CopiedError)
        } else if relays_error_advice(content, || self.tool_errors()) {
            Some(Nudge::RelayedAdvice)
        } else if !foreign_files(content, &self.conversation).is_empty() {
            Some(Nudge::ForeignFile)
        } else {
            None
        }
    }

    /// Whether a result of the execution may set a value, read on first need.
    fn results_may_set(&self) -> bool {
        *self
            .results_may_set
            .get_or_init(|| results_may_set(&self.conversation))
    }

    /// The failed tool results the model was sent, as words, read on first need.
    fn tool_errors(&self) -> &[Vec<String>] {
        self.tool_errors
            .get_or_init(|| tool_errors(&self.conversation))
    }

    /// The nudge `reply` (without native calls) gets, recorded as given: as
    /// [`Nudges::next_for`], except that a reply cut at its token limit is never asked about a
    /// call among other text (its calls written out in full run; `trust` judges it as cut).
    pub(crate) fn next_for_reply(
        &mut self,
        reply: &InferenceResponse,
        tools: &Tools,
    ) -> Option<Nudge> {
        self.next_for_content(
            reply.content(),
            reply.finish_reason() == FinishReason::Length,
            tools,
        )
    }

    /// The nudge `content` (a finished reply without native calls) gets, recorded as given;
    /// `None` for an answer, or a reply whose nudges this step already gave.
    #[cfg(test)]
    pub(crate) fn next_for(&mut self, content: &str, tools: &Tools) -> Option<Nudge> {
        self.next_for_content(content, false, tools)
    }

    fn next_for_content(&mut self, content: &str, cut: bool, tools: &Tools) -> Option<Nudge> {
        // A copy of an answer made on a stop is asked about first, as such: the request that
        // asks leaves those answers out (and a copy is never the answer).
        let nudge = if !self.gave(Nudge::CopiedStopAnswer) && self.copies_a_stop_answer(content) {
            Some(Nudge::CopiedStopAnswer)
        } else if self.tools_ran
            && !self.gave(Nudge::RepeatedReply)
            && self.repeats_a_reply(content)
        {
            Some(Nudge::RepeatedReply)
        } else if !cut
            && !self.gave(Nudge::CallInProse)
            && holds_a_call_in_prose(content, tools, &self.conversation, &self.previous)
        {
            Some(Nudge::CallInProse)
        } else if self.tools_ran && runs_as_calls(content, tools, &self.conversation, cut) {
            // Calls alone are the model's next step, not an answer: recovery runs them.
            None
        } else if self.tools_ran {
            self.asked_again_for(content, tools)
                .or_else(|| {
                    (!self.gave(Nudge::AnswerAfterFailures) && self.ignores_failed_calls(content))
                        .then_some(Nudge::AnswerAfterFailures)
                })
                .or_else(|| self.gives_up_on_a_shown_file(content))
                .or_else(|| {
                    (disowns_the_tools(content)
                        && (every_call_succeeded(execution_messages(&self.conversation))
                            || only_unknown_tools_failed(
                                execution_messages(&self.conversation),
                                tools,
                            )))
                    .then_some(Nudge::DisownedTools)
                })
                .or_else(|| {
                    misquotes_a_result(content, &self.conversation)
                        .then_some(Nudge::MisquotedResult)
                })
                .or_else(|| self.contradicts_a_setting(content))
                .or_else(|| self.contradicts_a_listing(content))
                .or_else(|| self.borrows_a_value(content))
                .or_else(|| self.gives_one_of_several(content))
                .or_else(|| self.answers_for_one_file(content))
                .or_else(|| {
                    if self.gave(Nudge::ClaimBeyondCalls) {
                        return None;
                    }
                    self.claimed = self.unmade_claim(content, tools);
                    self.claimed.is_some().then_some(Nudge::ClaimBeyondCalls)
                })
                .or_else(|| self.change_not_made(tools).then_some(Nudge::ChangeNotMade))
                .or_else(|| {
                    self.echoes_the_request(content)
                        .then_some(Nudge::EchoedRequest)
                })
                .or_else(|| {
                    // Nudged once, never discarded: a computed answer ("the sum is 42") holds
                    // no word of the results either.
                    narrates_without_results(content, tools, || {
                        self.results
                            .get_or_init(|| ResultWords::of(&self.conversation))
                    })
                    .then_some(Nudge::Narration)
                })
                .or_else(|| (!self.unread_files().is_empty()).then_some(Nudge::UnreadFile))
                .or_else(|| self.names_an_unseen_term(content))
                .or_else(|| {
                    // Last: a file not read yet is asked about first (the guess came before
                    // the results; some are still missing).
                    predicted_answer(&self.conversation, content).then_some(Nudge::PredictedAnswer)
                })
                .or_else(|| self.gives_an_unseen_value(content))
                // Last: arithmetic is judged once the files are read and the answer is no guess;
                // a result given without its calculation is asked for it first.
                .or_else(|| self.calculates_unseen(content))
                .or_else(|| self.miscalculates(content))
        } else if content.contains('{')
            && (is_tool_call_text(content) || forged_evidence(content, &tools.names()).is_some())
        {
            // A reply holding a call written as text: text-call recovery judges it, and a call
            // announced in a plan may run; one that writes a call's result itself is withheld
            // by the forged-evidence check, without being shown again. Only a repeat is asked
            // about. Other JSON is judged as any text: the 1.5B model's "I will call the
            // `read_file` function with the path "poem.txt" and the arguments {"offset": 3,
            // "limit": 1}." was saved as the answer (development task d13).
            None
        } else if claims_unmade_call(content, tools) && !self.gave(Nudge::Claim) {
            Some(Nudge::Claim)
        } else if self.is_plan(content, tools) && !self.gave(Nudge::PlanWithoutCall) {
            Some(Nudge::PlanWithoutCall)
        } else if self.request_names_a_file {
            // Before a change too: the 1.5B model, told to read the file it was asked to
            // change, read it; told that nothing had changed, it said it could not change it.
            Some(Nudge::UnreadFile)
        } else {
            self.change_not_made(tools)
                .then_some(Nudge::ChangeNotMade)
                .or_else(|| self.miscalculates(content))
        }
        // A reply no rule above asks about is asked about once when it repeats an earlier
        // answer; the reply to that counts only if it makes a call or is new
        // ([`Nudges::dropped_reply`]): a follow-up may rightly get the same answer.
        .or_else(|| {
            self.earlier_answers
                .repeated_by(&self.conversation, content)
                .then_some(Nudge::RepeatedAnswer)
        })?;
        if self.gave(nudge) {
            return None;
        }
        self.given |= nudge.bit();
        Some(nudge)
    }

    /// What the model is told after `reply`, a reply that gets `nudge`.
    pub(crate) fn message(&self, nudge: Nudge, reply: &str, tools: &Tools) -> String {
        match nudge {
            // A change asked for and not made: make it (not an answer in plain text).
            Nudge::PlanAfterResults
                if self.request_is(asks_for_a_change)
                    && no_change_succeeded(&self.conversation, tools) =>
            {
                CHANGE_PLAN_NUDGE
            }
            Nudge::PlanAfterResults | Nudge::PlanWithoutCall if points_to_a_file(reply) => {
                READ_IT_NUDGE
            }
            Nudge::PlanAfterResults => return self.plan_nudge(reply, tools),
            Nudge::CopiedError => COPIED_ERROR_NUDGE,
            Nudge::Narration => NARRATION_NUDGE,
            Nudge::Claim => CLAIM_NUDGE,
            Nudge::ClaimBeyondCalls => return self.claim_nudge(),
            Nudge::PlanWithoutCall => CALL_NUDGE,
            Nudge::RelayedAdvice => RELAYED_ADVICE_NUDGE,
            Nudge::ForeignFile => {
                return foreign_files_nudge(
                    &foreign_files(reply, &self.conversation),
                    &self.conversation,
                )
            }
            Nudge::PredictedAnswer => PREDICTED_ANSWER_NUDGE,
            Nudge::AnswerAfterFailures => return failed_calls_nudge(&self.conversation),
            Nudge::GaveUpOnShownFile => {
                // Reading is what a question needs; a change names no tool here.
                let read_file =
                    tools.get("read_file").is_some() && !self.request_is(asks_for_a_change);
                return shown_files_nudge(&self.shown_files, read_file);
            }
            Nudge::UnseenValue => {
                let unread = if tools.get("read_file").is_some() {
                    files_not_read(&self.conversation)
                } else {
                    Vec::new()
                };
                return unseen_values_nudge(&self.unseen_values, &unread);
            }
            Nudge::DisownedTools => {
                if every_call_succeeded(execution_messages(&self.conversation)) {
                    DISOWNED_TOOLS_NUDGE
                } else {
                    DISOWNED_AFTER_UNKNOWN_TOOL_NUDGE
                }
            }
            Nudge::MisquotedResult => MISQUOTED_RESULT_NUDGE,
            Nudge::AmbiguousValue => {
                // (Always found when the reply was judged.)
                return self
                    .ambiguous
                    .as_ref()
                    .map_or_else(|| REREAD_RESULTS_NUDGE.to_owned(), AmbiguousValue::nudge);
            }
            Nudge::OneOfSeveralFiles => {
                // (Always found when the reply was judged.)
                return self
                    .several
                    .as_ref()
                    .map_or_else(|| REREAD_RESULTS_NUDGE.to_owned(), SeveralFiles::nudge);
            }
            Nudge::UnseenTerm => {
                return unseen_terms_nudge(self.unseen.as_deref().unwrap_or_default())
            }
            Nudge::UnshownCalculation => {
                // (Always found when the reply was judged.)
                return self
                    .uncalculated
                    .as_ref()
                    .map_or_else(|| REREAD_RESULTS_NUDGE.to_owned(), Uncalculated::nudge);
            }
            Nudge::BorrowedValue => {
                // (Always found when the reply was judged.)
                return self
                    .borrowed
                    .as_ref()
                    .map_or_else(|| REREAD_RESULTS_NUDGE.to_owned(), BorrowedValue::nudge);
            }
            Nudge::ContradictedListing => {
                // (Always found when the reply was judged.)
                return self.listed.as_ref().map_or_else(
                    || REREAD_RESULTS_NUDGE.to_owned(),
                    ListingContradiction::nudge,
                );
            }
            Nudge::ContradictedSetting => {
                // (Always found when the reply was judged.)
                return self.contradicted.as_ref().map_or_else(
                    || REREAD_RESULTS_NUDGE.to_owned(),
                    ContradictedSetting::nudge,
                );
            }
            Nudge::WrongArithmetic => {
                return match &self.miscalculated {
                    Some(found) => found.nudge(),
                    // (Always found when the reply was judged.)
                    None => "Check the arithmetic of your last reply and answer again.".to_owned(),
                };
            }
            Nudge::ChangeNotMade if self.request_is(asks_to_run) => {
                if tools.get("bash").is_some() {
                    NOT_RUN_NUDGE
                } else {
                    NOT_RUN_NO_BASH_NUDGE
                }
            }
            Nudge::ChangeNotMade if self.tools_ran => ONLY_READ_NUDGE,
            Nudge::ChangeNotMade => NO_CHANGE_NUDGE,
            Nudge::UnreadFile if self.tools_ran => return unread_files_nudge(self.unread_files()),
            Nudge::UnreadFile => UNREAD_FILE_NUDGE,
            Nudge::CallInProse => CALL_IN_PROSE_NUDGE,
            Nudge::EchoedRequest => ECHO_NUDGE,
            // The only ones that quote the request.
            Nudge::RepeatedAnswer | Nudge::CopiedStopAnswer => {
                return self.earlier_answers.nudge(&self.conversation)
            }
            Nudge::RepeatedReply => {
                return match &self.repeated {
                    Some((earlier, tool)) => repeated_reply_nudge(earlier, tool),
                    None => PLAN_NUDGE.to_owned(),
                }
            }
        }
        .to_owned()
    }

    /// The nudge for a reply that claims a call or a change the execution's calls do not
    /// show (found when the reply was judged): it names what was claimed and what ran.
    fn claim_nudge(&self) -> String {
        let ran = in_backticks(called_in_execution(&self.conversation), ", ");
        match &self.claimed {
            Some(UnmadeClaim::Calls(claimed)) => format!(
                "Your last reply says you called {}, but no such call has run for this \
                 request; the calls that ran: {ran}. Do not describe calls you have not made: \
                 make the call now if the request needs it, or answer from the results above \
                 without claiming calls.",
                in_backticks(claimed, ", ")
            ),
            Some(UnmadeClaim::ChangeTo(files)) => {
                let (was, it) = if files.len() > 1 {
                    ("were", "them")
                } else {
                    ("was", "it")
                };
                format!(
                    "Your last reply says {} {was} changed, but no call that changes files has \
                     changed {it} for this request (the calls that ran: {ran}). Make the change \
                     now: reply with only the tool call that makes it, using what you read \
                     above.",
                    in_backticks_and(files)
                )
            }
            _ => format!(
                "Your last reply says you changed something, but only tools that read have run \
                 for this request ({ran}), so nothing was changed. Make the change now with a \
                 tool if the request asks for one, or answer without claiming a change."
            ),
        }
    }

    /// The nudge for a plan written after the tools ran. When `reply` is a numbered plan and
    /// a step of it names a tool called in this execution, the nudge names the step after it:
    /// told only to answer, the 1.5B model wrote its plan again after its first step's call had
    /// run, then said it lacked the results (development task d3). In a replay of that
    /// request, told which step was next, it made that call; the live run still did not
    /// (docs/eval.md, session 18).
    fn plan_nudge(&self, reply: &str, tools: &Tools) -> String {
        let called = called_in_execution(&self.conversation);
        if let Some(next) = next_step_after_called(reply, &called) {
            return format!(
                "Your last reply wrote your plan again. The steps whose tools ran are done: \
                 their results are above. Do the next step of your plan now: {next}"
            );
        }
        // A file the request names that no call has used is work left, not an answer to
        // give: asked to bump a version in `VERSION` and `about.txt`, the 1.5B model wrote
        // `VERSION`, then twice a plan whose step reads `about.txt`; told to answer, it
        // wrote the plan again (development task d22, 2026-12-07).
        FilesLeft::of(&self.conversation, tools)
            .nudge("Your last reply described the work instead of doing it.")
            .unwrap_or_else(|| PLAN_NUDGE.to_owned())
    }

    /// Why `reply`, the model's reply to `nudge`, is dropped for the reply before it, if it
    /// is. A reply to the unread-file nudge counts only when it holds a call (native, or JSON
    /// that text-call recovery judges): without one it is the same guess in other words (the
    /// 1.5B model answered "The file notes.md contains the line: ..." having read nothing,
    /// and copied that form into every later answer), or, after the tools ran, an answer that
    /// the model says needs no more files. A reply to the repeat nudge counts
    /// only when it holds a call or is not a repeat itself: asked about a right repeat (the
    /// port found earlier), the 1.5B model gave another earlier answer, a wrong one.
    pub(crate) fn dropped_reply(
        &self,
        nudge: Nudge,
        reply: &InferenceResponse,
    ) -> Option<&'static str> {
        let holds_a_call = reply.has_tool_calls() || reply.content().contains('{');
        match nudge {
            Nudge::UnreadFile if !holds_a_call => Some("the reply to the nudge made no call"),
            Nudge::RepeatedReply
                if repeated_reply(&self.conversation, reply.content()).is_some() =>
            {
                Some("the reply to the nudge repeated the reply again")
            }
            Nudge::RepeatedAnswer | Nudge::CopiedStopAnswer
                if !holds_a_call
                    && self
                        .earlier_answers
                        .repeated_by(&self.conversation, reply.content()) =>
            {
                Some("the reply to the nudge repeated an earlier answer too")
            }
            _ => None,
        }
    }

    /// `Nudge::AmbiguousValue` when `content` gives one of the different values several files
    /// set for what it names, without its file (see `ambiguous_value`), kept for the nudge;
    /// once per step.
    fn gives_one_of_several(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::AmbiguousValue) || !self.results_may_set() {
            return None;
        }
        self.ambiguous = ambiguous_in_view(content, &self.conversation);
        self.ambiguous.is_some().then_some(Nudge::AmbiguousValue)
    }

    /// `Nudge::OneOfSeveralFiles` when `content` answers for one of several files a read
    /// showed for one name (see `several_files`), kept for the nudge; once per step.
    fn answers_for_one_file(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::OneOfSeveralFiles) {
            return None;
        }
        self.several = one_of_several_files(
            content,
            worked_result_texts(execution_messages(&self.conversation)),
        );
        self.several.is_some().then_some(Nudge::OneOfSeveralFiles)
    }

    /// `Nudge::GaveUpOnShownFile` when every call of the execution failed, `content` says
    /// so (or asks), and an error showed that a file the request names is in the workspace
    /// (see `failed_calls::requested_files_shown`), kept for the nudge; once per step. The
    /// reply to it stands, whatever it says.
    fn gives_up_on_a_shown_file(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::GaveUpOnShownFile)
            || !every_call_failed(&self.conversation)
            || ignores_the_failures(content)
        {
            return None;
        }
        let request = text_of(request(&self.conversation)?);
        self.shown_files = requested_files_shown(&self.conversation, &request);
        (!self.shown_files.is_empty()).then_some(Nudge::GaveUpOnShownFile)
    }

    /// `Nudge::UnseenValue` when `content` gives an email address or a number nothing in
    /// view holds (see `unseen_value`), kept for the nudge; once per step. The reply to it
    /// stands, whatever it says.
    fn gives_an_unseen_value(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::UnseenValue) {
            return None;
        }
        self.unseen_values = unseen_values_in(content, &self.conversation)?;
        Some(Nudge::UnseenValue)
    }

    /// `Nudge::UnseenTerm` when `content` names a file as holding what the request asks
    /// about and no result holds those words (see `unseen_term`), kept for the nudge; once
    /// per step.
    fn names_an_unseen_term(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::UnseenTerm) {
            return None;
        }
        self.unseen = unseen_terms(content, &self.conversation);
        self.unseen.is_some().then_some(Nudge::UnseenTerm)
    }

    /// `Nudge::ContradictedListing` when a directory listing among the results contradicts
    /// `content` (see `contradicted_listing`), kept for the nudge; once per step.
    fn contradicts_a_listing(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::ContradictedListing) {
            return None;
        }
        self.listed = self.contradicted_listing(content);
        self.listed.is_some().then_some(Nudge::ContradictedListing)
    }

    /// What a listing among the execution's results says otherwise than `content`.
    fn contradicted_listing(&self, content: &str) -> Option<ListingContradiction> {
        if !may_contradict_a_listing(content) {
            return None;
        }
        let results: Vec<Cow<'_, str>> =
            worked_result_texts(execution_messages(&self.conversation)).collect();
        contradicted_listing(content, results.iter().map(|result| &**result))
    }

    /// `Nudge::BorrowedValue` when `content` gives another setting's value for something no
    /// result names (see `borrowed_value`), kept for the nudge; once per step.
    fn borrows_a_value(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::BorrowedValue) || !self.results_may_set() {
            return None;
        }
        let request = text_of(request(&self.conversation)?);
        let results: Vec<Cow<'_, str>> =
            worked_result_texts(execution_messages(&self.conversation)).collect();
        self.borrowed = borrowed_value(content, &request, results.iter().map(|result| &**result));
        self.borrowed.is_some().then_some(Nudge::BorrowedValue)
    }

    /// `Nudge::ContradictedSetting` when `content` says yes or no and a setting in a result
    /// says the opposite (see `contradicted_setting`), kept for the nudge; once per step. The
    /// reply to it stands, whatever it says: the line was quoted, and a second reading is the
    /// model's.
    fn contradicts_a_setting(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::ContradictedSetting) || !self.results_may_set() {
            return None;
        }
        self.contradicted = contradicted_in_view(content, &self.conversation);
        self.contradicted
            .is_some()
            .then_some(Nudge::ContradictedSetting)
    }

    /// `Nudge::UnshownCalculation` when `content` answers a request for arithmetic with a
    /// number no result shows and no calculation (see `unshown_calculation`), kept for the
    /// nudge; once per step, and not after the step told the model a value (its wrong
    /// arithmetic corrected). The reply to it stands, its arithmetic judged in turn.
    fn calculates_unseen(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::UnshownCalculation) || self.gave(Nudge::WrongArithmetic) {
            return None;
        }
        self.uncalculated = unshown_calculation(content, &self.conversation);
        self.uncalculated
            .is_some()
            .then_some(Nudge::UnshownCalculation)
    }

    /// `Nudge::WrongArithmetic` when `content` writes an expression whose result is not its
    /// value (see `wrong_arithmetic`), kept for the nudge; once per step.
    fn miscalculates(&mut self, content: &str) -> Option<Nudge> {
        if self.gave(Nudge::WrongArithmetic) {
            return None;
        }
        self.miscalculated = wrong_arithmetic(content);
        self.miscalculated
            .is_some()
            .then_some(Nudge::WrongArithmetic)
    }

    /// Whether `content` only restates the request, the conversation's last user message
    /// (see [`echoes_request`]).
    fn echoes_the_request(&self, content: &str) -> bool {
        content.len() <= MAX_ECHO_BYTES
            && self.request_is(|request| echoes_request(content, request))
    }

    /// Whether the request (the conversation's last user message) has a text that `test`
    /// holds for; the common case, a request of one text part, is read in place.
    fn request_is(&self, test: impl FnOnce(&str) -> bool) -> bool {
        request(&self.conversation).is_some_and(|request| test(&text_of(request)))
    }

    /// Whether the request asks for a change ([`asks_for_a_change`]) or to run something
    /// ([`asks_to_run`]) and no call of the execution can have made or run it: none ran, or
    /// only tools that read.
    fn change_not_made(&self, tools: &Tools) -> bool {
        self.request_is(|request| asks_for_a_change(request) || asks_to_run(request))
            && nothing_changed_yet(&self.conversation, tools)
    }

    /// Whether `content` is a plan to use a tool or an announcement ([`is_plan_reply`]), or,
    /// for a request that does not ask how or where something is, one sentence that sends the
    /// person to read a file ([`points_to_a_file`]) or a how-to that sends them to do with a
    /// tool what the agent could do ([`sends_off_to_a_tool`]).
    fn is_plan(&self, content: &str, tools: &Tools) -> bool {
        is_plan_reply(content, tools)
            || ((points_to_a_file(content) || sends_off_to_a_tool(content, tools))
                && !self.request_is(asks_how_or_where))
    }

    /// Whether `content` copies an answer the loop made when an earlier request stopped
    /// unfinished (see `repeated_answer`).
    fn copies_a_stop_answer(&self, content: &str) -> bool {
        self.earlier_answers
            .copies_a_stop_answer(&self.conversation, content)
    }

    /// Whether `content` repeats a reply of the execution whose call ran (see
    /// [`repeated_reply`]); the reply it repeats is kept for the nudge's message.
    fn repeats_a_reply(&mut self, content: &str) -> bool {
        self.repeated = repeated_reply(&self.conversation, content)
            .map(|(earlier, tool)| (earlier, tool.to_owned()));
        self.repeated.is_some()
    }

    /// The files the request names that no call of the execution named (see
    /// [`unread_files`]).
    fn unread_files(&self) -> &[String] {
        self.unread_files
            .get_or_init(|| unread_files(&self.conversation))
    }

    fn gave(&self, nudge: Nudge) -> bool {
        self.given & nudge.bit() != 0
    }
}

/// The names of the tools called in the running execution (see [`execution_messages`]).
fn called_in_execution(conversation: &Messages) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for call in execution_messages(conversation).flat_map(Message::tool_calls) {
        if !names.contains(&call.name()) {
            names.push(call.name());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::{named_tools, reader_and_editor};
    use messages::Message;

    fn tools() -> Tools {
        named_tools(&["read_file", "edit_file"])
    }

    fn step(tools_ran: bool, request: &str) -> Nudges {
        let input = Messages::new()
            .appended(Message::system("You are a helpful assistant."))
            .appended(Message::user(request));
        Nudges::for_step(tools_ran, &ran(tools_ran, input))
    }

    /// `input` with, when `tools_ran`, the calls that read the files the tests' requests name.
    fn ran(tools_ran: bool, mut input: Messages) -> Messages {
        if tools_ran {
            for (i, path) in ["config.ini", "app.log"].into_iter().enumerate() {
                let call = messages::ToolCall::new(
                    format!("call_{i}"),
                    "read_file",
                    serde_json::json!({ "path": path }),
                );
                input = input
                    .appended(Message::assistant_tool_calls([call.clone()]))
                    .appended(Message::tool_result_for(&call, "workers = 4"));
            }
        }
        input
    }

    #[test]
    fn an_answer_about_a_file_no_call_read_is_asked_to_read_it_once() {
        // Development task d10: `a.txt` read, the answer given without opening `b.txt`.
        let call =
            messages::ToolCall::new("call_1", "read_file", serde_json::json!({"path": "a.txt"}));
        let input = Messages::new()
            .appended(Message::user(
                "a.txt and b.txt each hold a number. What is their sum?",
            ))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "     1\t17"));
        let mut nudges = Nudges::for_step(true, &input);
        let answer = "The sum of the numbers in `a.txt` and `b.txt` is 18.";
        assert_eq!(nudges.next_for(answer, &tools()), Some(Nudge::UnreadFile));
        assert!(nudges
            .message(Nudge::UnreadFile, answer, &tools())
            .starts_with("The request names `b.txt`, and no tool call of yours has used it"));
        assert_eq!(nudges.next_for(answer, &tools()), None, "once per step");
        // The reply to it counts only with a call: repeated, the answer before it stands.
        let reply = InferenceResponse::text;
        assert!(nudges
            .dropped_reply(Nudge::UnreadFile, &reply(answer))
            .is_some());
        let call = r#"{"name": "read_file", "arguments": {"path": "b.txt"}}"#;
        assert_eq!(nudges.dropped_reply(Nudge::UnreadFile, &reply(call)), None);
    }

    #[test]
    fn after_a_failed_call_a_reply_of_calls_alone_is_left_to_recovery_not_judged_as_an_answer() {
        // Development task d23: `create_folder` failed (no such tool; the error named
        // `write_file`), and the model sent the `write_file` call alone, as it had been asked.
        // It was judged an answer that ignored the failure, and never ran.
        let failed = messages::ToolCall::new(
            "call_1",
            "create_folder",
            serde_json::json!({"path": "reports"}),
        );
        let input = Messages::new()
            .appended(Message::user(
                "Create a folder named reports containing a file summary.txt with the line: \
                 all good",
            ))
            .appended(Message::assistant_tool_calls([failed.clone()]))
            .appended(Message::tool_result_for(
                &failed,
                "Error: There is no tool named `create_folder`. For what `create_folder` would \
                 do, call `write_file`. A call looks like: \
                 {\"name\":\"write_file\",\"arguments\":{\"path\":\"<path>\",\"content\":\"<content>\"}}",
            ));
        let tools = named_tools(&["read_file", "write_file"]);
        let call = "```json\n{\n  \"name\": \"write_file\",\n  \"arguments\": {\n    \"path\": \
                    \"reports/summary.txt\",\n    \"content\": \"all good\"\n  }\n}\n```";
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(call, &tools), None);
        let tagged = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \
                      \"reports/summary.txt\", \"content\": \"all good\"}}\n</tool_call>";
        assert_eq!(nudges.next_for(tagged, &tools), None);
        // An answer that ignores the failure is still asked about, and so is the error's
        // example call copied as it stands: a call the model read is text, not its call.
        let answer = "I created reports/summary.txt with the line all good.";
        assert_eq!(
            Nudges::for_step(true, &input).next_for(answer, &tools),
            Some(Nudge::AnswerAfterFailures)
        );
        let copied = r#"{"name":"write_file","arguments":{"path":"<path>","content":"<content>"}}"#;
        assert!(Nudges::for_step(true, &input)
            .next_for(copied, &tools)
            .is_some());
    }

    #[test]
    fn giving_up_on_a_file_an_error_shows_is_there_is_asked_about_once_with_its_path() {
        // A probe of issue 36's task kinds (2026-12-07): `search_files` in a folder that is
        // not there, told what the top folder holds, and the answer that the files are not.
        let failed = messages::ToolCall::new(
            "call_1",
            "search_files",
            serde_json::json!({"pattern": "visits", "path": "workspace"}),
        );
        let input = |request: &str| {
            Messages::new()
                .appended(Message::user(request))
                .appended(Message::assistant_tool_calls([failed.clone()]))
                .appended(Message::tool_result_for(
                    &failed,
                    "Error: cannot search `workspace`: no such file or directory; the \
                     workspace's top folder holds `feb.txt`, `jan.txt`",
                ))
        };
        let asked = "jan.txt and feb.txt each hold a number of visits. How many visits in both \
                     months together?";
        let gave_up = "I apologize, but I cannot proceed with the search because the \
                       workspace's top folder does not hold `feb.txt` or `jan.txt`.";
        let mut nudges = Nudges::for_step(true, &input(asked));
        assert_eq!(
            nudges.next_for(gave_up, &tools()),
            Some(Nudge::GaveUpOnShownFile)
        );
        assert_eq!(
            nudges.message(Nudge::GaveUpOnShownFile, gave_up, &tools()),
            "Your last reply says this could not be done, but an error above shows that the \
             files `feb.txt`, `jan.txt` are in the workspace. Read them now: call `read_file` \
             with the path `feb.txt`, then with the path `jan.txt`, then answer from what they \
             hold."
        );
        // A request for a change is not told to read: to call again with the path.
        let rename = "Rename jan.txt to january.txt.";
        let mut renaming = Nudges::for_step(true, &input(rename));
        let lost = "I cannot find jan.txt.";
        assert_eq!(
            renaming.next_for(lost, &tools()),
            Some(Nudge::GaveUpOnShownFile)
        );
        assert!(renaming
            .message(Nudge::GaveUpOnShownFile, lost, &tools())
            .ends_with("Call the tool again with the path the error shows, then answer."));
        // Once (the files no call named are asked about next, as before).
        assert_ne!(
            nudges.next_for(gave_up, &tools()),
            Some(Nudge::GaveUpOnShownFile)
        );
        // A request that names none of the files the error shows: the failure stands.
        let other = "What does report.txt say?";
        assert_ne!(
            Nudges::for_step(true, &input(other))
                .next_for("The file report.txt does not exist.", &tools()),
            Some(Nudge::GaveUpOnShownFile)
        );
    }

    #[test]
    fn a_value_nothing_shows_is_asked_about_once_naming_the_file_no_read_opened() {
        // A probe of issue 36's task kinds (2026-12-07): a search that matched the file's
        // name, then a made-up address.
        let search = messages::ToolCall::new(
            "call_1",
            "search_files",
            serde_json::json!({"pattern": "team.md", "path": "."}),
        );
        let request = "What is the email address of the support desk, according to team.md?";
        let input = Messages::new()
            .appended(Message::user(request))
            .appended(Message::assistant_tool_calls([search.clone()]))
            .appended(Message::tool_result_for(
                &search,
                "1 file matches `team.md`:\nteam.md",
            ));
        let made_up = "The email address of the support desk is support@example.com.";
        let tools = named_tools(&["read_file", "search_files"]);
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(made_up, &tools), Some(Nudge::UnseenValue));
        assert_eq!(
            nudges.message(Nudge::UnseenValue, made_up, &tools),
            "Your last reply gives `support@example.com`, which no tool result above shows. \
             Read `team.md` now: call `read_file` with the path `team.md`, then answer from \
             what it holds."
        );
        // Once: the reply to it stands.
        assert_eq!(nudges.next_for(made_up, &tools), None);
        // Without `read_file`, the model is told to answer from the results.
        let mut without = Nudges::for_step(true, &input);
        let searches = named_tools(&["search_files"]);
        assert_eq!(
            without.next_for(made_up, &searches),
            Some(Nudge::UnseenValue)
        );
        assert!(without
            .message(Nudge::UnseenValue, made_up, &searches)
            .ends_with(
                "Give only values the results show: if what was asked is not there, say so."
            ));
        // The address the file holds, once read, is no such value.
        let read = messages::ToolCall::new(
            "call_2",
            "read_file",
            serde_json::json!({"path": "team.md"}),
        );
        let after_read = input
            .appended(Message::assistant_tool_calls([read.clone()]))
            .appended(Message::tool_result_for(
                &read,
                "1\tSupport desk: help@acme.io",
            ));
        assert_eq!(
            Nudges::for_step(true, &after_read)
                .next_for("The support desk's address is help@acme.io.", &tools),
            None
        );
    }

    #[test]
    fn a_predicted_answer_is_asked_to_read_the_unread_file_first_then_about_the_guess() {
        // Development task d10: a plan with a made-up sum beside the read of `a.txt`.
        let plan = "I'll read both files. The sum of the numbers in `a.txt` and `b.txt` is `30`.";
        let answer = "The sum of the numbers in a.txt and b.txt is 30.";
        let read = |id: &str, path: &str| {
            messages::ToolCall::new(id, "read_file", serde_json::json!({ "path": path }))
        };
        let (a, b) = (read("call_1", "a.txt"), read("call_2", "b.txt"));
        let input = Messages::new()
            .appended(Message::user(
                "a.txt and b.txt each hold a number. What is their sum?",
            ))
            .appended(Message::assistant(plan).with_tool_calls([a.clone()]))
            .appended(Message::tool_result_for(&a, "17"));
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(answer, &tools()), Some(Nudge::UnreadFile));
        // Once `b.txt` is read, the guess is asked about, without the plan's text or the copy.
        let input = input
            .appended(Message::assistant_tool_calls([b.clone()]))
            .appended(Message::tool_result_for(&b, "25"));
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for(answer, &tools()),
            Some(Nudge::PredictedAnswer)
        );
        assert!(!Nudge::PredictedAnswer.shows_reply());
        let asked = Nudge::PredictedAnswer.asked_from(&input).to_transcript();
        assert!(!asked.contains("30") && asked.contains("25"), "{asked}");
        assert_eq!(nudges.next_for(answer, &tools()), None, "once per step");
        // Given again, it is not the answer; another one is.
        assert_eq!(
            nudges.not_an_answer(answer, &tools()),
            Some(Nudge::PredictedAnswer)
        );
        assert_eq!(nudges.not_an_answer("The sum is 42.", &tools()), None);
    }

    #[test]
    fn a_reply_repeating_one_whose_call_ran_is_asked_about_once_without_the_copy() {
        // Development task d18: the same reply and search, five times.
        let lead_in = "To determine if debug mode is enabled in `config.yaml`, you can use the \
                       `search_files` function. Here's how you can do it:";
        let arguments = serde_json::json!({"pattern": "debug_mode: true", "path": "config.yaml"});
        let call = messages::ToolCall::new("call_1", "search_files", arguments.clone());
        let input = Messages::new()
            .appended(Message::user("Is debug mode enabled in config.yaml?"))
            .appended(Message::assistant(lead_in).with_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "(no line contains `debug_mode: true`)",
            ));
        let tools = named_tools(&["search_files", "read_file"]);
        let repeat = format!(
            "{lead_in}\n\n{}",
            serde_json::json!({"name": "search_files", "arguments": arguments})
        );
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(&repeat, &tools), Some(Nudge::RepeatedReply));
        assert!(!Nudge::RepeatedReply.shows_reply());
        assert!(nudges
            .message(Nudge::RepeatedReply, &repeat, &tools)
            .starts_with("You already sent that reply, and its `search_files` call ran"));
        let reply = InferenceResponse::text;
        assert!(nudges
            .dropped_reply(Nudge::RepeatedReply, &reply(repeat.as_str()))
            .is_some());
        assert_eq!(
            nudges.dropped_reply(Nudge::RepeatedReply, &reply("No, debug mode is off.")),
            None
        );
        assert_ne!(
            nudges.next_for(&repeat, &tools),
            Some(Nudge::RepeatedReply),
            "once per step"
        );
        // Before any tool ran there is nothing to repeat.
        assert_ne!(
            Nudges::for_step(false, &input).next_for(&repeat, &tools),
            Some(Nudge::RepeatedReply)
        );
    }

    // The 1.5B model's replies in issue 32's 32-turn conversation (separated mode, turn 12):
    // first a claim, then, after the claim nudge, a plan.
    const CHANGE: &str = "In config.ini, change workers from 4 to 6.";
    const CLAIM: &str = "The workers in config.ini have been changed from 4 to 6.";
    const PLAN: &str = "To change the workers from 4 to 6 in config.ini, you can use the `edit_file` function to replace the line.";

    #[test]
    fn after_a_read_a_claimed_edit_is_asked_about_once_naming_what_ran() {
        // Turn 12 of the 32-turn conversation at b072271: only read_file ran.
        let claim = "To change workers from 4 to 6, I called the `edit_file` function with \
                     the path \"config.ini\". The result was a file with the updated content.";
        let mut nudges = step(true, CHANGE);
        assert_eq!(
            nudges.next_for(claim, &tools()),
            Some(Nudge::ClaimBeyondCalls)
        );
        assert_eq!(
            nudges.message(Nudge::ClaimBeyondCalls, claim, &tools()),
            "Your last reply says you called `edit_file`, but no such call has run for this \
             request; the calls that ran: `read_file`. Do not describe calls you have not \
             made: make the call now if the request needs it, or answer from the results \
             above without claiming calls."
        );
        // Asked about once as such (a claim that tells nothing found is narration too).
        assert_eq!(nudges.next_for(claim, &tools()), Some(Nudge::Narration));
        assert_eq!(nudges.next_for(claim, &tools()), None);
        // Said again after its nudge, it is not the answer; a reply without the claim is.
        assert_eq!(
            nudges.not_an_answer(claim, &tools()),
            Some(Nudge::ClaimBeyondCalls)
        );
        assert_eq!(nudges.not_an_answer("workers = 4.", &tools()), None);
        // Before its nudge, the judgement is the nudge's to make.
        assert_eq!(step(true, CHANGE).not_an_answer(claim, &tools()), None);
        // A claim the calls bear out, with what they found, is an answer.
        let mut nudges = step(true, "How many workers does config.ini set?");
        assert_eq!(
            nudges.next_for("I used the `read_file` function: workers = 4.", &tools()),
            None
        );
    }

    #[test]
    fn a_file_said_changed_after_only_a_read_of_it_is_asked_to_be_changed() {
        // The ReAct driver's d22 at deb58ba, in this driver's terms: one file edited, the
        // other only read, and the answer says the other was changed.
        let mut input = Messages::new()
            .appended(Message::system("You are a helpful assistant."))
            .appended(Message::user(
                "Change the version from 1.4.0 to 1.5.0 in both app.toml and about.txt.",
            ));
        for (id, name, path, result) in [
            (
                "call_1",
                "edit_file",
                "app.toml",
                "replaced 1 occurrence in `app.toml`",
            ),
            ("call_2", "read_file", "about.txt", "     1\tWidget 1.4.0"),
        ] {
            let call = messages::ToolCall::new(id, name, serde_json::json!({ "path": path }));
            input = input
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, result));
        }
        let tools = reader_and_editor();
        let claim = "The version in about.txt has been changed from 1.4.0 to 1.5.0.";
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for(claim, &tools),
            Some(Nudge::ClaimBeyondCalls)
        );
        assert_eq!(
            nudges.message(Nudge::ClaimBeyondCalls, claim, &tools),
            "Your last reply says `about.txt` was changed, but no call that changes files has \
             changed it for this request (the calls that ran: `read_file`, `edit_file`). Make \
             the change now: reply with only the tool call that makes it, using what you read \
             above."
        );
        // Said again after its nudge, it is no answer; the change said of the edited file is.
        assert_eq!(
            nudges.not_an_answer(claim, &tools),
            Some(Nudge::ClaimBeyondCalls)
        );
        assert_eq!(
            nudges.not_an_answer("app.toml has been changed to 1.5.0.", &tools),
            None
        );
    }

    #[test]
    fn a_claim_a_plan_and_an_answer_from_memory_get_one_nudge_each() {
        let mut nudges = step(false, CHANGE);
        assert_eq!(nudges.next_for(CLAIM, &tools()), Some(Nudge::Claim));
        assert_eq!(
            nudges.next_for(PLAN, &tools()),
            Some(Nudge::PlanWithoutCall)
        );
        assert_eq!(nudges.next_for("Done.", &tools()), Some(Nudge::UnreadFile));
        for reply in [CLAIM, PLAN, "Done."] {
            assert_eq!(nudges.next_for(reply, &tools()), None, "{reply}");
        }
        // After the claim's nudge, a change claimed in the first person is not the answer; one
        // told of in the passive (a file may say "was changed") stands.
        let first_person = "I have changed workers from 4 to 6 in config.ini.";
        assert_eq!(
            nudges.not_an_answer(first_person, &tools()),
            Some(Nudge::Claim)
        );
        assert_eq!(nudges.not_an_answer(CLAIM, &tools()), None);
    }

    #[test]
    fn an_answer_about_a_named_file_from_memory_is_asked_to_look() {
        // Separated mode, turn 2: "There are 10 lines" (app.log has 34), no tool called.
        let mut nudges = step(false, "How many lines in app.log contain ERROR?");
        assert_eq!(
            nudges.next_for("There are 10 lines that contain ERROR.", &tools()),
            Some(Nudge::UnreadFile)
        );
        // A request that names no file is answered from what the model knows.
        let mut nudges = step(false, "Remind me: who owns the release?");
        assert_eq!(nudges.next_for("Priya Raman.", &tools()), None);
        // Once a tool ran, the answer may come from its result.
        let mut nudges = step(true, "How many lines in app.log contain ERROR?");
        assert_eq!(nudges.next_for("34 lines.", &tools()), None);
    }

    #[test]
    fn a_plan_after_the_tools_ran_is_asked_for_an_answer_once() {
        let mut nudges = step(true, CHANGE);
        assert_eq!(
            nudges.next_for(PLAN, &tools()),
            Some(Nudge::PlanAfterResults)
        );
        assert_eq!(nudges.next_for(PLAN, &tools()), None);
        // A change asked for and not made (the reads only read): the nudge asks for the
        // change, not for an answer in plain text (development task d22).
        let reads = crate::test_tools::reader_and_editor();
        assert_eq!(
            nudges.message(Nudge::PlanAfterResults, PLAN, &reads),
            CHANGE_PLAN_NUDGE
        );
        let question = step(true, "What does config.ini set workers to?");
        assert_eq!(
            question.message(Nudge::PlanAfterResults, PLAN, &reads),
            PLAN_NUDGE
        );
        // An edit that failed changed nothing; one that worked did.
        let edited = |result: &str| {
            let call = messages::ToolCall::new(
                "call_9",
                "edit_file",
                serde_json::json!({"path": "config.ini"}),
            );
            let input = ran(true, Messages::new().appended(Message::user(CHANGE)))
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, result));
            Nudges::for_step(true, &input).message(Nudge::PlanAfterResults, PLAN, &reads)
        };
        assert_eq!(
            edited("Error: `config.ini` was not changed: read it first"),
            CHANGE_PLAN_NUDGE
        );
        assert_eq!(edited("Edited config.ini: 1 replacement."), PLAN_NUDGE);
        // A claim after the tools ran is what happened.
        assert_eq!(step(true, CHANGE).next_for(CLAIM, &tools()), None);
    }

    #[test]
    fn a_plan_before_any_tool_ran_is_not_an_answer_after_its_nudge_unless_the_request_asks_how() {
        // Issue 32's 32-turn conversation, digest mode, turn 7: this reply twice, saved as the
        // answer, then the answer of every later turn but one.
        let reply = "To list the Python files in the src directory, you can use the `read_file` \
                     function with the path `src`.";
        let mut nudges = step(false, "List the Python files in the src directory.");
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::PlanWithoutCall)
        );
        assert_eq!(
            nudges.not_an_answer(reply, &tools()),
            Some(Nudge::PlanWithoutCall)
        );
        // An answer after the nudge is one.
        assert_eq!(nudges.not_an_answer("app.py and utils.py.", &tools()), None);
        // Not asked about, a plan is judged by its nudge alone.
        assert_eq!(
            step(false, "List the Python files in the src directory.")
                .not_an_answer(reply, &tools()),
            None
        );
        // A request that asks how may get its how-to again.
        let mut nudges = step(
            false,
            "How do I list the Python files in the src directory?",
        );
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::PlanWithoutCall)
        );
        assert_eq!(nudges.not_an_answer(reply, &tools()), None);
    }

    #[test]
    fn a_reply_sending_the_person_to_a_file_is_asked_to_read_it_then_is_not_an_answer() {
        // The 32-turn conversation at 32bbf26, turn 21: a file read, then this reply, saved as
        // the answer and copied by three later turns.
        let reply = "To find the workers value, you need to read the `notes.md` file.";
        let request = "What pool_size does config.ini set for the database?";
        let mut nudges = step(true, request);
        let nudge = nudges.next_for(reply, &tools());
        assert_eq!(nudge, Some(Nudge::PlanAfterResults));
        assert_eq!(
            nudges.message(Nudge::PlanAfterResults, reply, &tools()),
            READ_IT_NUDGE
        );
        // Said again after its nudge, it is not saved as the answer.
        assert_eq!(
            nudges.not_an_answer(reply, &tools()),
            Some(Nudge::PlanAfterResults)
        );
        // With no tool run, the model is asked to make the call.
        let mut nudges = step(false, request);
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::PlanWithoutCall)
        );
        assert_eq!(
            nudges.message(Nudge::PlanWithoutCall, reply, &tools()),
            READ_IT_NUDGE
        );
        // A request that asks where or how may be answered with a file.
        for request in [
            "Where is the workers value set?",
            "How do I see the workers value?",
        ] {
            assert_eq!(
                step(true, request).next_for(reply, &tools()),
                None,
                "{request}"
            );
        }
    }

    #[test]
    fn a_copied_tool_error_is_asked_for_an_answer_once_then_is_not_an_answer() {
        // Issue 36: after `rename_file` failed as unknown, the fix-it text was the answer.
        let error = "Error: There is no tool named `rename_file`. The tools are: `read_file`, \
                     `edit_file`.";
        let call = messages::ToolCall::new("call_1", "rename_file", serde_json::json!({}));
        let input = Messages::new()
            .appended(Message::user("Rename draft.txt to final.txt."))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, error));
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(error, &tools()), Some(Nudge::CopiedError));
        assert_eq!(nudges.next_for(error, &tools()), None, "once per step");
        assert_eq!(
            nudges.not_an_answer(error, &tools()),
            Some(Nudge::CopiedError)
        );
        assert_eq!(
            nudges.not_an_answer(PLAN, &tools()),
            Some(Nudge::PlanAfterResults)
        );
        let answer = "There is no tool to rename files here, so draft.txt is unchanged.";
        assert_eq!(nudges.not_an_answer(answer, &tools()), None);
        // Before any tool ran, nothing is judged this way.
        assert_eq!(step(false, CHANGE).not_an_answer(PLAN, &tools()), None);
    }

    #[test]
    fn a_tool_errors_advice_passed_on_to_the_person_is_asked_about_once_then_not_an_answer() {
        // The 32-turn conversation, turn 12: the edit failed and its advice became the answer,
        // which later turns copied; a nudge alone did not help (the model said it again and
        // the reply stood, copied by the next 11 turns).
        let call = messages::ToolCall::new("call_1", "edit_file", serde_json::json!({}));
        let input = Messages::new()
            .appended(Message::user(CHANGE))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "Error: old_string was not found in `config.ini`; read the file and copy the \
                 text exactly",
            ));
        let reply = "To fix this, you need to copy the text exactly from `config.ini`.";
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(nudges.next_for(reply, &tools()), Some(Nudge::RelayedAdvice));
        assert_eq!(
            nudges.message(Nudge::RelayedAdvice, reply, &tools()),
            RELAYED_ADVICE_NUDGE
        );
        // Once; said again after it, it is not an answer: the run answers on stop.
        assert_eq!(nudges.next_for(reply, &tools()), None);
        assert_eq!(
            nudges.not_an_answer(reply, &tools()),
            Some(Nudge::RelayedAdvice)
        );
        // The advice followed, an answer stands.
        let answer = "The edit failed: `config.ini` does not hold that text, so nothing changed.";
        assert_eq!(nudges.not_an_answer(answer, &tools()), None);
        // Without a failed tool, advice is not relayed from anywhere.
        assert_ne!(
            step(true, CHANGE).next_for(reply, &tools()),
            Some(Nudge::RelayedAdvice)
        );
    }

    #[test]
    fn a_call_among_other_text_is_asked_about_once_then_left_to_recovery() {
        let plan_with_call = "You can use the `read_file` function: {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}";
        let mut nudges = step(false, CHANGE);
        assert_eq!(
            nudges.next_for(plan_with_call, &tools()),
            Some(Nudge::CallInProse)
        );
        assert_eq!(nudges.next_for(plan_with_call, &tools()), None);
        // A call alone runs, a call announced after prose to a tool that only reads runs:
        // neither is asked about.
        let alone = r#"{"name": "edit_file", "arguments": {"path": "a"}}"#;
        assert_eq!(step(false, CHANGE).next_for(alone, &tools()), None);
        // A call the model read in a tool result or a user message is text, never asked about.
        let input = Messages::new().appended(Message::user(format!(
            "What does this do? You can use the `edit_file` function: {alone}"
        )));
        let echoed = format!("It calls `edit_file` like this: {alone} to change a.");
        assert_eq!(
            Nudges::for_step(false, &input).next_for(&echoed, &tools()),
            None
        );
        assert_eq!(
            step(false, "What is 17 times 3?").next_for("51", &tools()),
            None
        );
    }

    #[test]
    fn a_repeat_of_an_earlier_answer_to_another_request_is_asked_about_once() {
        // Issue 32's separated run, turn 12 (1.5B model): the edit request got a line of the
        // answer before it.
        let earlier = "The default port configured for the server is 8472.";
        let with_request = |request: &str| {
            Messages::new()
                .appended(Message::user(
                    "What default port does parse_port fall back to?",
                ))
                .appended(Message::assistant(earlier))
                .appended(Message::user(request))
        };
        // Before any tool ran, a request naming a file gets the unread-file nudge first.
        for (tools_ran, request) in [(true, CHANGE), (false, "And how many workers are there?")] {
            let mut nudges = Nudges::for_step(tools_ran, &ran(tools_ran, with_request(request)));
            assert_eq!(
                nudges.next_for(earlier, &tools()),
                Some(Nudge::RepeatedAnswer)
            );
            assert!(nudges
                .message(Nudge::RepeatedAnswer, "", &tools())
                .ends_with(&format!("\"{request}\"")));
            // A repeat in reply to the nudge is dropped and the reply before it stands; a
            // new answer or a call counts. Never an error.
            let reply = InferenceResponse::text;
            let repeat = "The default port configured for the server is 8472";
            assert!(nudges
                .dropped_reply(Nudge::RepeatedAnswer, &reply(repeat))
                .is_some());
            for counts in [
                "Workers is 6 now.",
                r#"{"name": "edit_file", "arguments": {}}"#,
            ] {
                assert_eq!(
                    nudges.dropped_reply(Nudge::RepeatedAnswer, &reply(counts)),
                    None
                );
            }
            assert_eq!(nudges.next_for(earlier, &tools()), None);
            assert_eq!(nudges.not_an_answer(earlier, &tools()), None);
        }
        // A repeated how-to holding JSON (turns 27 to 32, no tool run) is asked about too.
        let how_to = r#"To read the file "notes.md", use the `read_file` function with the arguments `{"path": "notes.md"}`."#;
        let input = Messages::new()
            .appended(Message::user("What does RELEASE.txt contain?"))
            .appended(Message::assistant(how_to))
            .appended(Message::user("What does the HTTP status code 404 mean?"));
        assert_eq!(
            Nudges::for_step(false, &input).next_for(how_to, &tools()),
            Some(Nudge::RepeatedAnswer)
        );
        // A new answer is not asked about.
        let mut nudges = Nudges::for_step(true, &ran(true, with_request(CHANGE)));
        assert_eq!(nudges.next_for("Done: workers = 6.", &tools()), None);
    }

    #[test]
    fn an_answer_about_a_file_the_request_is_not_about_is_asked_about_then_is_not_an_answer() {
        // Issue 32's separated run at 7797c6d, turn 21: after reading data/orders.csv, the
        // 1.5B model gave turn 17's answer; asked about the repeat, it repeated it again, and
        // the copy stood.
        let earlier = "The number of ERROR lines in `logs/server.log` is 34.";
        let request = "How many orders in data/orders.csv have the status refunded?";
        let call = messages::ToolCall::new(
            "call_1",
            "read_file",
            serde_json::json!({ "path": "data/orders.csv" }),
        );
        let input = Messages::new()
            .appended(Message::user(
                "How many lines in logs/server.log contain ERROR?",
            ))
            .appended(Message::assistant(earlier))
            .appended(Message::user(request))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "order,status\n1042,refunded\n1043,shipped\n",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        // Asked about as what it is, before the repeat rule.
        assert_eq!(nudges.next_for(earlier, &tools()), Some(Nudge::ForeignFile));
        let message = nudges.message(Nudge::ForeignFile, earlier, &tools());
        assert!(message.contains("`logs/server.log`"), "{message}");
        assert!(message.ends_with(&format!("\"{request}\"")), "{message}");
        // Said again, it is not an answer (the run answers on stop); the answer stands.
        assert_eq!(nudges.next_for(earlier, &tools()), None);
        assert_eq!(
            nudges.not_an_answer(earlier, &tools()),
            Some(Nudge::ForeignFile)
        );
        let answer = "One order in data/orders.csv has the status refunded: 1042.";
        assert_eq!(nudges.next_for(answer, &tools()), None);
        assert_eq!(nudges.not_an_answer(answer, &tools()), None);
        // A repeat the repeat rule kept in place of its reply is judged too: a step that
        // asked only about the repeat does not save it.
        let mut repeat_only = Nudges::for_step(true, &input);
        repeat_only.given |= Nudge::RepeatedAnswer.bit();
        assert_eq!(
            repeat_only.not_an_answer(earlier, &tools()),
            Some(Nudge::ForeignFile)
        );
    }

    #[test]
    fn a_copy_of_an_answer_made_on_a_stop_is_asked_about_without_it_then_is_not_an_answer() {
        // Issue 32's separated run (session 20): turn 12 stopped and its synthesized apology
        // became the answer of eight later turns, four of them after their tool had ran.
        let apology = "I'm sorry, but I cannot answer your question as I do not have the \
                       information you need to provide.";
        let stopped = Message::assistant(apology)
            .with_metadata(agents_core::INCOMPLETE_KEY, true)
            .with_metadata(agents_core::ANSWERED_BY_KEY, "synthesize");
        let with_request = |request: &str| {
            Messages::new()
                .appended(Message::user("In config.ini, change workers from 4 to 6."))
                .appended(stopped.clone())
                .appended(Message::user(request))
        };
        for tools_ran in [true, false] {
            let request = "Read config.ini again: what is the workers value now?";
            let input = ran(tools_ran, with_request(request));
            let mut nudges = Nudges::for_step(tools_ran, &input);
            let nudge = nudges.next_for(apology, &tools());
            assert_eq!(
                nudge,
                Some(Nudge::CopiedStopAnswer),
                "tools ran: {tools_ran}"
            );
            assert!(!Nudge::CopiedStopAnswer.shows_reply());
            assert!(nudges
                .message(Nudge::CopiedStopAnswer, apology, &tools())
                .ends_with(&format!("\"{request}\"")));
            // The request that asks again has no answer made on a stop, and everything else.
            let asked = Nudge::CopiedStopAnswer.asked_from(&input);
            assert_eq!(asked.len(), input.len() - 1);
            assert!(!asked.to_transcript().contains("I'm sorry"));
            assert_eq!(Nudge::RepeatedAnswer.asked_from(&input).len(), input.len());
            // A copy again is dropped, and the copy that stands is not an answer; a new
            // answer or a call counts.
            let reply = InferenceResponse::text;
            assert!(nudges
                .dropped_reply(Nudge::CopiedStopAnswer, &reply(apology))
                .is_some());
            assert_eq!(
                nudges.not_an_answer(apology, &tools()),
                Some(Nudge::CopiedStopAnswer)
            );
            for counts in ["Workers is 4.", r#"{"name": "read_file", "arguments": {}}"#] {
                assert_eq!(
                    nudges.dropped_reply(Nudge::CopiedStopAnswer, &reply(counts)),
                    None
                );
                assert_eq!(nudges.not_an_answer(counts, &tools()), None);
            }
        }
        // The same words as an ordinary answer of an earlier request are a repeat only: asked
        // about once, never refused as an answer.
        let input = Messages::new()
            .appended(Message::user("What is the admin password?"))
            .appended(Message::assistant(apology))
            .appended(Message::user("And the database password?"));
        let mut nudges = Nudges::for_step(true, &ran(true, input));
        assert_eq!(
            nudges.next_for(apology, &tools()),
            Some(Nudge::RepeatedAnswer)
        );
        assert_eq!(nudges.not_an_answer(apology, &tools()), None);
    }

    #[test]
    fn a_request_to_run_answered_after_only_reads_is_asked_to_run_it_once() {
        // A probe of issue 36's task kinds: "Run wc -w on story.txt", the file read, "10".
        let reads = crate::test_tools::reader_and_editor();
        let request = "Run wc -w on story.txt and tell me how many words it has.";
        let mut nudges = step(true, request);
        assert_eq!(nudges.next_for("10", &reads), Some(Nudge::ChangeNotMade));
        assert_eq!(
            nudges.message(Nudge::ChangeNotMade, "10", &reads),
            NOT_RUN_NO_BASH_NUDGE
        );
        let with_bash = named_tools(&["read_file", "bash"]);
        assert_eq!(
            nudges.message(Nudge::ChangeNotMade, "10", &with_bash),
            NOT_RUN_NUDGE
        );
        assert_eq!(nudges.next_for("10", &reads), None, "once");
        // A question about running is no request to run.
        let mut nudges = step(true, "How long does the nightly job run?");
        assert_ne!(
            nudges.next_for("It runs for an hour.", &reads),
            Some(Nudge::ChangeNotMade)
        );
    }

    #[test]
    fn a_change_request_answered_after_only_reads_is_asked_for_the_change_once() {
        // `read_file` only reads; `edit_file` declares nothing, so it may change anything.
        let reads = crate::test_tools::reader_and_editor();
        // The 32-turn conversation, turn 12, in every separated run: `config.ini` read, then
        // another fact as the answer; the file never changed.
        let request = "In config.ini, change workers from 4 to 6.";
        let reply = "The port in config.ini is 8472.";
        let mut nudges = step(true, request);
        assert_eq!(nudges.next_for(reply, &reads), Some(Nudge::ChangeNotMade));
        assert_eq!(
            nudges.message(Nudge::ChangeNotMade, reply, &tools()),
            ONLY_READ_NUDGE
        );
        // Once: the reply to it stands (the change may be impossible, or made already).
        assert_eq!(nudges.next_for(reply, &reads), None);
        assert_eq!(nudges.not_an_answer(reply, &reads), None);
        // With no tool run, the model is first asked to read the file the request names; a
        // request that names none is asked for the change.
        let mut nudges = step(false, request);
        assert_eq!(nudges.next_for(reply, &reads), Some(Nudge::UnreadFile));
        assert_eq!(nudges.next_for(reply, &reads), None);
        let mut nudges = step(false, "Create a file with the port in it.");
        assert_eq!(nudges.next_for(reply, &reads), Some(Nudge::ChangeNotMade));
        assert_eq!(
            nudges.message(Nudge::ChangeNotMade, reply, &tools()),
            NO_CHANGE_NUDGE
        );
        // A call of a tool that may change something, or a question, gets no such nudge
        // (the port, which no result holds, is asked about as a value nothing shows).
        assert_eq!(
            step(true, request).next_for(reply, &tools()),
            Some(Nudge::UnseenValue),
            "after `edit_file` may have run"
        );
        assert_eq!(
            step(true, "Which port does config.ini set?").next_for(reply, &reads),
            Some(Nudge::UnseenValue)
        );
    }

    #[test]
    fn a_file_named_from_a_listing_as_holding_a_word_is_asked_about_once() {
        // Development task d3: the directory listed, a file named without being opened.
        let call =
            messages::ToolCall::new("call_1", "list_dir", serde_json::json!({"path": "notes"}));
        let input = Messages::new()
            .appended(Message::user(
                "Which file in the notes directory mentions a zeppelin?",
            ))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "[file] alpha.txt (26 bytes)\n[file] bravo.txt (49 bytes)\nIn all: 2 files.",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "The file that mentions \"zeppelin\" is `alpha.txt`.";
        assert_eq!(nudges.next_for(reply, &tools()), Some(Nudge::UnseenTerm));
        assert!(nudges
            .message(Nudge::UnseenTerm, reply, &tools())
            .starts_with("No tool result above contains `zeppelin`"));
        assert_eq!(nudges.next_for(reply, &tools()), None, "once per step");
        assert_eq!(nudges.not_an_answer(reply, &tools()), None);
    }

    #[test]
    fn a_yes_a_setting_in_view_contradicts_is_asked_about_once_quoting_the_line() {
        // Development task d18: shown `debug: false`, the 1.5B model answered "Yes".
        let call = messages::ToolCall::new(
            "call_1",
            "read_file",
            serde_json::json!({"path": "config.yaml"}),
        );
        let input = Messages::new()
            .appended(Message::user("Is debug mode enabled in config.yaml?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "     1\tapp: shop\n     2\tdebug: false\n     3\tworkers: 2",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "Yes, debug mode is enabled in `config.yaml`.";
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::ContradictedSetting)
        );
        assert!(nudges
            .message(Nudge::ContradictedSetting, reply, &tools())
            .contains("which says `debug: false`"));
        // Once per step; the reply to it stands.
        assert_eq!(nudges.next_for(reply, &tools()), None);
        assert_eq!(nudges.not_an_answer(reply, &tools()), None);
        // The right answer is not asked about.
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for("No, debug mode is not enabled: `debug: false`.", &tools()),
            None
        );
    }

    #[test]
    fn a_count_a_listing_in_view_contradicts_is_asked_about_once_quoting_the_count_line() {
        // Development task d20 (the ReAct driver's answer): shown `3 .md files`, "5".
        let call =
            messages::ToolCall::new("call_1", "list_dir", serde_json::json!({"path": "docs"}));
        let input = Messages::new()
            .appended(Message::user(
                "How many Markdown (.md) files are in the docs folder?",
            ))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "[file] conf.json (3 bytes)\n[file] faq.md (6 bytes)\n[file] intro.md (8 bytes)\n\
                 [file] logo.txt (7 bytes)\n[file] setup.md (8 bytes)\nIn all: 5 files (3 .md \
                 files, 1 .json file, 1 .txt file).",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "There are 5 Markdown files in the docs folder.";
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::ContradictedListing)
        );
        assert_eq!(
            nudges.message(Nudge::ContradictedListing, reply, &tools()),
            "Your last reply says 5 markdown files, but the listing above says `In all: 5 \
             files (3 .md files, 1 .json file, 1 .txt file).`. Read that line again and answer \
             the question from what it says."
        );
        // Once per step; given again, it is no answer (the run answers on stop), and a
        // right answer after the nudge is.
        assert_eq!(nudges.next_for(reply, &tools()), None);
        assert_eq!(
            nudges.not_an_answer(reply, &tools()),
            Some(Nudge::ContradictedListing)
        );
        assert_eq!(
            nudges.not_an_answer("There are 3 Markdown files.", &tools()),
            None
        );
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for("There are 3 Markdown files in the docs folder.", &tools()),
            None
        );
    }

    #[test]
    fn another_settings_value_given_for_what_no_result_names_is_asked_about_once() {
        // Development task d27 (the ReAct driver's answer): no password, "admin" given.
        let call = messages::ToolCall::new(
            "call_1",
            "read_file",
            serde_json::json!({"path": "settings.ini"}),
        );
        let input = Messages::new()
            .appended(Message::user(
                "What is the database password in settings.ini?",
            ))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "     1\t[database]\n     2\thost = db.local\n     3\tuser = admin",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "The database password is admin.";
        assert_eq!(nudges.next_for(reply, &tools()), Some(Nudge::BorrowedValue));
        assert!(nudges
            .message(Nudge::BorrowedValue, reply, &tools())
            .starts_with("Your last reply gives `admin` for the password, but no tool result"));
        // Once per step; the reply to it stands.
        assert_eq!(nudges.next_for(reply, &tools()), None);
        assert_eq!(nudges.not_an_answer(reply, &tools()), None);
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for("settings.ini sets no database password.", &tools()),
            None
        );
    }

    #[test]
    fn wrong_arithmetic_is_asked_about_once_with_the_value_whether_or_not_a_tool_ran() {
        for tools_ran in [false, true] {
            let mut nudges = step(tools_ran, "What is 17 + 25?");
            let reply = "17 + 25 = 43.";
            assert_eq!(
                nudges.next_for(reply, &tools()),
                Some(Nudge::WrongArithmetic),
                "{tools_ran}"
            );
            assert!(nudges
                .message(Nudge::WrongArithmetic, reply, &tools())
                .starts_with("Your last reply says 17 + 25 = 43, but 17 + 25 = 42."));
            assert_eq!(nudges.next_for(reply, &tools()), None, "once per step");
            assert_eq!(nudges.not_an_answer(reply, &tools()), None);
            let mut nudges = step(tools_ran, "What is 17 + 25?");
            assert_eq!(nudges.next_for("17 + 25 = 42.", &tools()), None);
        }
        // A file the request names and no call read is asked about first: the sum may need it.
        let mut nudges = step(
            true,
            "a.txt and b.txt each hold a number. What is their sum?",
        );
        assert_eq!(
            nudges.next_for("17 + 25 = 43.", &tools()),
            Some(Nudge::UnreadFile)
        );
    }

    #[test]
    fn an_answer_for_one_of_several_files_of_a_name_is_asked_about_once() {
        // A probe of issue 36's task kinds (d123): read_file showed two READMEs.
        let call = messages::ToolCall::new(
            "call_1",
            "read_file",
            serde_json::json!({"path": "README.md"}),
        );
        let input = Messages::new()
            .appended(Message::user("What version does the README say?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "(no file is named `README.md` in the workspace's top folder; 2 files have that \
                 name, each shown below: `api/README.md`, `web/README.md`; the request does not \
                 say which one it means)\n== api/README.md ==\n     1\tVersion 2.1 of the \
                 API.\n== web/README.md ==\n     1\tVersion 5.0 of the web app.",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "The README file is named `api/README.md` and says \"Version 2.1 of the API.\"";
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::OneOfSeveralFiles)
        );
        assert!(nudges
            .message(Nudge::OneOfSeveralFiles, reply, &tools())
            .starts_with("The tool result above shows 2 files of that name"));
        assert_eq!(nudges.next_for(reply, &tools()), None, "once per step");
        let mut nudges = Nudges::for_step(true, &input);
        assert_eq!(
            nudges.next_for("api/README.md says 2.1; web/README.md says 5.0.", &tools()),
            None
        );
    }

    #[test]
    fn a_total_given_without_its_calculation_is_asked_for_it_then_the_arithmetic_is_judged() {
        // Development task d15: the column read, "890" given for 770.
        let call = messages::ToolCall::new(
            "call_1",
            "read_file",
            serde_json::json!({"path": "sales.csv"}),
        );
        let input = Messages::new()
            .appended(Message::user(
                "What is the total of the amount column in sales.csv?",
            ))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "     1\tregion,amount\n     2\tnorth,120\n     3\tsouth,340\n     4\teast,215\n     5\twest,95",
            ));
        let mut nudges = Nudges::for_step(true, &input);
        let reply = "The total of the amount column in sales.csv is 890.";
        assert_eq!(
            nudges.next_for(reply, &tools()),
            Some(Nudge::UnshownCalculation)
        );
        assert!(nudges
            .message(Nudge::UnshownCalculation, reply, &tools())
            .starts_with("Your last reply gives `890`, which no tool result above shows"));
        assert_eq!(nudges.next_for(reply, &tools()), None, "once per step");
        let written = "120 + 340 + 215 + 95 = 890";
        assert_eq!(
            nudges.next_for(written, &tools()),
            Some(Nudge::WrongArithmetic)
        );
        assert_eq!(
            nudges.next_for("120 + 340 + 215 + 95 = 770", &tools()),
            None
        );
        assert_eq!(
            nudges.not_an_answer(reply, &tools()),
            None,
            "the reply stands"
        );
        // Before any tool ran, a sum is not asked for its calculation: no result to use.
        let mut nudges = step(false, "What is the total of 17 and 25?");
        assert_eq!(nudges.next_for("It is 42.", &tools()), None);
    }

    #[test]
    fn each_kind_has_its_own_journal_key() {
        let kinds = [
            Nudge::PlanAfterResults,
            Nudge::CopiedError,
            Nudge::Claim,
            Nudge::ClaimBeyondCalls,
            Nudge::PlanWithoutCall,
            Nudge::UnreadFile,
            Nudge::CallInProse,
            Nudge::Narration,
            Nudge::RepeatedAnswer,
            Nudge::EchoedRequest,
            Nudge::RepeatedReply,
            Nudge::CopiedStopAnswer,
            Nudge::ChangeNotMade,
            Nudge::RelayedAdvice,
            Nudge::ForeignFile,
            Nudge::PredictedAnswer,
            Nudge::AnswerAfterFailures,
            Nudge::GaveUpOnShownFile,
            Nudge::DisownedTools,
            Nudge::MisquotedResult,
            Nudge::WrongArithmetic,
            Nudge::ContradictedSetting,
            Nudge::ContradictedListing,
            Nudge::BorrowedValue,
            Nudge::UnseenTerm,
            Nudge::AmbiguousValue,
            Nudge::UnshownCalculation,
            Nudge::UnseenValue,
            Nudge::OneOfSeveralFiles,
        ];
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i + 1..] {
                assert_ne!(a.key(), b.key());
                assert_ne!(a.bit(), b.bit());
            }
        }
    }
}
