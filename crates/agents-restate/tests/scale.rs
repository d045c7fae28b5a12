//! Two service instances behind one URI (a round-robin HTTP/2 proxy, as a load balancer
//! would be) and 20 sessions, each sent two messages, all 40 at once: every invocation
//! completes, both instances take sessions, no session ever runs on two instances at once
//! (Restate queues a session's second message behind its first, wherever each runs), every
//! effect happens once.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_core::{
    Agent, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit, ToolCallPresenceCheck,
    ToolContext,
};
use agents_restate::testing::RoundRobinProxy;
use agents_restate::{register_deployment, AgentSession, SessionClient};
use drivers_toolcalling::ToolCallingDriver;

use common::{append_line, read_lines, restate, unique_name, Instance, Line, Planner};

const SESSIONS: usize = 20;

/// What the instances saw, shared by both (they run in this process).
#[derive(Default)]
struct Watch {
    /// The instance running a call for each session right now.
    running: Mutex<BTreeMap<String, &'static str>>,
    /// Calls that found their session running on an instance already.
    overlaps: AtomicUsize,
    /// The sessions (agent ids) each instance ran calls for.
    served: Mutex<BTreeMap<&'static str, BTreeSet<String>>>,
}

fn instance_agent(name: &'static str, watch: Arc<Watch>, ledger: std::path::PathBuf) -> Agent {
    let append = FunctionTool::with_context(
        "append",
        "Appends a line to the ledger.",
        move |args: Line, context: ToolContext| {
            let watch = Arc::clone(&watch);
            let ledger = ledger.clone();
            async move {
                let session = context.agent_id.to_string();
                if watch
                    .running
                    .lock()
                    .unwrap()
                    .insert(session.clone(), name)
                    .is_some()
                {
                    watch.overlaps.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                append_line(&ledger, &args.line);
                watch.running.lock().unwrap().remove(&session);
                watch
                    .served
                    .lock()
                    .unwrap()
                    .entry(name)
                    .or_default()
                    .insert(session);
                Ok::<_, String>(format!("wrote {}", args.line))
            }
        },
    );
    Agent::new(ToolCallingDriver::new(Planner::new()).with_parallel_tool_calls(false))
        .with_tool(append)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(10)),
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_take_twenty_sessions_side_by_side_without_sharing_one() {
    let Some(restate) = restate("two_instances_take_twenty_sessions") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let name = unique_name("scale");
    let watch = Arc::new(Watch::default());
    let first = Instance::start(
        AgentSession::new(Arc::new(instance_agent(
            "first",
            Arc::clone(&watch),
            ledger.clone(),
        )))
        .with_name(&name),
    )
    .await;
    let second = Instance::start(
        AgentSession::new(Arc::new(instance_agent(
            "second",
            Arc::clone(&watch),
            ledger.clone(),
        )))
        .with_name(&name),
    )
    .await;
    let proxy = RoundRobinProxy::start(vec![first.addr, second.addr])
        .await
        .unwrap();
    register_deployment(&restate.admin, &proxy.uri())
        .await
        .unwrap();
    let client = SessionClient::new(&restate.ingress)
        .unwrap()
        .with_object_name(&name);

    let replies = futures::future::join_all((0..SESSIONS * 2).map(|n| {
        let client = client.clone();
        let (session, message) = (n % SESSIONS, n / SESSIONS + 1);
        async move {
            client
                .send(
                    &format!("s{session}"),
                    &format!("lines s{session}-{message}"),
                )
                .await
        }
    }))
    .await;

    for (n, reply) in replies.into_iter().enumerate() {
        let reply = reply.unwrap();
        assert_eq!(reply.status, AgentStatus::Completed, "invocation {n}");
        assert_eq!(
            reply.answer.as_deref(),
            Some("wrote 1 lines"),
            "invocation {n}"
        );
    }
    let mut lines = read_lines(&ledger);
    lines.sort();
    let mut expected: Vec<String> = (0..SESSIONS)
        .flat_map(|i| [format!("s{i}-1"), format!("s{i}-2")])
        .collect();
    expected.sort();
    assert_eq!(lines, expected, "every effect exactly once");
    assert_eq!(
        watch.overlaps.load(Ordering::SeqCst),
        0,
        "no session ran on two instances at once"
    );
    let served = watch.served.lock().unwrap();
    assert_eq!(served.len(), 2, "both instances took sessions: {served:?}");
    let total: usize = served.values().map(BTreeSet::len).sum();
    assert!(total >= SESSIONS, "every session ran: {served:?}");
}
