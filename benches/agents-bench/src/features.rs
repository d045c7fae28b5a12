//! What each feature of the step costs: the overhead harness's agent
//! ([`tool_calling_agent`] over a [`ReplyModel`], separated mode)
//! with one default feature switched off, or one opt-in feature switched on. A feature's cost
//! is the difference of its variant's run and the defaults' run, measured the same way
//! (`bench-report --features` for time and allocations, `loop-profile ... scripted NAME` under
//! callgrind for instructions; `cargo xtask bench --features` runs both).
//!
//! Every variant runs the same 2-step conversation (one `noop` call, then
//! [`ANSWER`]) and must end with that answer: a variant that breaks the run is
//! an error, never a fast number.

use std::sync::Arc;

use agents_core::{Agent, Clock, IdSource, ToolCallLimits};
use agents_processing::TraceRetention;
use drivers_toolcalling::ToolCallingDriver;
use messages::ToolCall;
use serde_json::json;

use crate::{agent_with_driver, tool_calling_agent, ReplyModel, ANSWER};

/// Whether a variant switches a default off or an opt-in feature on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The defaults as they are: the row the others are compared with.
    Defaults,
    /// A feature on by default, switched off: its cost is defaults − variant.
    Off,
    /// A feature off by default, switched on: its cost is variant − defaults.
    On,
}

/// One variant of the measured agent.
#[derive(Clone, Copy, Debug)]
pub struct Feature {
    /// Its name on the command line and in the table.
    pub name: &'static str,
    /// What it changes, for the table.
    pub what: &'static str,
    /// Off, on, or the defaults.
    pub change: Change,
    build: fn(ReplyModel) -> Agent,
}

impl Feature {
    /// The variant's agent, over the harness's model (one `noop` call, then the answer).
    pub fn agent(&self) -> Agent {
        (self.build)(model())
    }
}

/// The harness's model: one `noop` call, then [`ANSWER`].
fn model() -> ReplyModel {
    ReplyModel::new(vec![ToolCall::new("call_1", "noop", json!({}))], ANSWER)
}

fn defaults(model: ReplyModel) -> Agent {
    tool_calling_agent(model, TraceRetention::Ephemeral)
}

/// The variants measured, the defaults first.
pub static FEATURES: &[Feature] = &[
    Feature {
        name: "defaults",
        what: "the overhead harness's agent as it is (every default on)",
        change: Change::Defaults,
        build: defaults,
    },
    Feature {
        name: "reply-checks",
        what: "text-call recovery and the reply checks (`with_content_tool_call_recovery(false)`)",
        change: Change::Off,
        build: |model| {
            agent_with_driver(
                ToolCallingDriver::new(model).with_content_tool_call_recovery(false),
                TraceRetention::Ephemeral,
            )
        },
    },
    Feature {
        name: "tool-limits",
        what: "the output cap and the repeated-call limit (`ToolCallLimits` with neither)",
        change: Change::Off,
        build: |model| {
            defaults(model).with_tool_limits(ToolCallLimits {
                output_limit: None,
                repeated_call_limit: None,
            })
        },
    },
    Feature {
        name: "uuid-ids",
        what: "UUID v7 ids (one shared id handed out again instead: a reference count)",
        change: Change::Off,
        build: |model| defaults(model).with_id_source(Arc::new(OneId(Arc::from("id")))),
    },
    Feature {
        name: "system-clock",
        what: "reading the system clock (a clock that returns one fixed instant instead)",
        change: Change::Off,
        build: |model| defaults(model).with_clock(FixedClock),
    },
    Feature {
        name: "event-listener",
        what: "one event listener that does nothing (`on_event`)",
        change: Change::On,
        build: |model| {
            defaults(model).on_event(|event| {
                std::hint::black_box(event);
            })
        },
    },
    Feature {
        name: "approvals",
        what: "an approval policy for a tool the run does not call (`with_approval_required`)",
        change: Change::On,
        build: |model| defaults(model).with_approval_required(["deploy"]),
    },
];

/// An id source that hands out one id again and again: what remains of an id without making
/// one. (Measuring only: the run measured needs no unique ids;
/// [`SequentialIds`](agents_core::SequentialIds) formats a string and costs more than a
/// uuid.)
#[derive(Debug)]
struct OneId(Arc<str>);

impl IdSource for OneId {
    fn new_id(&self) -> Arc<str> {
        Arc::clone(&self.0)
    }
}

/// A clock that always says the Unix epoch: what remains of a timestamp without reading the
/// time. (`ManualClock` takes a lock and costs more than the system clock.)
#[derive(Debug)]
struct FixedClock;

impl Clock for FixedClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::UNIX_EPOCH
    }
}

/// The variant named `name`.
pub fn feature(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|feature| feature.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{answered, state_with_history};

    #[tokio::test]
    async fn every_variant_runs_the_conversation_to_its_answer() {
        let start = state_with_history(10).with_user_message("Run the tool, please.");
        for feature in FEATURES {
            let done = feature.agent().execute(start.clone()).await;
            assert_eq!(answered(done), Ok(()), "{}", feature.name);
        }
    }

    #[test]
    fn the_defaults_come_first_and_names_are_unique() {
        assert_eq!(FEATURES[0].change, Change::Defaults);
        for (i, variant) in FEATURES.iter().enumerate() {
            assert!(feature(variant.name).is_some_and(|found| std::ptr::eq(found, variant)));
            assert!(FEATURES[..i].iter().all(|other| other.name != variant.name));
        }
        assert!(feature("no-such-feature").is_none());
    }
}
