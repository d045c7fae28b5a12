//! Turning an HTTP error answer into a typed [`InferenceError`].

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::retry::parse_retry_after;
use crate::InferenceError;

/// The error for a non-success HTTP answer: [`InferenceError::RateLimited`] for 429 (with the
/// `Retry-After` delay), [`InferenceError::Http`] otherwise, carrying the provider's own message.
pub(crate) fn status_error(status: u16, headers: &HeaderMap, body: &str) -> InferenceError {
    let message = error_message(body).unwrap_or_else(|| fallback_message(status, body));
    if status == 429 {
        return InferenceError::RateLimited {
            retry_after: retry_after(headers),
            message,
        };
    }
    InferenceError::Http { status, message }
}

/// The delay asked for by `retry-after-ms` or `retry-after`.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() {
            return Some(Duration::from_secs_f64(
                ms.clamp(0.0, 86_400_000.0) / 1000.0,
            ));
        }
    }
    header("retry-after").and_then(parse_retry_after)
}

/// The provider's error message from the shapes in use: `{"error":{"message"}}` (OpenAI,
/// Anthropic, vLLM), `{"error":"..."}` (Ollama), `{"message"}`, `{"detail"}` (FastAPI servers).
pub(crate) fn error_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let error = value.get("error");
    let candidates = [
        error.and_then(|e| e.get("message")),
        error,
        value.get("message"),
        value.get("detail"),
    ];
    let message = candidates.into_iter().flatten().find_map(|v| match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Array(_) => Some(v.to_string()),
        _ => None,
    });
    message
}

fn fallback_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("no message")
            .to_owned();
    }
    let excerpt: String = body.chars().take(200).collect();
    if excerpt.len() < body.len() {
        format!("{excerpt}...")
    } else {
        excerpt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn extracts_provider_messages() {
        assert_eq!(
            error_message(
                r#"{"error":{"message":"Invalid API key","type":"invalid_request_error"}}"#
            ),
            Some("Invalid API key".into())
        );
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#),
            Some("model 'x' not found".into())
        );
        assert_eq!(
            error_message(r#"{"detail":"Not Found"}"#),
            Some("Not Found".into())
        );
        assert_eq!(error_message("<html>502</html>"), None);
    }

    #[test]
    fn rate_limits_carry_retry_after() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let error = status_error(429, &headers, r#"{"error":{"message":"Too many"}}"#);
        assert_eq!(
            error,
            InferenceError::RateLimited {
                retry_after: Some(Duration::from_secs(3)),
                message: "Too many".into()
            }
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
    }

    #[test]
    fn unknown_bodies_fall_back_to_an_excerpt_or_reason() {
        let error = status_error(502, &HeaderMap::new(), "<html>Bad gateway</html>");
        assert_eq!(
            error.to_string(),
            "provider returned HTTP 502: <html>Bad gateway</html>"
        );
        let error = status_error(503, &HeaderMap::new(), "");
        assert_eq!(
            error.to_string(),
            "provider returned HTTP 503: Service Unavailable"
        );
    }
}
