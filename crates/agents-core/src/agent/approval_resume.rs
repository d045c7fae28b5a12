//! Calls held for a person's decision: which calls of a step wait (with their tools'
//! schemas, a subagent's waiting calls included), and the resume of a suspended step once
//! every one is decided.

use std::sync::Arc;

use crate::agent::agent::Agent;
use crate::agent::step_options::StepOptions;
use crate::agent::terminal::Terminal;
use crate::cached_context::CachedContext;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::processing::{StepFuture, StepTerminal};
use crate::records::agent_error::AgentError;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::tool_execution::{ToolExecution, ToolExecutions, ToolFailureKind};
use crate::state::agent_state::AgentState;
use crate::state::approvals;
use crate::state::pending_approval::{ApprovalVerdict, PendingApproval};
use crate::tools::tool::StepHeldRuns;

impl Agent {
    /// The calls of the last recorded step that wait for approval, with their tools'
    /// parameter schemas.
    pub(super) fn held_calls(
        &self,
        state: &AgentState,
        held: &StepHeldRuns,
    ) -> Vec<PendingApproval> {
        let Some(step) = state.current_step() else {
            return Vec::new();
        };
        let mut waiting = step
            .tool_executions()
            .iter()
            .filter(|e| e.failure_kind() == Some(ToolFailureKind::AwaitingApproval))
            .peekable();
        if waiting.peek().is_none() {
            return Vec::new();
        }
        held.with(|runs| {
            waiting
                .flat_map(|e| match runs.iter().find(|(id, _)| id == e.id()) {
                    Some((_, run)) => approvals::of_subagent(e.call(), run),
                    None => {
                        let parameters = self.tools.get(e.name()).map(|tool| tool.parameters());
                        vec![PendingApproval::new(e.call().clone(), parameters)]
                    }
                })
                .collect()
        })
    }

    /// Completes the suspended step once every waiting call is decided: the approved calls
    /// run (with edited arguments when given) through the same path as any call
    /// ([`StepContext::run_tool_calls`](crate::StepContext::run_tool_calls): hooks, limits,
    /// timeouts, the journal), the rejected ones get a tool error with the reason, each
    /// placeholder result becomes the real one, and the step gets its verdict.
    pub(super) async fn resume(
        &self,
        state: AgentState,
        options: &StepOptions,
    ) -> Result<AgentState, AgentError> {
        let token = &options.cancellation;
        let terminal = Terminal::new(self, options);
        let context = terminal
            .step_context(&state, Arc::clone(&self.cached_context))
            .for_decided_calls();
        let mut tool_context = context.tool_context(&state);
        tool_context.step_number = state.step_count().max(1);
        // The tools as of now (a tool source's included), as a step would offer them.
        let tools = crate::tools::source::merged(&self.tools, &self.tool_sources).await;
        let pending = state.pending_approvals();
        let approved: Vec<messages::ToolCall> = pending
            .iter()
            .filter_map(PendingApproval::approved_call)
            .collect();
        let ran = if approved.is_empty() {
            ToolExecutions::new()
        } else {
            context
                .run_tool_calls(
                    self.executor.as_ref(),
                    &approved,
                    &tools,
                    &tool_context,
                    false,
                )
                .await?
        };
        // A subagent's waiting calls: the call that ran the subagent runs again, resuming
        // the subagent's saved state (with the decisions routed into it).
        let mut resumed: Vec<ToolExecution> = Vec::new();
        for p in &pending {
            let Some((parent_call, child)) = p.subagent_resume() else {
                continue;
            };
            if resumed.iter().any(|e| e.id() == parent_call.id()) {
                continue;
            }
            let child = approvals::child_state(p.call_id(), child)
                .map_err(|error| AgentError::driver(error.to_string()))?;
            let mut resume_context = tool_context.clone();
            resume_context.resumed = Some(Arc::new(child));
            let execution = context
                .run_tool_calls(
                    self.executor.as_ref(),
                    std::slice::from_ref(parent_call),
                    &tools,
                    &resume_context,
                    false,
                )
                .await?;
            resumed.extend(execution.iter().cloned());
        }
        let now = self.clock.now();
        let mut ran = ran.iter().cloned();
        let mut rejected = Vec::new();
        let executions: ToolExecutions = pending
            .iter()
            .filter(|p| p.subagent().is_none())
            .filter_map(|p| match p.decision() {
                Some(ApprovalVerdict::Rejected { reason }) => {
                    let execution = ToolExecution::failure(
                        p.call().clone(),
                        ToolFailureKind::NotApproved,
                        format!(
                            "A person did not approve this call, so it did not run. \
                             Their reason: {reason}"
                        ),
                        now,
                        now,
                    );
                    rejected.push(execution.clone());
                    Some(execution)
                }
                _ => ran.next(),
            })
            .chain(resumed)
            .collect();
        context.emit_tool_executions(&tool_context, &rejected.into());
        let state = state.resolved(&executions);
        for p in &pending {
            if let Some(verdict) = p.decision() {
                self.events.emit_with(|| AgentEvent::ApprovalResolved {
                    source: EventSource {
                        step_number: state.step_count(),
                        ..EventSource::execution(&state)
                    },
                    call_id: p.call_id().to_owned(),
                    verdict: verdict.clone(),
                });
            }
        }
        // A subagent that stopped on another call that needs approval: still suspended.
        let held = self.held_calls(&state, &context.held);
        if !held.is_empty() {
            let outcome = state.continuation_outcome().cloned().unwrap_or_else(|| {
                ContinuationOutcome::from_evaluation(ContinuationEvaluation::request("Approval"))
            });
            let state = state.judged(outcome).suspended(held);
            self.emit_approvals_requested(&state);
            return Ok(state);
        }
        let state = self.judge(state, token);
        // The resolved step passes through the processors like any completed step, so a
        // stopping verdict gets the same closing (the execution buffer emptied in separated
        // mode, the digest, the context metadata). Layers that append the step's messages
        // find them already in place and leave them.
        let before = state.clone();
        let state = match self
            .onion
            .run(state, &ResolvedStep, Arc::clone(&self.cached_context))
            .await
        {
            Ok(state) => state,
            Err(error) => {
                // The calls ran and their results are recorded: keep them.
                tracing::warn!(
                    target: "agents_core::agent",
                    error = %crate::records::agent_error::error_chain(&error),
                    "a processor failed on a resumed step; the step is kept as resolved"
                );
                before
            }
        };
        match state.continuation_outcome() {
            Some(outcome) if !outcome.should_continue() => {
                let reason = outcome.stop_reason().unwrap_or(StopReason::Completed);
                Ok(self.finish(state, reason, token).await)
            }
            _ => Ok(state),
        }
    }
}

/// The centre of the processors for a resumed step: the step is already resolved and judged
/// (its calls ran), so the layers see it as it is. A layer that returns without calling it
/// returns the resolved state it was given: nothing of the step is lost.
struct ResolvedStep;

impl StepTerminal for ResolvedStep {
    fn run<'a>(&'a self, state: AgentState, _cached_context: Arc<CachedContext>) -> StepFuture<'a> {
        Box::pin(async move { Ok(state) })
    }
}
