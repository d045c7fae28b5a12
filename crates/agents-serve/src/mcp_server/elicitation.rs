//! Approvals asked through MCP elicitation. When a turn of `ask` waits for approval and the
//! client declared the `elicitation` capability (form mode), the person is asked about each
//! waiting call: a form showing the tool, its arguments and the fingerprint, with a boolean
//! `approve` and an optional `reason`. The answer decides the call through the same
//! fingerprint-checked path as the `approve`/`reject` tools ([`ServedAgent::decide`]).
//!
//! How the question travels depends on the protocol the request speaks:
//! - before `2026-07-28`: an `elicitation/create` request to the client while `ask` runs
//!   (`Channel::Request`);
//! - from `2026-07-28`, which has no server-to-client requests: `ask` answers with an
//!   `InputRequiredResult` holding one elicitation per call, and the client retries `ask`
//!   with the answers and the echoed `requestState` (`Channel::InputRequired`). The state
//!   is a handle (the session and the calls asked about), not a credential: a decision it
//!   leads to is checked against the call's fingerprint like any other.
//!
//! Accept with `approve: true` approves; accept with `approve: false`, or decline, rejects
//! (the model reads the reason). A cancel, an error, or an answer without `approve` decides
//! nothing: the result lists the waiting calls, for `approve`/`reject`, as without
//! elicitation. Each call is asked about at most once per `ask`, and at most [`MAX_ASKED`]
//! calls in all.
//!
//! [`ServedAgent::decide`]: crate::served::ServedAgent::decide

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use rmcp::model::{
    BooleanSchema, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputResponses, PrimitiveSchemaDefinition,
    ProtocolVersion, StringSchema,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::served::{Verdict, WaitingCall};

/// At most this many calls are asked about in one `ask` (over all rounds); past it, the
/// result lists the calls still waiting.
pub const MAX_ASKED: usize = 8;
/// How long a person has to answer one elicitation request (then it counts as a cancel).
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// The reason the model reads when the person declines without giving one.
const DECLINED: &str = "rejected by the person asked (MCP elicitation)";

/// How a request's client can be asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Channel {
    /// Not at all: elicitation is off, or the client did not declare it (form mode).
    Off,
    /// With an `elicitation/create` request while the call runs (protocols before
    /// `2026-07-28`).
    Request,
    /// With an `InputRequiredResult` the client answers by retrying (`2026-07-28` on).
    InputRequired,
}

/// How the client of `context` can be asked, when `enabled`.
pub(crate) fn channel(enabled: bool, context: &RequestContext<RoleServer>) -> Channel {
    if !enabled {
        return Channel::Off;
    }
    let Some(elicitation) = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
    else {
        return Channel::Off;
    };
    // An empty capability means form mode (the 2025-06-18 shape); URL mode alone cannot show
    // a form.
    if elicitation.form.is_none() && elicitation.url.is_some() {
        return Channel::Off;
    }
    channel_for(context.protocol_version().as_ref())
}

fn channel_for(version: Option<&ProtocolVersion>) -> Channel {
    match version {
        Some(version) if *version >= ProtocolVersion::V_2026_07_28 => Channel::InputRequired,
        _ => Channel::Request,
    }
}

/// The text shown to the person: the tool, the full arguments (pretty JSON) and the
/// fingerprint.
pub fn message(call: &WaitingCall) -> String {
    let arguments = serde_json::to_string_pretty(&call.arguments)
        .unwrap_or_else(|_| call.arguments.to_string());
    format!(
        "The agent wants to call the tool `{}` with these arguments:\n\n{arguments}\n\n\
         Fingerprint {} (call {}). Approve this call? If you do not, the agent is told it was \
         rejected (and your reason, if you give one).",
        call.tool, call.fingerprint, call.call_id
    )
}

/// The form: a required boolean `approve` and an optional `reason`.
pub fn schema() -> ElicitationSchema {
    let properties = BTreeMap::from([
        (
            "approve".to_owned(),
            PrimitiveSchemaDefinition::Boolean(
                BooleanSchema::new()
                    .title("Approve")
                    .description("Run this call as shown."),
            ),
        ),
        (
            "reason".to_owned(),
            PrimitiveSchemaDefinition::String(
                StringSchema::new()
                    .title("Reason")
                    .description("Why not (the agent reads it); optional."),
            ),
        ),
    ]);
    ElicitationSchema::new(properties).with_required(vec!["approve".to_owned()])
}

/// The elicitation request about `call`.
pub fn request(call: &WaitingCall) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(call),
        requested_schema: schema(),
    }
}

/// The decision a person's answer means; `None` when it decides nothing (a cancel, or an
/// accept without a boolean `approve`).
pub fn verdict(answer: &ElicitResult) -> Option<Verdict> {
    match answer.action {
        ElicitationAction::Accept => {
            let content = answer.content.as_ref()?;
            if content.get("approve")?.as_bool()? {
                Some(Verdict::Approve)
            } else {
                Some(Verdict::Reject(reason(content)))
            }
        }
        ElicitationAction::Decline => Some(Verdict::Reject(
            answer
                .content
                .as_ref()
                .map_or_else(|| DECLINED.to_owned(), reason),
        )),
        _ => None,
    }
}

fn reason(content: &Value) -> String {
    content
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map_or_else(
            || DECLINED.to_owned(),
            |r| format!("rejected by the person asked: {r}"),
        )
}

/// A call asked about: its id and the fingerprint the person was shown.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Asked {
    pub(crate) call_id: String,
    pub(crate) fingerprint: String,
}

impl Asked {
    pub(crate) fn of(call: &WaitingCall) -> Self {
        Self {
            call_id: call.call_id.clone(),
            fingerprint: call.fingerprint.clone(),
        }
    }
}

/// What an `InputRequiredResult` leaves with the client (`requestState`): the session, the
/// calls of this round (in the order of the input requests' keys) and every call asked about
/// in this `ask` so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RoundState {
    /// The shape's version.
    pub(crate) version: u32,
    pub(crate) session: String,
    pub(crate) round: Vec<Asked>,
    pub(crate) asked: Vec<Asked>,
}

impl RoundState {
    const VERSION: u32 = 1;

    /// The state of a round asking about `calls` in `session`, after `earlier` ones.
    pub(crate) fn new(session: &str, calls: &[&WaitingCall], earlier: &[Asked]) -> Self {
        let round: Vec<Asked> = calls.iter().map(|call| Asked::of(call)).collect();
        let mut asked = earlier.to_vec();
        asked.extend(round.iter().cloned());
        Self {
            version: Self::VERSION,
            session: session.to_owned(),
            round,
            asked,
        }
    }

    /// The `requestState` string.
    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The state a client echoed back, if it is one this server writes.
    pub(crate) fn decode(text: &str) -> Option<Self> {
        serde_json::from_str::<Self>(text)
            .ok()
            .filter(|state| state.version == Self::VERSION && state.asked.len() <= MAX_ASKED)
    }

    /// The person's decision on each call of the round, in order, up to the first answer
    /// that decides nothing (missing, malformed, a cancel).
    pub(crate) fn verdicts(&self, responses: Option<&InputResponses>) -> Vec<(Asked, Verdict)> {
        let mut verdicts = Vec::new();
        for (index, call) in self.round.iter().enumerate() {
            let Some(answer) = responses
                .and_then(|r| r.get(&key(index)))
                .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
            else {
                break;
            };
            let Some(verdict) = verdict(&answer) else {
                break;
            };
            verdicts.push((call.clone(), verdict));
        }
        verdicts
    }
}

/// The key of the round's `index`th input request.
fn key(index: usize) -> String {
    format!("approval-{index}")
}

/// One elicitation per call, keyed as [`RoundState::verdicts`] reads them.
pub(crate) fn input_requests(calls: &[&WaitingCall]) -> InputRequests {
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            (
                key(index),
                InputRequest::Elicitation(ElicitRequest::new(request(call))),
            )
        })
        .collect()
}

/// The waiting calls not asked about yet, as many as the bound still allows.
pub(crate) fn to_ask<'a>(calls: &'a [WaitingCall], asked: &[Asked]) -> Vec<&'a WaitingCall> {
    let seen: HashSet<&Asked> = asked.iter().collect();
    calls
        .iter()
        .filter(|call| !seen.contains(&Asked::of(call)))
        .take(MAX_ASKED.saturating_sub(asked.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn call(id: &str) -> WaitingCall {
        WaitingCall {
            call_id: id.to_owned(),
            tool: "write_file".to_owned(),
            arguments: json!({"path": "note.txt", "content": "hi\nthere"}),
            fingerprint: "0123456789ab".to_owned(),
        }
    }

    #[test]
    fn the_message_shows_the_tool_all_arguments_and_the_fingerprint() {
        let text = message(&call("call_w"));
        assert!(text.contains("`write_file`"), "{text}");
        assert!(text.contains("\"path\": \"note.txt\""), "{text}");
        assert!(text.contains("\"content\": \"hi\\nthere\""), "{text}");
        assert!(text.contains("0123456789ab"), "{text}");
        assert!(text.contains("call_w"), "{text}");
    }

    #[test]
    fn the_form_asks_for_a_required_boolean_and_an_optional_reason() {
        let wire = serde_json::to_value(schema()).unwrap();
        assert_eq!(wire["type"], "object");
        assert_eq!(wire["properties"]["approve"]["type"], "boolean");
        assert_eq!(wire["properties"]["reason"]["type"], "string");
        assert_eq!(wire["required"], json!(["approve"]));
        let request = serde_json::to_value(request(&call("c"))).unwrap();
        assert_eq!(request["mode"], "form");
        assert_eq!(request["requestedSchema"], wire);
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let answer = ElicitResult::new(action);
        match content {
            Some(content) => answer.with_content(content),
            None => answer,
        }
    }

    #[test]
    fn accept_approves_or_rejects_by_the_boolean_decline_rejects_cancel_decides_nothing() {
        let accept = |content| verdict(&answer(ElicitationAction::Accept, Some(content)));
        assert_eq!(accept(json!({"approve": true})), Some(Verdict::Approve));
        assert_eq!(
            accept(json!({"approve": false, "reason": " not that file "})),
            Some(Verdict::Reject(
                "rejected by the person asked: not that file".to_owned()
            ))
        );
        assert_eq!(
            accept(json!({"approve": false})),
            Some(Verdict::Reject(DECLINED.to_owned()))
        );
        // An accept that does not say approve decides nothing (a string is not a boolean).
        assert_eq!(accept(json!({"approve": "yes"})), None);
        assert_eq!(accept(json!({})), None);
        assert_eq!(verdict(&answer(ElicitationAction::Accept, None)), None);
        assert_eq!(
            verdict(&answer(ElicitationAction::Decline, None)),
            Some(Verdict::Reject(DECLINED.to_owned()))
        );
        assert_eq!(verdict(&answer(ElicitationAction::Cancel, None)), None);
        assert_eq!(
            verdict(&answer(
                ElicitationAction::Cancel,
                Some(json!({"approve": true}))
            )),
            None,
            "a cancel never approves"
        );
    }

    #[test]
    fn the_protocol_picks_the_channel() {
        assert_eq!(channel_for(None), Channel::Request);
        assert_eq!(
            channel_for(Some(&ProtocolVersion::V_2025_06_18)),
            Channel::Request
        );
        assert_eq!(
            channel_for(Some(&ProtocolVersion::V_2025_11_25)),
            Channel::Request
        );
        assert_eq!(
            channel_for(Some(&ProtocolVersion::V_2026_07_28)),
            Channel::InputRequired
        );
    }

    #[test]
    fn a_round_state_round_trips_and_reads_answers_in_order_up_to_a_cancel() {
        let (a, b, c) = (call("a"), call("b"), call("c"));
        let state = RoundState::new("s1", &[&a, &b, &c], &[]);
        let decoded = RoundState::decode(&state.encode()).unwrap();
        assert_eq!(decoded, state);
        assert_eq!(RoundState::decode("{}"), None);
        assert_eq!(RoundState::decode("not json"), None);

        let requests = input_requests(&[&a, &b, &c]);
        assert_eq!(
            requests.keys().collect::<Vec<_>>(),
            ["approval-0", "approval-1", "approval-2"]
        );
        let responses: InputResponses = BTreeMap::from([
            (
                "approval-0".to_owned(),
                json!({"action": "accept", "content": {"approve": true}}),
            ),
            ("approval-1".to_owned(), json!({"action": "decline"})),
            ("approval-2".to_owned(), json!({"action": "cancel"})),
        ]);
        let verdicts = state.verdicts(Some(&responses));
        assert_eq!(
            verdicts,
            vec![
                (Asked::of(&a), Verdict::Approve),
                (Asked::of(&b), Verdict::Reject(DECLINED.to_owned())),
            ]
        );
        assert!(state.verdicts(None).is_empty());
    }

    #[test]
    fn each_call_is_asked_once_and_at_most_max_asked_in_all() {
        let calls: Vec<WaitingCall> = (0..12).map(|i| call(&format!("c{i}"))).collect();
        let first = to_ask(&calls, &[]);
        assert_eq!(first.len(), MAX_ASKED);
        let asked: Vec<Asked> = first.iter().map(|c| Asked::of(c)).collect();
        assert!(to_ask(&calls, &asked).is_empty(), "the bound holds");
        let some: Vec<Asked> = calls[..3].iter().map(Asked::of).collect();
        let next = to_ask(&calls, &some);
        assert_eq!(next.len(), MAX_ASKED - 3);
        assert!(next.iter().all(|c| !some.contains(&Asked::of(c))));
        // A call whose fingerprint changed is a new question.
        let mut changed = calls[0].clone();
        changed.fingerprint = "ffffffffffff".to_owned();
        assert_eq!(to_ask(&[changed], &some).len(), 1);
    }
}
