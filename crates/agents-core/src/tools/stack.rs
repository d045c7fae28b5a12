//! The standard tool-call onion, read top to bottom in the order a call goes through it.

use std::sync::Arc;

use crate::tools::layer::{ToolLayer, ToolLayers};
use crate::tools::layers::answer_repeats::AnswerRepeats;
use crate::tools::layers::cap_output::CapOutput;
use crate::tools::layers::hold_for_approval::HoldForApproval;
use crate::tools::layers::journal_calls::JournalCalls;
use crate::tools::layers::refuse_repeats::RefuseRepeats;
use crate::tools::layers::report_calls::ReportCalls;

/// The layers every tool call of every agent goes through, outermost first. The agent adds its
/// user's layers (tool hooks, rate limiters, audit logs) inside these, just around the
/// executor, which looks the tool up, checks the arguments against its schema and runs it
/// under its timeout:
///
/// ```text
/// HoldForApproval   a call the approval policy names waits for a person (a placeholder result)
/// CapOutput         what the model sees is cut to the output limit, with a note
/// ReportCalls       the listeners hear of the call and of its whole result (ToolCallStarted,
///                   ToolCallCompleted or ToolCallBlocked)
/// AnswerRepeats     a read-only call identical to the one just answered gets that result again,
///                   with "answer from it now", instead of running (unless RefuseRepeats
///                   would refuse it)
/// RefuseRepeats     the n-th identical call of the execution is refused, quoting the earlier result
/// JournalCalls      a result recorded before a crash is reused; every result is recorded
/// (tool hooks)      the agent's hooks, one layer, befores and afters in the order added
/// (user layers)     the agent's own layers, in the order added
/// executor          lookup, argument check, timeout, cancellation, the tool
/// ```
///
/// The order is the design: a held call is not reported, counted or recorded; listeners see
/// the whole result while the model sees it cut (a reused result is cut like a fresh one); a
/// refused repeat never reaches the journal; hooks and user layers see only calls that will
/// run.
pub fn standard_tool_layers() -> ToolLayers {
    let layers: [Arc<dyn ToolLayer>; 6] = [
        Arc::new(HoldForApproval),
        Arc::new(CapOutput),
        Arc::new(ReportCalls),
        Arc::new(AnswerRepeats),
        Arc::new(RefuseRepeats),
        Arc::new(JournalCalls),
    ];
    ToolLayers::new(layers)
}
