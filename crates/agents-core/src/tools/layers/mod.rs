//! The standard tool layers, one job each; [`standard_tool_layers`](crate::tools::stack::standard_tool_layers)
//! lists them in the order they run.

pub(crate) mod answer_repeats;
pub(crate) mod cap_output;
pub(crate) mod hold_for_approval;
pub(crate) mod journal_calls;
pub(crate) mod refuse_repeats;
pub(crate) mod report_calls;
pub(crate) mod tool_hooks;
