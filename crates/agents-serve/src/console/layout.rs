//! The page shell every page shares, its security headers, and error pages.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

/// Scripts, styles, images and connections from this server only; no inline script or style,
/// no plugin, no framing, forms post only here.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

/// A whole page: `title`, then `body` under the console's header.
pub(crate) fn page(title: &str, body: Markup) -> Response {
    page_with_status(StatusCode::OK, title, body)
}

pub(crate) fn page_with_status(status: StatusCode, title: &str, body: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · agents console" }
                link rel="stylesheet" href="/static/console.css";
                script src="/static/console.js" defer {}
            }
            body {
                header.top {
                    a href="/" { "agents console" }
                }
                main { (body) }
            }
        }
    };
    let mut response = (status, markup.into_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// An error page: what happened and what to do.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    page_with_status(
        status,
        status.canonical_reason().unwrap_or("error"),
        html! {
            h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("")) }
            p.error { (message) }
            p { a href="/" { "back to the sessions" } }
        },
    )
}

pub(crate) async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "there is no such page")
}

/// A store error as a page (the message names the session; never a panic).
pub(crate) fn store_error(failure: &agents_sessions::SessionError) -> Response {
    tracing::warn!(error = %failure, "session store error");
    let status = match failure {
        agents_sessions::SessionError::InvalidName { .. } => StatusCode::BAD_REQUEST,
        agents_sessions::SessionError::NotFound { .. } => StatusCode::NOT_FOUND,
        agents_sessions::SessionError::Conflict { .. }
        | agents_sessions::SessionError::Busy { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, &failure.to_string())
}
