//! The access rules every server shares, each tested by a request that must be refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use agents_serve::{Access, AccessToken, Auth, ServeError};
use axum::body::{Body, Bytes};
use axum::http::{header, Request, StatusCode};
use axum::routing::{get, post};
use axum::Router;
use tower::ServiceExt;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn addr() -> SocketAddr {
    "127.0.0.1:8123".parse().unwrap()
}

fn access() -> Access {
    Access::new(addr(), Auth::Token(AccessToken::new(TOKEN).unwrap())).unwrap()
}

fn app(access: &Access) -> Router {
    access.protect(
        Router::new()
            .route("/page", get(|| async { "the page" }))
            .route("/echo", post(|body: Bytes| async move { body })),
    )
}

fn request(uri: &str) -> axum::http::request::Builder {
    Request::builder()
        .uri(uri)
        .header(header::HOST, "127.0.0.1:8123")
}

async fn send(app: &Router, request: Request<Body>) -> axum::response::Response {
    app.clone().oneshot(request).await.unwrap()
}

#[tokio::test]
async fn no_token_is_401_and_a_wrong_one_403() {
    let app = app(&access());
    let response = send(&app, request("/page").body(Body::empty()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");

    let wrong = [
        (
            "authorization",
            "Bearer 0123456789abcdef0123456789abcdeX".to_owned(),
        ),
        ("authorization", format!("Bearer {}", &TOKEN[..31])),
        ("authorization", format!("Bearer {TOKEN}0")),
        ("authorization", format!("Basic {TOKEN}")),
        ("cookie", "agents_token_8123=nope".to_owned()),
        // the right token under another port's cookie name does not count
        ("cookie", format!("agents_token_9999={TOKEN}")),
    ];
    for (name, value) in wrong {
        let response = send(
            &app,
            request("/page")
                .header(name, &value)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        let status = response.status();
        assert!(
            status == StatusCode::FORBIDDEN
                || (status == StatusCode::UNAUTHORIZED && value.contains("9999")),
            "{name}: {value} got {status}"
        );
    }
    for uri in [
        "/page?token=wrong",
        "/page?token=",
        &format!("/page?xtoken={TOKEN}"),
    ] {
        let response = send(&app, request(uri).body(Body::empty()).unwrap()).await;
        assert!(
            matches!(
                response.status(),
                StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED
            ),
            "{uri}: {}",
            response.status()
        );
        assert_ne!(response.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn the_right_token_passes_each_way() {
    let app = app(&access());
    for request in [
        request("/page")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap(),
        request(&format!("/page?token={TOKEN}"))
            .body(Body::empty())
            .unwrap(),
        request("/page")
            .header(
                header::COOKIE,
                format!("theme=dark; agents_token_8123={TOKEN}"),
            )
            .body(Body::empty())
            .unwrap(),
    ] {
        let response = send(&app, request).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::X_CONTENT_TYPE_OPTIONS],
            "nosniff"
        );
        assert_eq!(response.headers()[header::REFERRER_POLICY], "same-origin");
    }
}

#[tokio::test]
async fn cookie_login_trades_the_token_parameter_for_a_strict_cookie() {
    let app = app(&access().with_cookie_login());
    let response = send(
        &app,
        request(&format!("/page?q=a&token={TOKEN}&page=2"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "/page?q=a&page=2");
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    assert_eq!(
        cookie,
        format!("agents_token_8123={TOKEN}; HttpOnly; SameSite=Strict; Path=/")
    );
    // A wrong token is refused, never turned into a cookie.
    let response = send(
        &app,
        request("/page?token=wrong").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn foreign_host_names_are_refused_even_with_the_token() {
    let app = app(&access());
    let hostile = [
        "evil.example",
        "evil.example:8123",
        "127.0.0.1:8124",
        "127.0.0.1",
        "127.0.0.1:8123.evil.example",
        "127.0.0.1:8123@evil.example",
        "localhost.:8123",
        "0.0.0.0:8123",
        "127.0.0.2:8123",
    ];
    for host in hostile {
        let response = send(
            &app,
            Request::builder()
                .uri("/page")
                .header(header::HOST, host)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "Host: {host}");
    }
    let response = send(
        &app,
        Request::builder()
            .uri("/page")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "no Host");
    for host in ["localhost:8123", "LOCALHOST:8123", "[::1]:8123"] {
        let response = send(
            &app,
            Request::builder()
                .uri("/page")
                .header(header::HOST, host)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "Host: {host}");
    }
}

#[tokio::test]
async fn other_sites_origins_are_refused() {
    let app = app(&access());
    for origin in [
        "http://evil.example",
        "null",
        "https://127.0.0.1:8123",
        "http://127.0.0.1:8124",
        "http://127.0.0.1:8123.evil.example",
    ] {
        let response = send(
            &app,
            request("/echo")
                .method("POST")
                .header(header::ORIGIN, origin)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .body(Body::from("x"))
                .unwrap(),
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "Origin: {origin}");
    }
    let response = send(
        &app,
        request("/echo")
            .method("POST")
            .header(header::ORIGIN, "http://localhost:8123")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::from("x"))
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let app = app(&access().with_max_body_bytes(1000));
    let ok = send(
        &app,
        request("/echo")
            .method("POST")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::from(vec![b'a'; 1000]))
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status(), StatusCode::OK);
    let declared = send(
        &app,
        request("/echo")
            .method("POST")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_LENGTH, "1001")
            .body(Body::from(vec![b'a'; 1001]))
            .unwrap(),
    )
    .await;
    assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // A streamed body without a length is cut as it arrives.
    let chunks = futures::stream::iter(
        (0..20).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; 100]))),
    );
    let streamed = send(
        &app,
        request("/echo")
            .method("POST")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::from_stream(chunks))
            .unwrap(),
    )
    .await;
    assert_eq!(streamed.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn requests_over_the_concurrency_limit_get_503() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let entered = Arc::new(tokio::sync::Notify::new());
    let access = access().with_max_concurrent(1);
    let app = access.protect(Router::new().route(
        "/slow",
        get({
            let gate = gate.clone();
            let entered = entered.clone();
            move || async move {
                entered.notify_one();
                gate.notified().await;
                "done"
            }
        }),
    ));
    let authorized = || {
        request("/slow")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap()
    };
    let first = tokio::spawn({
        let app = app.clone();
        let request = authorized();
        async move { app.oneshot(request).await.unwrap() }
    });
    entered.notified().await;
    let second = app.clone().oneshot(authorized()).await.unwrap();
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(second.headers()[header::RETRY_AFTER], "1");
    gate.notify_one();
    assert_eq!(first.await.unwrap().status(), StatusCode::OK);
    // The permit came back.
    let third = tokio::spawn({
        let app = app.clone();
        let request = authorized();
        async move { app.oneshot(request).await.unwrap() }
    });
    entered.notified().await;
    gate.notify_one();
    assert_eq!(third.await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn no_auth_only_on_loopback_and_hosts_are_still_checked() {
    let error = Access::new("0.0.0.0:8123".parse().unwrap(), Auth::None).unwrap_err();
    assert!(matches!(error, ServeError::NoAuthOffLoopback { .. }));
    assert!(error.to_string().contains("loopback"), "{error}");
    assert!(Access::new("192.168.1.5:8123".parse().unwrap(), Auth::None).is_err());

    let open = Access::new(addr(), Auth::None).unwrap();
    assert_eq!(open.url("/"), "http://127.0.0.1:8123/");
    let app = app(&open);
    let response = send(&app, request("/page").body(Body::empty()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = send(
        &app,
        Request::builder()
            .uri("/page")
            .header(header::HOST, "evil.example:8123")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_server_on_all_interfaces_answers_only_to_names_it_was_given() {
    let access = Access::new(
        "0.0.0.0:8123".parse().unwrap(),
        Auth::Token(AccessToken::new(TOKEN).unwrap()),
    )
    .unwrap()
    .with_allowed_host("box.lan:8123")
    .unwrap();
    assert!(access.url("/").starts_with("http://127.0.0.1:8123/?token="));
    let app = app(&access);
    for (host, status) in [
        ("box.lan:8123", StatusCode::OK),
        ("127.0.0.1:8123", StatusCode::OK),
        ("other.lan:8123", StatusCode::FORBIDDEN),
    ] {
        let response = send(
            &app,
            Request::builder()
                .uri("/page")
                .header(header::HOST, host)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(response.status(), status, "Host: {host}");
    }
    assert!(access.clone().with_allowed_host("bad host").is_err());
}
