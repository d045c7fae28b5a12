//! Overhead of one MCP tool call over stdio: a round trip to server-everything's `echo`
//! through `McpTool::call` (JSON-RPC over pipes, result conversion), and the conversion alone.
//! Needs `cargo xtask mcp-servers`; without the servers the round-trip benchmark is skipped.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agents_core::ToolContext;
use agents_mcp::convert::convert_result;
use agents_mcp::testing::TestServers;
use agents_mcp::McpClient;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

fn stdio_round_trip(c: &mut Criterion) {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (client, echo) = runtime.block_on(async {
        let client = McpClient::connect(servers.everything_stdio())
            .await
            .unwrap();
        let echo = client
            .tools()
            .await
            .unwrap()
            .into_iter()
            .find(|t| t.name() == "echo")
            .unwrap();
        (client, echo)
    });
    let context = ToolContext::default();
    c.bench_function("mcp/stdio_echo_round_trip", |b| {
        b.to_async(&runtime).iter(|| async {
            echo.call(json!({"message": "ping"}), &context)
                .await
                .unwrap()
        })
    });
    runtime.block_on(client.close()).unwrap();
}

fn conversion(c: &mut Criterion) {
    let result = json!({
        "content": [{"type": "text", "text": "x".repeat(10_000)}],
        "structuredContent": {"rows": (0..100).collect::<Vec<_>>()}
    });
    c.bench_function("mcp/convert_10k_text_result", |b| {
        b.iter(|| convert_result(&result, 100_000))
    });
}

criterion_group!(benches, stdio_round_trip, conversion);
criterion_main!(benches);
