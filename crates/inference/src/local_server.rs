//! What a model server on this machine says about itself: the context size llama-server
//! serves requests with.

use std::time::Duration;

use futures::StreamExt;

/// The most bytes of a `/props` answer read (llama-server's is a few kilobytes).
const MAX_PROPS_BYTES: usize = 1 << 20;

/// The context size, in tokens, that a llama.cpp server (`llama-server`) gives each request:
/// `default_generation_settings.n_ctx` of its `GET /props`, asked of the server at
/// `base_url` (the URL's path, such as `/v1`, is replaced by `/props`).
///
/// `None` when the server does not answer within `timeout`, answers with anything but a
/// success and a JSON document holding a positive size, redirects, or sends more than a
/// megabyte: it is not llama-server, or not one that says. Other servers (Ollama, vLLM, LM
/// Studio) report theirs elsewhere; give their context window to the agent yourself.
///
/// ```no_run
/// # async fn run() {
/// use std::time::Duration;
///
/// let served = inference::llama_server_context("http://127.0.0.1:8080/v1", Duration::from_secs(2)).await;
/// if let Some(tokens) = served {
///     println!("each request may hold {tokens} tokens");
/// }
/// # }
/// ```
pub async fn llama_server_context(base_url: &str, timeout: Duration) -> Option<u64> {
    let mut url = url::Url::parse(base_url).ok()?;
    url.set_path("/props");
    url.set_query(None);
    url.set_fragment(None);
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let asked = async {
        let response = client.get(url.clone()).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.ok()?;
            if body.len() + chunk.len() > MAX_PROPS_BYTES {
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        let props: serde_json::Value = serde_json::from_slice(&body).ok()?;
        props["default_generation_settings"]["n_ctx"]
            .as_u64()
            .filter(|tokens| *tokens > 0)
    };
    // The client's timeout bounds each read; this bounds the whole exchange.
    let served = tokio::time::timeout(timeout, asked).await.ok().flatten();
    tracing::debug!(
        target: "inference::local_server",
        %url,
        ?served,
        "asked the local server for its context size"
    );
    served
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    async fn serving(response: ResponseTemplate) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/props"))
            .respond_with(response)
            .mount(&server)
            .await;
        server
    }

    #[tokio::test]
    async fn reads_llama_servers_context_size_and_nothing_else() {
        let props = serde_json::json!({
            "default_generation_settings": {"n_ctx": 32768, "params": {}},
            "total_slots": 1
        });
        let server = serving(ResponseTemplate::new(200).set_body_json(props)).await;
        let asked = |suffix: &str| format!("{}{suffix}", server.uri());
        let wait = Duration::from_secs(5);
        assert_eq!(llama_server_context(&asked("/v1"), wait).await, Some(32768));
        assert_eq!(
            llama_server_context(&asked("/v1/?x=1"), wait).await,
            Some(32768)
        );
        // Not llama-server, or one that will not say: nothing.
        for response in [
            ResponseTemplate::new(404),
            ResponseTemplate::new(200).set_body_string("not json"),
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"n_ctx": 4096})),
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"default_generation_settings": {"n_ctx": 0}})),
            ResponseTemplate::new(302).insert_header("location", "http://127.0.0.1:9/props"),
            ResponseTemplate::new(200).set_body_string("x".repeat(MAX_PROPS_BYTES + 1)),
        ] {
            let server = serving(response).await;
            assert_eq!(llama_server_context(&server.uri(), wait).await, None);
        }
        assert_eq!(llama_server_context("not a url", wait).await, None);
    }

    #[tokio::test]
    async fn a_server_that_does_not_answer_in_time_gives_nothing() {
        let props = serde_json::json!({"default_generation_settings": {"n_ctx": 32768}});
        let server = serving(
            ResponseTemplate::new(200)
                .set_body_json(props)
                .set_delay(Duration::from_secs(3)),
        )
        .await;
        let started = std::time::Instant::now();
        let served = llama_server_context(&server.uri(), Duration::from_millis(200)).await;
        assert_eq!(served, None);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
