//! Request identity: a service that names the Restate server's public key serves that
//! server's signed requests and refuses everyone else's (no signature, a forged one, a
//! signature header without a token), so reaching its port is not enough to run an agent.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

mod common;

use std::sync::Arc;

use agents_core::AgentStatus;
use agents_restate::{AgentSession, RestateError};
use http_body_util::Empty;
use hyper::body::Bytes;
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use common::{agent, restate, start, unique_name, Planner};

/// The identity key of the test server, or `None` (loudly) off CI.
fn identity() -> Option<String> {
    match std::env::var("AGENTS_TEST_RESTATE_IDENTITY") {
        Ok(key) => Some(key),
        Err(_) if std::env::var("CI").is_ok_and(|ci| ci == "true") => panic!(
            "AGENTS_TEST_RESTATE_IDENTITY is not set; in CI `cargo xtask restate start` signs \
             requests (it needs openssl)"
        ),
        Err(_) => {
            eprintln!(
                "SKIPPED the identity test: AGENTS_TEST_RESTATE_IDENTITY is not set (cargo \
                 xtask restate start prints it when openssl is installed)"
            );
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_restate_server_holding_the_key_can_invoke_the_service() {
    let Some(restate) = restate("only_the_restate_server_holding_the_key") else {
        return;
    };
    let Some(key) = identity() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let name = unique_name("identity");
    let session = AgentSession::new(Arc::new(agent(Planner::new(), dir.path().join("ledger"))))
        .with_name(&name)
        .with_identity_key(&key);
    let (instance, client) = start(&restate, session).await;

    let reply = client.send("i1", "lines a").await.unwrap();
    assert_eq!(
        reply.status,
        AgentStatus::Completed,
        "Restate's signed calls get through"
    );

    let http: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let forged_jwt = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJhdWQiOiIvZGlzY292ZXIifQ.AAAA";
    for (what, headers) in [
        ("no signature", vec![]),
        (
            "a forged token",
            vec![
                ("x-restate-signature-scheme", "v1"),
                ("x-restate-jwt-v1", forged_jwt),
            ],
        ),
        (
            "a scheme without a token",
            vec![("x-restate-signature-scheme", "v1")],
        ),
        (
            "an unknown scheme",
            vec![("x-restate-signature-scheme", "none")],
        ),
    ] {
        for path in [
            "/discover".to_owned(),
            format!("/invoke/{name}/send"),
            format!("/invoke/{name}/approve"),
        ] {
            let mut request = Request::post(format!("{}{path}", instance.uri()));
            for (header, value) in &headers {
                request = request.header(*header, *value);
            }
            let response = http
                .request(request.body(Empty::new()).unwrap())
                .await
                .unwrap();
            assert_eq!(response.status(), 401, "{what} on {path}");
        }
    }

    let bad = AgentSession::new(Arc::new(agent(Planner::new(), dir.path().join("x"))))
        .with_identity_key("publickeyv1_notbase58!");
    assert!(matches!(
        agents_restate::endpoint(bad),
        Err(RestateError::IdentityKey { .. })
    ));
}
