//! `ExecutionTraces`: one trace per execution. Each `Agent::step` is its own `invoke_agent`
//! span (a span cannot outlive the process that opened it, and a run may span processes and
//! days), so an exporter would show a ten-step run as ten unrelated traces. This span
//! processor gives every span of a step the trace id of the step's execution (the
//! execution id, a uuid, is 16 bytes like a trace id): every step of one execution, in any
//! process, lands in one trace, one `invoke_agent` span per step with the step's chat and
//! `execute_tool` spans under it.
//!
//! A step's spans end before its `invoke_agent` span (their root); the processor holds them
//! until the root ends, reads `agents.execution.id` from it, and passes them all on with that
//! trace id. Spans under an application's own span (whose root is not a step), spans with a
//! remote parent, and spans of steps without an execution pass unchanged. At most
//! [`MAX_HELD_SPANS`] spans are held; beyond, spans pass unchanged.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use opentelemetry::trace::{SpanContext, SpanId, TraceId};
use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};
use opentelemetry_sdk::Resource;

/// The most spans held while their step runs (all steps together).
pub const MAX_HELD_SPANS: usize = 10_000;

/// The attribute that names a step's execution (`agents_core::telemetry::AGENTS_EXECUTION_ID`).
const EXECUTION_ID: &str = agents_core::telemetry::AGENTS_EXECUTION_ID;

/// The trace id of execution `execution_id`: its 16 uuid bytes (`None` for an id that is not
/// a uuid). Its hex form is the execution id without dashes, which the console shows.
pub fn trace_id_of(execution_id: &str) -> Option<TraceId> {
    let hex: String = execution_id.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    TraceId::from_hex(&hex)
        .ok()
        .filter(|id| *id != TraceId::INVALID)
}

/// A span processor that puts each step's spans in its execution's trace, then hands them to
/// `inner` (the batch exporter, in [`init_otlp`](crate::telemetry::init_otlp)).
#[derive(Debug)]
pub struct ExecutionTraces<P> {
    inner: P,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    by_trace: HashMap<TraceId, Vec<SpanData>>,
    count: usize,
}

impl<P: SpanProcessor> ExecutionTraces<P> {
    /// Rewrites trace ids, then passes spans to `inner`.
    pub fn new(inner: P) -> Self {
        Self {
            inner,
            held: Mutex::new(Held::default()),
        }
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Passes every held span on unchanged (shutdown: their steps will not end here).
    fn release_all(&self) {
        let held = std::mem::take(&mut *self.held());
        for span in held.by_trace.into_values().flatten() {
            self.inner.on_end(span);
        }
    }
}

impl<P: SpanProcessor> SpanProcessor for ExecutionTraces<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        let trace = span.span_context.trace_id();
        let local_child = span.parent_span_id != SpanId::INVALID && !span.parent_span_is_remote;
        if local_child {
            let mut held = self.held();
            if held.count < MAX_HELD_SPANS {
                held.count += 1;
                held.by_trace.entry(trace).or_default().push(span);
                return;
            }
            drop(held);
            self.inner.on_end(span);
            return;
        }
        let children = {
            let mut held = self.held();
            let children = held.by_trace.remove(&trace).unwrap_or_default();
            held.count -= children.len();
            children
        };
        let execution = (!span.parent_span_is_remote)
            .then(|| execution_of(&span))
            .flatten();
        for span in children.into_iter().chain(std::iter::once(span)) {
            self.inner.on_end(match execution {
                Some(trace_id) => in_trace(span, trace_id),
                None => span,
            });
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.release_all();
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The trace of the execution a root span names, if it is a step's.
fn execution_of(span: &SpanData) -> Option<TraceId> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == EXECUTION_ID)
        .and_then(|kv| trace_id_of(kv.value.as_str().as_ref()))
}

fn in_trace(mut span: SpanData, trace_id: TraceId) -> SpanData {
    let context = &span.span_context;
    span.span_context = SpanContext::new(
        trace_id,
        context.span_id(),
        context.trace_flags(),
        context.is_remote(),
        context.trace_state().clone(),
    );
    span
}
