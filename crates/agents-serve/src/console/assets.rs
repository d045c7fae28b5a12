//! The console's stylesheet and its one script, vendored into the binary (no asset comes
//! from the internet).

use axum::http::header;
use axum::response::IntoResponse;

const CSS: &str = include_str!("../../assets/console.css");
const JS: &str = include_str!("../../assets/console.js");

pub(crate) async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS)
}

pub(crate) async fn js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        JS,
    )
}
