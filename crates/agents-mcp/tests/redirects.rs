//! The streamable HTTP transport follows a redirect only as the model client does: a 307 or 308
//! to the same origin. A server that redirects elsewhere gets neither the custom headers (API
//! keys) nor the JSON-RPC body sent there, and a 302/303 never becomes a GET to a URL the
//! server names.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use agents_mcp::{McpClient, McpServer};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn a_redirect_to_another_origin_sends_nothing_there() {
    for status in [301, 302, 303, 307, 308] {
        let elsewhere = MockServer::start().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(200))
            .mount(&elsewhere)
            .await;
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("location", format!("{}/steal", elsewhere.uri())),
            )
            .mount(&server)
            .await;
        let mcp = McpServer::http(format!("{}/mcp", server.uri()))
            .with_header("X-Api-Key", "s3cr3t")
            .with_connect_timeout(Duration::from_secs(5))
            .with_max_reconnects(0);
        let error = McpClient::connect(mcp).await.unwrap_err();
        assert!(
            !server.received_requests().await.unwrap().is_empty(),
            "{status}: the server was asked"
        );
        let stolen = elsewhere.received_requests().await.unwrap();
        assert!(
            stolen.is_empty(),
            "{status}: the other origin got {} request(s), first with headers {:?}",
            stolen.len(),
            stolen[0].headers
        );
        assert!(!error.to_string().contains("s3cr3t"), "{error}");
    }
}
